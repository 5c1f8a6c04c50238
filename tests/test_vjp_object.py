"""The object ``vjp`` returns, against JAX's ``VJP``: ``args_res`` / ``opaque_residuals``,
pytree behaviour through ``jit``, restoring arguments, ``with_refs`` and its ``fcore.ad`` markers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from api_common import Lib, check, check_error
from fcore.api.vjp_object import NotNeeded

W = np.linspace(-1.0, 1.0, 9, dtype=np.float32).reshape(3, 3)
X = np.linspace(0.5, 1.5, 6, dtype=np.float32).reshape(2, 3)


def layer(L: Lib) -> Any:
    return lambda w, x: L.np.tanh(x @ w)


def _not_needed_mask(L: Lib, f_vjp: Any) -> Any:
    """Which argument leaves were left unsaved (``NotNeeded()``), in ``args_res``'s own structure."""
    return L.ad.tree.map(lambda _: False, f_vjp.args_res, is_leaf=lambda x: type(x).__name__ == "NotNeeded")


def test_args_res_saves_the_arguments_the_backward_pass_reads() -> None:
    """``x @ w`` needs both arguments verbatim; ``sin`` needs none; ``x * y`` needs both;
    a dict argument's leaves are in tuples mirroring it."""

    def run(L: Lib) -> Any:
        a = L.np.asarray(W)
        b = L.np.asarray(X)
        _, f1 = L.ad.vjp(layer(L), a, b)
        _, f2 = L.ad.vjp(L.np.sin, b)
        _, f3 = L.ad.vjp(lambda d: d["bye"] @ L.np.sin(d["hi"]), {"hi": a, "bye": b})
        return (
            [r is a for r in f1.args_res[:1]] + [f1.args_res[1] is b],
            str(f2.args_res),
            L.ad.tree.structure(f3.args_res).num_leaves,
            _not_needed_mask(L, f3),
            f3.in_tree.num_leaves,
            f1.out_tree.num_leaves,
        )

    check(run)


def test_the_object_is_a_pytree_through_jit() -> None:
    """Forward and backward as two separately jitted functions give ``grad``'s gradients."""

    def run(L: Lib) -> Any:
        lay = layer(L)
        fwd = L.ad.jit(lambda w, x: L.ad.vjp(lay, w, x))
        bwd = L.ad.jit(lambda f_vjp, ct: f_vjp(ct))
        x1, res1 = fwd(W, X)
        x2, res2 = fwd(2 * W, x1)
        dw2, dx1 = bwd(res2, L.np.ones_like(x2))
        dw1, dx0 = bwd(res1, dx1)
        ref = L.ad.grad(lambda w1, w2, x: L.np.sum(lay(w2, lay(w1, x))), argnums=(0, 1, 2))(W, 2 * W, X)
        return (dw1, dw2, dx0), ref, type(res1).__name__, callable(res1)

    check(run)


def test_restoring_args_res_with_the_original_structure() -> None:
    def run(L: Lib) -> Any:
        d = {"hi": L.np.asarray(W), "bye": L.np.asarray(X)}
        _, g_vjp = L.ad.vjp(lambda d: d["bye"] @ d["hi"], d)
        g_vjp.args_res = [{"hi": 2 * d["hi"], "bye": d["bye"]}]
        return g_vjp(L.np.ones((2, 3), np.float32))

    check(run)


def test_with_refs_accumulates_into_refs() -> None:
    def run(L: Lib) -> Any:
        _, f_vjp = L.ad.vjp(lambda x, y: L.np.sin(x) * y, L.np.float32(1.0), L.np.float32(2.0))
        r = L.ad.new_ref(L.np.zeros((), np.float32))
        back = f_vjp.with_refs(r, L.ad.ad.DontWant())
        first = back(L.np.float32(1.0))
        second = back(L.np.float32(1.0))
        values = f_vjp.with_refs(L.ad.ad.GradValue(), L.ad.ad.DontWant())(L.np.float32(3.0))
        return first, second, r[...], values, f_vjp.with_refs()(L.np.float32(1.0))

    check(run)


def test_identity_equality_and_jaxpr() -> None:
    _, f1 = fcore.vjp(fnp.sin, fnp.ones(3))
    _, f2 = fcore.vjp(fnp.sin, fnp.ones(3))
    assert f1 == f1 and f1 != f2 and hash(f1) != hash(f2)
    assert len(f1.jaxpr.constvars) == len(f1.opaque_residuals) == 1
    assert isinstance(f1.jaxpr, fcore.core.Jaxpr)
    doubled = fcore.tree.map(lambda r: 2 * r, f1)
    np.testing.assert_allclose(doubled(fnp.ones(3))[0], 2 * np.cos(np.ones(3)), rtol=1e-6)


def test_errors() -> None:
    check_error(lambda L: L.ad.vjp(L.np.sin, X)[1](X, X), "called with 2 arguments")
    check_error(lambda L: L.ad.vjp(L.np.sin, X)[1](X[0]), "unexpected")
    _, f_vjp = fcore.vjp(layer(Lib("fcore", fnp, fcore.lax, fcore)), W, X)
    f_vjp.args_res[0] = NotNeeded()
    with pytest.raises(ValueError, match="assign the argument back"):
        f_vjp(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="GradValue"):
        f_vjp.with_refs(1.0, 2.0)
