"""The less central ``fcore.numpy`` functions (manipulation, index construction, extra
elementwise functions, polynomials and numerical routines) against ``jax.numpy``: values,
dtypes and weak types, errors, and a few under jit/grad/vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from test_numpy_common import BF16, check, check_raises, modes, sample

X = sample(np.dtype(np.float32), (3, 4), seed=21)
XI = sample(np.dtype(np.int32), (3, 4), seed=22)
P = np.array([1.0, -2.0, 3.0])
Q = np.array([2.0, 0.5])
XP = np.array([0.0, 1.0, 2.5, 4.0])
FP = np.array([1.0, 3.0, -1.0, 0.0])
M = sample(np.dtype(np.float32), (3, 6), seed=23)
HV = np.array([0.1, 0.5, 0.5, 1.0, 2.0, 3.0, 3.0])
# Normal floats only: XLA flushes subnormals where NumPy (fcore's eager evaluation) does not.
FLOATS = np.array([0.0, -0.0, 1.0, -3.5, 3e38, np.inf, -np.inf, np.nan, 0.75, 1024.0, 1.2e-38], np.float32)

Case = tuple[str, tuple[Any, ...], dict[str, Any]]
CASES: list[Case] = [
    ("diff", (X,), {}), ("diff", (XI, 2, 0), {}), ("diff", (XI > 0,), {}), ("diff", (X,), {"prepend": 0, "append": np.ones((3, 1))}),
    ("diff", (3.0,), {}), ("diff", (X, -1), {}), ("ediff1d", (XI,), {"to_end": [7, 8], "to_begin": -1}),
    ("append", (X, 1.5), {}), ("append", (XI, XI), {"axis": 0}),
    ("insert", (X, 1, 9.5), {}), ("insert", (X, -1, 9.5), {"axis": 0}), ("insert", (X, [0, 2], 9.5), {"axis": 1}),
    ("insert", (X, slice(1, 3), 9.5), {"axis": 1}), ("insert", (X, np.array([3, 0, 0]), 9.5), {"axis": 1}),
    ("insert", (X, 1, np.array([1.0, 2.0, 3.0, 4.0])), {"axis": 0}), ("insert", (X, 1, 2), {}),
    ("delete", (X, 1), {}), ("delete", (X, -1), {"axis": 0}), ("delete", (X, slice(1, 3)), {"axis": 1}),
    ("delete", (X, np.array([0, 2, 2])), {"axis": 1}), ("delete", (X, np.array([True, False, True, False])), {"axis": 1}),
    ("delete", (X, np.array([0, 2])), {"axis": 1, "assume_unique_indices": True}), ("delete", (X, [0, 2]), {}),
    ("rot90", (X,), {}), ("rot90", (X, 2), {}), ("rot90", (X, -1), {}), ("rot90", (X, 1, (1, 0)), {}), ("rot90", (XI[0],), {}),
    ("unstack", (X,), {}), ("unstack", (X,), {"axis": 1}), ("dsplit", (np.ones((2, 2, 4)), 2), {}),
    ("resize", (X, (5, 3)), {}), ("resize", (XI, 7), {}),
    ("block", ([[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 2)), np.ones((1, 1))]],), {}),
    ("block", ([np.ones(2), np.zeros(3)],), {}), ("block", ((np.ones(2),),), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0, 3, 0]),), {}), ("trim_zeros", (np.array([0, 0, 1, 0]), "f"), {}),
    ("diagflat", (np.arange(3),), {}), ("diagflat", (np.arange(4.0).reshape(2, 2), -1), {}),
    ("fill_diagonal", (X, 5.0), {"inplace": False}), ("fill_diagonal", (np.zeros((4, 4)), np.arange(2.0)), {"inplace": False}),
    ("choose", (np.array([0, 1, 2, 1]), [np.arange(4), np.arange(4) * 10, 100.5]), {"mode": "clip"}),
    ("choose", (np.array([0, 5, -1]), [np.arange(3), -np.arange(3)]), {"mode": "wrap"}),
    ("choose", (np.array([0, 1]), [np.arange(2), -np.arange(2)]), {}),
    ("tril_indices", (4, 1, 5), {}), ("triu_indices", (3,), {}), ("triu_indices", (4, -1, 2), {}), ("tril_indices", (3, 5), {}),
    ("tril_indices_from", (X, 1), {}), ("triu_indices_from", (X,), {}), ("diag_indices", (3, 3), {}),
    ("diag_indices_from", (np.ones((3, 3)),), {}), ("indices", ((2, 3),), {}), ("indices", ((2, 3),), {"sparse": True}),
    ("indices", ((2,),), {"dtype": np.int8}), ("ix_", (np.array([0, 1]), np.array([2, 0, 1])), {}),
    ("unravel_index", (np.array([0, 5, 11, 12, -1, -20]), (3, 4)), {}), ("unravel_index", (7, (3, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([3, 1])), (3, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 5]), np.array([3, -1])), (3, 4)), {"mode": "clip"}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([3, 1])), (3, 4)), {"order": "F"}),
    ("ravel_multi_index", ((np.array([0, 5]), np.array([3, 1])), (3, 4)), {}),
    ("fmax", (np.array([1.0, np.nan, 3.0]), np.array([np.nan, 2.0, np.nan])), {}), ("fmin", (X, X[::-1]), {}),
    ("fmax", (XI, 2.5), {}), ("logaddexp2", (X, X[::-1]), {}), ("logaddexp2", (XI, 2), {}),
    ("gcd", (np.array([12, -18, 0, 7]), np.array([8, 12, 5, 0])), {}), ("lcm", (np.array([12, -18, 0, 7]), np.array([8, 12, 5, 0])), {}),
    ("gcd", (np.array([12, 0], np.int8), 4), {}), ("gcd", (np.array([1.5]), 2), {}),
    ("frexp", (FLOATS,), {}), ("frexp", (FLOATS[6:].astype(np.float16),), {}), ("frexp", (np.array([0, 3, -8, 1024]),), {}),
    ("frexp", (np.array([1j]),), {}), ("ldexp", (FLOATS, np.array(3)), {}), ("ldexp", (FLOATS.astype(BF16), -3), {}),
    ("ldexp", (FLOATS, 1.5), {}), ("modf", (FLOATS,), {}), ("spacing", (FLOATS,), {}), ("spacing", (FLOATS[6:].astype(np.float16),), {}),
    ("angle", (np.array([1 + 1j, -1j], np.complex64),), {}), ("angle", (np.array([1 + 1j]),), {"deg": True}), ("angle", (1.0,), {}),
    ("angle", (XI,), {}), ("iscomplex", (np.array([1 + 1j, 2]),), {}), ("isreal", (XI,), {}),
    ("unwrap", (np.array([0.0, 3.0, 6.5, 0.2, -5.0]),), {}), ("unwrap", (np.array([0, 3, 7, 1]),), {"period": 4}),
    ("unwrap", (np.linspace(0, 20, 10),), {"discont": 2.0}),
    ("array_equiv", (X, X[0]), {}), ("array_equiv", (X, X[:, :2]), {}), ("copy", (X,), {}), ("astype", (X, np.int8), {}),
    ("astype", (XI, None), {}), ("astype", (np.array([0j, 1j]), bool), {}),
    ("polyadd", (P, Q), {}), ("polysub", (np.array([1, 2]), np.array([3, 4, 5])), {}), ("polymul", (P, Q), {}),
    ("polymul", (np.array([1, 2]), np.array([3, 4, 5])), {}), ("polyval", (P, X), {}), ("polyval", (np.array([1, 2]), 3), {}),
    ("polyval", (np.ones((3, 2)), np.arange(2.0)), {}), ("polyder", (P,), {}), ("polyder", (np.arange(5), 2), {}),
    ("polyint", (P,), {}), ("polyint", (P, 2), {"k": [1.0, 2.0]}), ("polyint", (np.arange(3), 3, 1.5), {}),
    ("vander", (np.array([1.0, 2.0, 3.0]),), {}), ("vander", (np.array([1, 2, 3]), 2, True), {}),
    ("convolve", (np.arange(3), np.arange(2)), {"preferred_element_type": np.int32}),
    ("interp", (np.array([-1.0, 0.0, 0.5, 2.5, 3.0, 5.0]), XP, FP), {}), ("interp", (1.7, XP, FP), {"left": -9, "right": 9}),
    ("interp", (np.array([-1.0, 5.0]), XP, FP), {"left": "extrapolate", "right": "extrapolate"}),
    ("interp", (np.array([-1.0, 0.5, 5.0]), XP, FP), {"period": 4.0}), ("interp", (np.array([1, 2]), np.array([0, 3]), np.array([0, 6])), {}),
    ("trapezoid", (M,), {}), ("trapezoid", (M[:, :5], np.array([0.0, 1.0, 3.0, 3.5, 5.0])), {}), ("trapezoid", (M,), {"dx": 0.5, "axis": 0}),
    ("trapezoid", (np.arange(5),), {}), ("geomspace", (1, 1000, 4), {}), ("geomspace", (-1, -100, 3), {"endpoint": False}),
    ("geomspace", (np.array([1.0, 2.0]), 100.0, 3), {"axis": 1}),
    ("cov", (M,), {}), ("cov", (M,), {"rowvar": False}), ("cov", (M[0], M[1]), {}), ("cov", (M,), {"bias": True}),
    ("cov", (M,), {"fweights": np.array([1, 2, 1, 3, 1, 1])}), ("cov", (M,), {"aweights": np.array([1.0, 2, 1, 3, 1, 1])}),
    ("cov", (M,), {"fweights": np.array([1, 2, 1, 3, 1, 1]), "aweights": np.linspace(0.5, 1, 6)}), ("cov", (M[0],), {}),
    ("cov", (np.arange(6).reshape(2, 3),), {}), ("cov", (np.array([[1j, 2, 3], [1, 0, 1j]]),), {}),
    ("corrcoef", (M,), {}), ("corrcoef", (M[0], M[1]), {}), ("corrcoef", (M[0],), {}),
    ("histogram", (HV,), {}), ("histogram", (HV, 3), {}), ("histogram", (HV, np.array([0.0, 1.0, 4.0])), {}),
    ("histogram", (HV, 4, (0, 2)), {}), ("histogram", (HV, 3), {"weights": np.arange(7.0)}), ("histogram", (HV, 3), {"density": True}),
    ("histogram", (np.ones(3),), {}), ("histogram_bin_edges", (HV, 5), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Eagerly (many arguments are static: they cannot be traced in either library)."""
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    with modes():
        try:
            theirs(*args, **kwargs)
        except (TypeError, ValueError, NotImplementedError) as e:
            expected = TypeError if isinstance(e, TypeError) else ValueError if isinstance(e, ValueError) else NotImplementedError
            with pytest.raises(expected):
                ours(*args, **kwargs)
            return
        check(lambda *a: ours(*a, **kwargs), lambda *a: theirs(*a, **kwargs), *args, staged=False)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_correlate(name: str, mode: str) -> None:
    pairs = [(np.arange(5.0), np.array([1.0, 0.5, 0.25])), (np.arange(3), np.arange(5)), (np.array([1 + 1j, 2]), np.array([1j, 1]))]
    with modes():
        for a, v in pairs:
            check(lambda a, v: getattr(fnp, name)(a, v, mode=mode), lambda a, v: getattr(jnp, name)(a, v, mode=mode), a, v)


def test_x64_and_grids() -> None:
    with modes(x64=True):
        v64 = np.array([1e-300, 3.0, -2.5e300, 0.0])
        for name, args in (("frexp", (v64,)), ("ldexp", (v64, 5)), ("spacing", (v64,)), ("tril_indices", (3,)), ("diag_indices", (2,))):
            check(getattr(fnp, name), getattr(jnp, name), *args, staged=False)
    with modes():
        grids: list[tuple[Callable[[Any], Any], Any]] = [
            (lambda m: m[0:3, 1:5:2], None), (lambda m: m[0:1:5j], None), (lambda m: m[0:1:0.25, 0:2], None),
        ]
        for index, _ in grids:
            check(lambda: index(fnp.mgrid), lambda: index(jnp.mgrid), staged=False)
            check(lambda: index(fnp.ogrid), lambda: index(jnp.ogrid), staged=False)


@pytest.mark.parametrize("value", [1j, 1.0, X, np.complex64(1), "a", [1, 2], None, np.float32(1)], ids=repr)
def test_type_predicates(value: Any) -> None:
    assert fnp.iscomplexobj(value) == jnp.iscomplexobj(value)
    assert fnp.isrealobj(value) == jnp.isrealobj(value)
    assert fnp.isscalar(value) == jnp.isscalar(value)


def test_transformations() -> None:
    with modes():
        check(fcore.jit(fnp.gcd), jax.jit(jnp.gcd), np.array([12, 18]), np.array([8, 4]), staged=False)
        check(fcore.grad(lambda v: fnp.interp(v, XP, FP).sum()), jax.grad(lambda v: jnp.interp(v, XP, FP).sum()),
              np.array([0.5, 2.0, 3.0]), staged=False)
        check(fcore.vmap(fnp.polyval, in_axes=(None, 0)), jax.vmap(jnp.polyval, in_axes=(None, 0)), P, np.arange(4.0), staged=False)
        check(fcore.jit(lambda v: fnp.insert(v, 1, 5.0, axis=1)), jax.jit(lambda v: jnp.insert(v, 1, 5.0, axis=1)), X, staged=False)
        check(fcore.grad(lambda v: fnp.cov(v).sum()), jax.grad(lambda v: jnp.cov(v).sum()), M, staged=False)
    with pytest.raises(fcore.ConcretizationError):
        fcore.jit(lambda v: fnp.choose(v, [np.arange(2), -np.arange(2)]))(np.array([0, 1]))
    with modes():
        check_raises(lambda: fnp.fill_diagonal(X, 1.0), lambda: jnp.fill_diagonal(X, 1.0), exc=NotImplementedError)
