"""Helpers shared by ``fcore.scipy.special`` and ``fcore.scipy.stats``: JAX's argument promotion (``promote_args_inexact``,
``promote_args_complex``), typed constants, and the ``vectorize``/``piecewise`` forms JAX's
special functions are written with (element-by-element functions under ``vmap``; every
branch evaluated and the right one selected)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import convert, promote_n, result_of, to_inexact, to_numeric

__all__ = ["promote_args_inexact", "promote_args_complex", "promote_args_numeric", "promote_dtypes_inexact", "inexact", "const", "finfo_eps", "piecewise", "vectorize",
           "check_f32_f64"]


def promote_args_inexact(name: str, *args: ArrayLike) -> list[Array]:
    """The operands in their common inexact dtype, broadcast together (JAX's helper)."""
    dt, weak = result_of(*args, name=name)
    return promote_n(name, *args, dt=to_inexact(dt), weak=weak)


def promote_dtypes_inexact(*args: ArrayLike) -> list[Array]:
    """The operands in their common inexact dtype, shapes untouched."""
    dt, weak = result_of(*args, name="promote_dtypes_inexact")
    return [convert(a, to_inexact(dt), weak) for a in args]


def promote_args_numeric(name: str, *args: ArrayLike) -> list[Array]:
    """The operands in their common numeric dtype (bool becomes int32), broadcast together."""
    dt, weak = result_of(*args, name=name)
    return promote_n(name, *args, dt=to_numeric(dt), weak=weak)


def promote_args_complex(name: str, *args: ArrayLike) -> list[Array]:
    """The operands in their common complex dtype (float32 becomes complex64)."""
    dt, weak = result_of(*args, name=name)
    dt = to_inexact(dt)
    if not dtypes.is_complex(dt):
        dt = dtypes.complex128 if dt == dtypes.float64 else dtypes.complex64
    return promote_n(name, *args, dt=dt, weak=weak)


def const(x: ArrayLike | DType, value: float | complex) -> Array:
    """``value`` as a strongly typed scalar of ``x``'s dtype (JAX's ``lax._const``)."""
    dt = x if isinstance(x, np.dtype) else fnp.asarray(x).dtype
    return ArrayImpl(np.asarray(value).astype(dt), False)


_EPS = {dtypes.bfloat16: 2.0 ** -7, dtypes.float16: 2.0 ** -10, dtypes.float32: 2.0 ** -23, dtypes.float64: 2.0 ** -52}


def finfo_eps(dt: DType) -> float:
    """Machine epsilon of a float dtype."""
    return _EPS[dt]


def check_f32_f64(x: Array, name: str = "x") -> None:
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{name}.dtype={x.dtype} is not supported, see docstring for supported types.")


def vectorize(f: Callable[..., Any]) -> Callable[..., Any]:
    """``jnp.vectorize`` of a function of scalars: operands broadcast together, ``f`` mapped
    over every element with ``vmap`` (loops inside ``f`` stop per element)."""

    def wrapped(*args: ArrayLike) -> Any:
        arrays = [fnp.asarray(a) for a in args]
        shape = fnp.broadcast_shapes(*(a.shape for a in arrays))
        if not shape:
            return f(*arrays)
        flat = [fnp.reshape(fnp.broadcast_to(a, shape), (-1,)) for a in arrays]
        out = vmap(f)(*flat)
        from fcore.tree_util import tree_map

        return tree_map(lambda o: fnp.reshape(o, shape), out)

    wrapped.__name__ = getattr(f, "__name__", "vectorized")
    wrapped.__doc__ = f.__doc__
    return wrapped


def piecewise(x: Array, condlist: Sequence[ArrayLike], funclist: Sequence[Any], *args: Any, **kw: Any) -> Array:
    """``jnp.piecewise`` on an elementwise ``x``: the value of the function (or constant) of the
    last true condition, else of the default (the extra last entry of ``funclist``, else 0)."""
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funcs = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funcs = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")
    conds = fnp.stack([fnp.broadcast_to(fnp.asarray(c, dtype=bool), x.shape) for c in condlist])
    counts = fnp.cumsum(fnp.concatenate([fnp.zeros_like(conds[:1]), conds], axis=0), axis=0)
    index = fnp.argmax(counts, axis=0).astype(np.int32)
    dt = x.dtype
    values = [fnp.broadcast_to(f(x, *args, **kw).astype(dt), x.shape) if callable(f)
              else fnp.full(x.shape, fnp.asarray(f, dtype=dt)) for f in funcs]
    return lax.select_n(index, *values)


def inexact(x: ArrayLike) -> Array:
    """``x`` in its inexact dtype."""
    dt, weak = result_of(x, name="special")
    return convert(x, to_inexact(dt), weak)
