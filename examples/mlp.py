"""An MLP classifier trained with fcore.random initialisation and an Adam loop, all under jit.

The data are two interleaved spirals drawn with `fcore.random`; the weights start from
`fcore.nn.initializers.glorot_normal` with keys split from one seed, so the run is the same
every time (and, key for key, the same numbers JAX would draw). The training step is one
`jit(value_and_grad(...))` call plus an Adam update written with `tree_map`; the script prints
the loss every few steps and the final training accuracy.

Run: python examples/mlp.py [--small]
"""

from __future__ import annotations

import argparse
from typing import Any

import fcore
import fcore.numpy as fnp
from fcore import random
from fcore.nn import initializers

Params = list[dict[str, fcore.Array]]


def spirals(key: fcore.Array, n: int) -> tuple[fcore.Array, fcore.Array]:
    """``n`` points of two noisy spirals, labelled 0 and 1."""
    k_t, k_noise = random.split(key)
    t = random.uniform(k_t, (n,), minval=0.25, maxval=3.0) * fnp.pi
    labels = fnp.arange(n) % 2
    sign = 1.0 - 2.0 * labels
    xy = fnp.stack([sign * t * fnp.cos(t), sign * t * fnp.sin(t)], axis=1) / 3.0
    return xy + 0.1 * random.normal(k_noise, xy.shape), labels


def init_params(key: fcore.Array, sizes: list[int]) -> Params:
    init = initializers.glorot_normal()
    keys = random.split(key, len(sizes) - 1)
    return [{"w": init(k, (m, n)), "b": fnp.zeros(n)} for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def logits(params: Params, x: fcore.Array) -> fcore.Array:
    for layer in params[:-1]:
        x = fcore.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params: Params, x: fcore.Array, y: fcore.Array) -> fcore.Array:
    log_probs = fcore.nn.log_softmax(logits(params, x))
    return -fnp.mean(fnp.take_along_axis(log_probs, y[:, None], axis=1))


def adam_step(params: Params, grads: Params, state: Any, step: int | fcore.Array, lr: float = 0.01) -> tuple[Params, Any]:
    """One Adam update (b1 = 0.9, b2 = 0.999) of every leaf."""
    m, v = state
    m = fcore.tree_util.tree_map(lambda m_, g: 0.9 * m_ + 0.1 * g, m, grads)
    v = fcore.tree_util.tree_map(lambda v_, g: 0.999 * v_ + 0.001 * g * g, v, grads)
    scale = lr * fnp.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
    params = fcore.tree_util.tree_map(lambda p, m_, v_: p - scale * m_ / (fnp.sqrt(v_) + 1e-8), params, m, v)
    return params, (m, v)


@fcore.jit
def train_step(params: Params, state: Any, step: fcore.Array, x: fcore.Array, y: fcore.Array) -> Any:
    value, grads = fcore.value_and_grad(loss)(params, x, y)
    params, state = adam_step(params, grads, state, step)
    return params, state, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="fewer points and steps (for tests)")
    args = parser.parse_args()
    n, steps = (256, 150) if args.small else (1024, 600)

    key = random.key(0)
    k_data, k_init = random.split(key)
    x, y = spirals(k_data, n)
    params = init_params(k_init, [2, 64, 64, 2])
    zeros = fcore.tree_util.tree_map(fnp.zeros_like, params)
    state = (zeros, zeros)
    first = float(loss(params, x, y))
    print(f"step    0  loss {first:.4f}")
    for step in range(1, steps + 1):
        params, state, value = train_step(params, state, fnp.float32(step), x, y)
        if step % (steps // 5) == 0:
            print(f"step {step:4d}  loss {float(value):.4f}")
    accuracy = float(fnp.mean(fnp.argmax(logits(params, x), axis=1) == y))
    print(f"training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
