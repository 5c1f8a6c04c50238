"""Typical mistakes of an fcore user, one a line, each marked with the mypy error code that
must be reported on that line (tests/test_typing_user_program.py). Type-checked, never run;
excluded from the project's own mypy run (mypy.ini) since every marked line is an error."""

from __future__ import annotations

import fcore
import fcore.numpy as fnp
from fcore import Array, lax
from fcore.typing import ArrayLike, PRNGKeyArray

Params = dict[str, Array]


def loss(params: Params, x: Array) -> Array:
    return fnp.sum(params["w"] * x)


def loss_aux(params: Params, x: Array) -> tuple[Array, str]:
    return fnp.sum(params["w"] * x), "aux"


def pair(x: Array) -> tuple[Array, Array]:
    return x, x


def square(x: Array) -> Array:
    return x * x


def not_a_pair(carry: Array, x: Array) -> Array:
    return carry + x


def pair_step(carry: Array, x: Array) -> tuple[Array, Array]:
    return carry + x, x


class Model:
    @fcore.jit(static_argnums=0)
    def apply(self, x: Array) -> Array:
        return x * 2


@fcore.custom_jvp
def smooth(x: Array) -> Array:
    return fnp.log1p(fnp.exp(x))


def body_one(v: Array) -> Array:
    return v


def takes_int(v: int) -> bool:
    return v > 0


def mistakes(params: Params, x: Array, key: PRNGKeyArray) -> None:
    fast = fcore.jit(square)
    fast("x")  # E: arg-type
    fast(x, x)  # E: call-arg
    n: int = fast(x)  # E: assignment
    fast(x).no_such_attribute  # E: attr-defined
    fast.lower("x")  # E: arg-type
    s: str = fast.lower(x).compile()(x)  # E: assignment
    fcore.jit(3)  # E: call-overload
    fcore.jit(square, static_argnums="0")  # E: arg-type
    g: int = fcore.grad(loss)(params, x)  # E: assignment
    fcore.grad(loss)(params)  # E: call-arg
    fcore.grad(loss)(params, x)["w"].no_such_attribute  # E: attr-defined
    ga, aux = fcore.grad(loss_aux, has_aux=True)(params, x)
    aux_n: int = aux  # E: assignment
    value, grads = fcore.value_and_grad(loss)(params, x)
    grads_as_array: Array = grads  # E: assignment
    v1, v2, v3 = fcore.value_and_grad(loss)(params, x)  # E: misc
    fcore.grad(pair)(x)  # E: arg-type
    fcore.grad(lambda a, b: fnp.sum(a * b), argnums=(0, 1))(x, x).shape  # E: attr-defined
    fcore.vmap(loss, in_axes=(None, 0))(params)  # E: call-arg
    vm: str = fcore.vmap(square)(x)  # E: assignment
    primal, tangent = fcore.jvp(square, (x,), (x,))
    tangent_s: str = tangent  # E: assignment
    out, pullback = fcore.vjp(square, x)
    pullback(out, out)  # E: call-arg
    y_lin, f_lin = fcore.linearize(square, x)
    lin_s: str = f_lin(x)  # E: assignment
    c: str = lax.cond(True, square, square, x)  # E: assignment
    lax.cond(True, square)  # E: call-arg
    lax.fori_loop(0, 3, body_one, x)  # E: arg-type
    f: str = lax.fori_loop(0, 3, lambda i, v: v + i, x)  # E: assignment
    lax.while_loop(takes_int, square, x)  # E: arg-type
    lax.scan(not_a_pair, x, x)  # E: arg-type
    carry, ys = lax.scan(pair_step, x, x)
    ys_s: str = ys  # E: assignment
    sw: int = lax.switch(0, [square, square], x)  # E: assignment
    fcore.tree_util.tree_map(square, params)[0]  # E: index
    fnp.zeros((2, 3), dtype=3)  # E: arg-type
    fnp.asarray(x, dtype=[1])  # E: arg-type
    fnp.zeros("3")  # E: arg-type
    fnp.astype(x, 5)  # E: arg-type
    k: PRNGKeyArray = fcore.random.PRNGKey(0)  # E: assignment
    fnp.float32(1.0).no_such_attribute  # E: attr-defined
    method_result: str = Model().apply(x)  # E: assignment
    fcore.grad(loss, argnums=1)(params)  # E: call-arg
    custom_result: str = smooth(x)  # E: assignment
    fcore.nn.relu("x")  # E: arg-type
    del custom_result, method_result, n, s, g, ga, aux_n, value, grads_as_array, v1, v2, v3, vm, primal, tangent_s, lin_s, c, f, carry, ys_s, sw, k, y_lin, key


def wrong_return(x: ArrayLike) -> int:
    return fnp.sum(x)  # E: return-value
