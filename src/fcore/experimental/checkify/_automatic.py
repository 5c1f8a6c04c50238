"""Automatic checks: the ``checkify_rules`` of primitives that can produce a NaN, divide by
zero or index out of bounds. Each binds the equation as it is and, where its category is
enabled, adds a check on its operands or results (JAX's ``nan_checks``, ``div_checks``,
``index_checks``, with JAX's messages)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore.experimental.checkify._errors import DivisionByZeroError, Error, NaNError, OOBError
from fcore.experimental.checkify._primitive import assert_func
from fcore.experimental.checkify._transform import Enabled, checkify_rules
from fcore.ir import dtypes
from fcore.ir.core import JaxprEqn
from fcore.ir.primitive import lookup_primitive
from fcore.lax.elementwise import div_p
from fcore.lax.gather_scatter import (
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)
from fcore.lax.shapes import broadcast_in_dim
from fcore.lax.slicing import dynamic_slice_p, dynamic_update_slice_p


def _bind(eqn: JaxprEqn, args: Sequence[Any]) -> list[Any]:
    out = eqn.primitive.bind(*args, **eqn.params)
    return list(out) if eqn.primitive.multiple_results else [out]


# -- NaN ---------------------------------------------------------------------------------------
def check_nans(error: Error, enabled: Enabled, name: str, outs: Sequence[Any]) -> Error:
    if NaNError not in enabled:
        return error
    found = [fnp.any(fnp.isnan(x)) for x in outs if dtypes.is_inexact(fnp.result_type(x))]
    if not found:
        return error
    any_nan = found[0] if len(found) == 1 else fnp.any(fnp.stack(found))
    return assert_func(error, any_nan, NaNError(None, name))


def _nan_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    outs = _bind(eqn, args)
    return check_nans(error, enabled, eqn.primitive.name, outs), outs


#: The primitives that can produce a NaN (JAX's list; ``linear_solve`` is fcore's
#: ``custom_linear_solve``; JAX's ``reduce`` and ``rng_uniform`` have no fcore counterpart).
NAN_PRIMITIVES = (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e", "bessel_i1e", "cbrt",
    "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "digamma",
    "dot_general", "erf_inv", "erf", "erfc", "exp", "expm1", "fft", "igamma_grad_a", "igamma", "igammac",
    "integer_pow", "lgamma", "custom_linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum",
    "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum", "regularized_incomplete_beta", "rem",
    "rsqrt", "sin", "sinh", "sqrt", "sub", "tan", "tanh",
)
for _name in NAN_PRIMITIVES:
    _prim = lookup_primitive(_name)
    assert _prim is not None, _name
    checkify_rules.register(_prim)(_nan_rule)


@checkify_rules.register(div_p)
def _div_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    if DivisionByZeroError in enabled:
        error = assert_func(error, fnp.any(fnp.equal(args[1], 0)), DivisionByZeroError(None))
    return _nan_rule(error, enabled, eqn, args)


# -- out-of-bounds indexing ------------------------------------------------------------------------
def oob_payload(oob_mask: Any, indices: Any, dims_map: Sequence[int], operand_shape: Sequence[int]) -> Any:
    """(the first out-of-bounds index, its axis, the axis' size), as int32."""
    flat_idx = fnp.argmin(fnp.logical_not(oob_mask))
    multi_idx = fnp.unravel_index(flat_idx, fnp.shape(indices))
    oob_axis = fnp.asarray(np.array(list(dims_map), np.int32))[multi_idx[-1]]
    oob_axis_size = fnp.asarray(np.array(list(operand_shape), np.int32))[oob_axis]
    oob_index = fnp.ravel(indices)[flat_idx]
    return fnp.array([oob_index, oob_axis, oob_axis_size], dtype=np.int32)


def _oob(error: Error, name: str, operand_shape: tuple[int, ...], mask: Any, indices: Any, dims: Sequence[int]) -> Error:
    payload = oob_payload(mask, indices, dims, operand_shape)
    return assert_func(error, fnp.any(mask), OOBError(None, name, operand_shape, payload))


@checkify_rules.register(dynamic_slice_p)
def _dynamic_slice_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    outs = _bind(eqn, args)
    if OOBError not in enabled:
        return error, outs
    operand, *starts = args
    shape = tuple(fnp.shape(operand))
    start = fnp.array(starts)
    sizes = np.array(eqn.params["slice_sizes"], dtype=start.dtype)
    mask = (start < 0) | (start + sizes > np.array(shape, dtype=start.dtype))
    return _oob(error, "dynamic_slice", shape, mask, start, range(len(shape))), outs


@checkify_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    outs = _bind(eqn, args)
    if OOBError not in enabled:
        return error, outs
    operand, update, *starts = args
    shape = tuple(fnp.shape(operand))
    start = fnp.array(starts)
    mask = (start < 0) | (start + np.array(fnp.shape(update)) > np.array(shape))
    return _oob(error, "dynamic_update_slice", shape, mask, start, range(len(shape))), outs


@checkify_rules.register(gather_p)
def _gather_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    outs = _bind(eqn, args)
    if OOBError not in enabled:
        return error, outs
    operand, indices = args
    dnums = eqn.params["dimension_numbers"]
    assert isinstance(dnums, GatherDimensionNumbers)
    shape = tuple(fnp.shape(operand))
    index_map = np.array(dnums.start_index_map, dtype=np.int64)
    upper = np.array(shape, dtype=np.int64)[index_map] - np.array(eqn.params["slice_sizes"], dtype=np.int64)[index_map]
    upper = upper.reshape((1,) * (fnp.ndim(indices) - 1) + upper.shape)
    mask = (indices < 0) | (indices > upper.astype(fnp.result_type(indices)))
    return _oob(error, "gather", shape, mask, indices, dnums.start_index_map), outs


def _scatter_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    outs = _bind(eqn, args)
    if OOBError not in enabled:
        return error, outs
    operand, indices, updates = args
    dnums = eqn.params["dimension_numbers"]
    assert isinstance(dnums, ScatterDimensionNumbers)
    shape = tuple(fnp.shape(operand))
    slice_sizes: list[int] = []
    pos = 0
    for i in range(len(shape)):
        if i in dnums.inserted_window_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(fnp.shape(updates)[dnums.update_window_dims[pos]])
            pos += 1
    index_dtype = fnp.result_type(indices)
    upper = np.array([shape[i] - slice_sizes[i] for i in dnums.scatter_dims_to_operand_dims], np.int64)
    upper = np.minimum(upper, np.iinfo(index_dtype).max).astype(index_dtype)
    upper_b = broadcast_in_dim(upper, tuple(fnp.shape(indices)), (fnp.ndim(indices) - 1,))
    mask = (indices < 0) | (indices > upper_b)
    error = _oob(error, eqn.primitive.name, shape, mask, indices, dnums.scatter_dims_to_operand_dims)
    return check_nans(error, enabled, eqn.primitive.name, outs), outs


for _scatter in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    checkify_rules.register(_scatter)(_scatter_rule)
