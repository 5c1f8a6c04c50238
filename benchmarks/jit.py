"""Issue 4 workloads: jit dispatch, first-call compile, MLP training step, matmul."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, compare
from benchmarks.workloads import chain, mlp_loss


def _init_mlp(sizes: list[int], seed: int = 0) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    rng = np.random.default_rng(seed)
    return [
        ((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def _jax_wait(tree: Any) -> Any:
    import jax

    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()
    return tree


def _first_call(fn: Callable[[], object], setup: Callable[[], object] = lambda: None) -> float:
    """Seconds of one first call. ``setup`` (emptying fcore's caches) runs before the clock
    starts, and what the call returns (the jitted function and its results) is released after
    it stops: freeing the previous executables is not part of either library's first call."""
    setup()
    t0 = time.perf_counter()
    kept = fn()
    elapsed = time.perf_counter() - t0
    del kept
    return elapsed


def _first_calls(name: str, fcore_fn: Callable[[], object], jax_fn: Callable[[], object], repeats: int = 9) -> Result:
    """Median milliseconds of ``repeats`` first calls each, fcore and jax interleaved."""
    import fcore

    f_t, j_t = [], []
    for _ in range(repeats):
        f_t.append(_first_call(fcore_fn, fcore.clear_caches))
        j_t.append(_first_call(jax_fn))
    return Result(name, "ms", statistics.median(f_t) * 1e3, statistics.median(j_t) * 1e3, "<= 0.9")


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp

    import fcore
    import fcore.numpy as fnp

    results = []
    a = np.arange(8, dtype=np.float32)
    fa, fb = fcore.device_put(a), fcore.device_put(a * 2)
    ja, jb = jnp.asarray(a), jnp.asarray(a * 2)
    ff = fcore.jit(lambda x, y: x * y + 1)
    jf = jax.jit(lambda x, y: x * y + 1)
    results.append(compare("jit dispatch x*y+1 f32[8] (+wait)", lambda: ff(fa, fb).block_until_ready(),
                           lambda: jf(ja, jb).block_until_ready(), number=2000, target="<= 1.0"))
    fo, fo2, jo, jo2 = ff(fa, fb), ff(fb, fa), jf(ja, jb), jf(jb, ja)  # arrays that jit returned
    results.append(compare("jit dispatch x*y+1 on jit results (+wait)", lambda: ff(fo, fo2).block_until_ready(),
                           lambda: jf(jo, jo2).block_until_ready(), number=2000, target="<= 1.0"))
    x8 = np.linspace(0, 1, 8, dtype=np.float32)

    def fcore_chain_first() -> object:
        f = fcore.jit(chain(fnp, 1000))
        return f, f(x8).block_until_ready()

    def jax_chain_first() -> object:
        f = jax.jit(chain(jnp, 1000))
        return f, f(x8).block_until_ready()

    results.append(_first_calls("first call jit(chain 1000)", fcore_chain_first, jax_chain_first))

    params = _init_mlp([784, 512, 512, 10])
    rng = np.random.default_rng(1)
    xb = rng.normal(size=(128, 784)).astype(np.float32)
    yb = rng.normal(size=(128, 10)).astype(np.float32)
    f_loss, j_loss = mlp_loss(fnp), mlp_loss(jnp)

    def f_step_fn(p: Any, x: Any, y: Any) -> Any:
        g = fcore.grad(f_loss)(p, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

    def j_step_fn(p: Any, x: Any, y: Any) -> Any:
        g = jax.grad(j_loss)(p, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

    def fcore_mlp_first() -> object:
        f = fcore.jit(fcore.value_and_grad(mlp_loss(fnp)))
        return f, fcore.block_until_ready(f(params, xb, yb))

    def jax_mlp_first() -> object:
        f = jax.jit(jax.value_and_grad(mlp_loss(jnp)))
        return f, _jax_wait(f(params, xb, yb))

    results.append(_first_calls("first call jit(value_and_grad(mlp loss))", fcore_mlp_first, jax_mlp_first))
    f_step, j_step = fcore.jit(f_step_fn), jax.jit(j_step_fn)
    fp = fcore.device_put(params)
    jp = jax.device_put(params)
    fx, fy = fcore.device_put(xb), fcore.device_put(yb)
    jx, jy = jax.device_put(xb), jax.device_put(yb)
    results.append(compare("jitted MLP step 784-512-512-10 b128", lambda: fcore.block_until_ready(f_step(fp, fx, fy)),
                           lambda: _jax_wait(j_step(jp, jx, jy)), number=20, scale=1e3, unit="ms",
                           target="<= 1.05"))
    m = np.random.default_rng(2).normal(size=(1024, 1024)).astype(np.float32)
    fm, jm = fcore.device_put(m), jax.device_put(m)
    fmm, jmm = fcore.jit(lambda a, b: a @ b), jax.jit(lambda a, b: a @ b)
    # Both sides run the same optimized HLO (one XNNPACK dot fusion), so the ratio is noise
    # around 1.0; 21 interleaved repetitions of 5 calls keep the median's spread small.
    r = compare("matmul 1024^2 f32", lambda: fmm(fm, fm).block_until_ready(), lambda: jmm(jm, jm).block_until_ready(),
                number=5, repeats=21, scale=1.0, unit="s")
    flops = 2 * 1024**3
    results.append(Result("matmul 1024^2 f32 GFLOP/s", "GFLOP/s", flops / r.fcore / 1e9, flops / r.jax / 1e9,
                          ">= 0.95"))
    return results
