"""Arguments of the differentiation front ends, checked as JAX checks them.

``argnums`` handling (``argnums_partial``) and the input/output dtype checks of ``grad``,
``jacfwd`` and ``jacrev``, with JAX's exception types and messages, so that code ported from
JAX (and its tests) sees the same errors.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Sequence
from typing import Any

from fcore import tree_util
from fcore.api._float0 import float0, is_float0
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray

#: jaxlib's C++ flattener, called directly on this hot path (no Python frame in between).
_flatten = tree_util.default_registry.flatten

Argnums = int | tuple[int, ...]


def check_callable(fun: object) -> None:
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun!r}")


def ensure_index(argnums: Any) -> Argnums:
    """An int, or a tuple of ints (any sequence of ``operator.index``-able values)."""
    try:
        return operator.index(argnums)
    except TypeError:
        return tuple(map(operator.index, argnums))


def as_tuple(argnums: Argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else argnums


def check_grad_argnums(argnums: Argnums, nargs: int) -> None:
    """``grad``'s own check: too few positional arguments is a TypeError in JAX."""
    nums = as_tuple(argnums)
    if nums and max(nums) >= nargs:
        raise TypeError(
            f"differentiating with respect to argnums={argnums} requires at least {max(nums) + 1} positional "
            f"arguments to be passed by the caller, but got only {nargs} positional arguments."
        )


def argnums_partial(
    fun: Callable[..., Any], argnums: Argnums, args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``fun`` as a function of ``args[argnums]`` only, and those arguments."""
    if argnums == ():
        raise ValueError("differentiating with respect to argnums=() is not defined: pass at least one argnum")
    nums = []
    for i in as_tuple(argnums):
        if not -len(args) <= i < len(args):
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value greater than or "
                f"equal to -len(args) and less than len(args), but got value {i} for len(args) == {len(args)}."
            )
        nums.append(i % len(args))
    if len(set(nums)) != len(nums):
        raise TypeError(f"argnums {argnums} refers to the same positional argument more than once")
    dyn_args = tuple(args[i] for i in nums)

    @functools.wraps(fun)  # error messages name the user's function, not this wrapper
    def partial_fun(*dyn: Any) -> Any:
        full = list(args)
        for i, d in zip(nums, dyn):
            full[i] = d
        return fun(*full, **kwargs)

    return partial_fun, dyn_args


def typeof(x: Any) -> ShapedArray:
    """``get_aval`` with JAX's error for values that are not arrays."""
    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type.") from None


def type_str(shape: Sequence[int], dtype: Any) -> str:
    """``float32[3,4]``, as JAX prints types in its messages (``float0[3]`` too)."""
    name = "float0" if dtype == float0 else dtypes.dtype_name(dtype)
    return f"{name}[{','.join(map(str, shape))}]"


def check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, x: Any) -> None:
    if is_float0(x):
        raise TypeError(
            f"{name} requires numerical-valued inputs (input dtype that is a sub-dtype of np.bool_ or "
            "np.number), but got void."
        )
    dt = typeof(x).dtype
    if holomorphic and not dtypes.is_complex(dt):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, but got {dtypes.dtype_name(dt)}.")
    if not dtypes.is_inexact(dt) and not allow_int:
        raise TypeError(
            f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), "
            f"but got {dtypes.dtype_name(dt)}. If you want to use Boolean- or integer-valued inputs, use vjp "
            "or set allow_int to True."
        )


def check_output_dtype_revderiv(name: str, holomorphic: bool, x: Any) -> None:
    dt = typeof(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, but got {dtypes.dtype_name(dt)}."
            )
    elif dtypes.is_complex(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
            f"{dtypes.dtype_name(dt)}. For holomorphic differentiation, pass holomorphic=True. For "
            "differentiation of non-holomorphic functions involving complex outputs, use fcore.vjp directly."
        )
    elif not dtypes.is_floating(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
            f"{dtypes.dtype_name(dt)}. For differentiation of functions with integer outputs, use fcore.vjp "
            "directly."
        )


def check_input_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    dt = typeof(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(
                f"jacfwd with holomorphic=True requires inputs with complex dtype, but got {dtypes.dtype_name(dt)}."
            )
    elif not dtypes.is_floating(dt):
        raise TypeError(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but got "
            f"{dtypes.dtype_name(dt)}. For holomorphic differentiation, pass holomorphic=True. For "
            "differentiation of non-holomorphic functions involving complex inputs or integer inputs, use "
            "fcore.jvp directly."
        )


def check_output_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    dt = typeof(x).dtype
    if holomorphic and not dtypes.is_complex(dt):
        raise TypeError(
            f"jacfwd with holomorphic=True requires outputs with complex dtype, but got {dtypes.dtype_name(dt)}."
        )


def check_scalar(x: Any) -> None:
    """``grad`` needs one scalar output."""
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x!r}.") from None
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")


def leaves_checked(check: Callable[[Any], None], tree: Any) -> None:
    for leaf in _flatten(tree)[0]:
        check(leaf)
