"""``make_jaxpr`` and ``ShapeDtypeStruct`` against jax: arguments, statics, pytrees, shapes.

For each case both libraries trace the same function on the same arguments; the input and
output avals (shape, dtype, weak type) must agree, and the output tree structure too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp

X3 = np.arange(3, dtype=np.float32)


def _avals(avals: Any) -> list[tuple[tuple[int, ...], str, bool]]:
    return [(tuple(a.shape), np.dtype(a.dtype).name, bool(a.weak_type)) for a in avals]


class _F:
    np, make_jaxpr, SDS = fnp, staticmethod(fcore.make_jaxpr), fcore.ShapeDtypeStruct


class _J:
    np, make_jaxpr, SDS = jnp, staticmethod(jax.make_jaxpr), jax.ShapeDtypeStruct


CASES: dict[str, Callable[[Any], Any]] = {
    "static_argnums_negative": lambda L: L.make_jaxpr(lambda x, n: x * n, static_argnums=-1)(X3, 3),
    "static_argnums_tuple_negative": lambda L: L.make_jaxpr(lambda n, x, m: x * n + m, static_argnums=(0, -1))(2, X3, 1),
    "kwargs": lambda L: L.make_jaxpr(lambda x, y=None: x * y)(X3, y=X3),
    "kwargs_pytree": lambda L: L.make_jaxpr(lambda x, *, d: x * d["k"] + d["j"][0])(X3, d={"k": 2.0, "j": [X3]}),
    "shape_dtype_struct": lambda L: L.make_jaxpr(lambda x: x + 1)(L.SDS((2, 3), np.float32)),
    "shape_dtype_struct_weak": lambda L: L.make_jaxpr(lambda x: x + 1)(L.SDS((), np.float32, weak_type=True)),
    "shape_dtype_struct_int64": lambda L: L.make_jaxpr(lambda x: x + 1)(L.SDS((2,), np.int64)),
    "python_scalars": lambda L: L.make_jaxpr(lambda a, b, c: (a * b, c))(1.0, 2, True),
    "float64_array_without_x64": lambda L: L.make_jaxpr(lambda x: x)(np.ones(2)),
    "pytree_in_out": lambda L: L.make_jaxpr(lambda t: {"x": t[0], "y": (t[1], t[0] * 2)})((X3, [X3])),
    "none_and_literal_outputs": lambda L: L.make_jaxpr(lambda x: (None, 1.0, x))(X3),
    "array_argument": lambda L: L.make_jaxpr(lambda x: x * 2)(L.np.ones(3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_make_jaxpr_matches_jax(name: str) -> None:
    ours, theirs = CASES[name](_F), CASES[name](_J)
    assert _avals(ours.in_avals) == _avals(theirs.in_avals)
    assert _avals(ours.out_avals) == _avals(theirs.out_avals)


def test_return_shape_matches_jax() -> None:
    def f(L: Any) -> Callable[[Any], Any]:
        return lambda x: {"x": x, "y": (x * 2, 1, L.np.sum(x) > 0), "z": None}

    ours, our_shapes = fcore.make_jaxpr(f(_F), return_shape=True)(X3)
    theirs, their_shapes = jax.make_jaxpr(f(_J), return_shape=True)(X3)
    assert repr(our_shapes) == repr(their_shapes)
    assert str(fcore.tree_util.tree_structure(our_shapes)) == str(jax.tree_util.tree_structure(their_shapes))
    assert ours == fcore.make_jaxpr(f(_F))(X3)


def test_shape_dtype_struct_matches_jax() -> None:
    for args in [((2, 3), np.float32), ((), np.int64), ([4], "bfloat16")]:
        ours, theirs = fcore.ShapeDtypeStruct(*args), jax.ShapeDtypeStruct(*args)  # type: ignore[no-untyped-call]
        assert repr(ours) == repr(theirs)
        assert (ours.shape, ours.dtype, ours.ndim, ours.size, ours.weak_type) == (
            theirs.shape,
            theirs.dtype,
            theirs.ndim,
            theirs.size,
            theirs.weak_type,
        )
    weak = fcore.ShapeDtypeStruct((), np.float32, weak_type=True)
    assert repr(weak) == repr(jax.ShapeDtypeStruct((), np.float32, weak_type=True))  # type: ignore[no-untyped-call]
    assert weak != fcore.ShapeDtypeStruct((), np.float32) and hash(weak) == hash(weak.update())
    assert weak.update(shape=(2,)) == fcore.ShapeDtypeStruct((2,), np.float32, weak_type=True)


def test_make_jaxpr_wrapper_is_named_like_jax() -> None:
    def fun(x: Any) -> Any:
        return x

    assert fcore.make_jaxpr(fun).__name__ == jax.make_jaxpr(fun).__name__ == "make_jaxpr(fun)"


def test_static_argnums_errors() -> None:
    with pytest.raises(ValueError, match="static_argnums"):
        fcore.make_jaxpr(lambda x: x, static_argnums=3)(X3)
    with pytest.raises(TypeError, match="str"):
        fcore.make_jaxpr(lambda x, s: x)(X3, "not an array")
