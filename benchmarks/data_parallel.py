"""Issue 18 workload: the data-parallel MLP training step over 1, 2 and 4 CPU devices.

The batch is sharded over a one-axis mesh, the parameters replicated; fcore and jax run the
same step on the same mesh (jit with ``in_shardings``/``out_shardings``, compiled by XLA's
SPMD partitioner). The rows for 1 and 2 devices show how the step scales. The suite runs in
its own interpreter (``python -m benchmarks data_parallel``), which it starts with 4 devices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.harness import Result, compare
from benchmarks.workloads import mlp_loss

NUM_DEVICES = 4


def _init_mlp(sizes: list[int], seed: int = 0) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    rng = np.random.default_rng(seed)
    return [
        ((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType
    from jax.sharding import NamedSharding as JNS
    from jax.sharding import PartitionSpec as JP

    import fcore
    import fcore.numpy as fnp
    from fcore.sharding import NamedSharding, PartitionSpec

    fcore.config.update("jax_num_cpu_devices", NUM_DEVICES)
    jax.config.update("jax_num_cpu_devices", NUM_DEVICES)  # type: ignore[no-untyped-call]  # untyped in jax

    params = _init_mlp([784, 512, 512, 10])
    rng = np.random.default_rng(1)
    xb = rng.normal(size=(512, 784)).astype(np.float32)
    yb = rng.normal(size=(512, 10)).astype(np.float32)
    f_loss, j_loss = mlp_loss(fnp), mlp_loss(jnp)

    def f_step(p: Any, x: Any, y: Any) -> Any:
        g = fcore.grad(f_loss)(p, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

    def j_step(p: Any, x: Any, y: Any) -> Any:
        g = jax.grad(j_loss)(p, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

    def j_wait(tree: Any) -> Any:
        for leaf in jax.tree_util.tree_leaves(tree):
            leaf.block_until_ready()
        return tree

    results = []
    for n in (1, 2, NUM_DEVICES):
        mesh = fcore.make_mesh((n,), ("data",))
        jmesh = jax.make_mesh((n,), ("data",), axis_types=(AxisType.Auto,))
        rep, data = NamedSharding(mesh, PartitionSpec()), NamedSharding(mesh, PartitionSpec("data"))
        jrep, jdata = JNS(jmesh, JP()), JNS(jmesh, JP("data"))  # type: ignore[no-untyped-call]  # jax leaves P untyped
        fs = fcore.jit(f_step, in_shardings=(rep, data, data), out_shardings=rep)
        js = jax.jit(j_step, in_shardings=(jrep, jdata, jdata), out_shardings=jrep)
        fp, fx, fy = fcore.device_put(params, rep), fcore.device_put(xb, data), fcore.device_put(yb, data)
        jp, jx, jy = jax.device_put(params, jrep), jax.device_put(xb, jdata), jax.device_put(yb, jdata)
        results.append(compare(
            f"data-parallel MLP step b512 on {n} device(s)", lambda: fcore.block_until_ready(fs(fp, fx, fy)),
            lambda: j_wait(js(jp, jx, jy)), number=10, repeats=11, scale=1e3, unit="ms",
            target="<= 1.05" if n == NUM_DEVICES else "(scaling)",
        ))
    return results
