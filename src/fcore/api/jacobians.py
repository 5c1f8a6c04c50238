"""Jacobians: ``jacfwd`` (vmap of jvp), ``jacrev`` (vmap of the pullback, alias ``jacobian``) and ``hessian``.

Built exactly as JAX builds them, so that the result has JAX's structure, dtypes and weak
types: each block is cast to the dtype and weak type of the output leaf (``jacfwd``) or the
input leaf (``jacrev``) it belongs to.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import numpy as np

from fcore import lax, tree_util
from fcore.api._diff_args import (
    argnums_partial,
    check_callable,
    check_input_dtype_jacfwd,
    check_input_dtype_revderiv,
    check_output_dtype_jacfwd,
    check_output_dtype_revderiv,
    ensure_index,
    leaves_checked,
)
from fcore.api._float0 import is_float0
from fcore.api.autodiff import jvp, vjp
from fcore.api.vectorize import vmap
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray


P = ParamSpec("P")  # the differentiated function's parameters, which its Jacobian takes


def jacfwd(
    fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[P, Any]:
    """Jacobian by forward mode: ``vmap`` of ``jvp`` over the standard basis of the inputs."""
    check_callable(fun)
    nums = ensure_index(argnums)

    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        f_partial, dyn_args = argnums_partial(fun, nums, args, kwargs)
        leaves_checked(functools.partial(check_input_dtype_jacfwd, holomorphic), dyn_args)
        pushfwd: Callable[..., Any] = functools.partial(jvp, f_partial, dyn_args, has_aux=has_aux)
        basis = _std_basis(dyn_args)
        if has_aux:
            y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(basis)
        else:
            y, jac = vmap(pushfwd, out_axes=(None, -1))(basis)
        leaves_checked(functools.partial(check_output_dtype_jacfwd, holomorphic), y)
        example_args = dyn_args[0] if isinstance(nums, int) else dyn_args
        jac_tree = tree_util.tree_map(functools.partial(_jacfwd_unravel, example_args), y, jac)
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def jacrev(
    fun: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[P, Any]:
    """Jacobian by reverse mode: ``vmap`` of the pullback over the standard basis of the outputs."""
    check_callable(fun)
    nums = ensure_index(argnums)

    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        f_partial, dyn_args = argnums_partial(fun, nums, args, kwargs)
        leaves_checked(functools.partial(check_input_dtype_revderiv, "jacrev", holomorphic, allow_int), dyn_args)
        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn_args, has_aux=True)
        else:
            y, pullback = vjp(f_partial, *dyn_args)
        leaves_checked(functools.partial(check_output_dtype_revderiv, "jacrev", holomorphic), y)
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if isinstance(nums, int) else jac
        example_args = dyn_args[0] if isinstance(nums, int) else dyn_args
        jac_tree = tree_util.tree_map(functools.partial(_jacrev_unravel, y), example_args, jac)
        jac_tree = tree_util.tree_transpose(
            tree_util.tree_structure(example_args), tree_util.tree_structure(y), jac_tree
        )
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def jacobian(
    fun: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[P, Any]:
    """``jacrev`` (JAX's alias)."""
    return jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


def hessian(
    fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[P, Any]:
    """``jacfwd(jacrev(fun))``."""
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )


def _std_basis(tree: Any) -> Any:
    """The identity over all leaves' elements, split into one batch of each leaf's type."""
    leaves, treedef = tree_util.tree_flatten(tree)
    avals = [get_aval(x) for x in leaves]
    n = sum(a.size for a in avals)
    basis = []
    offset = 0
    for a in avals:
        eye = np.zeros((n, a.size), dtype=a.dtype)
        eye[offset : offset + a.size] = np.eye(a.size, dtype=a.dtype)
        basis.append(ArrayImpl(eye.reshape((n,) + a.shape), a.weak_type))
        offset += a.size
    return tree_util.tree_unflatten(treedef, basis)


def _jacfwd_unravel(input_tree: Any, output_leaf: Any, arr: Any) -> Any:
    """``arr`` (output shape + one flat input axis) as a tree of the inputs' blocks."""
    return _unravel_into(input_tree, np.ndim(arr) - 1, get_aval(output_leaf), arr)


def _jacrev_unravel(output_tree: Any, input_leaf: Any, arr: Any) -> Any:
    """``arr`` (one flat output axis + input shape) as a tree of the outputs' blocks."""
    return _unravel_into(output_tree, 0, get_aval(input_leaf), arr)


def _unravel_into(tree: Any, axis: int, example: ShapedArray, arr: Any) -> Any:
    """Split ``arr``'s ``axis`` into one block per leaf of ``tree`` (that axis becomes the leaf's
    shape) and cast each to ``example``'s dtype and weak type, as JAX's ``_possible_downcast``."""
    leaves, treedef = tree_util.tree_flatten(tree)
    shape = tuple(np.shape(arr))
    blocks = []
    offset = 0
    for leaf in leaves:
        leaf_shape = get_aval(leaf).shape
        size = int(np.prod(leaf_shape, dtype=np.int64))
        block_shape = shape[:axis] + leaf_shape + shape[axis + 1 :]
        if is_float0(arr):  # integer inputs under jacrev(allow_int=True): zeros
            blocks.append(ArrayImpl(np.zeros(block_shape, example.dtype), example.weak_type))
        else:
            part = arr if len(leaves) == 1 else lax.slice_in_dim(arr, offset, offset + size, axis=axis)
            blocks.append(_possible_downcast(lax.reshape(part, block_shape), example))
        offset += size
    return tree_util.tree_unflatten(treedef, blocks)


def _possible_downcast(x: Any, example: ShapedArray) -> Any:
    if dtypes.is_complex(get_aval(x).dtype) and not dtypes.is_complex(example.dtype):
        x = lax.real(x)
    return lax.convert_element_type(x, example.dtype, example.weak_type)
