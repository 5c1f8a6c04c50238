"""``vmap`` against JAX: in_axes/out_axes as pytree prefixes, keyword arguments, axis_size,
outputs that are not arrays, nesting, and the errors (types, and the parts of the messages that
name the offending argument, axis and sizes).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

from api_common import Lib, check, check_error

X3 = np.array([0.5, -1.0, 2.0], np.float32)
X23 = np.arange(6, dtype=np.float32).reshape(2, 3)
X4 = np.ones(4, np.float32)
Pair = namedtuple("Pair", ["u", "v"])


def add(a: Any, b: Any) -> Any:
    return a + b


# -- axes ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "in_axes, out_axes", [(0, 0), (1, 0), (-1, 0), (0, 1), (1, -1), (-2, -2), (1, -2), ([1], 0)]
)
def test_in_and_out_axes(in_axes: Any, out_axes: Any) -> None:
    check(lambda L: L.ad.vmap(lambda x: L.np.sin(x) * 2, in_axes=in_axes, out_axes=out_axes)(X23))


def test_in_axes_pytree_prefixes() -> None:
    d = {"a": X23, "b": 2.0, "c": [X3, X23]}
    check(lambda L: L.ad.vmap(lambda p: p["a"] * p["b"] + p["c"][0], in_axes=({"a": 1, "b": None, "c": [0, 1]},))(d))
    check(lambda L: L.ad.vmap(lambda p: p["a"].sum() + p["b"], in_axes=({"a": -1, "b": None, "c": None},))(d))
    check(lambda L: L.ad.vmap(lambda p, s: p.u * s + p.v, in_axes=(Pair(0, None), None))(Pair(X3, 1.0), 3.0))
    check(lambda L: L.ad.vmap(lambda xs: xs[0] * xs[1], in_axes=([0, None],))([X3, 2.0]))
    check(lambda L: L.ad.vmap(lambda p: p["a"] + p["b"], in_axes=1)({"a": X23, "b": X23}))


def test_out_axes_pytree_prefixes_and_none() -> None:
    def f(x: Any) -> Any:
        return {"a": x, "b": (x * 2, 7.0), "c": None}

    check(lambda L: L.ad.vmap(f, out_axes={"a": 1, "b": (0, None), "c": None})(X23))
    check(lambda L: L.ad.vmap(lambda x: (x, 5.0, 2), out_axes=(0, None, None))(X3))


def test_axis_size_and_unmapped_arguments() -> None:
    check(lambda L: L.ad.vmap(lambda x: x * 2, in_axes=None, axis_size=4)(X3))
    check(lambda L: L.ad.vmap(lambda: 2.0, axis_size=3)())
    check(lambda L: L.ad.vmap(lambda x: x * 2, axis_size=3)(X3))
    check(lambda L: L.ad.vmap(lambda x, s, n: x * 2, in_axes=(0, None, None))(X3, "label", None))


def test_keyword_arguments_are_mapped_over_axis_0() -> None:
    check(lambda L: L.ad.vmap(lambda x, y: x * y)(X3, y=X3))
    check(lambda L: L.ad.vmap(lambda x, y: x * y, in_axes=(1,))(X23, y=X3))
    check(lambda L: L.ad.vmap(lambda x, y: x * y)(x=X3, y=X3))
    check_error(lambda L: L.ad.vmap(lambda x, y: x * y)(X3, y=2.0), "map its argument along axis 0", "its shape is ()")


def test_outputs_that_are_not_batched() -> None:
    check(lambda L: L.ad.vmap(lambda x: None)(X3))
    check(lambda L: L.ad.vmap(lambda x: (x, None, 2, 2.5, np.float32(1.5)))(X3))
    check(lambda L: L.ad.vmap(lambda x: L.np.ones(2))(X3))


def test_dtypes_and_weak_types() -> None:
    check(lambda L: L.ad.vmap(lambda x, y: x * y, in_axes=(0, None))(X3, 2.0))
    check(lambda L: L.ad.vmap(lambda x: x * 2.0)(L.np.asarray([1.0, 2.0])))
    check(lambda L: L.ad.vmap(lambda x: x * 2)(np.arange(3)))
    check(lambda L: L.ad.vmap(lambda x: ~x)(np.array([True, False])))
    check(lambda L: L.ad.vmap(lambda x: x * 2)(np.zeros((0, 2), np.float32)))


def test_nesting_and_composition() -> None:
    check(lambda L: L.ad.vmap(L.ad.vmap(lambda x: L.np.sin(x)))(X23))
    check(lambda L: L.ad.vmap(L.ad.vmap(lambda x, y: x * y, in_axes=(0, None)), in_axes=(None, 0))(X3, X23))
    check(lambda L: L.ad.vmap(L.ad.grad(lambda x: x**3))(X3))
    check(lambda L: L.ad.grad(lambda x: L.ad.vmap(lambda y: y**3)(x).sum())(X3))
    check(lambda L: L.ad.vmap(L.ad.vmap(lambda x: x.sum(), in_axes=1, out_axes=0), in_axes=0, out_axes=0)(X23[None]))


def test_concrete_shapes_are_available() -> None:
    check(lambda L: L.ad.vmap(lambda x: x * 2 if x.shape == () else x)(X3))


# -- errors ----------------------------------------------------------------------------------------
def test_inconsistent_sizes() -> None:
    check_error(lambda L: L.ad.vmap(add)(X3, X4), "inconsistent sizes", "axis 0 of argument a of type float32[3]",
                "axis 0 of argument b of type float32[4]")
    check_error(lambda L: L.ad.vmap(lambda x, y, z: x + y + z)(X3, X4, X3), "most axes (2 of them) had size 3",
                "one axis had size 4: axis 0 of argument y")
    check_error(lambda L: L.ad.vmap(add)(X3, b=X4), "axis 0 of kwargs['b'] of type float32[4]")
    check_error(lambda L: L.ad.vmap(lambda *a: a[0] + a[1])(X3, X4), "argument a of type", "args[1] of type")
    check_error(lambda L: L.ad.vmap(lambda p: p["u"] * p["v"][0])({"u": X3, "v": [X23]}), "argument p['v'][0]")
    check_error(lambda L: L.ad.vmap(add, in_axes=(0, 1))(X3, X23.T), "axis 1 of argument b of type float32[3,2]")
    check_error(lambda L: L.ad.vmap(lambda x: x, axis_size=4)(X3), "the `axis_size` argument was 4")


def test_axis_out_of_range() -> None:
    check_error(lambda L: L.ad.vmap(lambda x: x, in_axes=2)(X23), "along axis 2", "at least 3", "(2, 3)")
    check_error(lambda L: L.ad.vmap(lambda x: x, in_axes=-3)(X23), "along axis -3", "at least 3")
    check_error(lambda L: L.ad.vmap(lambda x: x)(3.0), "along axis 0", "its shape is ()")
    check_error(lambda L: L.ad.vmap(lambda x: x * 2, out_axes=2)(X23), "axis 2 is out of bounds for array of dimension 2")


def test_nothing_to_map() -> None:
    check_error(lambda L: L.ad.vmap(lambda x: x * 2, in_axes=None)(X3), "at least one non-None value in in_axes")
    check_error(lambda L: L.ad.vmap(lambda: 2.0)(), "at least one argument")


def test_batched_output_with_out_axes_none() -> None:
    check_error(lambda L: L.ad.vmap(lambda x: x * 2, out_axes=None)(X3), "at vmap out_axes, got axis spec None",
                "batched on axis 0")
    check_error(lambda L: L.ad.vmap(lambda x: (x, x), out_axes=(0, None))(X3), "at vmap out_axes[1]")
    check_error(lambda L: L.ad.vmap(lambda x: {"a": x, "b": [x, x]}, out_axes={"a": 0, "b": [0, None]})(X3),
                "at vmap out_axes['b'][1]")


def test_bad_axis_specifications() -> None:
    for spec in (1.0, "a", {"a": 0}, True, np.int64(0)):
        check_error(lambda L: L.ad.vmap(lambda x: x, in_axes=spec), "vmap in_axes must be an int, None, or a tuple")
    check_error(lambda L: L.ad.vmap(lambda x: x, in_axes=(np.int64(0),)), "(nested) container with those types as leaves")
    check_error(lambda L: L.ad.vmap(lambda x: x, out_axes=1.0), "vmap out_axes must be an int, None, or (nested) container")
    check_error(lambda L: L.ad.vmap(add, in_axes=(0,))(X3, X3), "len(in_axes)=1, len(args)=2")


def test_axis_specifications_that_are_not_prefixes() -> None:
    prefix = "specification must be a tree prefix of the corresponding value"
    check_error(lambda L: L.ad.vmap(lambda d: d["a"], in_axes=({"a": 0},))({"a": X3, "b": X3}), "vmap in_axes " + prefix,
                "different numbers of pytree children", "vmap in_axes[0]")
    check_error(lambda L: L.ad.vmap(lambda d: d["a"], in_axes=({"a": 0, "c": 0},))({"a": X3, "b": X3}),
                "different pytree metadata")
    check_error(lambda L: L.ad.vmap(lambda d: d[0], in_axes=((0, 0),))([X3, X3]), "different types")
    check_error(lambda L: L.ad.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(X3), "vmap out_axes " + prefix,
                "different lengths of tuple")
    check_error(lambda L: L.ad.vmap(lambda x: (x, x), out_axes=[0, 0])(X3), "different types")


def test_values_that_are_not_arrays() -> None:
    check_error(lambda L: L.ad.vmap(lambda x, s: x)(X3, "a"), "of type <class 'str'> is not a valid JAX type")
    check_error(lambda L: L.ad.vmap(lambda x: (x, "a"))(X3), "Output from batched function 'a'")
    check_error(lambda L: L.ad.vmap(3), "Expected a callable value")


def test_branching_on_a_batched_value() -> None:
    check_error(lambda L: L.ad.vmap(lambda x: x if x > 0 else -x)(X3))


def test_name_is_the_functions() -> None:
    def step(x: Any) -> Any:
        return x

    assert check(lambda L: L.ad.vmap(step).__name__) == "step"
