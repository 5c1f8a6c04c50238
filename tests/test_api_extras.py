"""Smaller JAX names, differential against jax: ``dtypes.itemsize_bits`` / ``scalar_type_of``."""

from __future__ import annotations

import re
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import fcore


@pytest.mark.parametrize("dtype", [ml_dtypes.int4, np.bool_, np.uint16, np.float16, ml_dtypes.bfloat16, np.complex64,
                                   ml_dtypes.float8_e4m3fn, "int8", np.dtype("O"), None])
def test_itemsize_bits_matches_jax(dtype: Any) -> None:
    try:
        expected = jax.dtypes.itemsize_bits(dtype)
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e).split(":")[0])):
            fcore.dtypes.itemsize_bits(dtype)
        return
    assert fcore.dtypes.itemsize_bits(dtype) == expected


@pytest.mark.parametrize("value", [1, 1.0, True, 1j, np.int8(1), np.ones(2, ml_dtypes.bfloat16), np.ones(2, ml_dtypes.int4),
                                   "float32", "abc", None, [1, 2]])
def test_scalar_type_of_matches_jax(value: Any) -> None:
    try:
        expected = jax.dtypes.scalar_type_of(value)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e), match=re.escape(str(e).split(":")[0])):
            fcore.dtypes.scalar_type_of(value)
        return
    assert fcore.dtypes.scalar_type_of(value) is expected
    if not isinstance(value, str):
        assert fcore.dtypes.scalar_type_of(fcore.numpy.asarray(value)) is expected
