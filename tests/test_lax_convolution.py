"""``conv_general_dilated`` and its conveniences, differentially against ``jax.lax``.

Operands hold small integers, so every product is exact in every dtype and values compare
exactly; gradients (float32, accumulated in different orders) compare to a tight tolerance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jax_lax

import fcore
import fcore.numpy as fnp
from fcore import lax as flax
from fcore.core import typecheck

jlax: Any = jax_lax  # called with NumPy operands, which jax's stubs do not list
DT = np.dtype[Any]
Arr = np.ndarray[Any, Any]
F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
I8 = np.dtype(np.int8)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)


def rand(shape: Sequence[int], dtype: DT = F32, seed: int = 0) -> Arr:
    return np.random.default_rng(seed).integers(-3, 4, tuple(shape)).astype(dtype)


def assert_same(got: object, want: object, exact: bool = True) -> None:
    assert isinstance(got, fcore.Array), type(got)
    assert isinstance(want, jax.Array), type(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.aval.weak_type
    wide = np.complex128 if np.iscomplexobj(np.asarray(want)) else np.float64
    g, w = np.asarray(got).astype(wide), np.asarray(want).astype(wide)
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6 * max(1.0, float(np.abs(w).max(initial=0))))


def check(kwargs: dict[str, Any], lhs: Arr, rhs: Arr) -> None:
    """Eager and jitted values equal JAX's; the staged jaxpr typechecks and its params agree."""
    want = jlax.conv_general_dilated(lhs, rhs, **kwargs)
    assert_same(flax.conv_general_dilated(lhs, rhs, **kwargs), want)
    assert_same(fcore.jit(lambda a, b: flax.conv_general_dilated(a, b, **kwargs))(lhs, rhs), want)
    closed = fcore.make_jaxpr(lambda a, b: flax.conv_general_dilated(a, b, **kwargs))(lhs, rhs)
    typecheck(closed)
    (eqn,) = closed.eqns
    (jeqn,) = jax.make_jaxpr(lambda a, b: jlax.conv_general_dilated(a, b, **kwargs))(lhs, rhs).eqns
    for name in ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "feature_group_count",
                 "batch_group_count"):
        assert eqn.params[name] == jeqn.params[name], name
    dn = eqn.params["dimension_numbers"]
    assert isinstance(dn, flax.ConvDimensionNumbers)
    assert tuple(dn) == tuple(jeqn.params["dimension_numbers"])


NHWC = ("NHWC", "HWIO", "NHWC")
#: (id, lhs shape, rhs shape, keyword arguments)
CASES: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("1d_valid", (2, 3, 9), (4, 3, 3), dict(window_strides=(1,), padding="VALID")),
    ("1d_same_stride", (2, 3, 9), (4, 3, 4), dict(window_strides=(2,), padding="SAME")),
    ("1d_same_lower", (2, 3, 8), (4, 3, 4), dict(window_strides=(3,), padding="SAME_LOWER")),
    ("2d_nchw", (2, 3, 7, 6), (5, 3, 3, 2), dict(window_strides=(1, 2), padding="SAME")),
    ("2d_nhwc", (2, 7, 6, 3), (3, 2, 3, 5), dict(window_strides=(2, 1), padding="VALID", dimension_numbers=NHWC)),
    ("2d_explicit_negative", (2, 3, 7, 6), (4, 3, 2, 2),
     dict(window_strides=(1, 1), padding=[(2, -1), (0, 3)])),
    ("2d_atrous", (1, 2, 9, 9), (3, 2, 3, 3), dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 3))),
    ("2d_transposed", (1, 2, 5, 4), (3, 2, 3, 3),
     dict(window_strides=(1, 1), padding=[(2, 2), (1, 2)], lhs_dilation=(2, 3))),
    ("2d_all_dilations", (2, 4, 6, 5), (2, 4, 2, 3),
     dict(window_strides=(2, 3), padding=[(1, 0), (2, -1)], lhs_dilation=(1, 2), rhs_dilation=(2, 1))),
    ("2d_grouped", (2, 6, 5, 5), (4, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME", feature_group_count=2)),
    ("2d_depthwise", (2, 5, 5, 4), (3, 3, 1, 8),
     dict(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC, feature_group_count=4)),
    ("2d_batch_groups", (4, 3, 6, 5), (6, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    ("2d_mixed_layouts", (5, 2, 6, 3), (2, 4, 3, 3),
     dict(window_strides=(1, 2), padding="SAME", dimension_numbers=("HNWC", "OHWI", "CWNH"))),
    ("3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
    ("3d_ndhwc", (1, 4, 5, 4, 2), (2, 3, 2, 2, 3),
     dict(window_strides=(2, 1, 1), padding="VALID", dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))),
    ("0d", (3, 4), (5, 4), dict(window_strides=(), padding=())),
    ("empty_batch", (0, 2, 4, 4), (3, 2, 2, 2), dict(window_strides=(1, 1), padding="VALID")),
    ("window_larger_than_input", (1, 1, 2, 2), (1, 1, 3, 3), dict(window_strides=(1, 1), padding="VALID")),
]


@pytest.mark.parametrize(("lshape", "rshape", "kwargs"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_conv_general_dilated_matches_jax(lshape: tuple[int, ...], rshape: tuple[int, ...], kwargs: dict[str, Any]) -> None:
    check(kwargs, rand(lshape), rand(rshape, seed=1))


def test_conv_dimension_numbers_object_and_list_spellings() -> None:
    lhs, rhs = rand((2, 6, 5, 3)), rand((3, 2, 3, 4), seed=1)
    dn = flax.conv_dimension_numbers(lhs.shape, rhs.shape, ("NHWC", "HWIO", "NHWC"))
    jdn = jlax.conv_dimension_numbers(lhs.shape, rhs.shape, ("NHWC", "HWIO", "NHWC"))
    assert tuple(dn) == tuple(jdn)
    lhs_spec, rhs_spec, out_spec = dn
    assert (lhs_spec, rhs_spec, out_spec) == (dn.lhs_spec, dn.rhs_spec, dn.out_spec)
    want = jlax.conv_general_dilated(lhs, rhs, (1, 1), "SAME", dimension_numbers=jdn)
    assert_same(flax.conv_general_dilated(lhs, rhs, (1, 1), "SAME", dimension_numbers=dn), want)
    assert_same(flax.conv_general_dilated(lhs, rhs, (1, 1), "SAME", dimension_numbers=["NHWC", "HWIO", "NHWC"]), want)
    none = flax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None)
    assert tuple(none) == tuple(jlax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None))


@pytest.mark.parametrize(
    ("dtype", "preferred"),
    [(I32, None), (F16, None), (BF16, None), (I8, np.int32), (I8, np.float32), (BF16, np.float32), (F32, None)],
    ids=str,
)
def test_dtypes_and_preferred_element_type(dtype: DT, preferred: Any) -> None:
    kwargs = dict(window_strides=(1, 1), padding="SAME", preferred_element_type=preferred)
    check(kwargs, rand((2, 3, 5, 5), dtype), rand((4, 3, 3, 3), dtype, seed=1))


def test_weak_typed_and_precision_arguments() -> None:
    lhs, rhs = rand((1, 2, 4, 4)), rand((2, 2, 2, 2), seed=1)
    for precision in (None, "highest", jlax.Precision.HIGH, (flax.Precision.HIGHEST, flax.Precision.DEFAULT)):
        jp = precision if not isinstance(precision, tuple) else (jlax.Precision.HIGHEST, jlax.Precision.DEFAULT)
        fp = precision if not isinstance(precision, jlax.Precision) else flax.Precision.HIGH
        assert_same(flax.conv(lhs, rhs, (1, 1), "VALID", precision=fp), jlax.conv(lhs, rhs, (1, 1), "VALID", precision=jp))
        assert_same(
            fcore.jit(lambda a, b: flax.conv(a, b, (1, 1), "VALID", precision=fp))(lhs, rhs),
            jlax.conv(lhs, rhs, (1, 1), "VALID", precision=jp),
        )


def test_conv_and_conv_with_general_padding() -> None:
    lhs, rhs = rand((2, 3, 8, 7)), rand((4, 3, 3, 2), seed=1)
    assert_same(flax.conv(lhs, rhs, (2, 1), "SAME"), jlax.conv(lhs, rhs, (2, 1), "SAME"))
    args = ((1, 2), [(1, 1), (0, 2)], (2, 1), (1, 2))
    assert_same(flax.conv_with_general_padding(lhs, rhs, *args), jlax.conv_with_general_padding(lhs, rhs, *args))


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))], ids=str)
@pytest.mark.parametrize("transpose_kernel", [False, True])
@pytest.mark.parametrize("consistent", [False, True])
def test_conv_transpose(padding: Any, transpose_kernel: bool, consistent: bool) -> None:
    lhs, rhs = rand((2, 5, 4, 3)), rand((3, 2, 3, 3) if not transpose_kernel else (3, 2, 3, 3), seed=1)
    kwargs: dict[str, Any] = dict(transpose_kernel=transpose_kernel, use_consistent_padding=consistent, rhs_dilation=(1, 2))
    want = jlax.conv_transpose(lhs, rhs, (2, 3), padding, **kwargs)
    assert_same(flax.conv_transpose(lhs, rhs, (2, 3), padding, **kwargs), want)
    lhs1, rhs1 = rand((2, 6, 3)), rand((3, 3, 4), seed=1)
    want = jlax.conv_transpose(lhs1, rhs1, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"))
    assert_same(flax.conv_transpose(lhs1, rhs1, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")), want)


# -- derivatives and batching -------------------------------------------------------------------
GRAD_CASES = [c for c in CASES if c[0] not in ("0d",)]


def _loss(lib: Any, numpy: Any, kwargs: dict[str, Any]) -> Callable[[Any, Any], Any]:
    def loss(a: Any, b: Any) -> Any:
        out = lib.conv_general_dilated(a, b, **kwargs)
        return numpy.sum(numpy.sin(out) * numpy.arange(out.size, dtype=np.float32).reshape(out.shape) / 7)

    return loss


@pytest.mark.parametrize(("lshape", "rshape", "kwargs"), [c[1:] for c in GRAD_CASES], ids=[c[0] for c in GRAD_CASES])
def test_grad_of_both_operands_matches_jax(
    lshape: tuple[int, ...], rshape: tuple[int, ...], kwargs: dict[str, Any]
) -> None:
    lhs, rhs = rand(lshape) / 3, rand(rshape, seed=1) / 3
    want = jax.grad(_loss(jlax, jnp, kwargs), argnums=(0, 1))(lhs, rhs)
    got = fcore.grad(_loss(flax, fnp, kwargs), argnums=(0, 1))(lhs, rhs)
    jitted = fcore.jit(fcore.grad(_loss(flax, fnp, kwargs), argnums=(0, 1)))(lhs, rhs)
    for g, j, w in zip(got, jitted, want):
        assert_same(g, w, exact=False)
        assert_same(j, w, exact=False)


def test_jvp_matches_jax() -> None:
    kwargs: dict[str, Any] = dict(window_strides=(2, 1), padding="SAME", rhs_dilation=(1, 2), feature_group_count=2)
    lhs, rhs = rand((2, 4, 6, 5)), rand((4, 2, 3, 2), seed=1)
    tl, tr = rand(lhs.shape, seed=2), rand(rhs.shape, seed=3)
    want = jax.jvp(lambda a, b: jlax.conv_general_dilated(a, b, **kwargs), (lhs, rhs), (tl, tr))
    got = fcore.jvp(lambda a, b: flax.conv_general_dilated(a, b, **kwargs), (lhs, rhs), (tl, tr))
    for g, w in zip(got, want):
        assert_same(g, w)


VMAP_CASES = [c for c in CASES if c[0] in ("1d_same_stride", "2d_nhwc", "2d_grouped", "2d_batch_groups",
                                         "2d_all_dilations", "2d_mixed_layouts", "3d")]


@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (2, 0)], ids=str)
@pytest.mark.parametrize(("lshape", "rshape", "kwargs"), [c[1:] for c in VMAP_CASES], ids=[c[0] for c in VMAP_CASES])
def test_vmap_over_lhs_rhs_and_both(
    lshape: tuple[int, ...], rshape: tuple[int, ...], kwargs: dict[str, Any], in_axes: tuple[int | None, int | None]
) -> None:
    def batched(shape: tuple[int, ...], axis: int | None, seed: int) -> Arr:
        if axis is None:
            return rand(shape, seed=seed)
        return rand(shape[:axis] + (3,) + shape[axis:], seed=seed)

    lhs, rhs = batched(lshape, in_axes[0], 0), batched(rshape, in_axes[1], 1)
    want = jax.vmap(lambda a, b: jlax.conv_general_dilated(a, b, **kwargs), in_axes=in_axes)(lhs, rhs)
    assert_same(fcore.vmap(lambda a, b: flax.conv_general_dilated(a, b, **kwargs), in_axes=in_axes)(lhs, rhs), want)
    jitted = fcore.jit(fcore.vmap(lambda a, b: flax.conv_general_dilated(a, b, **kwargs), in_axes=in_axes))
    assert_same(jitted(lhs, rhs), want)


def test_vmap_of_grad_per_example() -> None:
    kwargs: dict[str, Any] = dict(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC)
    xs, w = rand((4, 1, 5, 5, 2)) / 3, rand((3, 3, 2, 3), seed=1) / 3
    want = jax.vmap(jax.grad(_loss(jlax, jnp, kwargs), argnums=1), in_axes=(0, None))(xs, w)
    got = fcore.vmap(fcore.grad(_loss(flax, fnp, kwargs), argnums=1), in_axes=(0, None))(xs, w)
    assert_same(got, want, exact=False)


def test_zero_sized_vmap() -> None:
    kwargs: dict[str, Any] = dict(window_strides=(1,), padding="VALID")
    lhs, rhs = rand((0, 2, 3, 5)), rand((4, 3, 2), seed=1)
    want = jax.vmap(lambda a: jlax.conv_general_dilated(a, rhs, **kwargs))(lhs)
    assert_same(fcore.vmap(lambda a: flax.conv_general_dilated(a, rhs, **kwargs))(lhs), want)


@settings(max_examples=12, deadline=None)
@given(
    n=st.integers(1, 2), c=st.integers(1, 2), groups=st.integers(1, 2), size=st.integers(1, 6), k=st.integers(1, 3),
    stride=st.integers(1, 3), lo=st.integers(-1, 2), hi=st.integers(-1, 2), ld=st.integers(1, 2), rd=st.integers(1, 2),
)
def test_random_1d_convolutions_and_grads(
    n: int, c: int, groups: int, size: int, k: int, stride: int, lo: int, hi: int, ld: int, rd: int
) -> None:
    lhs, rhs = rand((n, c * groups, size)), rand((2 * groups, c, k), seed=1)
    kwargs: dict[str, Any] = dict(
        window_strides=(stride,), padding=[(lo, hi)], lhs_dilation=(ld,), rhs_dilation=(rd,), feature_group_count=groups
    )
    try:
        want = jlax.conv_general_dilated(lhs, rhs, **kwargs)
    except ValueError:
        with pytest.raises(ValueError):
            flax.conv_general_dilated(lhs, rhs, **kwargs)
        return
    assert_same(flax.conv_general_dilated(lhs, rhs, **kwargs), want)
    if want.size:
        jg = jax.grad(_loss(jlax, jnp, kwargs), argnums=(0, 1))(lhs, rhs)
        fg = fcore.grad(_loss(flax, fnp, kwargs), argnums=(0, 1))(lhs, rhs)
        for g, w in zip(fg, jg):
            assert_same(g, w, exact=False)


# -- errors ---------------------------------------------------------------------------------------
ERRORS: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any], type[Exception], str]] = [
    ("feature_mismatch", (1, 3, 5, 5), (2, 4, 3, 3), dict(window_strides=(1, 1), padding="SAME"),
     ValueError, "3 // 1 != 4"),
    ("rank_mismatch", (1, 3, 5, 5), (2, 3, 3), dict(window_strides=(1,), padding="SAME"), TypeError, "ndim to be equal"),
    ("bad_padding_string", (1, 3, 5, 5), (2, 3, 3, 3), dict(window_strides=(1, 1), padding="FULL"),
     RuntimeError, "Unrecognized padding type"),
    ("bad_padding_pairs", (1, 3, 5, 5), (2, 3, 3, 3), dict(window_strides=(1, 1), padding=[1, 2]),
     ValueError, "padding argument"),
    ("wrong_number_of_pads", (1, 3, 5, 5), (2, 3, 3, 3), dict(window_strides=(1, 1), padding=[(1, 1)]),
     TypeError, "Wrong number of explicit pads"),
    ("strides_rank", (1, 3, 5, 5), (2, 3, 3, 3), dict(window_strides=(1,), padding="VALID"),
     ValueError, "window_strides must have the same number"),
    ("group_divides", (1, 3, 5, 5), (2, 1, 3, 3), dict(window_strides=(1, 1), padding="VALID", feature_group_count=2),
     ValueError, "does not divide"),
    ("group_out_features", (1, 4, 5, 5), (3, 2, 3, 3),
     dict(window_strides=(1, 1), padding="VALID", feature_group_count=2), ValueError, "multiple of feature_group_count"),
    ("both_groups", (2, 4, 5, 5), (4, 2, 3, 3),
     dict(window_strides=(1, 1), padding="VALID", feature_group_count=2, batch_group_count=2), ValueError, "At most one"),
    ("batch_group_divides", (3, 2, 5, 5), (4, 2, 3, 3),
     dict(window_strides=(1, 1), padding="VALID", batch_group_count=2), ValueError, "does not divide"),
    ("negative_padding", (1, 1, 2, 2), (1, 1, 1, 1), dict(window_strides=(1, 1), padding=[(-2, -1), (0, 0)]),
     ValueError, "Negative padding"),
    ("string_padding_transposed", (1, 1, 4, 4), (1, 1, 2, 2),
     dict(window_strides=(1, 1), padding="SAME", lhs_dilation=(2, 2)), ValueError, "conv_transpose"),
    ("bad_layout", (1, 1, 4, 4), (1, 1, 2, 2),
     dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWN")), TypeError, "exactly once"),
    ("layout_length", (1, 1, 4, 4), (1, 1, 2, 2),
     dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHC", "HIO", "NHC")), TypeError, "must have len"),
    ("dilation_positive", (1, 1, 4, 4), (1, 1, 2, 2),
     dict(window_strides=(1, 1), padding="VALID", rhs_dilation=(0, 1)), TypeError, "dilations must be positive"),
]


@pytest.mark.parametrize(("lshape", "rshape", "kwargs", "exc", "match"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_jax(
    lshape: tuple[int, ...], rshape: tuple[int, ...], kwargs: dict[str, Any], exc: type[Exception], match: str
) -> None:
    lhs, rhs = rand(lshape), rand(rshape, seed=1)
    with pytest.raises(exc, match=match):
        jlax.conv_general_dilated(lhs, rhs, **kwargs)
    with pytest.raises(exc, match=match):
        flax.conv_general_dilated(lhs, rhs, **kwargs)
    with pytest.raises(exc, match=match):
        fcore.jit(lambda a, b: flax.conv_general_dilated(a, b, **kwargs))(lhs, rhs)


def test_dtype_mismatch_is_a_type_error() -> None:
    lhs, rhs = rand((1, 2, 4, 4)), rand((1, 2, 2, 2), I32)
    with pytest.raises(TypeError, match="same dtypes"):
        jlax.conv(lhs, rhs, (1, 1), "VALID")
    with pytest.raises(TypeError, match="same dtypes"):
        flax.conv(lhs, rhs, (1, 1), "VALID")
    with pytest.raises(TypeError, match="narrower"):
        flax.conv(lhs, lhs[:1, :, :2, :2], (1, 1), "VALID", preferred_element_type=np.float16)


def test_padtype_to_pads_matches_jax() -> None:
    for mode in ("SAME", "SAME_LOWER", "VALID", "same"):
        for shape, window, strides in [((7, 8), (3, 2), (2, 3)), ((1,), (4,), (1,)), ((5, 5), (1, 1), (1, 1))]:
            assert flax.padtype_to_pads(shape, window, strides, mode) == [
                tuple(p) for p in jlax.padtype_to_pads(shape, window, strides, mode)
            ]


# -- fcore.numpy.convolve / correlate -------------------------------------------------------------
NP_PAIRS: list[tuple[Arr, Arr]] = [
    (rand((7,)), rand((3,), seed=1)),
    (rand((3,), I32), rand((6,), I32, seed=1)),
    (rand((5,), BF16), rand((4,), BF16, seed=1)),
    ((rand((4,)) + 1j * rand((4,), seed=2)).astype(np.complex64), (rand((2,), seed=3) - 1j).astype(np.complex64)),
    (rand((1,)), rand((1,), seed=1)),
]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("pair", range(len(NP_PAIRS)))
def test_numpy_convolve_correlate_match_jax(name: str, mode: str, pair: int) -> None:
    a, v = NP_PAIRS[pair]
    want = getattr(jnp, name)(a, v, mode=mode)
    assert_same(getattr(fnp, name)(a, v, mode=mode), want)
    assert_same(fcore.jit(lambda x, y: getattr(fnp, name)(x, y, mode=mode))(a, v), want)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_numpy_convolve_grad_vmap_and_preferred_type(name: str) -> None:
    a, v = rand((6,)) / 3, rand((3,), seed=1) / 3

    def loss(lib: Any) -> Callable[[Any, Any], Any]:
        return lambda x, y: lib.sum(lib.sin(getattr(lib, name)(x, y, mode="same")))

    want = jax.grad(loss(jnp), argnums=(0, 1))(a, v)
    for g, w in zip(fcore.grad(loss(fnp), argnums=(0, 1))(a, v), want):
        assert_same(g, w, exact=False)
    batch = np.stack([a, -a, 2 * a])
    assert_same(
        fcore.vmap(lambda x: getattr(fnp, name)(x, v))(batch), jax.vmap(lambda x: getattr(jnp, name)(x, v))(batch)
    )
    ints = rand((5,), I8), rand((2,), I8, seed=1)
    assert_same(
        getattr(fnp, name)(*ints, preferred_element_type=np.int32),
        getattr(jnp, name)(*ints, preferred_element_type=np.int32),
    )
    with pytest.raises(ValueError, match="mode must be one of"):
        getattr(fnp, name)(a, v, mode="circular")
    with pytest.raises(ValueError, match="1-dimensional"):
        getattr(fnp, name)(a.reshape(2, 3), v)
    with pytest.raises(ValueError, match="cannot be empty"):
        getattr(fnp, name)(a, v[:0])


# -- a CNN trains with JAX's numbers ----------------------------------------------------------------
def _cnn_loss(numpy: Any, lax: Any, nn: Any) -> Callable[[dict[str, Any], Any, Any], Any]:
    """conv - relu - max-pool - conv - relu - avg-pool - dense, softmax cross-entropy."""

    def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
        h = lax.conv_general_dilated(x, p["w1"], (1, 1), "SAME", dimension_numbers=NHWC) + p["b1"]
        h = lax.reduce_window(nn.relu(h), -numpy.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(h, p["w2"], (1, 1), "SAME", dimension_numbers=NHWC) + p["b2"]
        h = lax.reduce_window(nn.relu(h), 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        logits = h.reshape(h.shape[0], -1) @ p["w3"] + p["b3"]
        return -numpy.mean(numpy.take_along_axis(nn.log_softmax(logits), y[:, None], axis=1))

    return loss


def test_cnn_trains_with_jax_numbers() -> None:
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.normal(size=(3, 3, 1, 4)) / 3).astype(np.float32), "b1": np.zeros(4, np.float32),
        "w2": (rng.normal(size=(3, 3, 4, 8)) / 6).astype(np.float32), "b2": np.zeros(8, np.float32),
        "w3": (rng.normal(size=(7 * 7 * 8, 10)) / 20).astype(np.float32), "b3": np.zeros(10, np.float32),
    }
    x = rng.normal(size=(8, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, 8).astype(np.int32)
    f_step = fcore.jit(fcore.value_and_grad(_cnn_loss(fnp, flax, fcore.nn)))
    j_step = jax.jit(jax.value_and_grad(_cnn_loss(jnp, jlax, jax.nn)))
    fp: dict[str, Any] = dict(params)
    jp: dict[str, Any] = dict(params)
    for _ in range(3):
        (fv, fg), (jv, jg) = f_step(fp, x, y), j_step(jp, x, y)
        assert_same(fv, jv, exact=False)
        for k in params:
            assert_same(fg[k], jg[k], exact=False)
        fp = {k: fp[k] - 0.1 * fg[k] for k in params}
        jp = {k: jp[k] - 0.1 * jg[k] for k in params}
    eager = fcore.value_and_grad(_cnn_loss(fnp, flax, fcore.nn))(params, x, y)
    want = jax.value_and_grad(_cnn_loss(jnp, jlax, jax.nn))(params, x, y)
    assert_same(eager[0], want[0], exact=False)
    for k in params:
        assert_same(eager[1][k], want[1][k], exact=False)


def test_conv_general_dilated_patches_matches_jax() -> None:
    lhs = rand((2, 5, 6, 3))
    for kwargs in (
        dict(dimension_numbers=("NHWC", "OIHW", "NHWC")),
        dict(dimension_numbers=("NHWC", "HWIO", "NCHW"), lhs_dilation=(1, 2), rhs_dilation=(2, 1)),
    ):
        want = jlax.conv_general_dilated_patches(lhs, (2, 3), (1, 2), [(1, 0), (2, 1)], **kwargs)
        assert_same(flax.conv_general_dilated_patches(lhs, (2, 3), (1, 2), [(1, 0), (2, 1)], **kwargs), want)
    want = jlax.conv_general_dilated_patches(lhs.transpose(0, 3, 1, 2), (3, 3), (1, 1), "SAME")
    assert_same(flax.conv_general_dilated_patches(lhs.transpose(0, 3, 1, 2), (3, 3), (1, 1), "SAME"), want)


def test_shape_tuples_match_jax() -> None:
    assert flax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME") == tuple(
        jlax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME")
    )
    assert flax.conv_shape_tuple((4, 3, 9, 8), (4, 3, 3, 2), (1, 1), [(1, 0), (0, 2)], 2) == tuple(
        jlax.conv_shape_tuple((4, 3, 9, 8), (4, 3, 3, 2), (1, 1), [(1, 0), (0, 2)], 2)
    )
    args = ((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "VALID", ("NHWC", "HWIO", "NHWC"))
    assert flax.conv_general_shape_tuple(*args) == tuple(jlax.conv_general_shape_tuple(*args))
    for padding in ("SAME", "VALID", [(1, 1), (0, 2)]):
        targs = ((2, 5, 4, 3), (3, 2, 3, 4), (2, 3), padding, ("NHWC", "HWIO", "NHWC"))
        assert flax.conv_transpose_shape_tuple(*targs) == tuple(int(d) for d in jlax.conv_transpose_shape_tuple(*targs))
