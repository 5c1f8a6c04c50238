"""Neural-network layers as ``(init_fun, apply_fun)`` pairs (``jax.example_libraries.stax``).

``init_fun(rng, input_shape)`` returns ``(output_shape, params)``; ``apply_fun(params,
inputs, **kwargs)`` the layer's output (``rng=`` a key where the layer is random, as
:func:`Dropout`). Combinators (:func:`serial`, :func:`parallel`, ...) build layers from layers.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import fcore.numpy as fnp
from fcore import lax, random
from fcore.interpreters.array import Array
from fcore.nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize
from fcore.nn.initializers import Initializer, glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout", "Elu", "Exp",
    "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "GeneralConvTranspose", "Identity",
    "InitFun", "ApplyFun", "Layer", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax",
    "Softplus", "SumPool", "Tanh", "elementwise", "glorot", "logsoftmax", "parallel", "randn", "serial",
    "shape_dependent",
]

#: ``init_fun(rng, input_shape) -> (output_shape, params)``.
InitFun = Callable[[Any, Any], tuple[Any, Any]]
#: ``apply_fun(params, inputs, **kwargs) -> outputs``.
ApplyFun = Callable[..., Any]
Layer = tuple[InitFun, ApplyFun]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim: int, W_init: Initializer = glorot_normal(), b_init: Initializer = normal()) -> Layer:
    """A dense (fully connected) layer: ``inputs @ W + b``."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return fnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _conv_layer(
    dimension_numbers: tuple[str, str, str], out_chan: int, filter_shape: Sequence[int], strides: Sequence[int] | None,
    padding: Any, W_init: Initializer | None, b_init: Initializer, transpose: bool,
) -> Layer:
    """A (transposed) convolution with the given ``(lhs, rhs, out)`` layout strings, plus a bias."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    w_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    shape_tuple = lax.conv_transpose_shape_tuple if transpose else lax.conv_general_shape_tuple

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [
            out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(filter_shape_iter)
            for c in rhs_spec
        ]
        output_shape = shape_tuple(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (w_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        if transpose:
            return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers) + b
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Initializer | None = None,
    b_init: Initializer = normal(1e-6),
) -> Layer:
    """A convolution with the given ``(lhs, rhs, out)`` layout strings, plus a bias."""
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init, transpose=False)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Initializer | None = None,
    b_init: Initializer = normal(1e-6),
) -> Layer:
    """A transposed convolution with the given layout strings, plus a bias."""
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init, transpose=True)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis: int | Sequence[int] = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Initializer = zeros,
    gamma_init: Initializer = ones,
) -> Layer:
    """Batch normalization over ``axis``, with a learned shift (``center``) and scale."""
    axes: tuple[int, ...] = tuple(axis) if isinstance(axis, Sequence) else (operator.index(axis),)

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        ed = tuple(None if i in axes else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A layer without parameters that applies ``fun`` to its inputs."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)

_Rescale = Callable[[Array, Array, "str | None"], Array]


def _pooling_layer(
    reducer: Callable[[Any, Any], Any],
    init_val: float,
    rescaler: Callable[[tuple[int, ...], tuple[int, ...], Any], _Rescale] | None = None,
) -> Callable[..., Layer]:
    def PoolingLayer(
        window_shape: tuple[int, ...], strides: tuple[int, ...] | None = None, padding: Any = "VALID", spec: str | None = None
    ) -> Layer:
        """A pooling layer over the spatial dimensions (all but ``N`` and ``C`` of ``spec``)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial_axes = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]
        full_window, full_strides = window_shape, strides

        def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
            padding_vals = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            ones_ = (1,) * len(full_window)
            out_shape = lax.reduce_window_shape_tuple(input_shape, full_window, full_strides, padding_vals, ones_, ones_)
            return out_shape, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -math.inf)
SumPool = _pooling_layer(lax.add, 0.0)


def _normalize_by_window_size(dims: tuple[int, ...], strides: tuple[int, ...], padding: Any) -> _Rescale:
    def rescale(outputs: Array, inputs: Array, spec: str | None) -> Array:
        non_spatial_axes = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial_axes)
        one = fnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(one, 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = fnp.expand_dims(window_sizes, i)
        return fnp.true_divide(outputs, window_sizes)

    return rescale


AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def _flatten() -> Layer:
    """Flattens all but the leading dimension."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()


def _identity() -> Layer:
    """Returns its inputs."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = _identity()


def FanOut(num: int) -> Layer:
    """``num`` copies of the input, as a list."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    """The sum of a list of inputs."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """A list of inputs concatenated along ``axis``."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1 :], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout keeping each input with probability ``rate`` (scaled by ``1 / rate``) in
    ``"train"`` mode; the identity otherwise. ``apply_fun`` needs ``rng=``."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, instead of "
                "`apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` where `rng` is a "
                "PRNG key (e.g. from `fcore.random.key`)."
            )
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return fnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The layers composed in sequence (each one's output the next one's input)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side: a sequence of inputs in, one output per layer out (often
    between :func:`FanOut` and :data:`FanInSum`)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng: Any, input_shape: Any) -> Any:
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """The layer ``make_layer(input_shape)``, built once input shapes are known."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
