"""Per-example gradients with vmap: the gradient of the loss on each example, in one batched call.

Differentially private training, influence estimates and gradient-noise statistics need one
gradient per example rather than their mean. `vmap(grad(loss))` computes them all at once.
This script checks them against a Python loop of `grad`, shows that their mean is the
gradient of the mean loss, and trains a small classifier by clipping each example's gradient
to norm 1 before averaging (the DP-SGD update, without its noise) under `jit`.

Run: python examples/per_example_gradients.py [--small]
"""

from __future__ import annotations

import argparse

import numpy as np

import fcore
import fcore.numpy as fnp

Params = dict[str, fcore.Array]


def init_params(n_features: int, n_hidden: int, rng: np.random.Generator) -> Params:
    def normal(*shape: int) -> fcore.Array:
        return fnp.asarray(rng.normal(size=shape).astype(np.float32) / np.sqrt(shape[0]))

    return {"w1": normal(n_features, n_hidden), "b1": fnp.zeros(n_hidden), "w2": normal(n_hidden), "b2": fnp.zeros(())}


def logit(params: Params, x: fcore.Array) -> fcore.Array:
    return fnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def example_loss(params: Params, x: fcore.Array, y: fcore.Array) -> fcore.Array:
    """Logistic loss of one example (label y in {0, 1})."""
    z = logit(params, x)
    return fcore.nn.softplus(z) - y * z


def mean_loss(params: Params, xs: fcore.Array, ys: fcore.Array) -> fcore.Array:
    return fnp.mean(fcore.vmap(example_loss, in_axes=(None, 0, 0))(params, xs, ys))


#: Gradients of every example: each leaf gets a leading axis of size batch.
per_example_grads = fcore.jit(fcore.vmap(fcore.grad(example_loss), in_axes=(None, 0, 0)))


def max_difference(a: Params, b: Params) -> float:
    return max(float(fnp.max(fnp.abs(a[k] - b[k]))) for k in a)


def global_norms(grads: Params) -> fcore.Array:
    """The norm of each example's whole gradient (over all parameters)."""
    return fnp.sqrt(sum(fnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in grads.values()))


@fcore.jit
def clipped_step(params: Params, xs: fcore.Array, ys: fcore.Array) -> Params:
    grads = fcore.vmap(fcore.grad(example_loss), in_axes=(None, 0, 0))(params, xs, ys)
    scale = 1.0 / fnp.maximum(1.0, global_norms(grads))  # clip each example to norm <= 1
    return {k: params[k] - 1.0 * fnp.mean(g * scale.reshape(-1, *([1] * (g.ndim - 1))), axis=0) for k, g in grads.items()}


def accuracy(params: Params, xs: fcore.Array, ys: fcore.Array) -> float:
    return float(fnp.mean((logit(params, xs) > 0) == (ys > 0.5)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--small", action="store_true", help="a smaller, faster run (used by the tests)")
    args = parser.parse_args()
    n, steps = (64, 120) if args.small else (512, 300)

    rng = np.random.default_rng(0)
    xs_np = rng.normal(size=(n, 8)).astype(np.float32)
    ys_np = (xs_np[:, 0] * xs_np[:, 1] + 0.5 * xs_np[:, 2] > 0).astype(np.float32)  # a nonlinear rule
    xs, ys = fnp.asarray(xs_np), fnp.asarray(ys_np)
    params = init_params(8, 32, rng)

    grads = per_example_grads(params, xs, ys)
    print(f"per-example gradients of {n} examples:", {k: tuple(g.shape) for k, g in grads.items()})

    k = 8
    looped = [fcore.grad(example_loss)(params, xs[i], ys[i]) for i in range(k)]
    stacked = {name: fnp.stack([g[name] for g in looped]) for name in params}
    first_k = {name: g[:k] for name, g in grads.items()}
    print(f"vmap vs. a Python loop of grad (first {k} examples): max |difference| = {max_difference(first_k, stacked):.1e}")

    batch = fcore.grad(mean_loss)(params, xs, ys)
    mean_of_examples = {name: fnp.mean(g, axis=0) for name, g in grads.items()}
    print(f"mean of per-example gradients vs. grad of the mean loss: max |difference| = "
          f"{max_difference(mean_of_examples, batch):.1e}")

    norms = np.asarray(global_norms(grads))
    print(f"per-example gradient norms: min {norms.min():.3f}  median {np.median(norms):.3f}  max {norms.max():.3f}")

    print("\ntraining with per-example clipping (norm <= 1) under jit:")
    print(f"step    0  loss {float(mean_loss(params, xs, ys)):.4f}  accuracy {accuracy(params, xs, ys):.3f}")
    for step in range(1, steps + 1):
        params = clipped_step(params, xs, ys)
        if step % (steps // 4) == 0:
            print(f"step {step:4d}  loss {float(mean_loss(params, xs, ys)):.4f}  accuracy {accuracy(params, xs, ys):.3f}")


if __name__ == "__main__":
    main()
