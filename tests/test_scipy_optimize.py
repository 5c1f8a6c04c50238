"""``fcore.scipy.optimize.minimize`` against ``jax.scipy.optimize.minimize``: every field of
``OptimizeResults`` (values, dtypes, weak types) for BFGS and the experimental L-BFGS: values
under ``jit`` in float64, staged types in float32 and float64 and under ``vmap``, with
``args`` and ``options``, and JAX's errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.optimize as jso
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.scipy import optimize as fso
from test_numpy_common import modes

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def _rosen(np_: Any) -> Any:
    def rosen(x: Any, scale: Any = 100.0) -> Any:
        return np_.sum(scale * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    return rosen


def _same(got: Any, want: Any, rtol: float) -> None:
    """Every field: the same shape, dtype, weak type, and values (integers exactly)."""
    assert type(got).__name__ == "OptimizeResults" and got._fields == want._fields
    for field, g, w in zip(want._fields, got, want):
        if w is None:
            assert g is None, field
            continue
        assert isinstance(g, fcore.Array), field
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type), field
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=field)
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol, err_msg=field)


def _f(np_: Any) -> Any:
    def f(x: Any, scale: Any = 0.1) -> Any:
        n = np_.arange(x.size)
        return np_.sum((x - n) ** 2 * (n + 1)) + scale * np_.sum(x ** 4) + np_.prod(np_.cos(x))
    return f


def _both_methods(lib: Any, np_: Any) -> Any:
    """BFGS from one starting point and L-BFGS from another: one program, so one compile per
    library."""
    return lambda xs: (lib.minimize(_f(np_), xs[0], method="BFGS"), lib.minimize(_f(np_), xs[1], (0.2,), method=LBFGS))


def test_minimize_matches_jax_under_jit() -> None:
    """float64, inside ``jit``: the same iterates, so the same results, counts and statuses as JAX."""
    x0 = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]], np.float64)
    with modes(x64=True):
        got = fcore.jit(_both_methods(fso, fnp))(fnp.asarray(x0))
        want = jax.jit(_both_methods(jso, jnp))(jnp.asarray(x0))
    for g, w in zip(got, want):
        assert bool(w.success)
        _same(g, w, 1e-8)


def _avals(closed: Any) -> list[tuple[tuple[int, ...], str, bool]]:
    return [(tuple(a.shape), str(a.dtype), bool(a.weak_type)) for a in closed.out_avals]


@pytest.mark.parametrize("x64", [False, True])
def test_minimize_staged_types_match_jax(x64: bool) -> None:
    """The results' shapes, dtypes and weak types, float32 and float64, with ``options``, and
    under ``vmap`` (staged only: no compile)."""
    x0 = np.zeros(3, np.float32)
    opts = {"maxiter": 40, "gtol": 1e-4}

    def run(lib: Any, np_: Any) -> Any:
        return lambda x: (lib.minimize(_rosen(np_), x, (100.0,), method="BFGS", options=opts),
                          lib.minimize(_rosen(np_), x, method=LBFGS, options={"maxcor": 4, "maxfun": 50}))

    with modes(x64=x64):
        assert _avals(fcore.make_jaxpr(run(fso, fnp))(x0)) == _avals(jax.make_jaxpr(run(jso, jnp))(x0))
        batch = np.stack([x0, x0 + 1])
        assert _avals(fcore.make_jaxpr(fcore.vmap(run(fso, fnp)))(batch)) == _avals(jax.make_jaxpr(jax.vmap(run(jso, jnp)))(batch))


def test_minimize_errors() -> None:
    x0 = np.zeros(2, np.float32)
    for lib, np_ in ((fso, fnp), (jso, jnp)):
        with pytest.raises(TypeError, match="must be a tuple"):
            lib.minimize(_rosen(np_), np_.asarray(x0), [1.0], method="BFGS")
        with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
            lib.minimize(_rosen(np_), np_.asarray(x0), method="Nelder-Mead")
        with pytest.raises(TypeError):
            lib.minimize(_rosen(np_), np_.asarray(x0), method="BFGS", options={"bogus": 1})


def test_public_names() -> None:
    assert sorted(n for n in dir(fso) if not n.startswith("_")) == sorted(n for n in dir(jso) if not n.startswith("_"))


def test_while_loop_carries_a_weak_float_in_the_bodys_dtype() -> None:
    """A Python float carried where the body makes float32 (x64 on) becomes float32, as in JAX
    (BFGS's line search relies on it)."""
    def run(lax: Any, np_: Any) -> Any:
        return lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x + 1), (0, 0.0))

    x = np.float32(2.0)
    with modes(x64=True):
        mine = fcore.make_jaxpr(run(fcore.lax, fnp))(x).out_avals
        theirs = jax.make_jaxpr(run(jax.lax, jnp))(x).out_avals
        assert [(a.dtype, a.weak_type) for a in mine] == [(a.dtype, a.weak_type) for a in theirs]
        got = fcore.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * fnp.float32(2.0) + 1), (0, 0.0))
        assert got[1].dtype == np.float32 and float(got[1]) == 7.0
