"""Host callbacks: ``debug_print``, ``debug_callback``, ``pure_callback`` and ``io_callback``.

Each is a primitive whose equation holds the Python function (a ``HostCallback``, compared by
identity and printed as the function's name; ``debug_print`` holds its format string instead,
so its jaxprs print and parse back). Eagerly the impl calls the function; under ``jit`` the
lowering emits jaxlib's Python-callback custom call (``fcore.backend.host_callback``), as JAX
does. The debug and IO primitives have effects (``fcore.ir.effects``): DCE keeps them, CSE does
not merge them, and the ordered ones are threaded by a token in program order.
"""

from __future__ import annotations

import ast
import logging
import string
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, overload

import attrs
import numpy as np

from fcore import tree_util
from fcore.backend import host_callback
from fcore.backend.lowering import TOKEN_TYPE, LoweringRuleContext, lowering_rules, ordered_token, tensor_type
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.trace import user_frame
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.effects import Effects, debug_effect, io_effect, ordered_debug_effect, ordered_io_effect
from fcore.ir.params import ByIdentity, ParamStruct, ParamValue
from fcore.ir.source_info import SourceInfo
from fcore.ir.parser import register_param_struct
from fcore.lax._primitive import Primitive
from fcore.lax.control_flow.loops import scan
from fcore.lax.shapes import broadcast
from fcore.lax.slicing import index_in_dim
from fcore.transforms.batching import Dim, batching_rules, moveaxis
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "HostCallback",
    "debug_callback",
    "debug_callback_p",
    "debug_log",
    "debug_print",
    "debug_print_p",
    "io_callback",
    "io_callback_p",
    "pure_callback",
    "pure_callback_p",
]

NpArray = np.ndarray[Any, Any]
#: A flat callback: host arrays in, a sequence of array-likes out.
FlatFun = Callable[..., Sequence[Any]]
#: ``result_avals`` parameters: ``((shape, dtype), ...)``.
ResultSpec = tuple[tuple[tuple[int, ...], np.dtype[Any]], ...]


# =========================================================================================
# Parameter values and what every callback shares
# =========================================================================================
class HostCallback(ByIdentity):
    """The user's function as a flat function (arrays in, list of arrays out). Compared by
    identity; prints as the function's name, as JAX prints ``callback=...``."""

    __slots__ = ("fun", "__weakref__")
    what = "host callback"

    def __init__(self, name: str, fun: FlatFun) -> None:
        super().__init__(name)
        self.fun = fun


class _Opaque(ParamStruct):
    """A static (non-array) argument of ``debug.print`` that is not a string: kept by identity."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Opaque) and self.value is other.value

    def __hash__(self) -> int:
        return id(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


@register_param_struct
class PrintTree(ParamStruct):
    """The pytree structure of ``debug.print``'s ``(args, kwargs)``. Prints as the structure's
    text (``PrintTree('((*,), {})')``), which parses back for tuples, lists, dicts and None."""

    __slots__ = ("treedef",)

    def __init__(self, treedef: tree_util.PyTreeDef | str) -> None:
        self.treedef = treedef if not isinstance(treedef, str) else _treedef_from_text(treedef)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrintTree) and self.treedef == other.treedef

    def __hash__(self) -> int:
        return hash(self.treedef)

    def __repr__(self) -> str:
        text = str(self.treedef)
        return f"PrintTree({text[len('PyTreeDef(') : -1]!r})"


def _treedef_from_text(text: str) -> tree_util.PyTreeDef:
    try:
        skeleton = ast.literal_eval(text.replace("*", "..."))
    except (SyntaxError, ValueError) as e:
        raise ValueError(f"cannot read the pytree structure {text!r}: {e}") from None
    return tree_util.tree_structure(skeleton)


def _result_spec(result_shape_dtypes: Any) -> tuple[ResultSpec, tree_util.PyTreeDef]:
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    spec = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"result_shape_dtypes must be a pytree of objects with shape and dtype, got {leaf!r}")
        spec.append((tuple(int(d) for d in leaf.shape), dtypes.canonicalize_dtype(np.dtype(leaf.dtype))))
    return tuple(spec), tree


def _avals(spec: ResultSpec) -> list[ShapedArray]:
    return [ShapedArray(shape, dtype) for shape, dtype in spec]


def _host_args(args: Sequence[NpArray]) -> list[ArrayImpl]:
    """What the user's function receives: fcore arrays (copies: XLA's buffers die with the call)."""
    return [ArrayImpl(np.array(a)) for a in args]


def _checked_results(outs: Sequence[Any], avals: Sequence[ShapedArray]) -> list[NpArray]:
    """The function's results as host arrays of the declared types (JAX's checks and messages)."""
    if len(outs) != len(avals):
        raise RuntimeError(
            f"Mismatched number of outputs from callback. Expected: {len(avals)}, Actual: {len(outs)}"
        )
    checked = []
    for i, (o, aval) in enumerate(zip(outs, avals)):
        arr = np.asarray(o)
        canonical = dtypes.canonicalize_dtype(arr.dtype)
        if canonical != arr.dtype:
            arr = arr.astype(canonical)
        if arr.shape != aval.shape:
            raise RuntimeError(
                f"Incorrect output shape for return value #{i}: Expected: {aval.shape}, Actual: {arr.shape}"
            )
        if arr.dtype != aval.dtype:
            raise RuntimeError(
                f"Incorrect output dtype for return value #{i}: Expected: {aval.dtype}, Actual: {arr.dtype}"
            )
        checked.append(arr)
    return checked


def _call_host(fun: FlatFun, args: Sequence[NpArray], avals: Sequence[ShapedArray]) -> list[NpArray]:
    return _checked_results(list(fun(*_host_args(args))), avals)


class _Compiled:
    """A callback as one compiled program calls it (``fcore.backend.host_callback.HostFunction``)."""

    __slots__ = ("fun", "avals", "ordered", "pure", "key", "__weakref__")

    def __init__(self, fun: FlatFun, avals: Sequence[ShapedArray], ordered: bool, pure: bool = False) -> None:
        self.fun = fun
        self.avals = list(avals)
        self.ordered = ordered
        self.pure = pure
        self.key = host_callback.register(self)

    def __call__(self, *args: NpArray) -> list[NpArray]:
        return _call_host(self.fun, args, self.avals)


#: The compiled forms of each callback, alive as long as the equation's callback object is
#: (the backend's registry only holds them weakly).
_compiled_forms: weakref.WeakKeyDictionary[object, dict[tuple[object, ...], _Compiled]] = weakref.WeakKeyDictionary()


def _compiled_form(owner: object, fun: FlatFun, avals: Sequence[ShapedArray], ordered: bool, pure: bool = False
                   ) -> _Compiled:
    forms = _compiled_forms.setdefault(owner, {})
    key = (tuple(avals), ordered, pure)
    form = forms.get(key)
    if form is None:
        form = forms[key] = _Compiled(fun, avals, ordered, pure)
    return form


def _lower_host_call(ctx: LoweringRuleContext, args: Sequence[str], form: _Compiled) -> list[str]:
    """The custom call of ``form`` (taking and returning the function's token first when it is
    ordered, as JAX's callbacks do)."""
    operands = list(args)
    in_types, out_types = [tensor_type(a) for a in ctx.avals_in], [tensor_type(a) for a in ctx.avals_out]
    in_ranks, out_ranks = [a.ndim for a in ctx.avals_in], [a.ndim for a in ctx.avals_out]
    if form.ordered:
        operands.insert(0, ordered_token(ctx))
        for types, ranks in ((in_types, in_ranks), (out_types, out_ranks)):
            types.insert(0, TOKEN_TYPE)
            ranks.insert(0, 0)
    text = host_callback.custom_call(form.key, operands, in_types, out_types, (in_ranks, out_ranks),
                                     side_effect=not form.pure, sharding=ctx.module.on_first_device(len(out_types)))
    n = len(out_types)
    if n == 0:
        ctx.fn.lines.append(f"    {text}{ctx.fn.location}")
        return []
    name = ctx.emit(text, n_results=n)
    results = [name] if n == 1 else [f"{name}#{i}" for i in range(n)]
    if form.ordered:
        ctx.fn.token = results.pop(0)
    return results


def _unrolled_batching(prim: Primitive[Any], axis_size: int, vals: list[Any], dims: list[Dim],
                       params: dict[str, ParamValue]) -> tuple[list[Any], list[Dim]]:
    """JAX's batching of the debug primitives: one call per batch element (so one print each)."""
    for i in range(axis_size):
        prim.bind(*[v if d is None else index_in_dim(v, i, d, keepdims=False) for v, d in zip(vals, dims)], **params)
    return [], []


# =========================================================================================
# debug_callback[callback ordered]
# =========================================================================================
@attrs.frozen(kw_only=True)
class DebugCallbackParams:
    """``debug_callback[callback ordered]``: a function called for its effect, no results."""

    callback: HostCallback
    ordered: bool


debug_callback_p = Primitive("debug_callback", multiple_results=True, params=DebugCallbackParams)


@debug_callback_p.def_abstract_eval
def _debug_callback_abstract_eval(*avals: ShapedArray, callback: HostCallback, ordered: bool) -> list[ShapedArray]:
    return []


@debug_callback_p.def_effects
def _debug_callback_effects(*, callback: HostCallback, ordered: bool) -> Effects:
    return frozenset({ordered_debug_effect if ordered else debug_effect})


@debug_callback_p.def_impl
def _debug_callback_impl(*args: NpArray, callback: HostCallback, ordered: bool) -> list[NpArray]:
    return _call_host(callback.fun, args, [])


@jvp_rules.register(debug_callback_p)
def _debug_callback_jvp(primals: list[Any], tangents: list[Any], *, callback: HostCallback, ordered: bool) -> tuple[Any, Any]:
    return debug_callback_p.bind(*primals, callback=callback, ordered=ordered), []


@transpose_rules.register(debug_callback_p)
def _debug_callback_transpose(cts: Any, *args: Any, callback: HostCallback, ordered: bool) -> list[Any]:
    return [None] * len(args)


@batching_rules.register(debug_callback_p)
def _debug_callback_batching(
    axis_size: int, vals: list[Any], dims: list[Dim], *, callback: HostCallback, ordered: bool
) -> tuple[list[Any], list[Dim]]:
    return _unrolled_batching(debug_callback_p, axis_size, vals, dims, {"callback": callback, "ordered": ordered})


@lowering_rules.register(debug_callback_p)
def _debug_callback_lowering(ctx: LoweringRuleContext, *args: str, callback: HostCallback, ordered: bool) -> list[str]:
    return _lower_host_call(ctx, args, _compiled_form(callback, callback.fun, [], ordered))


@overload
def debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False, partitioned: bool = False,
                   **kwargs: Any) -> None: ...
@overload
def debug_callback(*, ordered: bool = False, partitioned: bool = False) -> Callable[..., None]: ...
def debug_callback(callback: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
                   partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Call ``callback(*args, **kwargs)`` for its effect, eagerly or from compiled code
    (``jax.debug.callback``; also the two-call form ``debug.callback(ordered=True)(f, ...)``):
    it receives fcore arrays, and its result is ignored. (``partitioned`` only matters for
    sharded arrays: fcore calls back with whole arrays either way.)"""

    def _callback(callback: Callable[..., Any], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(callback):
            raise TypeError(f"first argument to `debug.callback` must be callable, got {callback!r}")
        leaves, in_tree = tree_util.tree_flatten((c_args, c_kwargs))
        dyn = [x for x in leaves if _is_array_leaf(x)]
        statics = {i: x for i, x in enumerate(leaves) if not _is_array_leaf(x)}  # passed as they are

        where = _binding_site()

        def flat_fun(*dyn_leaves: Any) -> list[Any]:
            it = iter(dyn_leaves)
            merged = [statics[i] if i in statics else next(it) for i in range(len(leaves))]
            a, k = tree_util.tree_unflatten(in_tree, merged)
            try:
                callback(*a, **k)
            except Exception as e:
                _note_site(e, where)
                raise
            return []

        hc = HostCallback(getattr(callback, "__name__", type(callback).__name__), flat_fun)
        debug_callback_p.bind(*dyn, callback=hc, ordered=bool(ordered))

    if callback is not None:
        _callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return _callback


# =========================================================================================
# debug_print[fmt has_placeholders in_tree np_printoptions ordered static_args]
# =========================================================================================
@attrs.frozen(kw_only=True)
class DebugPrintParams:
    """``debug_print[...]``: ``fmt.format(*args, **kwargs)`` written to stdout; ``in_tree`` is the
    structure of ``(args, kwargs)``, ``static_args`` the non-array leaves by flat position."""

    fmt: str
    has_placeholders: bool
    in_tree: PrintTree
    np_printoptions: tuple[tuple[str, ParamValue], ...]
    ordered: bool
    static_args: tuple[tuple[int, ParamValue], ...]


debug_print_p = Primitive("debug_print", multiple_results=True, params=DebugPrintParams)


@debug_print_p.def_abstract_eval
def _debug_print_abstract_eval(
    *avals: ShapedArray, fmt: str, has_placeholders: bool, in_tree: PrintTree,
    np_printoptions: tuple[tuple[str, ParamValue], ...], ordered: bool, static_args: tuple[tuple[int, ParamValue], ...],
) -> list[ShapedArray]:
    return []


@debug_print_p.def_effects
def _debug_print_effects(**params: ParamValue) -> Effects:
    return frozenset({ordered_debug_effect if params["ordered"] else debug_effect})


def _print_fun(params: dict[str, Any]) -> FlatFun:
    """The host function of a ``debug_print`` equation: merge, unflatten, format, write."""
    fmt: str = params["fmt"]
    in_tree: PrintTree = params["in_tree"]
    statics = {i: (v.value if isinstance(v, _Opaque) else v) for i, v in params["static_args"]}
    options = dict(params["np_printoptions"])
    has_placeholders: bool = params["has_placeholders"]

    def fun(*dyn: Any) -> list[Any]:
        it = iter(dyn)
        leaves = [statics[i] if i in statics else next(it) for i in range(len(statics) + len(dyn))]
        args, kwargs = tree_util.tree_unflatten(in_tree.treedef, leaves)
        with np.printoptions(**options):
            if has_placeholders:
                msg = fmt.format(*args, **kwargs)
            else:
                msg = " ".join((fmt, *(str(a) for a in args)))
        sys.stdout.write(msg + "\n")
        return []

    return fun


@debug_print_p.def_impl
def _debug_print_impl(*args: NpArray, **params: Any) -> list[NpArray]:
    return _call_host(_print_fun(params), args, [])


@jvp_rules.register(debug_print_p)
def _debug_print_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    return debug_print_p.bind(*primals, **params), []


@transpose_rules.register(debug_print_p)
def _debug_print_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    return [None] * len(args)


@batching_rules.register(debug_print_p)
def _debug_print_batching(axis_size: int, vals: list[Any], dims: list[Dim], **params: Any) -> tuple[list[Any], list[Dim]]:
    return _unrolled_batching(debug_print_p, axis_size, vals, dims, params)


class _PrintKey:
    """Owns the compiled forms of the ``debug_print`` equations with given params (equal params
    print the same, so they share one); kept alive by ``_print_keys``."""

    __slots__ = ("__weakref__",)


_print_keys: dict[object, _PrintKey] = {}


@lowering_rules.register(debug_print_p)
def _debug_print_lowering(ctx: LoweringRuleContext, *args: str, **params: Any) -> list[str]:
    owner = _print_keys.setdefault(tuple(sorted(params.items())), _PrintKey())
    return _lower_host_call(ctx, args, _compiled_form(owner, _print_fun(params), [], bool(params["ordered"])))


class _FormatChecker(string.Formatter):
    """JAX's check that every argument of ``debug.print`` is used (and no f-string was passed)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                'You may be passing an f-string (i.e, `f"{x}"`) into '
                "`jax.debug.print` and instead should pass in a regular string."
            )


def _is_array_leaf(x: object) -> bool:
    return isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex))


def _printoptions() -> tuple[tuple[str, ParamValue], ...]:
    return tuple(
        (k, v) for k, v in np.get_printoptions().items() if v is None or isinstance(v, (bool, int, float, str))
    )


@overload
def debug_print(fmt: str, *args: Any, ordered: bool = False, partitioned: bool = False,
                skip_format_check: bool = False, **kwargs: Any) -> None: ...
@overload
def debug_print(*, ordered: bool = False, partitioned: bool = False,
                skip_format_check: bool = False) -> Callable[..., None]: ...
def debug_print(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
                skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` on stdout, eagerly or from compiled code
    (``jax.debug.print``; also the two-call form ``debug.print(ordered=True)(fmt, ...)``)."""

    def _print(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        leaves, in_tree = tree_util.tree_flatten((c_args, c_kwargs))
        dyn = [x for x in leaves if _is_array_leaf(x)]
        statics = tuple(
            (i, x if isinstance(x, str) else _Opaque(x)) for i, x in enumerate(leaves) if not _is_array_leaf(x)
        )
        debug_print_p.bind(
            *dyn, fmt=fmt, has_placeholders=has_placeholders, in_tree=PrintTree(in_tree),
            np_printoptions=_printoptions(), ordered=bool(ordered), static_args=statics,
        )

    if fmt is not None:
        _print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return _print


_logger = logging.getLogger("fcore.debug")


def debug_log(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """``debug.print``, with the text logged at ``INFO`` on the ``fcore.debug`` logger instead
    of written to stdout (``jax.debug.log``)."""
    _FormatChecker().format(fmt, *args, **kwargs)

    def log(*a: Any, **k: Any) -> None:
        _logger.info(fmt.format(*a, **k))

    debug_callback(log, *args, ordered=ordered, **kwargs)


# =========================================================================================
# pure_callback[callback result_avals vmap_method]
# =========================================================================================
_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")


@attrs.frozen(kw_only=True)
class PureCallbackParams:
    """``pure_callback[callback result_avals vmap_method]``: a pure host function (no effects:
    DCE may drop it and CSE merge it, as in JAX); ``result_avals`` is ``((shape, dtype), ...)``."""

    callback: HostCallback
    result_avals: ResultSpec
    vmap_method: str | None


pure_callback_p = Primitive("pure_callback", multiple_results=True, params=PureCallbackParams)


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(
    *avals: ShapedArray, callback: HostCallback, result_avals: ResultSpec, vmap_method: str | None
) -> list[ShapedArray]:
    return _avals(result_avals)


@pure_callback_p.def_impl
def _pure_callback_impl(
    *args: NpArray, callback: HostCallback, result_avals: ResultSpec, vmap_method: str | None
) -> list[NpArray]:
    return _call_host(callback.fun, args, _avals(result_avals))


@jvp_rules.register(pure_callback_p)
def _pure_callback_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    raise ValueError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients."
    )


@transpose_rules.register(pure_callback_p)
def _pure_callback_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    raise ValueError(
        "Pure callbacks do not support transpose. "
        "Please use `jax.custom_vjp` to use callbacks while taking gradients."
    )


@batching_rules.register(pure_callback_p)
def _pure_callback_batching(
    axis_size: int, vals: list[Any], dims: list[Dim], *, callback: HostCallback, result_avals: ResultSpec,
    vmap_method: str | None,
) -> tuple[list[Any], list[Dim]]:
    """JAX's ``ffi_batching_rule``: the batch axis moves to the front; then per ``vmap_method``."""
    args = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    batched = tuple(((axis_size, *shape), dtype) for shape, dtype in result_avals)
    if vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*args, callback=callback, result_avals=batched, vmap_method=vmap_method)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        size = axis_size if vmap_method == "broadcast_all" else 1
        args = [broadcast(a, (size,)) if d is None else a for a, d in zip(args, dims)]
        outs = pure_callback_p.bind(*args, callback=callback, result_avals=batched, vmap_method=vmap_method)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        is_batched = [d is not None for d in dims]
        fixed = [a for a, b in zip(args, is_batched) if not b]

        def one(_: Any, xs: list[Any]) -> tuple[Any, list[Any]]:
            it_x, it_f = iter(xs), iter(fixed)
            merged = [next(it_x) if b else next(it_f) for b in is_batched]
            return (), pure_callback_p.bind(*merged, callback=callback, result_avals=result_avals, vmap_method=vmap_method)

        _, outs = scan(one, (), [a for a, b in zip(args, is_batched) if b], unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of 'sequential', "
            f"'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got {vmap_method=}."
        )
    return list(outs), [0] * len(outs)


@lowering_rules.register(pure_callback_p)
def _pure_callback_lowering(
    ctx: LoweringRuleContext, *args: str, callback: HostCallback, result_avals: ResultSpec, vmap_method: str | None
) -> list[str]:
    return _lower_host_call(ctx, args, _compiled_form(callback, callback.fun, ctx.avals_out, False, pure=True))


def _flat_callback(callback: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> tuple[list[Any], HostCallback]:
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    where = _binding_site()

    def flat_fun(*leaves: Any) -> list[Any]:
        a, k = tree_util.tree_unflatten(in_tree, leaves)
        try:
            return tree_util.tree_leaves(callback(*a, **k))
        except Exception as e:
            _note_site(e, where)
            raise

    return flat, HostCallback(getattr(callback, "__name__", type(callback).__name__), flat_fun)


def _binding_site() -> SourceInfo | None:
    """The user's line calling a callback API (resolved only if the callback raises)."""
    frame = user_frame()
    return None if frame is None else SourceInfo((frame.f_code, frame.f_lasti))


def _note_site(error: BaseException, where: SourceInfo | None) -> None:
    """Name the user's line of the callback on an exception it raised (a traceback note, which
    also shows in the message of the error a compiled program raises)."""
    if where is not None:
        error.add_note(f"(in the callback bound at {where.summary()})")


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: None = None,
                  vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call a pure Python function from traced code (``jax.pure_callback``): it receives fcore
    arrays and must return arrays of ``result_shape_dtypes``'s shapes and dtypes. ``vmap_method``
    says how ``vmap`` calls it: ``'sequential'`` (once per element), ``'expand_dims'`` (unbatched
    arguments get a size-1 axis) or ``'broadcast_all'`` (every argument gets the batch axis)."""
    if not callable(callback):
        raise TypeError(f"first argument to `pure_callback` must be callable, got {callback!r}")
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be one of {_VMAP_METHODS[:-1]}, got {vmap_method!r}")
    spec, out_tree = _result_spec(result_shape_dtypes)
    flat, hc = _flat_callback(callback, args, kwargs)
    outs = pure_callback_p.bind(*flat, callback=hc, result_avals=spec, vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


# =========================================================================================
# io_callback[callback ordered result_avals]
# =========================================================================================
@attrs.frozen(kw_only=True)
class IoCallbackParams:
    """``io_callback[callback ordered result_avals]``: a host function with side effects."""

    callback: HostCallback
    ordered: bool
    result_avals: ResultSpec


io_callback_p = Primitive("io_callback", multiple_results=True, params=IoCallbackParams)


@io_callback_p.def_abstract_eval
def _io_callback_abstract_eval(
    *avals: ShapedArray, callback: HostCallback, ordered: bool, result_avals: ResultSpec
) -> list[ShapedArray]:
    return _avals(result_avals)


@io_callback_p.def_effects
def _io_callback_effects(*, callback: HostCallback, ordered: bool, result_avals: ResultSpec) -> Effects:
    return frozenset({ordered_io_effect if ordered else io_effect})


@io_callback_p.def_impl
def _io_callback_impl(*args: NpArray, callback: HostCallback, ordered: bool, result_avals: ResultSpec) -> list[NpArray]:
    return _call_host(callback.fun, args, _avals(result_avals))


@jvp_rules.register(io_callback_p)
def _io_callback_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    raise ValueError("IO callbacks do not support JVP.")


@transpose_rules.register(io_callback_p)
def _io_callback_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    raise ValueError("IO callbacks do not support transpose.")


@batching_rules.register(io_callback_p)
def _io_callback_batching(
    axis_size: int, vals: list[Any], dims: list[Dim], *, callback: HostCallback, ordered: bool, result_avals: ResultSpec
) -> tuple[list[Any], list[Dim]]:
    """Once per batch element, in order (a sequential loop); an ordered one cannot be batched."""
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    args = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    is_batched = [d is not None for d in dims]
    fixed = [a for a, b in zip(args, is_batched) if not b]

    def one(_: Any, xs: list[Any]) -> tuple[Any, list[Any]]:
        it_x, it_f = iter(xs), iter(fixed)
        merged = [next(it_x) if b else next(it_f) for b in is_batched]
        return (), io_callback_p.bind(*merged, callback=callback, ordered=False, result_avals=result_avals)

    _, outs = scan(one, (), [a for a, b in zip(args, is_batched) if b])
    return list(outs), [0] * len(outs)


@lowering_rules.register(io_callback_p)
def _io_callback_lowering(
    ctx: LoweringRuleContext, *args: str, callback: HostCallback, ordered: bool, result_avals: ResultSpec
) -> list[str]:
    return _lower_host_call(ctx, args, _compiled_form(callback, callback.fun, ctx.avals_out, ordered))


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: None = None,
                ordered: bool = False, **kwargs: Any) -> Any:
    """Call a Python function with side effects from traced code (``jax.experimental.io_callback``).
    Never dropped or merged by the compiler; with ``ordered=True`` the calls happen in program
    order (and cannot be ``vmap`` ped)."""
    if not callable(callback):
        raise TypeError(f"first argument to `io_callback` must be callable, got {callback!r}")
    spec, out_tree = _result_spec(result_shape_dtypes)
    flat, hc = _flat_callback(callback, args, kwargs)
    outs = io_callback_p.bind(*flat, callback=hc, ordered=bool(ordered), result_avals=spec)
    return tree_util.tree_unflatten(out_tree, outs)


def effects_barrier() -> None:
    """Wait until every callback started so far has run (``jax.effects_barrier``). fcore runs a
    compiled program with callbacks to completion before the call returns, so none is pending."""

