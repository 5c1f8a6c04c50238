"""``fcore.ad_checkpoint`` against ``jax.ad_checkpoint``: names, name policies, the offload
policies (saving, on one memory space), ``print_saved_residuals``; and ``vjp``'s function
as a ``VJP`` object whose leaves are the residuals."""

from __future__ import annotations

import functools

from collections.abc import Callable
from typing import Any

import jax
import jax.ad_checkpoint
from jax._src.ad_checkpoint import saved_residuals as jax_saved_residuals
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals
from fcore.api.vjp_object import VJP

X = np.linspace(-1.0, 1.0, 4).astype(np.float32)


def body(np_: Any, name: Callable[[Any, str], Any]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        a = name(np_.sin(x) * 2.0, "a")
        b = name(np_.cos(a) * x, "b")
        return np_.sum(np_.tanh(b) * a)

    return f


F = body(fnp, checkpoint_name)
J = body(jnp, jax.ad_checkpoint.checkpoint_name)

POLICIES: dict[str, Callable[[Any], Any]] = {
    "save_only_these_names(a)": lambda P: P.save_only_these_names("a"),
    "save_only_these_names(a, b)": lambda P: P.save_only_these_names("a", "b"),
    "save_any_names_but_these(a)": lambda P: P.save_any_names_but_these("a"),
    # the gradient-checkpointing tutorial's cell: the earlier name stays saveable (JAX 0.10.2 saves it)
    "save_any_names_but_these(b)": lambda P: P.save_any_names_but_these("b"),
    "save_from_both(dots, only b)": lambda P: P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("b")),
    "save_and_offload(a | b)": lambda P: P.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"], offload_src="device",
        offload_dst="pinned_host"),
    "offload_dot_with_no_batch_dims": lambda P: P.offload_dot_with_no_batch_dims("device", "pinned_host"),
}


def _saved_names(lib_saved: list[tuple[Any, str]]) -> list[str]:
    """The residual descriptions without source locations (fcore's equations carry none)."""
    return sorted(src.split(" from ")[0] if src.startswith(("named", "output")) else src for _, src in lib_saved)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_name_policies_save_what_jax_saves(name: str) -> None:
    ours = fcore.checkpoint(F, policy=POLICIES[name](fcore.checkpoint_policies))
    theirs = jax.checkpoint(J, policy=POLICIES[name](jax.checkpoint_policies))
    np.testing.assert_allclose(np.asarray(fcore.grad(ours)(X)), np.asarray(jax.grad(theirs)(X)), rtol=1e-6)
    mine, jaxs = saved_residuals(ours, X), jax_saved_residuals(theirs, X)
    assert [a.shape for a, _ in mine] == [getattr(a, "shape") for a, _ in jaxs]
    if "offload" not in name:  # JAX moves an offloaded value with device_put; fcore saves it in place
        assert _saved_names(mine) == _saved_names(jaxs)


def test_checkpoint_name_is_the_identity_on_pytrees_and_in_jaxprs() -> None:
    tree = {"w": X, "b": (X[:2],)}
    out = checkpoint_name(tree, "params")
    assert fcore.tree_util.tree_structure(out) == fcore.tree_util.tree_structure(tree)
    text = str(fcore.make_jaxpr(lambda x: checkpoint_name(x, "h"))(X))
    assert "name[name=h]" in text
    assert fcore.vmap(lambda x: checkpoint_name(x * 2.0, "h"))(X).shape == X.shape
    np.testing.assert_array_equal(np.asarray(fcore.jit(lambda x: checkpoint_name(x, "h"))(X)), X)


def test_saved_residuals_sources_match_jax() -> None:
    def f(x: Any, y: Any, np_: Any = fnp) -> Any:
        return x["w"] * np_.sin(y)

    args = ({"w": X}, X)
    ours = saved_residuals(f, *args)
    theirs = jax_saved_residuals(functools.partial(f, np_=jnp), *args)
    assert [a.shape for a, _ in ours] == [getattr(a, "shape") for a, _ in theirs]
    # the same text, the place of each computed residual included (file:line:column (function))
    assert [s for _, s in ours] == [s for _, s in theirs] and ":" in ours[-1][1], ours


def test_print_saved_residuals_prints_one_line_per_residual(capsys: pytest.CaptureFixture[str]) -> None:
    print_saved_residuals(fcore.checkpoint(F, policy=fcore.checkpoint_policies.save_only_these_names("a")), X)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "f32[4] from the argument x" and lines[1].startswith("f32[4] named 'a' from "), lines
    assert "test_ad_checkpoint.py" in lines[1] and "unknown" not in lines[1], lines


def test_intersecting_offload_names_are_rejected_as_in_jax() -> None:
    for P in (fcore.checkpoint_policies, jax.checkpoint_policies):
        with pytest.raises(ValueError, match="should not intersect"):
            P.save_and_offload_only_these_names(names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
                                                offload_src="device", offload_dst="pinned_host")


def test_a_user_policy_may_answer_with_jax_s_constants() -> None:
    def policy(prim: Any, *_: Any, **params: Any) -> Any:
        return fcore.ad_checkpoint.Saveable if prim.name == "sin" else fcore.ad_checkpoint.Recompute

    ours = [s.split(" from ")[0] for _, s in saved_residuals(fcore.checkpoint(F, policy=policy), X)]
    assert "output of sin" in ours and "output of cos" not in ours


# -- vjp returns a VJP object -----------------------------------------------------------------
def _vjp_pair() -> tuple[Any, Any]:
    _, ours = fcore.vjp(lambda x: fnp.sin(x) * x, X)
    _, theirs = jax.vjp(lambda x: jnp.sin(x) * x, X)
    return ours, theirs


def test_vjp_function_is_a_vjp_object_whose_leaves_are_residuals() -> None:
    ours, theirs = _vjp_pair()
    assert isinstance(ours, VJP) and type(theirs).__name__ == "VJP"
    assert len(fcore.tree_util.tree_leaves(ours)) == len(jax.tree_util.tree_leaves(theirs))
    ct = np.ones_like(X)
    np.testing.assert_allclose(np.asarray(ours(ct)[0]), np.asarray(theirs(ct)[0]), rtol=1e-6)


def test_vjp_function_through_jit_make_jaxpr_and_tree_map() -> None:
    ours, theirs = _vjp_pair()
    ct = np.linspace(0.5, 2.0, 4).astype(np.float32)
    want = np.asarray(theirs(ct)[0])
    np.testing.assert_allclose(np.asarray(fcore.jit(lambda f, c: f(c))(ours, ct)[0]), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fcore.jit(ours)(ct)[0]), want, rtol=1e-6)
    closed = fcore.make_jaxpr(ours)(ct)
    assert len(closed.consts) == len(fcore.tree_util.tree_leaves(ours))
    doubled = fcore.tree_util.tree_map(lambda r: r * 2.0, ours)
    jdoubled = jax.tree_util.tree_map(lambda r: r * 2.0, theirs)
    np.testing.assert_allclose(np.asarray(doubled(ct)[0]), np.asarray(jdoubled(ct)[0]), rtol=1e-6)


def test_vjp_function_keeps_its_errors() -> None:
    ours, _ = _vjp_pair()
    with pytest.raises(TypeError, match="must be called with a single argument"):
        ours(X, X)
    with pytest.raises(ValueError, match="unexpected tree structure"):
        ours((X, X))
