"""A realistic, fully annotated fcore training program: it must type-check clean under
``mypy --strict`` (tests/test_typing_user_program.py). It is type-checked, never run."""

from __future__ import annotations

import fcore
import fcore.numpy as fnp
from fcore import Array, lax
from fcore.typing import ArrayLike, DTypeLike, PRNGKeyArray, Shape

Params = dict[str, Array]


def init_params(key: PRNGKeyArray, sizes: Shape, dtype: DTypeLike = fnp.float32) -> Params:
    k1, k2 = fcore.random.split(key)
    n_in, n_out = tuple(sizes) if not isinstance(sizes, int) else (sizes, sizes)
    w = fcore.random.normal(k1, (n_in, n_out), dtype) * 0.1
    b = fnp.zeros((n_out,), dtype=dtype)
    return {"w": w, "b": b, "scale": fnp.ones(n_out, fnp.float32), "k2": fcore.random.key_data(k2).astype(fnp.float32)}


@fcore.custom_jvp
def softplus(x: Array) -> Array:
    return fnp.log1p(fnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    return softplus(x), t * fcore.nn.sigmoid(x)


def predict(params: Params, x: ArrayLike) -> Array:
    h = softplus(fnp.asarray(x)) + fnp.tanh(fnp.asarray(x) @ params["w"] + params["b"])
    return h * params["scale"]


def loss(params: Params, x: Array, y: Array) -> Array:
    return fnp.mean((predict(params, x) - y) ** 2)


def loss_with_aux(params: Params, x: Array, y: Array) -> tuple[Array, dict[str, Array]]:
    pred = predict(params, x)
    return fnp.mean((pred - y) ** 2), {"pred": pred}


@fcore.jit
def sgd_step(params: Params, x: Array, y: Array) -> tuple[Params, Array]:
    value, grads = fcore.value_and_grad(loss)(params, x, y)
    new = fcore.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return new, value


class Scaler:
    """A model object whose method is jitted (``self`` is a static Python value to jit)."""

    @fcore.jit(static_argnums=0)
    def apply(self, x: Array) -> Array:
        return x * 2


def aux_step(params: Params, x: Array, y: Array) -> Params:
    grads, aux = fcore.grad(loss_with_aux, has_aux=True)(params, x, y)
    preds: Array = aux["pred"]
    del preds
    return grads


def both_grads(a: Array, b: Array) -> Array:
    ga, gb = fcore.grad(lambda u, v: fnp.sum(u * v), argnums=(0, 1))(a, b)
    out: Array = ga + gb
    return out


def per_example_loss(params: Params, xs: Array, ys: Array) -> Array:
    batched = fcore.vmap(loss, in_axes=(None, 0, 0))
    return batched(params, xs, ys)


def directional(x: Array, v: Array) -> Array:
    y, ydot = fcore.jvp(fnp.sin, (x,), (v,))
    out, pull = fcore.vjp(fnp.cos, x)
    (cotangent,) = pull(out)
    ct: Array = cotangent  # cotangents are typed Any: a tuple, one per primal
    lin_out, f_lin = fcore.linearize(fnp.exp, x)
    return y + ydot + ct + lin_out + f_lin(v)


def clipped(x: Array, limit: float) -> Array:
    return lax.cond(fnp.max(x) > limit, lambda v: v / fnp.max(v), lambda v: v, x)


def activation(kind: int, x: Array) -> Array:
    return lax.switch(kind, [fnp.tanh, fnp.sin, fnp.cos], x)


def power_iterate(m: Array, v0: Array) -> Array:
    def body(i: Array, v: Array) -> Array:
        w = m @ v
        return w / fnp.linalg.norm(w)

    return lax.fori_loop(0, 20, body, v0)


def halve_until_small(x: Array) -> Array:
    def small(v: Array) -> Array:
        return fnp.max(fnp.abs(v)) > 1.0

    def halve(v: Array) -> Array:
        return v / 2

    return lax.while_loop(small, halve, x)


def cumulative(xs: Array) -> tuple[Array, Array]:
    def step(carry: Array, x: Array) -> tuple[Array, Array]:
        new = carry + x
        return new, new * 2

    total, ys = lax.scan(step, fnp.zeros((), fnp.float32), xs)
    return total, ys


def train(key: PRNGKeyArray, steps: int) -> float:
    params = init_params(key, (3, 2))
    x = fnp.ones((8, 3), dtype="float32")
    y = fnp.zeros((8, 2), dtype=fnp.float32)
    compiled = sgd_step.lower(params, x, y).compile()
    x = Scaler().apply(x) / 2
    last = fnp.asarray(0.0)
    for _ in range(steps):
        params, last = sgd_step(params, x, y)
    params, last = compiled(params, x, y)
    half = fnp.astype(last, fnp.float16)
    return float(half) + float(fnp.float32(1.0)) + float(per_example_loss(params, x[:, None], y[:, None]).sum())


if __name__ == "__main__":
    print(train(fcore.random.key(0), 3))
