"""``check_p``: a check not yet functionalized, and the error algebra checks are built from.

``check`` and ``check_error`` bind ``check_p`` on the leaves of an error value (its tree,
holding the messages, is a parameter). Eagerly the equation raises at once; staged (``jit``)
it cannot run and lowering says so (JAX's functionalization error); ``checkify`` replaces it
by merging its error into the error value it threads. Under ``vmap`` the batched error is
reduced to one (the last failing index, as JAX's ``argsort`` picks it) and checked; under
``jvp`` the primals are checked and the tangents dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

import fcore.numpy as fnp
from fcore import lax, tree_util
from fcore.backend.lowering import LoweringError, LoweringRuleContext, lowering_rules
from fcore.experimental.checkify._errors import (
    Error,
    ErrorCategory,
    ErrorEffect,
    FailedCheckError,
    JaxException,
    JaxRuntimeError,
    Value,
    effect_of,
    init_error,
)
from fcore.interpreters.array import Array
from fcore.interpreters.trace import Tracer, user_location
from fcore.ir.avals import ShapedArray
from fcore.ir.effects import Effect, Effects
from fcore.ir.params import ParamStruct
from fcore.lax._primitive import Primitive
from fcore.transforms.batching import Dim, batching_rules, moveaxis
from fcore.transforms.jvp import jvp_rules


# -- the error algebra ----------------------------------------------------------------------
#: Codes of automatic checks start here. JAX numbers a ``check`` when it is traced and an
#: automatic check later, when ``checkify`` evaluates the program, so a failed ``check`` is
#: reported before any failed automatic check; two bands of codes keep that order.
AUTOMATIC_CODES = 1 << 30


def next_code(error: Error, automatic: bool) -> int:
    """A code of the band no check in ``error`` has: codes grow in the order checks are met."""
    band = [c for c in error._metadata if (c >= AUTOMATIC_CODES) == automatic]
    return max(band, default=AUTOMATIC_CODES if automatic else 0) + 1


def update_error(
    error: Error, pred: Value, code: Value, metadata: Mapping[int, tree_util.PyTreeDef],
    payload: Sequence[Value], effect: ErrorEffect,
) -> Error:
    """``error`` with ``pred``/``code``/``payload`` merged into ``effect``'s slot: an earlier
    failure of the same effect keeps its code and payload."""
    preds, codes, payloads = dict(error._pred), dict(error._code), dict(error._payload)
    if effect in error._pred:
        before = error._pred[effect]
        preds[effect] = lax.bitwise_or(before, pred)
        codes[effect] = lax.select(before, error._code[effect], code)
        payloads[effect] = [lax.select(fnp.broadcast_to(before, fnp.shape(p)), old, _strong(p))
                            for old, p in zip(error._payload[effect], payload)]
    else:
        preds[effect], codes[effect], payloads[effect] = pred, code, [_strong(p) for p in payload]
    return Error(preds, codes, {**error._metadata, **metadata}, payloads)


def assert_func(error: Error, pred: Value, new_error: JaxException, automatic: bool = True) -> Error:
    """``error`` updated with ``new_error`` reported where ``pred`` is True."""
    code = next_code(error, automatic)
    payload, treedef = tree_util.tree_flatten(new_error)
    effect = effect_of(type(new_error), payload)
    pred = lax.convert_element_type(pred, np.bool_, weak_type=False)
    return update_error(error, pred, np.int32(code), {code: treedef}, payload, effect)


def merge_error(error: Error, new: Error, enabled: Collection[ErrorCategory]) -> Error:
    """``error`` followed by the checks of ``new`` (a ``check`` or ``check_error``) whose
    category is ``enabled``; all of ``new``'s codes are renumbered, in their order, into the
    band of ``check`` s after ``error``'s."""
    old = np.array(sorted(new._metadata), np.int32)
    base = next_code(error, automatic=False)
    for effect in new.effects():
        if effect.error_type not in enabled:
            continue
        code = _renumber(new._code[effect], old, base)
        error = update_error(error, new._pred[effect], code, {}, new._payload[effect], effect)
    renumbered = {base + i: new._metadata[int(c)] for i, c in enumerate(old)}
    return error.with_metadata({**error._metadata, **renumbered})


def _renumber(code: Value, old: np.ndarray[Any, Any], base: int) -> Value:
    """``base + i`` where ``code`` is the ``i`` th of the sorted codes ``old``."""
    if isinstance(code, Tracer):
        return lax.add(fnp.searchsorted(old, code).astype(np.int32), np.int32(base))
    return (np.searchsorted(old, np.asarray(code)) + base).astype(np.int32)  # a concrete code: no equation


def _strong(x: Value) -> Value:
    """``x`` without a weak type: an error's leaves keep one type through branches and loops."""
    if isinstance(x, Array) and x.weak_type:
        return lax.convert_element_type(x, x.dtype, weak_type=False)
    return x


def add_placeholder_effects(error: Error, effects: Sequence[ErrorEffect]) -> Error:
    """``error`` with a never-failing slot for each of ``effects`` it lacks (so that branches
    and loop iterations carry error values of one type)."""
    preds, codes, payloads = dict(error._pred), dict(error._code), dict(error._payload)
    for effect in effects:
        if effect not in preds:
            preds[effect] = np.bool_(False)
            codes[effect] = np.int32(-1)
            payloads[effect] = [np.ones(shape, np.dtype(dt)) for shape, dt in effect.shape_dtypes]
    return Error(preds, codes, error._metadata, payloads)


# -- check_p ---------------------------------------------------------------------------------
@attrs.frozen(slots=True, repr=False)
class ErrorTree(ParamStruct):
    """The static half of an error value (``check_p``'s ``err_tree``): which effects, and what
    each code means."""

    treedef: tree_util.PyTreeDef

    def __repr__(self) -> str:
        return "ErrorTree"


@attrs.frozen(slots=True, repr=False)
class CheckEffect(Effect):
    """A ``check`` that raises when it fails (JAX's ``ErrorEffect``). A batched ``while``
    runs its body on the elements that are done too, where a check would fail spuriously."""

    batched_while_error: ClassVar[str | None] = (
        "Checkify does not support batched while-loops (checkify-of-vmap-of-while). \nHint: if possible, move "
        "the vmap to the outer level to get vmap-of-checkify-of-while."
    )


check_effect = CheckEffect()


@attrs.frozen(kw_only=True)
class CheckParams:
    """``check[err_tree debug]``: the error's tree; ``debug`` checks run only under checkify."""

    err_tree: ErrorTree
    debug: bool


check_p = Primitive("check", multiple_results=True, params=CheckParams)

#: JAX's message for a ``check`` that reaches compilation unfunctionalized.
FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably means "
    "you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through `checkify.checkify`."
)


class FunctionalizationError(LoweringError, ValueError):
    """A ``check`` reached compilation without ``checkify`` (a ValueError, as in JAX)."""


@check_p.def_effects
def _check_effects(*, err_tree: ErrorTree, debug: bool) -> Effects:
    return frozenset({check_effect})


@check_p.def_abstract_eval
def _check_abstract_eval(*avals: ShapedArray, err_tree: ErrorTree, debug: bool) -> list[ShapedArray]:
    return []


@check_p.def_impl
def _check_impl(*leaves: Any, err_tree: ErrorTree, debug: bool) -> list[Any]:
    if debug:
        return []  # a debug check runs only when checkify functionalizes it
    raise_if_failed(tree_util.tree_unflatten(err_tree.treedef, leaves))
    return []


@jvp_rules.register(check_p)
def _check_jvp(primals: list[Any], tangents: list[Any], *, err_tree: ErrorTree, debug: bool) -> tuple[list[Any], list[Any]]:
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


@batching_rules.register(check_p)
def _check_batching(axis_size: int, vals: list[Any], dims: list[Dim], *, err_tree: ErrorTree, debug: bool) -> tuple[list[Any], list[Dim]]:
    front = [fnp.broadcast_to(v, (axis_size, *fnp.shape(v))) if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    error = reduce_batched_error(tree_util.tree_unflatten(err_tree.treedef, front))
    leaves, treedef = tree_util.tree_flatten(error)
    check_p.bind(*leaves, err_tree=ErrorTree(treedef), debug=debug)
    return [], []


@lowering_rules.register(check_p)
def _check_lowering(ctx: LoweringRuleContext, *args: str, err_tree: ErrorTree, debug: bool) -> list[str]:
    if debug:
        return []
    raise FunctionalizationError(FUNCTIONALIZATION_ERROR)


def raise_if_failed(error: Error) -> None:
    exc = error.get_exception()
    if exc is not None:
        raise JaxRuntimeError(str(exc)) from exc


def reduce_batched_error(error: Error) -> Error:
    """One error out of a batch (leading axis): per effect, the last failing index's values
    (JAX picks ``argsort(pred)[-1]``)."""
    out = init_error
    for effect in error.effects():
        pred = error._pred[effect]
        idx = fnp.argsort(pred, stable=True)[-1]
        out = update_error(
            out, pred[idx], error._code[effect][idx], {}, [p[idx] for p in error._payload[effect]], effect
        )
    return out.with_metadata(error._metadata)


def bind_check(error: Error, debug: bool) -> None:
    if any(fnp.shape(p) for p in error._pred.values()):
        error = reduce_batched_error(error)
    leaves, treedef = tree_util.tree_flatten(error)
    check_p.bind(*leaves, err_tree=ErrorTree(treedef), debug=debug)


# -- the user functions --------------------------------------------------------------------
def _is_scalar_pred(pred: object) -> bool:
    """A Python bool or a scalar boolean fcore array (a NumPy bool is refused, as in JAX)."""
    return isinstance(pred, bool) or (isinstance(pred, Array) and pred.shape == () and pred.dtype == np.dtype(bool))


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not _is_scalar_pred(pred):
        raise TypeError(f"{'debug_check' if debug else 'check'} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, np.ndarray)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{arg!r} of type {type(arg)}."
            )
    new_error = FailedCheckError(user_location(), msg, *fmt_args, **fmt_kwargs)
    bind_check(assert_func(init_error, fnp.logical_not(pred), new_error, automatic=False), debug)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Report ``msg`` (formatted with the array arguments) if ``pred`` is False.

    Under :func:`checkify` the failure becomes part of the returned ``Error``; outside it an
    eager check raises ``JaxRuntimeError`` at once, and a staged one (``jit``) cannot compile.
    """
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A ``check`` that runs only under :func:`checkify` (a no-op elsewhere)."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise ``JaxRuntimeError`` if ``error`` holds a failure; functionalized by :func:`checkify`
    like :func:`check` (the inverse of ``checkify``)."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    bind_check(error, debug=False)
