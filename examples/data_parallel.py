"""Data-parallel training on 4 CPU devices: the batch sharded, the parameters replicated.

The same jitted SGD step runs twice: once on one device, once over a 4-device mesh with
``in_shardings`` that split the batch across the devices and replicate the parameters. XLA's
SPMD partitioner turns the gradient's sum over the batch into a cross-device all-reduce; the
two runs print the same losses (up to float rounding in the order of the sums).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import fcore

fcore.config.update("jax_num_cpu_devices", 4)  # before the first computation starts the backend

import fcore.numpy as fnp  # noqa: E402
from fcore.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

Params = list[tuple[Any, Any]]


def init(sizes: list[int], seed: int = 0) -> Params:
    rng = np.random.default_rng(seed)
    return [
        ((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def loss(params: Params, x: Any, y: Any) -> Any:
    for w, b in params[:-1]:
        x = fnp.tanh(x @ w + b)
    w, b = params[-1]
    return fnp.mean((x @ w + b - y) ** 2)


def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
    value, grads = fcore.value_and_grad(loss)(params, x, y)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)], value


def train(step_fn: Any, params: Params, x: Any, y: Any, steps: int) -> list[float]:
    losses = []
    for _ in range(steps):
        params, value = step_fn(params, x, y)
        losses.append(float(value))
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a smaller model and fewer steps")
    args = parser.parse_args()
    sizes, batch, steps = ([16, 32, 4], 64, 5) if args.small else ([64, 256, 256, 8], 512, 10)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(batch, sizes[0])).astype(np.float32)
    y = np.sin(x[:, : sizes[-1]] * 2).astype(np.float32)
    params = init(sizes)

    mesh = fcore.make_mesh((4,), ("data",))
    batch_sharded, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    print(f"devices: {fcore.device_count()}, mesh: {dict(mesh.shape)}")

    one_device = train(fcore.jit(step), params, x, y, steps)
    parallel_step = fcore.jit(step, in_shardings=(replicated, batch_sharded, batch_sharded),
                              out_shardings=(replicated, replicated))
    data_parallel = train(parallel_step, params, x, y, steps)

    xs = fcore.device_put(x, batch_sharded)
    print(f"batch {xs.shape} is split into {len(xs.addressable_shards)} shards of "
          f"{xs.addressable_shards[0].data.shape}")
    print(f"{'step':>4}  {'loss (1 device)':>16}  {'loss (4 devices)':>16}")
    for i, (a, b) in enumerate(zip(one_device, data_parallel)):
        print(f"{i:>4}  {a:>16.6f}  {b:>16.6f}")
    diff = max(abs(a - b) / abs(a) for a, b in zip(one_device, data_parallel))
    print(f"max relative difference {diff:.2e}")


if __name__ == "__main__":
    main()
