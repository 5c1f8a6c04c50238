"""``fcore.scipy.spatial.transform`` against ``jax.scipy.spatial.transform``: every
constructor, conversion and operation of ``Rotation`` and ``Slerp`` on single and stacked
rotations, in one ``jit`` program per library (few compiles); eager spot checks; staged types
in 64-bit mode; ``grad`` and ``vmap``; the errors JAX raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.spatial.transform as jst
import numpy as np
import pytest

import fcore
from fcore.scipy.spatial import transform as fst
from test_numpy_common import modes

RNG = np.random.default_rng(0)
QUATS = RNG.standard_normal((5, 4)).astype(np.float32)
Q1 = QUATS[0]
EULER = RNG.uniform(-3, 3, (5, 3)).astype(np.float32)
VECS = RNG.standard_normal((5, 3)).astype(np.float32)
TIMES = np.array([0.0, 1.0, 2.5, 3.0, 4.0], np.float32)
AT = np.array([0.0, 0.4, 2.7, 4.0], np.float32)
CANON = np.array([[0.0, 0.0, -0.6, 0.0], [0.0, -0.6, 0.8, 0.0], [-0.6, 0.0, 0.8, 0.0], [0.0, 0.0, 0.0, -1.0]], np.float32)


def _all(t: Any) -> Callable[[Any, Any, Any, Any], list[Any]]:
    """Every operation as one function of the inputs (one program under ``jit``)."""
    def run(quats: Any, euler: Any, vecs: Any, canon: Any) -> list[Any]:
        rot, one = t.Rotation.from_quat(quats), t.Rotation.from_quat(quats[0])
        out = [rot.quat, one.quat, rot.as_matrix(), rot.as_rotvec(), rot.as_rotvec(degrees=True), rot.as_mrp(),
               rot.magnitude(), rot.inv().quat, (rot * one).quat, (rot[1:3] * rot[2:4]).quat,
               rot.apply(vecs), rot.apply(vecs, inverse=True), one.apply(vecs), rot.mean().quat,
               rot.mean(weights=jnp.arange(5.0) if t is jst else fcore.numpy.arange(5.0)).quat,
               rot.as_quat(scalar_first=True), t.Rotation.from_quat(canon).as_quat(canonical=True),
               t.Rotation.from_matrix(rot.as_matrix()).quat, t.Rotation.from_rotvec(vecs).quat,
               t.Rotation.from_rotvec(vecs * 1e-4).quat, t.Rotation.from_rotvec(vecs, degrees=True).quat,
               t.Rotation.from_mrp(rot.as_mrp()).quat, t.Rotation.concatenate([rot, rot[:2]]).quat,
               t.Rotation.identity().quat]
        for seq in ("xyz", "ZXZ"):  # extrinsic asymmetric, intrinsic symmetric
            out += [t.Rotation.from_euler(seq, euler).quat, rot.as_euler(seq)]
        out += [rot.as_euler("zxy", degrees=True)]
        out += [t.Rotation.from_euler("y", euler[:, :1]).quat, t.Rotation.from_euler("xz", euler[0, :2], degrees=True).quat]
        slerp = t.Slerp.init(TIMES, rot)
        out += [slerp(AT).quat, slerp(1.7).quat, slerp.rotvecs, slerp.timedelta]
        return out
    return run


def _compare(got: Any, want: Any, what: str, rtol: float = 2e-5) -> None:
    g_leaves, w_leaves = fcore.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g_leaves) == len(w_leaves), what
    for g, w in zip(g_leaves, w_leaves):
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type), what
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol, err_msg=what)


def test_rotation_matches_jax_under_jit() -> None:
    args = (QUATS, EULER, VECS, CANON)
    with modes():
        got, want = fcore.jit(_all(fst))(*args), jax.jit(_all(jst))(*args)
    for i, (g, w) in enumerate(zip(got, want)):
        _compare(g, w, f"result {i}", rtol=1e-4)


def test_rotation_eager_and_x64_types() -> None:
    with modes():
        rot = fst.Rotation.from_quat(QUATS)
        theirs = jst.Rotation.from_quat(jnp.asarray(QUATS))
        _compare(rot.as_matrix(), theirs.as_matrix(), "eager from_quat/as_matrix")
        stack: Any = rot
        assert len(rot) == 5 and stack[0].single and not rot.single
        with fcore.numpy_rank_promotion("raise"), jax.numpy_rank_promotion("raise"):
            _compare(rot.as_euler("xyz"), theirs.as_euler("xyz"), "eager as_euler, rank promotion raising")
    args = tuple(a.astype(np.float64) for a in (QUATS, EULER, VECS, CANON))
    with modes(x64=True):
        mine = fcore.make_jaxpr(_all(fst))(*args).out_avals
        theirs_avals = jax.make_jaxpr(_all(jst))(*args).out_avals
        assert [(a.shape, a.dtype, a.weak_type) for a in mine] == [(a.shape, a.dtype, a.weak_type) for a in theirs_avals]


def test_rotation_grad_vmap_and_pytree() -> None:
    def loss(t: Any) -> Callable[[Any], Any]:
        return lambda e: (t.Rotation.from_euler("xyz", e).apply(VECS[0]) ** 2 * np.arange(3.0)).sum()

    def apply(rot: Any, v: Any) -> Any:
        return rot.apply(v)

    with modes():
        _compare(fcore.jit(fcore.grad(loss(fst)))(EULER[0]), jax.jit(jax.grad(loss(jst)))(EULER[0]), "grad")
        _compare(fcore.jit(fcore.vmap(apply))(fst.Rotation(fcore.numpy.asarray(QUATS)), VECS),
                 jax.jit(jax.vmap(apply))(jst.Rotation(jnp.asarray(QUATS)), VECS), "vmap over a Rotation pytree")


@pytest.mark.parametrize(("call", "exc"), [
    (lambda t: t.Rotation.from_euler("xyzx", EULER), ValueError),
    (lambda t: t.Rotation.from_euler("xYz", EULER), ValueError),
    (lambda t: t.Rotation.from_euler("xxz", EULER), ValueError),
    (lambda t: t.Rotation.from_quat(Q1).as_euler("xy"), ValueError),
    (lambda t: t.Rotation.from_quat(Q1).as_euler("xyy"), ValueError),
    (lambda t: t.Rotation.from_quat(Q1)[0], TypeError),
    (lambda t: len(t.Rotation.from_quat(Q1)), TypeError),
    (lambda t: t.Rotation.from_quat(QUATS).mean(weights=np.ones(3)), ValueError),
    (lambda t: t.Rotation.from_quat(QUATS).mean(weights=np.ones((5, 1))), ValueError),
    (lambda t: t.Rotation.random(None), NotImplementedError),
    (lambda t: t.Slerp.init(TIMES, QUATS), TypeError),
    (lambda t: t.Slerp.init(TIMES[:1], t.Rotation.from_quat(QUATS[:1])), ValueError),
    (lambda t: t.Slerp.init(TIMES[:3], t.Rotation.from_quat(QUATS)), ValueError),
])
def test_rotation_errors_match_jax(call: Callable[[Any], Any], exc: type[Exception]) -> None:
    with pytest.raises(exc) as theirs:
        call(jst)
    with pytest.raises(exc) as mine:
        call(fst)
    assert str(mine.value) == str(theirs.value)


def test_public_names() -> None:
    assert sorted(fst.__all__) == sorted(n for n in dir(jst) if not n.startswith("_"))
    for cls in ("Rotation", "Slerp"):
        public = {n for n in dir(getattr(jst, cls)) if not n.startswith("_")}
        assert public <= set(dir(getattr(fst, cls))), cls
