"""``fcore.scipy``'s small modules against ``jax.scipy``'s: ``fft`` (DCT-II and inverse),
``integrate.trapezoid``, ``interpolate.RegularGridInterpolator``, ``ndimage.map_coordinates``
and ``cluster.vq.vq``: values, dtypes, weak types and shapes in one ``jit`` program per library
(few compiles), eager spot checks, staged types in 64-bit mode, ``grad``/``vmap``, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy as jsp
import jax.scipy.cluster.vq
import jax.scipy.fft
import jax.scipy.integrate
import jax.scipy.interpolate
import jax.scipy.ndimage
import numpy as np
import pytest

import fcore
import fcore.scipy as fsp
from test_numpy_common import modes

RNG = np.random.default_rng(0)
M = RNG.standard_normal((4, 6)).astype(np.float32)
M3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
MC = (M + 1j * M[::-1]).astype(np.complex64)
ROWS = np.array([0.5, 1.2, -1.0, 3.7], np.float32)
COLS = np.array([2.5, 0.0, 5.9, 8.5], np.float32)
GRID = (np.linspace(0, 1, 4).astype(np.float32), np.linspace(-1, 1, 5).astype(np.float32))
VALUES = RNG.standard_normal((4, 5)).astype(np.float32)
XI = np.array([[0.1, 0.2], [0.9, -0.95], [1.5, 0.0], [0.5, 0.5]], np.float32)

Case = tuple[str, tuple[Any, ...], dict[str, Any]]
CASES: list[Case] = [
    ("fft.dct", (M,), {}), ("fft.dct", (M,), {"axis": 0, "norm": "ortho", "n": 6}), ("fft.dct", (MC,), {}),
    ("fft.idct", (M,), {"n": 4}), ("fft.idct", (M,), {"norm": "ortho", "axis": 0}), ("fft.idct", (np.arange(5),), {}),
    ("fft.dctn", (M3,), {}), ("fft.dctn", (M,), {"norm": "ortho", "s": [5, 7]}), ("fft.dctn", (M3,), {"axes": [1]}),
    ("fft.idctn", (M3,), {"axes": [0, 2]}), ("fft.idctn", (M,), {"norm": "ortho"}),
    ("integrate.trapezoid", (M,), {}), ("integrate.trapezoid", (M, np.arange(6.0, dtype=np.float32) ** 2), {}),
    ("integrate.trapezoid", (M,), {"dx": 0.5, "axis": 0}), ("integrate.trapezoid", (np.arange(4),), {}),
    ("ndimage.map_coordinates", (M, [ROWS, COLS], 1), {}),
    ("ndimage.map_coordinates", (M, [ROWS, COLS], 0), {"mode": "wrap"}),
    ("ndimage.map_coordinates", (M, [ROWS, COLS], 1), {"mode": "reflect", "cval": 2.0}),
    ("ndimage.map_coordinates", (M, [ROWS, COLS], 1), {"mode": "mirror"}),
    ("ndimage.map_coordinates", (M, [ROWS, COLS], 1), {"mode": "constant", "cval": 2.0}),
    ("ndimage.map_coordinates", (np.arange(12).reshape(3, 4), [ROWS[:2], COLS[:2]], 1), {"mode": "nearest"}),
    ("cluster.vq.vq", (M, M[:2] + 0.1), {}), ("cluster.vq.vq", (np.arange(5.0, dtype=np.float32), np.array([1.0, 3.5], np.float32)), {}),
]


def _get(lib: Any, name: str) -> Callable[..., Any]:
    for part in name.split("."):
        lib = getattr(lib, part)
    result: Callable[..., Any] = lib
    return result


def _all(lib: Any) -> Callable[[], list[Any]]:
    """Every case, and the interpolator's three ways, as one function (one program)."""
    def run() -> list[Any]:
        out = [_get(lib, name)(*args, **kw) for name, args, kw in CASES]
        interp = lib.interpolate.RegularGridInterpolator
        out += [interp(GRID, VALUES)(XI), interp(GRID, VALUES, method="nearest")(XI),
                interp(GRID, VALUES, fill_value=None)(XI), interp(GRID, VALUES)((XI[:, 0], XI[:, 1]))]
        return out
    return run


def _compare(got: Any, want: Any, what: str) -> None:
    g_leaves, w_leaves = fcore.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g_leaves) == len(w_leaves), what
    for g, w in zip(g_leaves, w_leaves):
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type), what
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5, err_msg=what)


def test_modules_match_jax_under_jit() -> None:
    with modes():
        got, want = fcore.jit(_all(fsp))(), jax.jit(_all(jsp))()
    names = [name for name, _, _ in CASES] + ["interpolate"] * 4
    for name, g, w in zip(names, got, want):
        _compare(g, w, name)


def test_modules_eager_and_x64_types() -> None:
    with modes():
        _compare(fsp.fft.dct(M), jsp.fft.dct(jnp.asarray(M)), "eager dct")
        _compare(fsp.ndimage.map_coordinates(M, [ROWS, COLS], 1), jsp.ndimage.map_coordinates(M, [ROWS, COLS], 1), "eager map_coordinates")
    with modes(x64=True):
        mine = fcore.make_jaxpr(_all(fsp))().out_avals
        theirs = jax.make_jaxpr(_all(jsp))().out_avals
        assert [(a.shape, a.dtype, a.weak_type) for a in mine] == [(a.shape, a.dtype, a.weak_type) for a in theirs]


def test_modules_grad_vmap_and_pytree() -> None:
    def loss(lib: Any) -> Callable[[Any], Any]:
        return lambda m: (lib.fft.dctn(m, norm="ortho") ** 3).sum() + lib.integrate.trapezoid(m ** 2) .sum()

    def batched(lib: Any) -> Callable[[Any], Any]:
        return lambda m: lib.fft.idct(m, norm="ortho")

    def interpolate(interp: Any) -> Any:
        return interp(XI)

    with modes():
        _compare(fcore.jit(fcore.grad(loss(fsp)))(M), jax.jit(jax.grad(loss(jsp)))(M), "grad")
        _compare(fcore.vmap(batched(fsp))(M3), jax.vmap(batched(jsp))(M3), "vmap")
        leaves = fcore.tree_util.tree_leaves(fsp.interpolate.RegularGridInterpolator(GRID, VALUES))
        assert len(leaves) == 4
        theirs: Any = jsp.interpolate.RegularGridInterpolator
        _compare(fcore.jit(interpolate)(fsp.interpolate.RegularGridInterpolator(GRID, VALUES)),
                 jax.jit(interpolate)(theirs(GRID, VALUES)), "interpolator as an argument")


@pytest.mark.parametrize(("call", "exc"), [
    (lambda m: m.fft.dct(M, type=3), NotImplementedError),
    (lambda m: m.fft.idctn(M, type=1), NotImplementedError),
    (lambda m: m.fft.dct(M, norm="forward"), ValueError),
    (lambda m: m.fft.dctn(M, s=[1, 2, 3]), ValueError),
    (lambda m: m.ndimage.map_coordinates(M, [ROWS], 1), ValueError),
    (lambda m: m.ndimage.map_coordinates(M, [ROWS, COLS], 3), NotImplementedError),
    (lambda m: m.ndimage.map_coordinates(M, [ROWS, COLS], 1, mode="grid-wrap"), NotImplementedError),
    (lambda m: m.cluster.vq.vq(M, ROWS), ValueError),
    (lambda m: m.cluster.vq.vq(M3, M3), ValueError),
    (lambda m: m.interpolate.RegularGridInterpolator(GRID, VALUES, method="cubic"), ValueError),
    (lambda m: m.interpolate.RegularGridInterpolator(GRID, VALUES, bounds_error=True), NotImplementedError),
    (lambda m: m.interpolate.RegularGridInterpolator((*GRID, GRID[0]), VALUES), ValueError),
    (lambda m: m.interpolate.RegularGridInterpolator(GRID, VALUES, fill_value=1j), ValueError),
    (lambda m: m.interpolate.RegularGridInterpolator(GRID, VALUES)(XI, method="cubic"), ValueError),
    (lambda m: m.interpolate.RegularGridInterpolator(GRID, VALUES)(M3), ValueError),
])
def test_modules_errors_match_jax(call: Callable[[Any], Any], exc: type[Exception]) -> None:
    with pytest.raises(exc) as theirs:
        call(jsp)
    with pytest.raises(exc) as mine:
        call(fsp)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("module", ["fft", "integrate", "interpolate", "ndimage", "cluster", "cluster.vq"])
def test_public_names(module: str) -> None:
    """fcore's ``__all__`` is JAX's list of public names."""
    theirs = sorted(n for n in dir(_get(jsp, module)) if not n.startswith("_"))
    assert sorted(_get(fsp, module).__all__) == theirs  # type: ignore[attr-defined]
