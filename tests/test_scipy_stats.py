"""``fcore.scipy.stats`` against ``jax.scipy.stats``: every function of every distribution
module (values at ordinary points and outside the support, dtypes and weak types, x64 off
and on, staged avals), derivatives, ``jit``/``vmap``, ``gaussian_kde``, ``mode``,
``rankdata``, ``sem``, the modules' public names, and the errors JAX raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest

import fcore
from fcore.scipy import stats as fst
from test_numpy_common import check, check_raises, modes

X = np.array([-2.0, -0.5, 0.0, 0.3, 1.0, 2.5, 7.0, np.inf, np.nan], np.float32)
POS = np.array([0.0, 0.3, 1.0, 2.5, 7.0, 40.0, -1.0, np.inf], np.float32)
Q = np.array([0.0, 0.01, 0.2, 0.5, 0.7, 0.99, 1.0, -0.1, 1.5], np.float32)
K = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 10.0, -1.0, 2.5], np.float32)
CONT = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _cases() -> list[tuple[str, str, tuple[Any, ...]]]:
    table: dict[str, dict[str, tuple[Any, ...]]] = {
        "norm": {**{f: (X, 0.5, 2.0) for f in CONT}, "ppf": (Q, 1.0, 3.0), "isf": (Q,)},
        "beta": {f: (Q, 2.0, 3.0) for f in CONT},
        "gamma": {f: (POS, 2.0) for f in CONT},
        "t": {f: (X, 3.0) for f in ("logpdf", "pdf")},
        "poisson": {"logpmf": (K, 2.0), "pmf": (K, 2.0), "cdf": (K, 2.0),
                    "entropy": (np.array([0.0, 0.5, 5.0, 50.0, 500.0], np.float32),)},
        "bernoulli": {"logpmf": (K, 0.3), "pmf": (K, 0.3), "cdf": (K, 0.3), "ppf": (Q, 0.3)},
        "binom": {f: (K, 10.0, 0.3) for f in ("logpmf", "pmf")},
        "betabinom": {f: (K, 10.0, 2.0, 3.0) for f in ("logpmf", "pmf")},
        "cauchy": {**{f: (X,) for f in CONT}, "ppf": (Q,), "isf": (Q,)},
        "chi2": {f: (POS, 3.0) for f in CONT},
        "expon": {**{f: (X,) for f in CONT}, "ppf": (Q,)},
        "gennorm": {f: (X, 1.5) for f in ("logpdf", "pdf", "cdf")},
        "geom": {f: (K, 0.3) for f in ("logpmf", "pmf")},
        "gumbel_l": {**{f: (X,) for f in CONT}, "ppf": (Q,)},
        "gumbel_r": {**{f: (X,) for f in CONT}, "ppf": (Q,)},
        "laplace": {f: (X,) for f in ("logpdf", "pdf", "cdf")},
        "logistic": {**{f: (X,) for f in ("logpdf", "pdf", "cdf", "sf")}, "ppf": (Q,), "isf": (Q,)},
        "nbinom": {f: (K, 5.0, 0.3) for f in ("logpmf", "pmf")},
        "pareto": {**{f: (POS + 0.5, 2.0) for f in CONT}, "ppf": (Q, 2.0)},
        "truncnorm": {f: (X, -1.0, 2.0) for f in CONT},
        "uniform": {f: (Q,) for f in ("logpdf", "pdf", "cdf", "ppf")},
        "vonmises": {f: (X, 2.0) for f in ("logpdf", "pdf")},
        "wrapcauchy": {f: (POS, 0.4) for f in ("logpdf", "pdf")},
        "dirichlet": {f: (np.array([0.2, 0.3, 0.5], np.float32), np.array([1.0, 2.0, 3.0], np.float32))
                      for f in ("logpdf", "pdf")},
        "multinomial": {f: (np.array([1, 2, 3]), 6, np.array([0.2, 0.3, 0.5], np.float32)) for f in ("logpmf", "pmf")},
        "multivariate_normal": {f: (np.array([[0.1, 0.2], [1.0, -1.0]], np.float32), np.zeros(2, np.float32),
                                    np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)) for f in ("logpdf", "pdf")},
    }
    return [(d, f, args) for d, fns in table.items() for f, args in fns.items()]


CASES = _cases()


_IDS = [f"{d}.{f}" for d, f, _ in CASES]


@pytest.mark.parametrize("dist, fn, args", CASES, ids=_IDS)
def test_values(dist: str, fn: str, args: tuple[Any, ...]) -> None:
    f, g = getattr(getattr(fst, dist), fn), getattr(getattr(jst, dist), fn)
    with modes():
        check(f, g, *args)
    if _IDS.index(f"{dist}.{fn}") % 2:  # float64 for every other function: each distribution meets it
        return
    with modes(x64=True):
        wide = tuple(a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a for a in args)
        check(f, g, *wide, staged=False)


@pytest.mark.parametrize("dist", sorted({d for d, _, _ in CASES}))
def test_module_names_match_jax(dist: str) -> None:
    def public(m: Any) -> list[str]:
        return sorted(n for n in dir(m) if not n.startswith("_"))

    assert public(getattr(fst, dist)) == public(getattr(jst, dist))


def test_package_names_match_jax() -> None:
    assert sorted(n for n in dir(fst) if not n.startswith("_")) == sorted(n for n in dir(jst) if not n.startswith("_"))


@pytest.mark.parametrize("dist, fn, args", [
    ("norm", "logpdf", (X[1:6], 0.5, 2.0)), ("norm", "cdf", (X[1:6],)), ("beta", "logpdf", (Q[1:6], 2.0, 3.0)),
    ("gamma", "logpdf", (POS[1:5], 2.0)), ("gamma", "cdf", (POS[1:5], 2.0)), ("t", "logpdf", (X[1:6], 3.0)),
    ("chi2", "sf", (POS[1:5], 3.0)), ("truncnorm", "logpdf", (X[1:5], -1.0, 2.0)), ("gumbel_r", "logsf", (X[1:6],)),
    ("multivariate_normal", "logpdf", (np.array([0.1, 0.2], np.float32), np.zeros(2, np.float32),
                                       np.array([[2.0, 0.3], [0.3, 1.0]], np.float32))),
], ids=lambda v: v if isinstance(v, str) else "")
def test_derivatives(dist: str, fn: str, args: tuple[Any, ...]) -> None:
    f, g = getattr(getattr(fst, dist), fn), getattr(getattr(jst, dist), fn)
    with modes():
        check(fcore.grad(lambda *a: f(*a).sum(), argnums=0), jax.grad(lambda *a: g(*a).sum(), argnums=0), *args,
              staged=False)
        check(fcore.jit(f), jax.jit(g), *args, staged=False)


def test_parameters_broadcast_and_batch() -> None:
    mu = np.array([[0.0], [1.0]], np.float32)
    with modes():
        check(fst.norm.logpdf, jst.norm.logpdf, X[:5], mu, 2.0)
        check(fcore.vmap(fst.gamma.cdf, (None, 0)), jax.vmap(jst.gamma.cdf, (None, 0)), POS[:4],
              np.array([0.5, 1.0, 3.0], np.float32), staged=False)
        check(fcore.vmap(fst.poisson.logpmf), jax.vmap(jst.poisson.logpmf), K[:4], np.array([1.0, 2.0, 3.0, 4.0], np.float32),
              staged=False)
        check(fst.norm.cdf, jst.norm.cdf, 0.5)
        check(fst.poisson.pmf, jst.poisson.pmf, 3, 2)


#: JAX's class, typed loosely (its methods are unannotated).
_jax_kde: Callable[..., Any] = jst.gaussian_kde


def test_gaussian_kde() -> None:
    ds = np.array([[0.1, 0.5, 0.9, 2.0, 3.1, 3.3, 3.0], [1.0, 1.2, 2.0, 2.4, 2.0, 5.0, 5.5]], np.float32)
    pts = np.array([[0.5, 1.0, 2.0], [2.0, 3.0, 1.0]], np.float32)
    w = np.array([1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0], np.float32)
    with modes():
        for kw in ({}, {"bw_method": "silverman"}, {"bw_method": 0.5}, {"weights": w}):
            kf, kj = fst.gaussian_kde(ds, **kw), _jax_kde(ds, **kw)
            for m in ("evaluate", "logpdf", "pdf", "__call__"):
                check(getattr(kf, m), getattr(kj, m), pts, staged=False)
            for field in ("neff", "covariance", "inv_cov", "weights", "dataset"):
                check(lambda: getattr(kf, field), lambda: getattr(kj, field), staged=False)
            check(lambda: kf.integrate_gaussian(np.zeros(2, np.float32), np.eye(2, dtype=np.float32)),
                  lambda: kj.integrate_gaussian(np.zeros(2, np.float32), np.eye(2, dtype=np.float32)), staged=False)
            check(lambda: kf.integrate_kde(kf), lambda: kj.integrate_kde(kj), staged=False)
        k1f, k1j = fst.gaussian_kde(ds[0]), _jax_kde(ds[0])
        check(k1f.integrate_box_1d, k1j.integrate_box_1d, 0.0, 2.0, staged=False)
        check(k1f.evaluate, k1j.evaluate, np.array([1.0, 2.0], np.float32), staged=False)
        # a pytree: it passes through jit and grad
        pt = np.array([1.0, 2.0], np.float32)
        np.testing.assert_allclose(np.asarray(fcore.jit(lambda k, p: k.evaluate(p))(k1f, pt)),
                                   np.asarray(jax.jit(lambda k, p: k.evaluate(p))(k1j, pt)), rtol=1e-6)
        check(fcore.grad(lambda d: fst.gaussian_kde(d).logpdf(np.float32(1.0)).sum()),
              jax.grad(lambda d: _jax_kde(d).logpdf(np.float32(1.0)).sum()), ds[0], staged=False)
        check_raises(lambda: fst.gaussian_kde(np.ones(1, np.float32)), lambda: _jax_kde(np.ones(1, np.float32)))
        check_raises(lambda: k1f.integrate_box(0.0, 1.0), lambda: k1j.integrate_box(0.0, 1.0), exc=NotImplementedError)
        check_raises(lambda: fst.gaussian_kde(ds, bw_method="nope"), lambda: _jax_kde(ds, bw_method="nope"))
        check_raises(lambda: fst.gaussian_kde(ds).evaluate(np.ones((3, 2), np.float32)),
                     lambda: _jax_kde(ds).evaluate(np.ones((3, 2), np.float32)))


DATA = np.array([[0.1, 0.5, 0.5, 2.0, 3.0, 3.0, 3.0], [1.0, 1.0, 2.0, 2.0, 2.0, 5.0, 5.0]], np.float32)


@pytest.mark.parametrize("kwargs", [{}, {"axis": None}, {"axis": 1}, {"axis": 1, "keepdims": True},
                                    {"axis": None, "keepdims": True}])
def test_mode(kwargs: dict[str, Any]) -> None:
    with modes():
        check(lambda a: tuple(fst.mode(a, **kwargs)), lambda a: tuple(jst.mode(a, **kwargs)), DATA, staged=False)
        check(lambda a: tuple(fst.mode(a, **kwargs)), lambda a: tuple(jst.mode(a, **kwargs)),
              np.array([[1, 2, 2], [np.nan, np.nan, 1.0]], np.float32), staged=False)
        check(lambda a: tuple(fst.mode(a, **kwargs)), lambda a: tuple(jst.mode(a, **kwargs)), DATA.astype(np.int32),
              staged=False)
    result = fst.mode(DATA)
    assert result.mode.shape == (7,) and result.count.shape == (7,)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(method: str) -> None:
    with modes():
        check(lambda a: fst.rankdata(a, method), lambda a: jst.rankdata(a, method), DATA, staged=False)
        check(lambda a: fst.rankdata(a, method, axis=1), lambda a: jst.rankdata(a, method, axis=1), DATA, staged=False)
        check(lambda a: fst.rankdata(a, method, axis=0), lambda a: jst.rankdata(a, method, axis=0), DATA, staged=False)
        check(lambda a: fst.rankdata(a, method), lambda a: jst.rankdata(a, method), np.array([3.0, np.nan, 1.0]),
              staged=False)


def test_sem() -> None:
    data = np.where(DATA > 4, np.nan, DATA)
    with modes():
        for args, kw in [((DATA,), {}), ((DATA, 1), {}), ((DATA, None, 0), {}), ((data, 1, 1, "omit"), {"keepdims": True}),
                         ((data, 0), {"keepdims": True})]:
            check(lambda *a, kw=kw: fst.sem(*a, **kw), lambda *a, kw=kw: jst.sem(*a, **kw), *args, staged=False)
    with modes(x64=True):
        check(fst.sem, jst.sem, DATA.astype(np.float64), staged=False)


def test_errors() -> None:
    with modes():
        check_raises(lambda: fst.mode(DATA, nan_policy="bad"), lambda: jst.mode(DATA, nan_policy="bad"), exc=ValueError)
        check_raises(lambda: fst.mode(DATA, nan_policy="omit"), lambda: jst.mode(DATA, nan_policy="omit"),
                     exc=NotImplementedError)
        check_raises(lambda: fst.rankdata(DATA, "bad"), lambda: jst.rankdata(DATA, "bad"), exc=ValueError)
        check_raises(lambda: fst.sem(DATA, nan_policy="raise"), lambda: jst.sem(DATA, nan_policy="raise"), exc=ValueError)
        cov3 = np.eye(3, dtype=np.float32)
        check_raises(lambda: fst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), cov3),
                     lambda: jst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), cov3), exc=ValueError)
        singular: dict[str, Any] = {"allow_singular": True}
        check_raises(lambda: fst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), cov3, **singular),
                     lambda: jst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), cov3, **singular),
                     exc=NotImplementedError)
        check_raises(lambda: fst.dirichlet.logpdf(np.ones(3), np.ones((3, 1))),
                     lambda: jst.dirichlet.logpdf(np.ones(3), np.ones((3, 1))), exc=ValueError)
        check_raises(lambda: fst.dirichlet.logpdf(np.ones(5), np.ones(3)),
                     lambda: jst.dirichlet.logpdf(np.ones(5), np.ones(3)), exc=ValueError)
        check_raises(lambda: fst.multinomial.logpmf(np.ones(3), 3.0, np.ones(3) / 3),
                     lambda: jst.multinomial.logpmf(np.ones(3), 3.0, np.ones(3) / 3), exc=ValueError)


def test_multivariate_normal_shapes() -> None:
    cov = np.array([[[2.0, 0.3], [0.3, 1.0]], [[1.0, -0.2], [-0.2, 0.5]]], np.float32)
    x = np.array([[0.1, 0.2], [1.0, -1.0]], np.float32)
    with modes():
        check(fst.multivariate_normal.logpdf, jst.multivariate_normal.logpdf, x, np.zeros(2, np.float32), cov)
        check(fst.multivariate_normal.logpdf, jst.multivariate_normal.logpdf, x, np.zeros(2, np.float32), 2.0)
        check(fst.multivariate_normal.logpdf, jst.multivariate_normal.logpdf, 0.3, 0.0, 2.0)
        check(fst.dirichlet.logpdf, jst.dirichlet.logpdf, np.array([[0.2, 0.1], [0.3, 0.6]], np.float32),
              np.array([1.0, 2.0, 3.0], np.float32))
