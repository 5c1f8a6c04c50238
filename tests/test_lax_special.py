"""Special-function primitives (``lax.erfc/erf_inv/lgamma/digamma/polygamma/zeta``) and the
``fcore.scipy.special`` functions built on them, against JAX: values at ordinary points,
poles and infinities (XLA's conventions), eagerly and jitted, and their derivatives."""

from __future__ import annotations

from typing import Any

import jax
import jax.lax as jlax
import jax.scipy.special as jss
import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.scipy import special as fss
from test_numpy_common import check, check_raises, modes

X = np.array([-2.5, -1.0, -0.3, 0.0, -0.0, 0.2, 0.5, 1.0, 2.0, 3.7, 8.5, 30.0, np.inf, -np.inf, np.nan, -1e-8], np.float32)
P = np.array([-1.0, -0.999, 0.0, 1e-10, 1e-3, 0.2, 0.5, 0.9, 0.999999, 1.0, 2.0], np.float32)
POINTS = np.array([0.2, 0.5, 0.7, 1.5, 2.5], np.float32)

LAX_UNARY = ["erfc", "erf_inv", "lgamma", "digamma"]
LAX_BINARY: list[tuple[str, Any, Any]] = [
    ("polygamma", np.float32(1), X), ("polygamma", np.float32(3), X), ("polygamma", np.float32(0), X),
    ("polygamma", np.float32(1.5), X), ("zeta", np.float32(2), X),
    ("zeta", np.array([0.0, 0.5, -1.0, 1.0, 2.0, np.inf, 2.0, 1.0, 0.5, np.inf, 3.0, 4.0, -2.0], np.float32),
     np.array([0.0, 0.0, 0.0, 0.0, -3.0, 0.0, np.inf, np.inf, np.inf, 1.0, 0.0, -1.0, -2.0], np.float32)),
]


@pytest.mark.parametrize("name", LAX_UNARY)
def test_lax_unary(name: str) -> None:
    values = P if name == "erf_inv" else X
    with modes():
        check(getattr(lax, name), getattr(jlax, name), values)
        check(fcore.jit(getattr(lax, name)), getattr(jlax, name), values, staged=False)
        check(getattr(lax, name), getattr(jlax, name), values.astype(np.float16))
    with modes(x64=True):
        check(getattr(lax, name), getattr(jlax, name), values.astype(np.float64))


@pytest.mark.parametrize("name, a, b", LAX_BINARY, ids=lambda v: v if isinstance(v, str) else "")
def test_lax_binary(name: str, a: Any, b: Any) -> None:
    with modes():
        check(getattr(lax, name), getattr(jlax, name), a, b)
        check(fcore.jit(getattr(lax, name)), getattr(jlax, name), a, b, staged=False)


def test_lax_derivatives_and_batching() -> None:
    with modes():
        for name in LAX_UNARY:
            check(fcore.grad(lambda v, n=name: getattr(lax, n)(v).sum()), jax.grad(lambda v, n=name: getattr(jlax, n)(v).sum()),
                  POINTS * 0.9, staged=False)
            check(fcore.vmap(getattr(lax, name)), jax.vmap(getattr(jlax, name)), POINTS.reshape(5, 1) * 0.9, staged=False)
        check(fcore.grad(lambda v: lax.polygamma(np.float32(2), v).sum()), jax.grad(lambda v: jlax.polygamma(np.float32(2), v).sum()),
              POINTS, staged=False)
        # jax.lax.zeta has no jvp; jax.scipy.special.zeta's custom one is the reference.
        check(fcore.grad(lambda q: lax.zeta(np.float32(3), q).sum()), jax.grad(lambda q: jss.zeta(np.float32(3), q).sum()),
              POINTS, staged=False)


SPECIAL_UNARY = ["erf", "erfc", "erfinv", "expit", "logit", "gammaln", "gamma", "gammasgn", "loggamma", "digamma",
                 "factorial", "entr", "ndtr", "ndtri", "log_ndtr"]


@pytest.mark.parametrize("name", SPECIAL_UNARY)
def test_special_unary(name: str) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    tails = np.array([-40.0, -12.0, -6.0, 6.0, 12.0], np.float32)
    with modes():
        for v in (X, P, tails, np.arange(-2, 4), 2.5):
            try:
                g(v)
            except TypeError:
                check_raises(f, g, v, exc=TypeError)
                continue
            check(f, g, v)
        if name != "gammasgn":
            pts = np.array([0.1, 0.3, 0.6, 0.9], np.float32) if name in ("erfinv", "logit", "ndtri") else POINTS
            check(fcore.grad(lambda v: f(v).sum()), jax.grad(lambda v: g(v).sum()), pts, staged=False)
            check(fcore.jit(f), jax.jit(g), pts, staged=False)
    with modes(x64=True):
        check(f, g, X.astype(np.float64))


SPECIAL_BINARY = ["xlogy", "xlog1py", "rel_entr", "kl_div", "betaln", "beta", "zeta"]


@pytest.mark.parametrize("name", SPECIAL_BINARY)
def test_special_binary(name: str) -> None:
    a = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0], np.float32)
    b = np.array([0.0, 1.0, -1.0, 2.5, 3.0, 20.0, 1000.0], np.float32)
    f, g = getattr(fss, name), getattr(jss, name)
    with modes():
        check(f, g, a, b)
        check(f, g, b, a)
        check(f, g, 2.0, a)
        if name != "zeta":
            u, v = a[1:] + 0.5, np.array([3.0, 3.0, 3.5, 3.5, 20.5, 20.5], np.float32)
            check(fcore.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1)), jax.grad(lambda x, y: g(x, y).sum(), argnums=(0, 1)),
                  u, v, staged=False)


def test_special_misc() -> None:
    with modes():
        check(fss.polygamma, jss.polygamma, np.array([0, 1, 2, 3]), np.array([0.5, 1.5, 2.0, 7.0]))
        check_raises(fss.polygamma, jss.polygamma, 1.0, 2.0)
        check_raises(lambda v: fss.zeta(v), lambda v: jss.zeta(v), 2.0, exc=NotImplementedError)
        check(fss.multigammaln, jss.multigammaln, np.array([3.0, 4.5]), 3, staged=False)
        check(lambda v: fss.log_ndtr(v, 5), lambda v: jss.log_ndtr(v, 5), np.array([-20.0, -11.0, 0.0, 6.0], np.float32))
        check_raises(lambda v: fss.log_ndtr(v, -1), lambda v: jss.log_ndtr(v, -1), X)
        y = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7
        check(fss.softmax, jss.softmax, y)
        check(lambda v: fss.log_softmax(v, axis=0), lambda v: jss.log_softmax(v, axis=0), y)
