"""A small transformer learns to copy: causal self-attention, layer norm and Adam, all in fcore.

Each training sequence is some random symbols, a separator, then the same symbols again. A
two-layer decoder-only transformer (token and position embeddings, multi-head causal
self-attention, a GELU MLP, pre-layer-norm residual blocks) predicts every next token; only
the second half is predictable, and predicting it means attending back to the first half.
The loss and the copy accuracy on fresh sequences are printed as training runs, then one
sequence is copied by the trained model.

Run: python examples/transformer.py [--small]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import fcore
import fcore.numpy as fnp
from fcore import tree_util

Params = dict[str, fcore.Array]

N_SYMBOLS = 10
SEP = N_SYMBOLS  # the separator token
VOCAB = N_SYMBOLS + 1


def init_params(rng: np.random.Generator, seq_len: int, d: int, n_layers: int) -> Params:
    # NumPy's generator for now; this moves to fcore.random once it lands.
    def normal(*shape: int, scale: float = 0.02) -> fcore.Array:
        return fnp.asarray((scale * rng.normal(size=shape)).astype(np.float32))

    params = {"embed": normal(VOCAB, d), "pos": normal(seq_len, d), "ln_f": fnp.ones(d), "unembed": normal(d, VOCAB)}
    for i in range(n_layers):
        params |= {
            f"ln1_{i}": fnp.ones(d),
            f"qkv_{i}": normal(d, 3 * d, scale=1 / math.sqrt(d)),
            f"proj_{i}": normal(d, d, scale=1 / math.sqrt(d)),
            f"ln2_{i}": fnp.ones(d),
            f"mlp_in_{i}": normal(d, 4 * d, scale=1 / math.sqrt(d)),
            f"mlp_out_{i}": normal(4 * d, d, scale=1 / math.sqrt(4 * d)),
        }
    return params


def layer_norm(x: fcore.Array, gain: fcore.Array) -> fcore.Array:
    mean = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return gain * (x - mean) / fnp.sqrt(var + 1e-5)


def attention(x: fcore.Array, qkv: fcore.Array, proj: fcore.Array, n_heads: int) -> fcore.Array:
    """Multi-head causal self-attention over x: [batch, time, d]."""
    b, t, d = x.shape
    q, k, v = fnp.split(x @ qkv, 3, axis=-1)

    def heads(z: fcore.Array) -> fcore.Array:  # [b, t, d] -> [b, heads, t, d / heads]
        return z.reshape(b, t, n_heads, d // n_heads).transpose(0, 2, 1, 3)

    scores = fnp.einsum("bhqc,bhkc->bhqk", heads(q), heads(k)) / math.sqrt(d // n_heads)
    causal = fnp.tril(fnp.ones((t, t), dtype=bool))
    weights = fcore.nn.softmax(fnp.where(causal, scores, -1e9), axis=-1)
    out = fnp.einsum("bhqk,bhkc->bhqc", weights, heads(v)).transpose(0, 2, 1, 3).reshape(b, t, d)
    return out @ proj


def logits(params: Params, tokens: fcore.Array, n_layers: int, n_heads: int) -> fcore.Array:
    x = params["embed"][tokens] + params["pos"][: tokens.shape[1]]
    for i in range(n_layers):
        x = x + attention(layer_norm(x, params[f"ln1_{i}"]), params[f"qkv_{i}"], params[f"proj_{i}"], n_heads)
        hidden = fcore.nn.gelu(layer_norm(x, params[f"ln2_{i}"]) @ params[f"mlp_in_{i}"])
        x = x + hidden @ params[f"mlp_out_{i}"]
    return layer_norm(x, params["ln_f"]) @ params["unembed"]


def copy_batch(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    """[batch, 2n + 1] sequences: n symbols, the separator, the same n symbols."""
    symbols = rng.integers(0, N_SYMBOLS, size=(batch, n))
    return np.concatenate([symbols, np.full((batch, 1), SEP), symbols], axis=1).astype(np.int32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--small", action="store_true", help="a smaller, faster run (used by the tests)")
    args = parser.parse_args()
    n, steps, d, n_layers, n_heads, batch = (4, 100, 32, 2, 4, 32) if args.small else (8, 300, 64, 2, 4, 64)

    rng = np.random.default_rng(0)
    params = init_params(rng, 2 * n, d, n_layers)
    print(f"a {n_layers}-layer transformer, d={d}, {n_heads} heads, "
          f"{sum(p.size for p in params.values())} parameters; copying {n} symbols")

    def loss(params: Params, seqs: fcore.Array) -> fcore.Array:
        """Cross-entropy of the copied half (the positions after the separator)."""
        logp = fcore.nn.log_softmax(logits(params, seqs[:, :-1], n_layers, n_heads)[:, n:], axis=-1)
        targets = fcore.nn.one_hot(seqs[:, n + 1 :], VOCAB)
        return -fnp.mean(fnp.sum(logp * targets, axis=-1))

    @fcore.jit
    def adam_step(params: Params, m: Params, v: Params, t: fcore.Array, seqs: fcore.Array
                  ) -> tuple[Params, Params, Params, fcore.Array]:
        value, grads = fcore.value_and_grad(loss)(params, seqs)
        m = tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        lr = 3e-3 * fnp.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        params = tree_util.tree_map(lambda p, m, v: p - lr * m / (fnp.sqrt(v) + 1e-8), params, m, v)
        return params, m, v, value

    @fcore.jit
    def predict_copy(params: Params, seqs: fcore.Array) -> fcore.Array:
        return fnp.argmax(logits(params, seqs[:, :-1], n_layers, n_heads)[:, n:], axis=-1)

    def copy_accuracy(params: Params) -> float:
        seqs = fnp.asarray(copy_batch(np.random.default_rng(1), 256, n))  # the same held-out sequences each time
        return float(fnp.mean(predict_copy(params, seqs) == seqs[:, n + 1 :]))

    m = tree_util.tree_map(fnp.zeros_like, params)
    v = tree_util.tree_map(fnp.zeros_like, params)
    print(f"chance: loss {math.log(N_SYMBOLS):.3f}, accuracy {1 / N_SYMBOLS:.3f}")
    for step in range(1, steps + 1):
        params, m, v, value = adam_step(params, m, v, fnp.asarray(step, fnp.float32), fnp.asarray(copy_batch(rng, batch, n)))
        if step == 1 or step % (steps // 4) == 0:
            print(f"step {step:4d}  loss {float(value):.3f}  copy accuracy {copy_accuracy(params):.3f}")

    seq = copy_batch(np.random.default_rng(2), 1, n)
    print("input :", " ".join(map(str, seq[0, : n + 1])).replace(str(SEP), "|"))
    print("copied:", " ".join(map(str, np.asarray(predict_copy(params, fnp.asarray(seq)))[0])))


if __name__ == "__main__":
    main()
