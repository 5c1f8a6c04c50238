"""``fcore.ops`` segment reductions against ``jax.ops``: values, dtypes, identities of empty
segments, out-of-range ids, buckets, errors, and the transformations (jit, grad, vmap)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

import fcore
import fcore.numpy as fnp
from fcore import ops

NAMES = ("segment_sum", "segment_prod", "segment_max", "segment_min")


def _pair(name: str) -> tuple[Callable[..., fcore.Array], Callable[..., jax.Array]]:
    ours: Callable[..., fcore.Array] = getattr(ops, name)
    theirs: Callable[..., jax.Array] = getattr(jax.ops, name)
    return ours, theirs


def _same(ours: object, theirs: object) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype, (o.dtype, t.dtype)
    assert o.shape == t.shape, (o.shape, t.shape)
    np.testing.assert_allclose(o, t, rtol=1e-6)


@settings(max_examples=8, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    ids=st.lists(st.integers(-1, 4), min_size=0, max_size=7),
    num_segments=st.sampled_from([None, 0, 3, 5]),
    mode=st.sampled_from([None, "clip", "drop"]),
    bucket_size=st.sampled_from([None, 2]),
    width=st.sampled_from([(), (2,)]),
)
def test_segment_ops_match_jax(
    name: str, ids: list[int], num_segments: int | None, mode: str | None, bucket_size: int | None, width: tuple[int, ...],
) -> None:
    ours, theirs = _pair(name)
    seg = np.array(ids, np.int32)
    if num_segments is None and (seg.size == 0 or seg.max() < 0):
        num_segments = 2  # max(ids) + 1 must be a valid size
    data = (np.arange(seg.size * int(np.prod(width)), dtype=np.float32).reshape(seg.size, *width) % 5) - 1.5
    kw = dict(num_segments=num_segments, mode=mode, bucket_size=bucket_size)
    try:
        expected = theirs(data, seg, **kw)
    except ValueError as e:  # max/min of zero buckets: no identity, in both libraries
        with pytest.raises(ValueError, match="zero-size array"):
            ours(data, seg, **kw)
        assert "zero-size array" in str(e)
        return
    _same(ours(data, seg, **kw), expected)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_, np.float16])
def test_identities_of_empty_segments(dtype: type) -> None:
    data: np.ndarray = np.array([1, 0, 1], dtype)
    seg = np.array([0, 0, 2], np.int32)
    for name in NAMES:
        if dtype == np.bool_ and name in ("segment_sum", "segment_prod"):
            continue
        ours, theirs = _pair(name)
        _same(ours(data, seg, 4), theirs(data, seg, 4))


def test_scalar_data_and_mode_clip() -> None:
    seg = np.array([0, 0, 5, -1], np.int32)
    _same(ops.segment_sum(2.0, seg, 3), jax.ops.segment_sum(2.0, seg, 3))
    x = np.array([1, 2, 3, 4], np.int8)
    _same(ops.segment_sum(x, seg, 2, mode="clip"), jax.ops.segment_sum(x, seg, 2, mode="clip"))
    _same(ops.segment_max(x, seg, 2, mode=fcore.lax.GatherScatterMode.CLIP),
          jax.ops.segment_max(x, seg, 2, mode=jax.lax.GatherScatterMode.CLIP))


def test_transformations_match_jax() -> None:
    """One jitted program per library: the four reductions, their gradients (max/min with a tie:
    JAX splits the gradient between the tied elements) and a vmap."""
    seg = np.array([0, 0, 1, 3, 1], np.int32)
    x = np.array([[1.0, -2.0], [3.0, -2.0], [2.0, 2.0], [-1.0, 4.0], [0.25, 1.0]], np.float32)  # a tie in segment 0

    def program(lib: object, xops: object) -> Callable[..., object]:
        def loss(v: Any) -> Any:  # segment_prod's gradient needs unique_indices (trusted, as in JAX)
            return sum((getattr(xops, n)(v, seg, 4, unique_indices=n == "segment_prod") ** 2).sum() for n in NAMES)

        def f(v: Any) -> Any:
            outs = [getattr(xops, n)(v, seg, 4) for n in NAMES]
            batched = getattr(lib, "vmap")(lambda row: getattr(xops, "segment_sum")(row, seg[:2], 2), in_axes=1)(v[:2])
            return outs, getattr(lib, "grad")(loss)(v), batched

        return getattr(lib, "jit")(f)  # type: ignore[no-any-return]

    ours = program(fcore, ops)(x)
    theirs = program(jax, jax.ops)(x)
    for o, t in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        _same(o, t)


def test_errors_match_jax() -> None:
    x = np.arange(4.0, dtype=np.float32)
    seg = np.array([0, 1, 1, 2], np.int32)
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        ops.segment_sum(x, seg, -1)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        ops.segment_sum([1.0, 2.0], seg[:2])  # type: ignore[arg-type]
    with pytest.raises(fcore.errors.ConcretizationTypeError, match="num_segments"):
        fcore.jit(ops.segment_sum)(x, seg)
    with pytest.raises(ValueError, match='Unknown gather mode "bogus"'):
        ops.segment_sum(x, seg, 3, mode="bogus")
    with pytest.raises(TypeError):
        ops.segment_sum(x, seg.astype(np.float32), 3)
    with pytest.raises(TypeError):
        jax.ops.segment_sum(x, seg.astype(np.float32), 3)
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        fcore.grad(lambda v: ops.segment_prod(v, seg, 3).sum())(x)
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        jax.grad(lambda v: jax.ops.segment_prod(v, seg, 3).sum())(x)
    assert isinstance(fnp.asarray(ops.segment_sum(x, seg)), fcore.Array)
