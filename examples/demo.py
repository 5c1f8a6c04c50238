"""fcore's main demonstration: trace, differentiate, vectorise and jit-compile a small model.

A two-layer tanh MLP is fitted to a noisy sine curve generated here. The script prints
the staged jaxpr of the loss, checks the gradient against finite differences, computes
per-example gradients with vmap, and trains with jit(value_and_grad(loss)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import fcore
import fcore.numpy as fnp

Params = list[tuple[Any, Any]]


def init_params(sizes: list[int], seed: int = 0) -> Params:
    rng = np.random.default_rng(seed)
    return [
        (fnp.asarray(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m)), fnp.zeros(n))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def predict(params: Params, x: Any) -> Any:
    h = x
    for w, b in params[:-1]:
        h = fnp.tanh(h @ w + b)
    w, b = params[-1]
    return h @ w + b


def loss(params: Params, x: Any, y: Any) -> Any:
    return fnp.mean((predict(params, x) - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(42)
    x = np.linspace(-3, 3, 128, dtype=np.float32).reshape(-1, 1)
    y = (np.sin(x) + 0.05 * rng.normal(size=x.shape)).astype(np.float32)
    params = init_params([1, 32, 32, 1])

    print("== the loss, staged to a jaxpr ==")
    print(fcore.make_jaxpr(loss)(params, x[:4], y[:4]))

    print("\n== gradient check (directional derivative vs central differences) ==")
    g = fcore.grad(loss)(params, x, y)
    direction = [(fnp.ones_like(w), fnp.ones_like(b)) for w, b in params]
    analytic = 0.0
    for (gw, gb), (dw, db) in zip(g, direction):
        analytic += float(fnp.sum(gw * dw)) + float(fnp.sum(gb * db))
    eps = 1e-3

    def shifted(s: float) -> float:
        return float(loss([(w + s * dw, b + s * db) for (w, b), (dw, db) in zip(params, direction)], x, y))

    numeric = (shifted(eps) - shifted(-eps)) / (2 * eps)
    print(f"analytic {analytic:.5f}   numeric {numeric:.5f}")

    print("\n== per-example gradient norms with vmap(grad) ==")
    per_example = fcore.vmap(fcore.grad(loss), in_axes=(None, 0, 0))(params, x[:5, None], y[:5, None])
    norms = fnp.sqrt(sum(fnp.sum(gw**2, axis=(1, 2)) + fnp.sum(gb**2, axis=1) for gw, gb in per_example))
    print(np.asarray(norms))

    print("\n== training with jit(value_and_grad(loss)) ==")

    @fcore.jit
    def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
        value, grads = fcore.value_and_grad(loss)(params, x, y)
        new = [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return new, value

    for i in range(301):
        params, value = step(params, x, y)
        if i % 50 == 0:
            print(f"step {i:4d}  loss {float(value):.5f}")
    print("\nStableHLO of the compiled step (first lines):")
    print("\n".join(step.lower(params, x, y).as_text().splitlines()[:6]))


if __name__ == "__main__":
    main()
