"""Order statistics and NaN-ignoring reductions (``quantile``/``percentile``/``median`` and
``nan*``) against ``jax.numpy``: values, dtypes and weak types over the corpus dtypes, NaN
and all-NaN slices, keepdims/axis tuples, and the functions under jit, grad and vmap."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from test_numpy_common import DTYPES, check, check_or_raises, check_raises, modes, sample

NAN_REDUCTIONS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin",
                  "nancumsum", "nancumprod", "ptp", "median", "nanmedian"]
QUANTILES = ["quantile", "nanquantile", "percentile", "nanpercentile"]
WITH_NANS = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan, np.nan, np.nan, np.nan], [0.0, -1.0, 5.0, 5.0]], np.float32)


def _axis_kwargs(name: str) -> list[dict[str, Any]]:
    if "cum" in name:
        return [{}, {"axis": 0}, {"axis": 1}]
    return [{}, {"axis": 0}, {"axis": 1, "keepdims": True}]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_nan_reductions(name: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (3, 4), seed=1)
    f, g = getattr(fnp, name), getattr(jnp, name)
    with modes():
        for kw in _axis_kwargs(name):
            check_or_raises(lambda v, k=kw: f(v, **k), lambda v, k=kw: g(v, **k), x)
    with modes():
        for kw in _axis_kwargs(name):
            check(lambda v, k=kw: f(v, **k), lambda v, k=kw: g(v, **k), WITH_NANS)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", QUANTILES)
def test_quantiles(name: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (3, 4), seed=2)
    scale = 100.0 if "percentile" in name else 1.0
    f, g = getattr(fnp, name), getattr(jnp, name)
    # a scalar and an array q alternate over the options, shifted per dtype: each (option, q)
    # meets several dtypes without the full product
    shift = DTYPES.index(np.dtype(dtype))
    qs = (0.3, np.array([0.1, 0.5, 1.0], np.float32))
    with modes():
        for i, kw in enumerate(({}, {"axis": 1}, {"axis": (0, 1), "keepdims": True}, {"axis": 0, "keepdims": True},
                                {"method": "lower"}, {"method": "higher"}, {"method": "nearest"}, {"method": "midpoint"})):
            q = qs[(i + shift) % 2]
            check(lambda v, q, k=kw: f(v, q, **k), lambda v, q, k=kw: g(v, q, **k), x, q * scale)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantiles_with_nans(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    with modes():
        for kw in ({}, {"axis": 0}, {"axis": 1}, {"axis": 1, "keepdims": True}):
            check(lambda v, q, k=kw: f(v, q, **k), lambda v, q, k=kw: g(v, q, **k), WITH_NANS, np.array([0.25, 0.5]))


def test_options_and_errors() -> None:
    with modes():
        check(lambda v: fnp.nanmax(v, axis=1, initial=0.0), lambda v: jnp.nanmax(v, axis=1, initial=0.0), WITH_NANS)
        check(lambda v: fnp.nanvar(v, axis=1, ddof=1), lambda v: jnp.nanvar(v, axis=1, ddof=1), WITH_NANS)
        check(fnp.median, jnp.median, 3)
        check_raises(fnp.quantile, jnp.quantile, sample(np.dtype(np.float32), (5,)), np.ones((2, 2)) * 0.5)
        check_raises(fnp.quantile, jnp.quantile, sample(np.dtype(np.complex64), (5,)), 0.5)
        check_raises(lambda v: fnp.quantile(v, 0.5, method="foo"), lambda v: jnp.quantile(v, 0.5, method="foo"), np.ones(3))
    with modes(x64=True):
        check(fnp.median, jnp.median, sample(np.dtype(np.int32), (5, 4)))
        check(lambda v: fnp.quantile(v, 0.2, axis=0), lambda v: jnp.quantile(v, 0.2, axis=0), sample(np.dtype(np.float64), (5, 4)))


def test_transformations() -> None:
    x = sample(np.dtype(np.float32), (5, 4), seed=4)
    with modes():
        check(fcore.jit(fnp.median), jax.jit(jnp.median), x, staged=False)
        check(fcore.grad(fnp.median), jax.grad(jnp.median), x, staged=False)
        check(fcore.grad(lambda v: fnp.quantile(v, 0.3)), jax.grad(lambda v: jnp.quantile(v, 0.3)), x, staged=False)
        check(fcore.grad(fnp.nanmean), jax.grad(jnp.nanmean), WITH_NANS, staged=False)
        check(fcore.grad(lambda v: fnp.nanstd(v, axis=1).sum()), jax.grad(lambda v: jnp.nanstd(v, axis=1).sum()),
              x, staged=False)
        check(fcore.vmap(fnp.median), jax.vmap(jnp.median), x, staged=False)
        check(fcore.vmap(fnp.nanargmax), jax.vmap(jnp.nanargmax), WITH_NANS, staged=False)
