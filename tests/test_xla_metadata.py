"""``fcore.experimental.xla_metadata.set_xla_metadata`` against JAX: the lowered ops carry the
same ``mhlo.frontend_attributes`` for the examples of JAX's page (value tagging, context
manager, decorator, nesting, a tagged custom_vjp backward pass), and what it tags still compiles
and computes the same numbers."""

from __future__ import annotations

import re
from typing import Any

import jax
import numpy as np
from jax.experimental.xla_metadata import set_xla_metadata as jax_set

import fcore
from api_common import FC, JX, Lib, check
from fcore.experimental.xla_metadata import set_xla_metadata as fc_set

_OP = re.compile(r"= (\"?[a-z_.]+\"?)[ (].*?(\{mhlo\.frontend_attributes = \{[^}]*\}\})?(?: : |$)")


def _tagged_ops(text: str) -> list[tuple[str, str]]:
    """``(op name, frontend attributes)`` of each op line of ``@main``, in order (constants,
    whose text differs between the two, left out)."""
    main = text.split("func.func public @main", 1)[1].split("\n  }", 1)[0]
    ops = []
    for line in main.splitlines():
        m = _OP.search(re.sub(r" loc\(.*\)$", "", line))
        if m and "constant" not in m.group(1):
            ops.append((m.group(1), m.group(2) or ""))
    return ops


def _setter(L: Lib) -> Any:
    return fc_set if L is FC else jax_set


def _examples(L: Lib) -> list[tuple[Any, Any]]:
    s, np_ = _setter(L), L.np

    def value_tagging(x: Any) -> Any:
        return s(np_.sin(x) * np_.cos(x), breakpoint=True)

    def context_tagging(x: Any) -> Any:
        with s(_xla_log=True):
            y = np_.sin(x)
            return y * np_.cos(y)

    def nested(x: Any) -> Any:
        with s(a=1):
            y = np_.sin(x)
            with s(b="q", a=2):
                z = np_.cos(y)
        return s(y * z, c=1.5)

    def fn(x: Any) -> Any:
        return np_.sin(x) * np_.cos(x)

    wrapped_fn: Any = L.ad.custom_vjp(fn)
    wrapped_fn.defvjp(lambda x: L.ad.vjp(fn, x), lambda f_vjp, ct: s(f_vjp(ct), example="grad_tagging"))
    return [
        (L.ad.jit(value_tagging), 1.0),
        (L.ad.jit(context_tagging), 1.0),
        (s(_xla_log=True)(L.ad.jit(lambda x: np_.sin(x) * np_.cos(np_.sin(x)))), 1.0),
        (L.ad.jit(nested), 1.0),
        (L.ad.jit(L.ad.grad(wrapped_fn)), np.float32(3.0)),
    ]


def test_lowered_ops_carry_jax_frontend_attributes() -> None:
    for k, ((f, x), (g, y)) in enumerate(zip(_examples(FC), _examples(JX))):
        ours, theirs = _tagged_ops(f.lower(x).as_text()), _tagged_ops(g.lower(y).as_text())
        if k == 4:  # the backward pass: fcore keeps one more untagged (primal) multiply
            ours, theirs = [o for o in ours if o[1]], [o for o in theirs if o[1]]
        assert ours == theirs


def test_tagged_programs_compile_and_compute_the_same() -> None:
    """Ops with regions and attribute dictionaries of their own take the attribute too."""

    def run(L: Lib) -> Any:
        def g(x: Any) -> Any:
            with _setter(L)(k="v", n=3):
                loop = L.lax.fori_loop(0, 3, lambda i, c: c * 2.0, 1.0)
                return L.np.sum(L.np.sort(x) * x) + loop + L.np.cumsum(x)[-1], L.np.argmax(x)

        x = np.array([3.0, 1.0, 2.0], np.float32)
        return L.ad.jit(g)(x), L.ad.vmap(lambda v: _setter(L)(v * 2, t=1))(x)

    check(run)
    text = fcore.jit(lambda x: fc_set(fcore.numpy.sort(x), s=1)).lower(np.ones(3, np.float32)).as_text()
    assert ') {mhlo.frontend_attributes = {s = "1"}} : (tensor<3xf32>)' in text


def test_grad_through_a_tagged_value_and_its_jaxpr() -> None:
    check(lambda L: L.ad.grad(lambda x: _setter(L)(L.np.sin(x), a=True) * 2.0)(1.5))
    jaxpr = str(fcore.make_jaxpr(lambda x: fc_set(x * 2.0, breakpoint=True))(1.0))
    assert "xla_metadata_value[xla_metadata_kvs=" in jaxpr


def test_a_function_jitted_outside_the_context_is_traced_again_inside() -> None:
    f = fcore.jit(lambda x: fcore.numpy.sin(x))
    assert "frontend_attributes" not in f.lower(1.0).as_text()
    with fc_set(k=None, j="x"):
        assert '{mhlo.frontend_attributes = {j = "x"}}' in f.lower(1.0).as_text()
    assert jax.jit(lambda x: x).lower(1.0) is not None  # the oracle module imports
