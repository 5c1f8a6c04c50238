"""``fcore.ffi``: calling compiled C/C++ kernels from fcore programs (``jax.ffi``).

A kernel written against XLA's FFI headers (``include_dir()``) is registered with XLA by name
(``register_ffi_target``, the same process-wide registry JAX uses), and ``ffi_call`` makes a
function that calls it: under ``jit`` it lowers to a ``stablehlo.custom_call`` of the target,
eagerly it runs as a one-op compiled program, under ``vmap`` it follows ``vmap_method``, and it
has no derivative (wrap it in ``custom_jvp`` / ``custom_vjp``). Keyword arguments of the call
become the handler's typed attributes, as JAX types them. docs/ffi.md walks through an example.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, overload

import attrs
import numpy as np

from fcore.backend import ffi_targets
from fcore.backend.custom_call import attribute_text, custom_call_text
from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.effects import Effect, Effects, NO_EFFECTS
from fcore.ir.params import ParamStruct, ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax.call import launch_for
from fcore.lax.control_flow.loops import scan
from fcore.lax.shapes import broadcast
from fcore.transforms.batching import Dim, batching_rules, moveaxis
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

if TYPE_CHECKING:
    from fcore.interpreters.mlir import LoweringRule

__all__ = [
    "build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir", "pycapsule", "register_ffi_target",
    "register_ffi_target_as_batch_partitionable", "register_ffi_type", "register_ffi_type_id",
]

NpArray = np.ndarray[Any, Any]
#: ``result_avals`` parameters: ``((shape, dtype), ...)``.
ResultSpec = tuple[tuple[tuple[int, ...], np.dtype[Any]], ...]
#: A minor-to-major dimension order per operand or result (XLA's layout).
Layouts = tuple[tuple[int, ...], ...]


class _HasLayout(Protocol):
    """JAX's ``Layout``: a major-to-minor order (and a tiling, which the FFI refuses)."""

    major_to_minor: Sequence[int]
    tiling: object


class ResultMetadata(Protocol):
    """What ``ffi_call`` reads of each result's description (a ``ShapeDtypeStruct``, an array)."""

    @property
    def shape(self) -> Sequence[int]: ...

    @property
    def dtype(self) -> Any: ...


#: A layout as ``ffi_call`` takes it: None (row-major), a major-to-minor sequence, or a ``Layout``.
FfiLayoutOptions = Sequence[int] | _HasLayout | None


# =========================================================================================
# Registration (jaxlib's custom-call registry)
# =========================================================================================
def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1, **kwargs: Any) -> None:
    """Register a foreign function as XLA target ``name``: ``fn`` is a ``PyCapsule`` of the
    handler (``pycapsule(lib.Handler)``) or a dict of them by FFI stage. ``api_version`` 1 is the
    typed FFI, 0 the older custom-call API; ``kwargs`` go to jaxlib's registration."""
    ffi_targets.register_custom_call_target(name, fn, platform, api_version, **kwargs)


class TypeRegistration(TypedDict):
    """A user type that FFI handlers exchange: its ``XLA_FFI_TypeId`` (and ``XLA_FFI_TypeInfo``) capsules."""

    type_id: Any
    type_info: NotRequired[Any]


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Gone from jaxlib (use ``register_ffi_type``); raises as JAX does."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name: str, type_registration: TypeRegistration, platform: str = "cpu") -> None:
    """Register a user type for FFI handlers on ``platform``."""
    ffi_targets.register_custom_type(name, type_registration, platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Declare that target ``name`` may be partitioned along its leading (batch) dimension."""
    ffi_targets.register_custom_call_as_batch_partitionable(name)


def pycapsule(funcptr: Any) -> Any:
    """Wrap a ctypes function pointer (``ctypes.cdll.LoadLibrary(path).Handler``) in the
    ``PyCapsule`` that ``register_ffi_target`` takes."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return builder(funcptr, None, destructor(0))


def include_dir() -> str:
    """The directory of the FFI headers bundled with jaxlib (``xla/ffi/api/ffi.h``): pass it
    to the C++ compiler as ``-I``."""
    return ffi_targets.include_dir()


# =========================================================================================
# Parameter values
# =========================================================================================
@attrs.frozen(slots=True, repr=False)
class FfiEffect(Effect):
    """An FFI call with ``has_side_effect=True``: kept even when its results are unused."""

    def __repr__(self) -> str:
        return "FFI"


ffi_effect = FfiEffect()


class FfiAttributes(ParamStruct):
    """The keyword arguments of an FFI call (the handler's attributes): the values, and the
    MLIR attribute each lowers to. Equal when the attributes are (so ``a=1`` and
    ``a=np.int32(1)``, an ``i64`` and an ``i32``, are different parameters)."""

    __slots__ = ("items", "texts")

    def __init__(self, items: Mapping[str, object]) -> None:
        self.items = tuple(sorted((k, v.copy() if isinstance(v, np.ndarray) else v) for k, v in items.items()))
        self.texts = tuple((k, attribute_text(v)) for k, v in self.items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FfiAttributes) and self.texts == other.texts

    def __hash__(self) -> int:
        return hash(self.texts)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}={' '.join(repr(v).split())}" for k, v in self.items) + "}"


def _is_layout(x: object) -> bool:
    return hasattr(x, "major_to_minor")


def _call_layouts(
    avals: Sequence[ShapedArray], layouts: Sequence[FfiLayoutOptions] | None, what: str, given: str
) -> Layouts:
    """``ffi_call``'s layouts (major-to-minor) as XLA's orders: row-major where none are given."""
    if layouts is None:
        return tuple(_minor_to_major(a, None, True) for a in avals)
    if len(layouts) != len(avals):
        raise ValueError(f"The number of {what} ({len(avals)}) must equal the number of {given} ({len(layouts)}).")
    return tuple(_minor_to_major(a, lay, True) for a, lay in zip(avals, layouts))


def _minor_to_major(aval: ShapedArray, layout: FfiLayoutOptions, major_to_minor: bool) -> tuple[int, ...]:
    """XLA's minor-to-major order: row-major for None; a ``Layout``'s order reversed; a sequence
    reversed when given major-to-minor (``ffi_call``) or as is (the lowering helpers)."""
    if layout is None:
        return tuple(reversed(range(aval.ndim)))
    if _is_layout(layout):
        lay: Any = layout
        if lay.tiling is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        return tuple(int(d) for d in lay.major_to_minor)[::-1]
    seq = tuple(int(d) for d in layout)  # type: ignore[union-attr]
    return seq[::-1] if major_to_minor else seq


#: The one-equation programs that eager calls run, by operand types and parameters.
_staged: dict[tuple[object, ...], ClosedJaxpr] = {}
_staged_lock = threading.Lock()


def _not_differentiable(target_name: str) -> ValueError:
    return ValueError(
        f"The FFI call to `{target_name}` cannot be differentiated. "
        "You can use `jax.custom_jvp` or `jax.custom_jvp` to add support."
    )


def _batched_layouts(layouts: Layouts) -> Layouts:
    """The layouts with a new leading (slowest) dimension."""
    return tuple((*(d + 1 for d in lay), 0) for lay in layouts)


def _result_avals(results: Sequence[Any]) -> list[ShapedArray]:
    """The declared results' types; dtypes as given (a float64 result stays float64, as in JAX)."""
    avals = []
    for idx, result in enumerate(results):
        if not hasattr(result, "shape") or not hasattr(result, "dtype"):
            raise ValueError(
                "All elements of result_shape_dtypes must have 'shape' and 'dtype' "
                f"attributes. Got {result} at position {idx}."
            )
        dtype = np.dtype(result.dtype)
        avals.append(ShapedArray(tuple(int(d) for d in result.shape), dtype))
    return avals


_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None]


# =========================================================================================
# ffi_call[attributes custom_call_api_version has_side_effect input_layouts
#          input_output_aliases legacy_backend_config output_layouts result_avals
#          target_name vmap_method]
# =========================================================================================
@attrs.frozen(kw_only=True)
class FfiCallParams:
    """``ffi_call[...]``: the target, its results' types, the vmap method, the layouts
    (minor-to-major), ``(input, output)`` aliases, the API version, and the attributes."""

    attributes: FfiAttributes
    custom_call_api_version: int
    has_side_effect: bool
    input_layouts: Layouts
    input_output_aliases: tuple[tuple[int, int], ...]
    legacy_backend_config: str | None
    output_layouts: Layouts
    result_avals: ResultSpec
    target_name: str
    vmap_method: str | None


ffi_call_p = Primitive("ffi_call", multiple_results=True, params=FfiCallParams)


@ffi_call_p.def_abstract_eval
def _ffi_call_abstract_eval(*avals: ShapedArray, result_avals: ResultSpec, **params: Any) -> list[ShapedArray]:
    return [ShapedArray(shape, dtype) for shape, dtype in result_avals]


@ffi_call_p.def_effects
def _ffi_call_effects(**params: Any) -> Effects:
    return frozenset({ffi_effect}) if params["has_side_effect"] else NO_EFFECTS


@ffi_call_p.def_impl
def _ffi_call_impl(*args: NpArray, **params: Any) -> list[NpArray]:
    """Eagerly, the call compiled alone by XLA (once per operand types and parameters)."""
    avals = [ShapedArray(a.shape, a.dtype) for a in args]
    key = (tuple(avals), tuple(sorted(params.items())))
    closed = _staged.get(key)
    if closed is None:
        closed = trace_to_jaxpr(lambda *xs: ffi_call_p.bind(*xs, **params), avals, "ffi_call")
        with _staged_lock:
            closed = _staged.setdefault(key, closed)
    return [o.host() for o in launch_for(closed, f"ffi_call_{params['target_name']}")(args)]


@jvp_rules.register(ffi_call_p)
def _ffi_call_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    raise _not_differentiable(params["target_name"])


@transpose_rules.register(ffi_call_p)
def _ffi_call_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    raise _not_differentiable(params["target_name"])


@batching_rules.register(ffi_call_p)
def _ffi_call_batching(axis_size: int, vals: list[Any], dims: list[Dim], **params: Any) -> tuple[list[Any], list[Dim]]:
    """JAX's ``ffi_batching_rule``: the batch axis moves to the front; then per ``vmap_method``:
    one call per element (``sequential``: a ``scan``), or one call on the batched operands
    (unbatched ones broadcast to size 1 or ``axis_size``; ``legacy_vectorized``: left as they are)."""
    method = params["vmap_method"]
    args = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    spec: ResultSpec = params["result_avals"]
    batched = {**params, "result_avals": tuple(((axis_size, *shape), dtype) for shape, dtype in spec)}
    if method not in ("sequential", "sequential_unrolled"):
        batched["output_layouts"] = _batched_layouts(params["output_layouts"])
    if method == "legacy_vectorized":
        batched["input_layouts"] = tuple(
            lay if d is None else (*(n + 1 for n in lay), 0) for lay, d in zip(params["input_layouts"], dims)
        )
        outs = ffi_call_p.bind(*args, **batched)
    elif method in ("expand_dims", "broadcast_all"):
        size = axis_size if method == "broadcast_all" else 1
        args = [broadcast(a, (size,)) if d is None else a for a, d in zip(args, dims)]
        batched["input_layouts"] = _batched_layouts(params["input_layouts"])
        outs = ffi_call_p.bind(*args, **batched)
    elif method in ("sequential", "sequential_unrolled"):
        is_batched = [d is not None for d in dims]
        fixed = [a for a, b in zip(args, is_batched) if not b]

        def one(_: Any, xs: list[Any]) -> tuple[Any, list[Any]]:
            it_x, it_f = iter(xs), iter(fixed)
            return (), ffi_call_p.bind(*[next(it_x) if b else next(it_f) for b in is_batched], **params)

        _, outs = scan(one, (), [a for a, b in zip(args, is_batched) if b], unroll=method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of 'sequential', "
            f"'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got vmap_method={method!r}."
        )
    return list(outs), [0] * len(outs)


@lowering_rules.register(ffi_call_p)
def _ffi_call_lowering(ctx: LoweringRuleContext, *args: str, **params: Any) -> list[str]:
    """``stablehlo.custom_call @target(...)`` with JAX's attributes (``custom_call_text``)."""
    attributes: FfiAttributes = params["attributes"]
    api_version: int = params["custom_call_api_version"]
    config: dict[str, str] | str | None
    if api_version >= 4:
        config = dict(attributes.texts)
    elif attributes.texts:
        raise ValueError(
            "The use of ffi_call attributes requires a custom call API version of at least 4; "
            f"got api_version={api_version}."
        )
    else:
        config = params["legacy_backend_config"]
    text = custom_call_text(
        params["target_name"], args, ctx.avals_in, ctx.avals_out, api_version=1 if api_version >= 4 else api_version,
        backend_config=config, has_side_effect=params["has_side_effect"], operand_layouts=params["input_layouts"],
        result_layouts=params["output_layouts"], aliases=params["input_output_aliases"],
    )
    n = len(ctx.avals_out)
    if n == 0:
        ctx.fn.lines.append(f"    {text}{ctx.fn.location}")
        return []
    name = ctx.emit(text, n_results=n)
    return [name] if n == 1 else [f"{name}#{i}" for i in range(n)]


@overload
def ffi_call(
    target_name: str,
    result_shape_dtypes: Sequence[ResultMetadata],
    *,
    has_side_effect: bool = ...,
    vmap_method: str | None = ...,
    input_layouts: Sequence[FfiLayoutOptions] | None = ...,
    output_layouts: FfiLayoutOptions | Sequence[FfiLayoutOptions] = ...,
    input_output_aliases: dict[int, int] | None = ...,
    custom_call_api_version: int = ...,
    legacy_backend_config: str | None = ...,
) -> Callable[..., Sequence[Array]]: ...
@overload
def ffi_call(
    target_name: str,
    result_shape_dtypes: ResultMetadata,
    *,
    has_side_effect: bool = ...,
    vmap_method: str | None = ...,
    input_layouts: Sequence[FfiLayoutOptions] | None = ...,
    output_layouts: FfiLayoutOptions | Sequence[FfiLayoutOptions] = ...,
    input_output_aliases: dict[int, int] | None = ...,
    custom_call_api_version: int = ...,
    legacy_backend_config: str | None = ...,
) -> Callable[..., Array]: ...
def ffi_call(
    target_name: str,
    result_shape_dtypes: ResultMetadata | Sequence[ResultMetadata],
    *,
    has_side_effect: bool = False,
    vmap_method: str | None = None,
    input_layouts: Sequence[FfiLayoutOptions] | None = None,
    output_layouts: FfiLayoutOptions | Sequence[FfiLayoutOptions] = None,
    input_output_aliases: dict[int, int] | None = None,
    custom_call_api_version: int = 4,
    legacy_backend_config: str | None = None,
) -> Callable[..., Array | Sequence[Array]]:
    """A function calling the FFI target ``target_name`` (``jax.ffi.ffi_call``): its positional
    arguments are the handler's buffers, its keyword arguments the handler's attributes, and
    it returns arrays of ``result_shape_dtypes`` (one object with ``shape`` and ``dtype``, or
    a list / tuple of them). ``vmap_method`` says how ``vmap`` calls it (as ``pure_callback``);
    layouts are major-to-minor; ``input_output_aliases`` maps an input to the output that
    reuses its buffer; ``has_side_effect`` keeps a call whose results are unused."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, but got: {vmap_method}"
        )
    out_layouts: Sequence[FfiLayoutOptions] | None
    if isinstance(result_shape_dtypes, Sequence):
        multiple_results = True
        result_avals = _result_avals(result_shape_dtypes)
        out_layouts = output_layouts  # type: ignore[assignment]
    else:
        multiple_results = False
        result_avals = _result_avals([result_shape_dtypes])
        out_layouts = (output_layouts,)  # type: ignore[assignment]
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError(
            "The use of the legacy_backend_config parameter requires "
            f"custom_call_api_version < 4; got {custom_call_api_version}."
        )
    spec: ResultSpec = tuple((a.shape, a.dtype) for a in result_avals)

    def wrapped(*args: Any, **kwargs: Any) -> Array | Sequence[Array]:
        in_avals = [get_aval(x) for x in args]
        in_lay = _call_layouts(in_avals, input_layouts, "input arguments", "input layouts")
        out_lay = _call_layouts(result_avals, out_layouts, "outputs", "output layouts")
        aliases: list[tuple[int, int]] = []
        for i_idx, o_idx in sorted((input_output_aliases or {}).items()):
            i_idx, o_idx = int(i_idx), int(o_idx)
            if i_idx >= len(args):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i_idx}:{o_idx}' "
                    f"with input index {i_idx} outside the range [0, {len(args)})."
                )
            if o_idx >= len(result_avals):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i_idx}:{o_idx}' "
                    f"with output index {o_idx} outside the range [0, {len(result_avals)})."
                )
            in_aval, out_aval = in_avals[i_idx], result_avals[o_idx]
            if (in_aval.shape, in_aval.dtype) != (out_aval.shape, out_aval.dtype):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i_idx}:{o_idx}' "
                    f"referring to an input with abstract value {in_aval} and an "
                    f"output with a different abstract value {out_aval}."
                )
            if in_lay[i_idx] != out_lay[o_idx]:
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i_idx}:{o_idx}' "
                    f"referring to an input with layout {in_lay[i_idx]} "
                    f"and an output with a different layout {out_lay[o_idx]}."
                )
            aliases.append((i_idx, o_idx))
        for k, v in sorted(kwargs.items()):
            if not isinstance(v, (np.ndarray, dict)):
                try:
                    hash(v)
                except TypeError as e:
                    raise TypeError(f"Non-hashable keyword argument to ffi_call {k}: {v}") from e
        results = ffi_call_p.bind(
            *args,
            attributes=FfiAttributes(kwargs),
            custom_call_api_version=int(custom_call_api_version),
            has_side_effect=bool(has_side_effect),
            input_layouts=in_lay,
            input_output_aliases=tuple(aliases),
            legacy_backend_config=legacy_backend_config,
            output_layouts=out_lay,
            result_avals=spec,
            target_name=target_name,
            vmap_method=vmap_method,
        )
        outs: list[Array] = list(results)
        if multiple_results:
            return tuple(outs) if isinstance(result_shape_dtypes, tuple) else outs
        return outs[0]

    return wrapped


# =========================================================================================
# Lowering rules for a user's own primitive (``fcore.interpreters.mlir.register_lowering``)
# =========================================================================================
def build_ffi_lowering_function(
    call_target_name: str,
    *,
    operand_layouts: Sequence[FfiLayoutOptions] | None = None,
    result_layouts: Sequence[FfiLayoutOptions] | None = None,
    backend_config: Mapping[str, Any] | str | None = None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
) -> Callable[..., Any]:
    """A function ``(ctx, *operands, **params) -> op`` building the ``stablehlo.custom_call``
    of ``call_target_name`` with jaxlib's MLIR bindings, for a lowering rule registered with
    ``fcore.interpreters.mlir.register_lowering``. ``params`` become the handler's attributes;
    layouts here are minor-to-major (XLA's order), row-major by default."""
    from fcore.backend.ffi_binding import custom_call_op

    def lowering_op(ctx: Any, *operands: Any, **params: Any) -> Any:
        kwargs = dict(lowering_args)
        api_version = int(kwargs.pop("api_version", 4))
        config: dict[str, str] | str | None
        if api_version >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            config = {k: _attribute_text(v) for k, v in (backend_config or {}).items()}
            config.update({k: attribute_text(v) for k, v in params.items()})
        else:
            if params:
                raise ValueError(
                    "The use of ffi_call attributes requires a custom call API version "
                    f"of at least 4; got api_version={api_version}."
                )
            config = backend_config  # type: ignore[assignment]
        in_lay: Layouts | None = None
        out_lay: Layouts | None = None
        if not skip_ffi_layout_processing:
            ins: Sequence[FfiLayoutOptions] = operand_layouts or [None] * len(ctx.avals_in)
            outs: Sequence[FfiLayoutOptions] = result_layouts or [None] * len(ctx.avals_out)
            in_lay = tuple(_minor_to_major(a, lay, False) for a, lay in zip(ctx.avals_in, ins))
            out_lay = tuple(_minor_to_major(a, lay, False) for a, lay in zip(ctx.avals_out, outs))
        aliases = tuple(sorted(dict(kwargs.pop("operand_output_aliases", None) or {}).items()))
        has_side_effect = bool(kwargs.pop("has_side_effect", False))
        if kwargs:
            raise TypeError(f"build_ffi_lowering_function: unsupported arguments {sorted(kwargs)}")
        return custom_call_op(
            call_target_name, list(operands), list(ctx.avals_in), list(ctx.avals_out),
            api_version=1 if api_version >= 4 else api_version, backend_config=config,
            has_side_effect=has_side_effect, operand_layouts=in_lay, result_layouts=out_lay, aliases=aliases,
        )

    return lowering_op


def _attribute_text(value: object) -> str:
    """An attribute given as text-printable MLIR attribute (an ``ir.Attribute``) or a Python value."""
    if type(value).__module__.startswith("jaxlib.mlir"):
        return str(value)
    return attribute_text(value)


def ffi_lowering(
    call_target_name: str,
    *,
    operand_layouts: Sequence[FfiLayoutOptions] | None = None,
    result_layouts: Sequence[FfiLayoutOptions] | None = None,
    backend_config: Mapping[str, Any] | str | None = None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
) -> LoweringRule:
    """A lowering rule (for ``fcore.interpreters.mlir.register_lowering``) calling the FFI
    target ``call_target_name`` with the primitive's operands; the primitive's parameters are
    the handler's attributes (``jax.ffi.ffi_lowering``)."""
    build = build_ffi_lowering_function(
        call_target_name, operand_layouts=operand_layouts, result_layouts=result_layouts,
        backend_config=backend_config, skip_ffi_layout_processing=skip_ffi_layout_processing, **lowering_args,
    )

    def rule(ctx: Any, *operands: Any, **params: Any) -> Sequence[Any]:
        return list(build(ctx, *operands, **params).results)

    return rule
