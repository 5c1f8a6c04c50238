"""A convolutional network learns to tell synthetic shapes apart (conv, max-pool, avg-pool).

Images of 28x28 pixels hold one of four noisy shapes at a random place: a horizontal bar, a
vertical bar, a diagonal stroke or a filled square. The network is conv(3x3) - relu - max-pool -
conv(3x3) - relu - avg-pool - dense, written with `lax.conv_general_dilated` and
`lax.reduce_window`, initialised with `fcore.random`, and trained with momentum SGD under
`jit(value_and_grad(loss))`. It prints the loss and the accuracy on held-out images.

Run: python examples/cnn.py [--small]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import fcore
import fcore.numpy as fnp
from fcore import lax

Params = dict[str, fcore.Array]
SIZE, CLASSES = 28, 4
DIMS = ("NHWC", "HWIO", "NHWC")


def make_images(n: int, rng: np.random.Generator) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``n`` noisy images of shape (28, 28, 1) and their labels in {0, 1, 2, 3}."""
    images = rng.normal(0.0, 0.3, size=(n, SIZE, SIZE, 1)).astype(np.float32)
    labels = rng.integers(0, CLASSES, n)
    for img, label in zip(images, labels):
        r, c = rng.integers(4, SIZE - 12, 2)
        if label == 0:
            img[r + 4, c:c + 9] += 1.5  # horizontal bar
        elif label == 1:
            img[r:r + 9, c + 4] += 1.5  # vertical bar
        elif label == 2:
            img[np.arange(r, r + 9), np.arange(c, c + 9)] += 1.5  # diagonal stroke
        else:
            img[r + 2:r + 7, c + 2:c + 7] += 1.0  # filled square
    return images, labels.astype(np.int32)


def init_params(key: fcore.random.PRNGKeyArray) -> Params:
    k1, k2, k3 = fcore.random.split(key, 3)
    he = fcore.nn.initializers.he_normal()
    return {
        "conv1": he(k1, (3, 3, 1, 8)), "b1": fnp.zeros(8),
        "conv2": he(k2, (3, 3, 8, 16)), "b2": fnp.zeros(16),
        "dense": fcore.nn.initializers.lecun_normal()(k3, (7 * 7 * 16, CLASSES)), "b3": fnp.zeros(CLASSES),
    }


def logits(params: Params, images: fcore.Array) -> fcore.Array:
    x = lax.conv_general_dilated(images, params["conv1"], (1, 1), "SAME", dimension_numbers=DIMS) + params["b1"]
    x = lax.reduce_window(fcore.nn.relu(x), -fnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # max-pool
    x = lax.conv_general_dilated(x, params["conv2"], (1, 1), "SAME", dimension_numbers=DIMS) + params["b2"]
    x = lax.reduce_window(fcore.nn.relu(x), 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4  # avg-pool
    out: fcore.Array = x.reshape(x.shape[0], -1) @ params["dense"] + params["b3"]
    return out


def loss(params: Params, images: fcore.Array, labels: fcore.Array) -> fcore.Array:
    """Mean softmax cross-entropy."""
    logp = fcore.nn.log_softmax(logits(params, images))
    return -fnp.mean(fnp.take_along_axis(logp, labels[:, None], axis=1))


@fcore.jit
def train_step(params: Params, velocity: Params, images: fcore.Array, labels: fcore.Array) -> tuple[Params, Params, fcore.Array]:
    value, grads = fcore.value_and_grad(loss)(params, images, labels)
    velocity = {k: 0.9 * velocity[k] + grads[k] for k in params}
    return {k: params[k] - 0.05 * velocity[k] for k in params}, velocity, value


@fcore.jit
def accuracy(params: Params, images: fcore.Array, labels: fcore.Array) -> fcore.Array:
    return fnp.mean(fnp.argmax(logits(params, images), axis=1) == labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--small", action="store_true", help="a smaller, faster run (used by the tests)")
    args = parser.parse_args()
    n_train, steps, batch = (512, 80, 32) if args.small else (4096, 400, 32)

    rng = np.random.default_rng(0)
    train_x, train_y = make_images(n_train, rng)
    test_x, test_y = (fnp.asarray(a) for a in make_images(512, rng))
    params = init_params(fcore.random.key(0))
    velocity = {k: fnp.zeros_like(v) for k, v in params.items()}
    print("parameters:", {k: tuple(v.shape) for k, v in params.items()})
    print(f"step    0  held-out accuracy {float(accuracy(params, test_x, test_y)):.3f}")
    for step in range(1, steps + 1):
        idx = rng.integers(0, n_train, batch)
        params, velocity, value = train_step(params, velocity, fnp.asarray(train_x[idx]), fnp.asarray(train_y[idx]))
        if step % (steps // 4) == 0:
            print(f"step {step:4d}  loss {float(value):.4f}  held-out accuracy {float(accuracy(params, test_x, test_y)):.3f}")


if __name__ == "__main__":
    main()
