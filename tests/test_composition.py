"""The seed's composition stress test (Autodidax part 3), differentially against jax.

Every nesting of ``jit``, ``grad`` and ``jvp`` must agree with jax in value, dtype and weak
type, for Python-scalar arguments (weakly typed) as the seed writes them and for NumPy
scalars (strongly typed).
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

Lib = Any  # the namespace a program is written against: fcore or jax (with ``.np``)


class _Fcore:
    jit, grad, jvp, np = staticmethod(fcore.jit), staticmethod(fcore.grad), staticmethod(fcore.jvp), fnp


class _Jax:
    jit, grad, jvp, np = staticmethod(jax.jit), staticmethod(jax.grad), staticmethod(jax.jvp), jnp


def simple(L: Lib) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        y = L.np.sin(x) * 2.0
        return -y + x

    return f


def nested_jits(L: Lib) -> Callable[[Any], Any]:
    def g_body(x: Any) -> Any:
        return L.np.cos(x) * 2.0

    g = L.jit(g_body)

    def f_body(x: Any) -> Any:
        return g(x * 2.0)

    return L.jit(f_body)  # type: ignore[no-any-return]


def foo(L: Lib) -> Callable[[Any], Any]:
    """core_test.py's fun_with_nested_calls_2: jits closing over tracers of outer traces."""
    jit, jvp, sin = L.jit, L.jvp, L.np.sin

    def f(x: Any) -> Any:
        def bar(y: Any) -> Any:
            def baz(w: Any) -> Any:
                q = jit(lambda x: y)(x)
                q = q + jit(lambda: y)()
                q = q + jit(lambda y: w + y)(y)
                q = jit(lambda w: jit(sin)(x) * y)(1.0) + q
                return q

            p, t = jvp(baz, (x + 1.0,), (y,))
            return t + (x * p)

        return jit(bar)(x)

    return f


def _compositions(L: Lib, f: Callable[[Any], Any]) -> dict[str, Callable[[Any], Any]]:
    jit, grad, jvp = L.jit, L.grad, L.jvp
    return {
        "f": f,
        "jit": jit(f),
        "jvp": lambda x: jvp(f, (x,), (x * 0 + 5.0,))[0],
        "jvp(jit)": lambda x: jvp(jit(f), (x,), (x * 0 + 5.0,))[0],
        "grad": grad(f),
        "grad(jit)": grad(jit(f)),
        "jit(grad(jit))": jit(grad(jit(f))),
        "jvp tangent": lambda x: jvp(f, (x,), (x * 0 + 1.0,))[1],
        "jvp(jit) tangent": lambda x: jvp(jit(f), (x,), (x * 0 + 1.0,))[1],
        "grad(grad)": grad(grad(f)),
        "grad(grad(jit))": grad(grad(jit(f))),
        "grad(jit(grad))": grad(jit(grad(f))),
        "jit(grad(grad))": jit(grad(grad(f))),
        "jvp(grad)": lambda x: jvp(grad(f), (x,), (x * 0 + 1.0,))[1],
        "jvp(jit(grad))": lambda x: jvp(jit(grad(f)), (x,), (x * 0 + 1.0,))[1],
    }


PROGRAMS = {"simple": simple, "nested_jits": nested_jits, "foo": foo}
ARGS = {"python float": 3.0, "np.float32": np.float32(3.0)}


@pytest.mark.parametrize("arg", list(ARGS), ids=list(ARGS))
@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("composition", list(_compositions(_Jax, simple(_Jax))))
def test_composition_matches_jax(program: str, composition: str, arg: str) -> None:
    x = ARGS[arg]
    got = _compositions(_Fcore, PROGRAMS[program](_Fcore))[composition](x)
    want = _compositions(_Jax, PROGRAMS[program](_Jax))[composition](x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-6)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type


def test_seed_hessians_agree() -> None:
    """The seed's own check: seven ways of computing the second derivative agree."""
    f = foo(_Fcore)
    jit, grad, jvp = fcore.jit, fcore.grad, fcore.jvp
    hessians = [
        grad(grad(f))(3.0),
        grad(grad(jit(f)))(3.0),
        grad(jit(grad(f)))(3.0),
        jit(grad(grad(f)))(3.0),
        jvp(grad(f), (3.0,), (1.0,))[1],
        jvp(jit(grad(f)), (3.0,), (1.0,))[1],
    ]
    for h in hessians[1:]:
        np.testing.assert_allclose(np.asarray(h), np.asarray(hessians[0]), rtol=1e-6)


def test_jit_accepts_strong_argument_for_weak_parameter() -> None:
    """A jaxpr traced for a weakly typed input runs on a strongly typed one (JAX's typematch)."""
    f = fcore.jit(lambda x: x * 2.0)
    assert f(3.0).weak_type
    out = f(np.float32(3.0))
    assert out.dtype == np.float32 and not out.weak_type
