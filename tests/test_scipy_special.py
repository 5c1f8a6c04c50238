"""``fcore.scipy.special`` against ``jax.scipy.special`` for the functions beyond the gamma and
error-function basics (those are in ``test_lax_special.py``): values at ordinary points and
domain edges, dtypes and weak types (x64 off and on), derivatives, ``jit``/``vmap``, the
deprecated and removed names, and the errors JAX raises."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.special as jss
import numpy as np
import pytest

import fcore
from fcore.scipy import special as fss
from test_numpy_common import check, check_or_raises, check_raises, modes

X = np.array([-40.0, -3.0, -0.5, -1e-8, 0.0, 0.3, 1.0, 2.5, 7.0, 30.0, 700.0, np.inf, -np.inf, np.nan], np.float32)
POS = np.array([0.0, 1e-3, 0.1, 0.5, 1.0, 2.0, 3.7, 9.0, 20.0, 70.0, np.inf, np.nan], np.float32)
POINTS = np.array([0.2, 0.7, 1.5, 3.0], np.float32)

UNARY = ["i0", "i0e", "i1", "i1e", "erfcx", "dawsn", "expi", "exp1", "spence", "fresnel", "sici"]
#: Functions built on per-element loops under ``vmap``: each new shape or dtype compiles a
#: large program (in both libraries), so they are checked on fewer of them. Every branch runs
#: for every element, and E_n's continued fraction barely converges near 0 (JAX's
#: ``exp1(1e-8)`` runs for minutes in float64), so their points stay away from tiny values.
LOOPING = {"expi", "exp1"}
LOOPING_X = np.array([-40.0, -3.0, -0.5, 0.0, 0.3, 1.0, 2.5, 7.0, 30.0, 700.0, np.inf, -np.inf, np.nan], np.float32)
BINARY: list[tuple[str, Any, Any]] = [
    ("gammainc", POS, POS[::-1]), ("gammaincc", POS, POS[::-1]), ("boxcox", POS, X[:12]), ("boxcox1p", POS, X[:12]),
    ("comb", np.array([5.0, 10.0, 3.0, 0.0, 4.5, -1.0, 2.0], np.float32), np.array([2.0, 3.0, 5.0, 0.0, 2.0, 1.0, -1.0], np.float32)),
    ("poch", POS, X[:12]), ("owens_t", X, X[::-1]),
    ("expn", np.array([0, 1, 2, 3, 5, 10, 5000, -1, 1, 2], np.int32),
     np.array([0.5, 0.0, 0.0, 1.5, 0.3, 20.0, 2.0, 1.0, -1.0, 4.0], np.float32)),
]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name: str) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    values = POS if name == "spence" else LOOPING_X if name == "expi" else np.abs(LOOPING_X) if name == "exp1" else X
    with modes():
        check(f, g, values)
        if name not in LOOPING:
            check(fcore.jit(f), jax.jit(g), values, staged=False)
            check(f, g, 2.5)
            check_or_raises(f, g, np.arange(1, 4))  # spence rejects integers, as in JAX
            if name != "spence":
                check(f, g, values.astype(np.float16))
    with modes(x64=True):
        check(f, g, values.astype(np.float64), staged=name not in LOOPING)


@pytest.mark.parametrize("name", UNARY)
def test_unary_derivatives(name: str) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    if name in ("fresnel", "sici"):
        def fs(v: Any) -> Any:
            return sum(o.sum() for o in f(v))

        def gs(v: Any) -> Any:
            return sum(o.sum() for o in g(v))
    else:
        def fs(v: Any) -> Any:
            return f(v).sum()

        def gs(v: Any) -> Any:
            return g(v).sum()
    with modes():
        check(fcore.grad(fs), jax.grad(gs), POINTS, staged=False)
        if name not in LOOPING:
            check(fcore.vmap(fcore.grad(fs)), jax.vmap(jax.grad(gs)), POINTS, staged=False)


@pytest.mark.parametrize("name, a, b", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name: str, a: Any, b: Any) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    with modes():
        check(f, g, a, b)
        check(f, g, a[:4].reshape(4, 1), b[:3])
        check(f, g, 2, b)
    with modes(x64=True):  # jitted JAX: its eager owens_t trips over a matmul executable cached for x64
        a64, b64 = a.astype(np.float64) if a.dtype.kind == "f" else a, b.astype(np.float64)
        if name == "owens_t":  # its float64 series differs from JAX's in the last ~10 bits
            np.testing.assert_allclose(np.asarray(fcore.jit(f)(a64, b64)), np.asarray(jax.jit(g)(a64, b64)),
                                       rtol=1e-9, atol=1e-12)
        else:
            check(f, jax.jit(g), a64, b64, staged=False)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "boxcox", "boxcox1p", "poch", "owens_t"])
def test_binary_derivatives(name: str) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    a, b = POINTS, POINTS[::-1] * 0.9
    with modes():
        check(fcore.grad(lambda u, v: f(u, v).sum(), argnums=(0, 1)), jax.grad(lambda u, v: g(u, v).sum(), argnums=(0, 1)),
              a, b, staged=False)


def test_expn_derivative_and_exp1() -> None:
    with modes():
        check(fcore.grad(lambda x: fss.expn(3, x).sum()), jax.grad(lambda x: jss.expn(3, x).sum()), POINTS, staged=False)
        check(fcore.grad(lambda x: fss.exp1(x).sum()), jax.grad(lambda x: jss.exp1(x).sum()), POINTS, staged=False)


def test_betainc() -> None:
    a = np.array([0.5, 1.0, 2.0, 5.0, 0.0, -1.0, 3.0], np.float32)
    b = np.array([0.3, 1.0, 5.0, 3.0, 2.0, 1.0, np.inf], np.float32)
    x = np.array([0.3, 0.5, 0.1, 0.9, 0.4, 0.5, 0.5], np.float32)
    with modes():
        check(fss.betainc, jss.betainc, a, b, x)
        check(fss.betainc, jss.betainc, 2, 3, x)
        check(fcore.grad(lambda v: fss.betainc(2.0, 3.0, v).sum()), jax.grad(lambda v: jss.betainc(2.0, 3.0, v).sum()),
              x[:4], staged=False)
        check_raises(fss.betainc, jss.betainc, 1.0, 2.0, 0.5 + 0.1j)
    with modes(x64=True):
        check(fss.betainc, jss.betainc, a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))


HYP1F1 = (np.array([0.5, 1.0, 0.0, 2.0, 3.0, -1.5, 1.0], np.float32), np.array([1.5, 1.0, 2.0, 0.0, 4.0, 2.5, 3.0], np.float32),
          np.array([0.3, 2.0, 1.0, 1.0, -2.0, 0.7, 150.0], np.float32))
HYP2F1 = (np.array([0.5, 1.0, 0.0, -2.0, 1.5, 2.0, 1.0, 0.3], np.float32),
          np.array([1.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 0.6], np.float32),
          np.array([2.0, 3.0, 1.0, 4.0, 2.0, 3.0, 3.0, 0.9], np.float32),
          np.array([0.3, 0.95, 0.5, 0.7, -0.4, 1.0, 0.5, 0.999], np.float32))


@pytest.mark.parametrize("name, args", [("hyp1f1", HYP1F1), ("hyp2f1", HYP2F1)], ids=["hyp1f1", "hyp2f1"])
def test_hypergeometric(name: str, args: tuple[Any, ...]) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    with modes():
        check(f, g, *args)
        check(f, g, *(a[0] for a in args))
    with modes(x64=True):
        check(f, g, *(a.astype(np.float64) for a in args))
    pts = tuple(np.array(a[:2]) for a in args)
    nargs = len(args)
    with modes():
        check(fcore.grad(lambda *v: f(*v).sum(), argnums=tuple(range(nargs))),
              jax.grad(lambda *v: g(*v).sum(), argnums=tuple(range(nargs))), *pts, staged=False)


def test_wofz() -> None:
    z = np.array([0.5 + 0.3j, -1.0 + 2.0j, 3.0 - 1.0j, 0.0, -0.2 - 4.0j, 10.0 + 0.1j], np.complex64)
    with modes():
        check(fss.wofz, jss.wofz, z)
        check(fss.wofz, jss.wofz, np.array([0.5, -1.0], np.float32))
        check(fss.erfcx, jss.erfcx, z)
        check(fcore.grad(lambda v: fss.wofz(v).real.sum()), jax.grad(lambda v: jss.wofz(v).real.sum()),
              np.array([0.3, 1.2], np.float32), staged=False)
    with modes(x64=True):
        check(fss.wofz, jss.wofz, z.astype(np.complex128))


def test_bernoulli_and_bessel_jn() -> None:
    with modes():
        for n in (0, 1, 2, 3, 8, 21):
            check(lambda n=n: fss.bernoulli(n), lambda n=n: jss.bernoulli(n), staged=False)
        check_raises(lambda: fss.bernoulli(-1), lambda: jss.bernoulli(-1), exc=ValueError)
        check_raises(lambda: fss.bernoulli(2.5), lambda: jss.bernoulli(2.5), exc=TypeError)  # type: ignore[arg-type]
        z = np.array([[3.0, 5.0], [10.0, 20.0]], np.float32)
        check(lambda v: fss.bessel_jn(v, v=3), lambda v: jss.bessel_jn(v, v=3), z, staged=False)
        check(lambda v: fss.bessel_jn(v, v=2, n_iter=80), lambda v: jss.bessel_jn(v, v=2, n_iter=80), z[0], staged=False)
        check_raises(lambda v: fss.bessel_jn(v, v=1), lambda v: jss.bessel_jn(v, v=1), z.astype(np.complex64))


#: JAX annotates sph_harm_y's operands as ``Array``; it takes NumPy arrays.
_jax_sph_harm_y: Callable[..., Any] = jss.sph_harm_y


def test_legendre_and_spherical_harmonics() -> None:
    z = np.linspace(-0.9, 0.9, 5).astype(np.float32)
    with modes(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(lambda v: fss.lpmn(3, 3, v), lambda v: jss.lpmn(3, 3, v), z, staged=False)
        for normalized in (False, True):
            check(lambda v, b=normalized: fss.lpmn_values(4, 4, v, b),
                  lambda v, b=normalized: jss.lpmn_values(4, 4, v, b), z, staged=False)
        check_raises(lambda v: fss.lpmn(2, 3, v), lambda v: jss.lpmn(2, 3, v), z,
                     exc=NotImplementedError)
        check_raises(lambda v: fss.lpmn(2, 2, v), lambda v: jss.lpmn(2, 2, v), z.reshape(5, 1))
    n, m = np.array([0, 1, 2, 3, 3]), np.array([0, 1, -1, 2, -3])
    theta = np.array([0.3, 0.5, 1.0, 2.0, 2.9], np.float32)
    phi = np.array([0.1, 0.2, 0.3, 0.4, 5.0], np.float32)
    with modes():
        check(fss.sph_harm_y, _jax_sph_harm_y, n, m, theta, phi, staged=False)
        check(lambda a, b, c, d: fss.sph_harm_y(a, b, c, d, n_max=4), lambda a, b, c, d: _jax_sph_harm_y(a, b, c, d, n_max=4),
              n, m, theta, phi)
        check_raises(lambda: fss.sph_harm_y(n, m, theta, phi, diff_n=1),
                     lambda: _jax_sph_harm_y(n, m, theta, phi, diff_n=1), exc=NotImplementedError)


def test_deprecated_and_removed_names() -> None:
    with pytest.warns(DeprecationWarning, match="lpmn_values is deprecated"):
        fss._warned.discard("lpmn_values")
        assert callable(fss.lpmn_values)
    with pytest.raises(AttributeError, match="sph_harm was deprecated in v0.7.0 and removed in v0.10.0"):
        fss.sph_harm  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        fss.nope  # noqa: B018


def test_public_names_match_jax() -> None:
    def public(m: Any) -> set[str]:
        return {n for n in dir(m) if not n.startswith("_")}

    assert public(fss) == public(jss)


@pytest.mark.parametrize("name", ["dawsn", "expi", "exp1", "i0", "sici", "spence"])
def test_errors_on_complex_or_wrong_dtypes(name: str) -> None:
    f, g = getattr(fss, name), getattr(jss, name)
    with modes():
        for v in (np.array([1.0 + 1.0j], np.complex64), np.array([1, 2], np.int32)):
            try:
                g(v)
            except (TypeError, ValueError, NotImplementedError) as e:
                check_raises(f, g, v, exc=type(e))
            else:
                check(f, g, v, staged=False)
    with modes():
        check_raises(lambda v: fss.expn(1, v), lambda v: jss.expn(1, v), np.array([1.0 + 1.0j], np.complex64))
        check_raises(lambda v: fss.fresnel(v), lambda v: jss.fresnel(v), np.array([1.0 + 1.0j], np.complex64),
                     exc=NotImplementedError)
        check_raises(lambda v: fss.poch(v, 1.0), lambda v: jss.poch(v, 1.0), np.array([1.0 + 1.0j], np.complex64))
