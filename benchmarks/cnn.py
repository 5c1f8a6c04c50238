"""Issue 13 workload: a CNN's jitted training step (conv, max-pool, avg-pool, dense), batch 32 of 28x28x1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, compare

DIMS = ("NHWC", "HWIO", "NHWC")


def cnn_loss(np_mod: Any, lax: Any, nn: Any) -> Callable[[dict[str, Any], Any, Any], Any]:
    """conv(3x3, 1->16) - relu - max-pool - conv(3x3, 16->32) - relu - avg-pool - dense(10),
    mean softmax cross-entropy, written once against a NumPy-like and a lax-like module."""

    def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
        h = lax.conv_general_dilated(x, p["w1"], (1, 1), "SAME", dimension_numbers=DIMS) + p["b1"]
        h = lax.reduce_window(nn.relu(h), -np_mod.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(h, p["w2"], (1, 1), "SAME", dimension_numbers=DIMS) + p["b2"]
        h = lax.reduce_window(nn.relu(h), 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        logits = h.reshape(h.shape[0], -1) @ p["w3"] + p["b3"]
        return -np_mod.mean(np_mod.take_along_axis(nn.log_softmax(logits), y[:, None], axis=1))

    return loss


def _init(seed: int = 0) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.normal(size=(3, 3, 1, 16)) / 3).astype(np.float32), "b1": np.zeros(16, np.float32),
        "w2": (rng.normal(size=(3, 3, 16, 32)) / 12).astype(np.float32), "b2": np.zeros(32, np.float32),
        "w3": (rng.normal(size=(7 * 7 * 32, 10)) / 40).astype(np.float32), "b3": np.zeros(10, np.float32),
    }


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp

    import fcore
    import fcore.numpy as fnp

    params = _init()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, 32).astype(np.int32)
    f_loss, j_loss = cnn_loss(fnp, fcore.lax, fcore.nn), cnn_loss(jnp, jax.lax, jax.nn)

    def f_step_fn(p: Any, x: Any, y: Any) -> Any:
        value, g = fcore.value_and_grad(f_loss)(p, x, y)
        return value, {k: p[k] - 0.01 * g[k] for k in p}

    def j_step_fn(p: Any, x: Any, y: Any) -> Any:
        value, g = jax.value_and_grad(j_loss)(p, x, y)
        return value, {k: p[k] - 0.01 * g[k] for k in p}

    f_step, j_step = fcore.jit(f_step_fn), jax.jit(j_step_fn)
    fp, jp = fcore.device_put(params), jax.device_put(params)
    fx, fy, jx, jy = fcore.device_put(x), fcore.device_put(y), jax.device_put(x), jax.device_put(y)

    def jax_wait(tree: Any) -> Any:
        for leaf in jax.tree_util.tree_leaves(tree):
            leaf.block_until_ready()
        return tree

    return [
        compare("jitted CNN train step b32 28x28x1", lambda: fcore.block_until_ready(f_step(fp, fx, fy)),
                lambda: jax_wait(j_step(jp, jx, jy)), number=10, repeats=21, scale=1e3, unit="ms",
                target="<= 1.05"),
    ]
