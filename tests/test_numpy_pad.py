"""``fnp.pad`` in every NumPy mode against ``jnp.pad``: values, dtypes and weak types over
several dtypes and pad widths, the mode options, errors, and jit/grad."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from test_numpy_common import check, check_or_raises, check_raises, modes, sample

MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "maximum", "mean", "minimum", "median", "linear_ramp", "empty"]
WIDTHS: list[Any] = [1, (1, 2), ((1, 2), (0, 0), (3, 0)), ((5, 7),), 0, ((0, 5), (7, 0), (1, 1))]
DTYPES = [np.dtype(d) for d in (np.float32, np.int32, np.uint8, np.bool_, np.float16, np.complex64)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_pad_modes(mode: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (2, 3, 4), seed=8)
    with modes():
        for width in WIDTHS[DTYPES.index(dtype) % 2::2]:  # each (mode, width) meets half the dtypes
            check_or_raises(lambda v, w=width: fnp.pad(v, w, mode=mode), lambda v, w=width: jnp.pad(v, w, mode=mode), x)


OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}), ("mean", {"stat_length": 2}),
    ("maximum", {"stat_length": ((1, 2), (2, 1), (3, 3))}), ("linear_ramp", {"end_values": ((1, 2), (3, 4), (5, 6))}),
    ("constant", {"constant_values": 3}), ("constant", {"constant_values": ((1, 2), (3, 4), (5, 6))}),
    ("constant", {"constant_values": (1, 2)}), ("constant", {"constant_values": 2.5}),
]


@pytest.mark.parametrize("mode, kwargs", OPTIONS, ids=repr)
def test_pad_options(mode: str, kwargs: dict[str, Any]) -> None:
    width = ((2, 3), (1, 4), (5, 0))
    with modes():
        for dtype in (np.dtype(np.float32), np.dtype(np.int8)):
            x = sample(dtype, (2, 3, 4), seed=9)
            check(lambda v: fnp.pad(v, width, mode=mode, **kwargs), lambda v: jnp.pad(v, width, mode=mode, **kwargs), x)


def test_pad_edge_cases_and_errors() -> None:
    with modes():
        check(lambda v: fnp.pad(v, 1), lambda v: jnp.pad(v, 1), 3.0)
        check(lambda v: fnp.pad(v, 1), lambda v: jnp.pad(v, 1), np.ones((0, 2), np.float32))
        check(lambda: fnp.pad(fnp.asarray(2.0)[None], 2, mode="edge"), lambda: jnp.pad(jnp.asarray(2.0)[None], 2, mode="edge"))
        bads: tuple[dict[str, Any], ...] = ({"pad_width": -1}, {"pad_width": 1.5}, {"pad_width": ((1, 2, 3),)}, {"pad_width": 1, "mode": "wrap"})
        for bad in bads:
            kw = dict(bad)
            width = kw.pop("pad_width")
            arr = np.ones((0, 2)) if kw.get("mode") == "wrap" else np.ones(3)
            check_raises(lambda v: fnp.pad(v, width, **kw), lambda v: jnp.pad(v, width, **kw), arr)
        check_raises(lambda v: fnp.pad(v, 1, mode="mean", stat_length=0), lambda v: jnp.pad(v, 1, mode="mean", stat_length=0), np.ones(3))
        check_raises(lambda v: fnp.pad(v, 1, foo=1), lambda v: jnp.pad(v, 1, foo=1), np.ones(3))
    with pytest.raises(NotImplementedError):
        fnp.pad(np.ones(3), 1, mode="foo")


def test_pad_transformations() -> None:
    x = np.arange(5.0, dtype=np.float32)
    with modes():
        check(fcore.jit(lambda v: fnp.pad(v, 2, mode="reflect")), jax.jit(lambda v: jnp.pad(v, 2, mode="reflect")), x, staged=False)
        check(fcore.grad(lambda v: (fnp.pad(v, 2, mode="symmetric") ** 2).sum()),
              jax.grad(lambda v: (jnp.pad(v, 2, mode="symmetric") ** 2).sum()), x, staged=False)
        check(fcore.vmap(lambda v: fnp.pad(v, (1, 3), mode="wrap")), jax.vmap(lambda v: jnp.pad(v, (1, 3), mode="wrap")),
              x.reshape(1, 5), staged=False)
