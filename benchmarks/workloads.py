"""Programs shared by the benchmarks, written once against a NumPy-like module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def chain(np_mod: Any, n: int) -> Callable[[Any], Any]:
    """A fresh n-op elementwise chain: sin, *0.9, +0.1, neg, cos in turn."""

    def f(x: Any) -> Any:
        for i in range(n):
            k = i % 5
            if k == 0:
                x = np_mod.sin(x)
            elif k == 1:
                x = x * 0.9
            elif k == 2:
                x = x + 0.1
            elif k == 3:
                x = -x
            else:
                x = np_mod.cos(x)
        return x

    return f


def mlp_loss(np_mod: Any) -> Callable[[Any, Any, Any], Any]:
    """Mean squared error of a tanh MLP; params is a list of (W, b) pairs."""

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for w, b in params[:-1]:
            h = np_mod.tanh(h @ w + b)
        w, b = params[-1]
        out = h @ w + b
        return np_mod.mean((out - y) ** 2)

    return loss
