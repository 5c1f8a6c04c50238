"""Helpers shared by the elementwise functions of ``fcore.numpy``: constants of an operand's
dtype, the promotions ``jnp`` applies before a ``lax`` primitive (to inexact, to numeric), and
the wrapper that gives a unary inexact function its eager fast path."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fcore import lax
from fcore.config import eager_checks
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import trace_now
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.lax.elementwise import UnaryEagerPath, unary_eager_path
from fcore.numpy._promotion import INEXACT_DTYPES, asarray, convert, is_array, operand, promote2_dtype, result_of, to_inexact, to_numeric

UnaryLax = Callable[[ArrayLike], Array]
BinaryLax = Callable[[ArrayLike, ArrayLike], Array]

_bool = dtypes.bool_


def _const(x: Array, value: object) -> Array:
    """A rank-0 constant of ``x``'s dtype, as ``lax._const``: weakly typed exactly when ``x``
    is a weakly typed scalar (so it does not make a weak scalar's result strong)."""
    return ArrayImpl(np.asarray(value).astype(x.dtype), x.weak_type and x.ndim == 0)


def _strong_const(x: Array, value: object) -> Array:
    """A strongly typed rank-0 constant of ``x``'s dtype (``jnp``'s ``_constant_like``)."""
    return ArrayImpl(np.asarray(value).astype(x.dtype), False)


def _like(x: Array, value: object) -> Array:
    """A rank-0 constant of ``x``'s dtype and weak type: what a Python literal (or
    ``lax.full_like``) contributes in ``jnp``'s own formulas (``quotient - 1``)."""
    return ArrayImpl(np.asarray(value).astype(x.dtype), x.weak_type)


def _cmp(fn: BinaryLax, a: Array, b: Array) -> Array:
    """``fn(a, b)`` for a comparison: like ``jax.lax``, a comparison of two weakly typed
    operands is a weakly typed bool (``fcore.lax`` comparisons always return strong bools)."""
    out = fn(a, b)
    if a.weak_type and b.weak_type and not out.weak_type:
        return lax.convert_element_type(out, _bool, True)
    return out


def _promote_inexact1(x: ArrayLike, name: str) -> Array:
    dt, weak = operand(x, name)
    if not dtypes.is_inexact(dt):
        dt = to_inexact(dt)
    return convert(x, dt, weak)


def _promote1(x: ArrayLike, name: str) -> Array:
    return asarray(x, name)


def _promote_numeric1(x: ArrayLike, name: str) -> Array:
    dt, weak = operand(x, name)
    return convert(x, to_numeric(dt), weak)


def _promote2_inexact(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    dt, weak = result_of(x, y, name=name)
    return promote2_dtype(x, y, to_inexact(dt), weak)


def _promote2_numeric(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    dt, weak = result_of(x, y, name=name)
    return promote2_dtype(x, y, to_numeric(dt), weak)


def _unary_inexact(fn: UnaryLax, name: str, doc: str) -> UnaryLax:
    path = unary_eager_path(fn)
    if path is not None and path.accepted <= INEXACT_DTYPES:
        f = _unary_inexact_eager(fn, name, path)
    else:

        def f(x: ArrayLike, /) -> Array:
            if type(x) is ArrayImpl:  # the eager hot path: no property calls
                host = x._np
                if (host.dtype if host is not None else x.aval.dtype) in INEXACT_DTYPES:
                    return fn(x)
            elif is_array(x) and x.dtype in INEXACT_DTYPES:
                return fn(x)
            return fn(_promote_inexact1(x, name))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc} (``jnp.{name}``; integer and bool inputs are promoted to floating)."
    return f


#: ``object.__new__``, looked up once (a lookup on a class makes a method object).
_new_array = ArrayImpl.__new__
_ndarray, _asarray = np.ndarray, np.asarray


def _unary_inexact_eager(fn: UnaryLax, name: str, path: UnaryEagerPath) -> UnaryLax:
    """``_unary_inexact`` of a primitive with an inline eager path (``UnaryEagerPath``): under
    eager evaluation with no eager check on, an ``ArrayImpl`` host operand of a dtype the
    primitive's NumPy function preserves is computed here, as the primitive's eager rule would
    (three Python frames fewer: ``fn``, the eager trace's dispatch, the rule), another goes to
    the rule directly; what the rule declines (an integer operand, to promote) and anything
    else (a tracer) takes the general path. The rule accepts only inexact dtypes."""
    p, rule, compute, preserved = path.primitive, path.rule, path.compute, path.preserved

    def f(x: ArrayLike, /) -> Array:
        if type(x) is ArrayImpl:
            if trace_now() is EVAL_TRACE and not eager_checks() and p.eager_rule is rule:
                h = x._np
                if h is not None and h.dtype in preserved:
                    out = compute(h)  # (no ``out=...``: it costs ~5% of the op where the result is no scalar)
                    r = _new_array(ArrayImpl)  # ArrayImpl(out, x._weak, None, x._aval) without __init__
                    r._np = out if type(out) is _ndarray else _asarray(out)  # a 0-d result is a scalar
                    r._device = None
                    r._weak = x._weak
                    r._aval = x._aval  # the operand's type, known or not
                    return r
                ruled: ArrayImpl | None = rule(x)
                if ruled is not None:
                    return ruled
            # ``_unary_inexact``'s general wrapper, repeated rather than called: a call would add
            # a Python frame to every traced application (jit, grad, vmap of ``jnp.sin``).
            host = x._np
            if (host.dtype if host is not None else x.aval.dtype) in INEXACT_DTYPES:
                return fn(x)
        elif is_array(x) and x.dtype in INEXACT_DTYPES:
            return fn(x)
        return fn(_promote_inexact1(x, name))

    return f


def _to_bool(x: Array) -> Array:
    return x if x.dtype == _bool else _cmp(lax.ne, x, _const(x, 0))



def _full_bool(x: Array, value: bool) -> Array:
    c = ArrayImpl(np.asarray(value, _bool), False)
    return c if x.shape == () else lax.broadcast_in_dim(c, x.shape, ())

