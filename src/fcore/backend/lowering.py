"""Lowering jaxprs to StableHLO text (an interpreter that emits one op line per rule).

Text, not ``jaxlib.mlir`` builders: building the text in Python is several times
faster than the builders and than parsing, and XLA's compile time dominates either
way (measurements in docs/design.md). Each primitive's rule is registered in
``lowering_rules`` next to the primitive; this module provides the context rules emit into.

A rule is ``rule(ctx, *operands, **params) -> str | list[str]``: operands are SSA
value names (``%3``), the result is the SSA name(s) of the outputs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from typing_extensions import TypeAlias

import numpy as np

from fcore.backend.frontend_attributes import tag_outputs
from fcore.errors import FcoreError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr, Literal
from fcore.ir.dtypes import DType
from fcore.ir.printer import pp_eqn_in
from fcore.ir.rules import RuleTable
from fcore.ir.source_info import SourceInfo

if TYPE_CHECKING:
    from jaxlib.mlir import ir as _mlir_ir

    MlirModule: TypeAlias = _mlir_ir.Module


#: A lowering rule: ``(ctx, *operands, **params) -> result name(s)``. (Operands are variadic, so
#: the signature is not checked against the primitive's parameter schema by mypy;
#: tests/test_rule_tables.py checks it.)
LoweringRule: TypeAlias = Callable[..., "str | list[str]"]

lowering_rules: RuleTable[LoweringRule] = RuleTable("Lowering")


class LoweringError(FcoreError, NotImplementedError):
    """A primitive has no lowering rule, or its rule failed; names the equation."""


_ELEMENT_TYPES = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
    # The ml_dtypes formats (int1/uint1 have none: StableHLO's i1 is bool, and it has no ui1).
    "int2": "i2", "int4": "i4", "uint2": "ui2", "uint4": "ui4",
    "float4_e2m1fn": "f4E2M1FN", "float6_e2m3fn": "f6E2M3FN", "float6_e3m2fn": "f6E3M2FN",
    "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e4m3fn": "f8E4M3FN", "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2": "f8E5M2",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e8m0fnu": "f8E8M0FNU",
}


def element_type(dtype: DType) -> str:
    name = dtypes.dtype_name(dtype)
    try:
        return _ELEMENT_TYPES[name]
    except KeyError:
        raise TypeError(f"dtype {name} has no StableHLO element type, so it cannot be compiled with jit") from None


_tensor_types: dict[ShapedArray, str] = {}


def tensor_type(aval: ShapedArray) -> str:
    """``tensor<2x3xf32>`` (``tensor<f32>`` for scalars); memoized, as every op names several."""
    text = _tensor_types.get(aval)
    if text is None:
        dims = "".join(f"{d}x" for d in aval.shape)
        text = f"tensor<{dims}{element_type(aval.dtype)}>"
        if len(_tensor_types) < 65536:
            _tensor_types[aval] = text
    return text


def dense_attr(value: np.ndarray[Any, Any]) -> str:
    """A ``dense<...>`` attribute holding ``value`` exactly (hex bytes, or splat)."""
    if value.dtype == np.bool_:  # i1 has no byte layout in the hex form: spell the elements
        flat_bool = value.reshape(-1)
        if flat_bool.size and bool(np.all(flat_bool == flat_bool[0])):
            return "dense<true>" if bool(flat_bool[0]) else "dense<false>"
        return "dense<" + np.array2string(value, separator=", ", threshold=sys.maxsize).replace("True", "true").replace(
            "False", "false"
        ).replace(" true", "true").replace(" false", "false") + ">"
    flat = np.ascontiguousarray(value).reshape(-1)
    if flat.size > 1 and bool(np.all(flat.view(np.uint8).reshape(flat.size, -1) == flat[:1].view(np.uint8))):
        flat = flat[:1]  # splat
    data = flat.astype(flat.dtype.newbyteorder("<"), copy=False).tobytes()
    return f'dense<"0x{data.hex().upper()}">'


class FunctionBuilder:
    """Accumulates the body of one ``func.func``."""

    __slots__ = ("lines", "_next", "location", "token")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._next = 0
        self.location = ""
        #: The ``!stablehlo.token`` threading this function's ordered effects (``ordered_token``).
        self.token: str | None = None

    def fresh(self) -> str:
        name = f"%{self._next}"
        self._next += 1
        return name


class ModuleBuilder:
    """The module being built: private functions for nested jaxprs, deduplicated, and the
    device mesh its sharding annotations refer to (``@mesh``; at most one per program)."""

    __slots__ = ("functions", "_by_jaxpr", "_names", "mesh", "mesh_size", "axis_env", "_channels", "maximal",
                 "_locations", "rule_functions")

    def __init__(self) -> None:
        self.functions: list[str] = []
        self._by_jaxpr: dict[Jaxpr, str] = {}
        self._names: set[str] = {"main"}
        self.mesh: str | None = None
        self.mesh_size = 1
        #: The mesh axes of the enclosing manual (``shard_map``) regions, innermost last:
        #: ``(names, sizes)`` of the whole mesh (what collectives compute replica groups from).
        self.axis_env: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
        self._channels = 0
        #: Whether an op is pinned to the mesh's first device (``@maximal_mesh_0``).
        self.maximal = False
        self._locations: dict[tuple[int, str], str] = {}
        #: Private functions that rules built once per module, by the rule's own key (a lowering
        #: rule written with jaxlib's bindings: ``fcore.backend.binding_lowering``).
        self.rule_functions: dict[Hashable, str] = {}

    def location(self, info: SourceInfo, primitive: str) -> str:
        """`` loc("outer/inner/prim"("file":line:col))``, as JAX names an op: its name stack and
        the user's line (equations bound at one line share one ``SourceInfo``: memoized)."""
        key = (id(info), primitive)
        loc = self._locations.get(key)
        if loc is None:
            name = _mlir_string(f"{info.name}/{primitive}" if info.name_stack else primitive)
            frame = info.frame
            if frame is None:
                loc = f" loc({name})"
            else:
                loc = f" loc({name}({_mlir_string(frame.file_name)}:{frame.start_line}:{frame.start_column}))"
            self._locations[key] = loc
        return loc

    def next_channel(self) -> int:
        """A fresh channel handle for a collective op."""
        self._channels += 1
        return self._channels

    def use_mesh(self, mesh: str, size: int) -> str:
        """Declare the program's mesh (Shardy text ``<["x"=2]>``); returns its symbol."""
        if self.mesh is not None and self.mesh != mesh:
            raise ValueError(f"a program can use one device mesh, got {self.mesh} and {mesh}")
        self.mesh, self.mesh_size = mesh, size
        return "@mesh"

    def on_first_device(self, n_values: int) -> str:
        """The attribute that pins an op with ``n_values`` results (at least one entry) to the
        mesh's first device, as JAX pins host callbacks outside ``shard_map``; empty in a
        one-device program or inside a manual region, where every device runs the op."""
        if self.mesh is None or self.axis_env:
            return ""
        self.maximal = True
        values = ", ".join(["<@maximal_mesh_0, []>"] * max(n_values, 1))
        return f"sdy.sharding = #sdy.sharding_per_value<[{values}]>"

    def unique_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "fn"
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name

    def private_function(self, jaxpr: Jaxpr, name: str) -> str:
        """The symbol of a private function computing ``jaxpr`` (lowered once per structure).
        When ``threads_token(jaxpr)``, the function takes the caller's token as its last
        parameter and returns its own last token as its last result."""
        sym = self._by_jaxpr.get(jaxpr)
        if sym is None:
            sym = self.unique_name(name)
            self._by_jaxpr[jaxpr] = sym
            self.functions.append(lower_function(self, jaxpr, sym, public=False, token=threads_token(jaxpr)))
        return sym


class LoweringRuleContext:
    """What a lowering rule sees: avals in/out and an ``emit`` for op lines."""

    __slots__ = ("module", "fn", "avals_in", "avals_out")

    def __init__(
        self, module: ModuleBuilder, fn: FunctionBuilder, avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray]
    ) -> None:
        self.module = module
        self.fn = fn
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)

    def emit(self, rhs: str, n_results: int = 1) -> str:
        """Append ``%N = rhs``; returns ``%N`` (use ``%N#i`` for multiple results)."""
        name = self.fn.fresh()
        lhs = name if n_results == 1 else f"{name}:{n_results}"
        self.fn.lines.append(f"    {lhs} = {rhs}{self.fn.location}")
        return name

    def op(self, name: str, operands: Sequence[str], aval: ShapedArray, attrs: str = "") -> str:
        """A generic same-typed op: ``stablehlo.add %a, %b : tensor<...>``."""
        extra = f" {attrs}" if attrs else ""
        return self.emit(f"{name} {', '.join(operands)}{extra} : {tensor_type(aval)}")

    def op_typed(self, name: str, operands: Sequence[str], in_avals: Sequence[ShapedArray], out: ShapedArray,
                 attrs: str = "") -> str:
        """An op with a functional type: ``op %a attrs : (tensor<...>) -> tensor<...>``."""
        ins = ", ".join(tensor_type(a) for a in in_avals)
        extra = attrs if attrs.startswith(",") else f" {attrs}" if attrs else ""
        return self.emit(f"{name} {', '.join(operands)}{extra} : ({ins}) -> {tensor_type(out)}")

    def constant(self, value: object, dtype: DType, shape: tuple[int, ...] = ()) -> str:
        arr = np.asarray(value, dtype)
        if arr.ndim == 0 and shape:  # a splat: one element's bytes, no array of ``shape`` in memory
            attr = dense_attr(arr.reshape(1))
        else:
            attr = dense_attr(np.asarray(np.broadcast_to(arr, shape)))
        return self.emit(f"stablehlo.constant {attr} : {tensor_type(ShapedArray(shape, dtype))}")

    def broadcast(self, x: str, aval: ShapedArray, shape: tuple[int, ...], dims: Sequence[int] | None = None) -> str:
        """``broadcast_in_dim`` of ``x`` to ``shape`` (default: trailing-aligned dims)."""
        if aval.shape == shape:
            return x
        if dims is None:
            dims = range(len(shape) - aval.ndim, len(shape))
        out = ShapedArray(shape, aval.dtype)
        return self.op_typed("stablehlo.broadcast_in_dim", [x], [aval], out, f", dims = [{', '.join(map(str, dims))}]")

    def convert(self, x: str, aval: ShapedArray, dtype: DType) -> str:
        if aval.dtype == dtype:
            return x
        return self.op_typed("stablehlo.convert", [x], [aval], ShapedArray(aval.shape, dtype))


TOKEN_TYPE = "!stablehlo.token"


def threads_token(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` has ordered effects, so that its function must thread a token."""
    return any(e.ordered for e in jaxpr.effects)


def ordered_token(ctx: LoweringRuleContext) -> str:
    """The token the next ordered effect of this function consumes (created on first use);
    the rule stores the token its op produces in ``ctx.fn.token``, so ordered effects run in
    program order."""
    token = ctx.fn.token
    if token is None:
        token = ctx.fn.token = ctx.emit("stablehlo.after_all : !stablehlo.token")
    return token


def lower_function(
    module: ModuleBuilder, jaxpr: Jaxpr, name: str, public: bool, aliases: Sequence[int | None] = (),
    arg_attrs: Sequence[str] = (), result_attrs: Sequence[str] = (), token: bool = False,
) -> str:
    """The text of one ``func.func``: constvars then invars are its parameters.

    ``aliases[i]``, when not None, is the result that parameter ``i`` is donated to;
    ``arg_attrs[i]`` / ``result_attrs[i]``, when not empty, are more attributes of
    parameter / result ``i`` (``sdy.sharding = ...``). With ``token``, a ``!stablehlo.token``
    is the last parameter and the last result (ordered effects).
    """
    fn = FunctionBuilder()
    env: dict[int, str] = {}
    params = []
    for i, v in enumerate(jaxpr.constvars + jaxpr.invars):
        env[id(v)] = f"%arg{i}"
        alias = aliases[i] if i < len(aliases) else None
        attrs = [f"tf.aliasing_output = {alias} : i32"] if alias is not None else []
        if i < len(arg_attrs) and arg_attrs[i]:
            attrs.append(arg_attrs[i])
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        params.append(f"%arg{i}: {tensor_type(v.aval)}{attr}")
    if token:
        fn.token = f"%arg{len(params)}"
        params.append(f"{fn.token}: {TOKEN_TYPE}")

    def read(a: Any) -> str:
        if type(a) is Literal:
            ctx = LoweringRuleContext(module, fn, [], [a.aval])
            return ctx.constant(a.val, a.aval.dtype)
        return env[id(a)]

    for i, eqn in enumerate(jaxpr.eqns):
        prim = eqn.primitive
        rule = lowering_rules.get(prim)
        if rule is None:
            raise LoweringError(
                f"no lowering rule for primitive '{prim.name}' (equation {i} of {name}: {pp_eqn_in(jaxpr, i)})"
            )
        info = eqn.source_info
        fn.location = f' loc("{name}.eqn{i}.{prim.name}")' if info is None else module.location(info, prim.name)
        operands = [read(a) for a in eqn.invars]
        ctx = LoweringRuleContext(module, fn, [a.aval for a in eqn.invars], [v.aval for v in eqn.outvars])
        try:
            out = rule(ctx, *operands, **eqn.params)
        except LoweringError:
            raise
        except Exception as e:
            raise LoweringError(
                f"lowering rule of '{prim.name}' failed on equation {i} of {name} ({pp_eqn_in(jaxpr, i)}): {e}"
            ) from e
        outs = out if isinstance(out, list) else [out]
        if info is not None and info.xla_metadata:
            tag_outputs(fn, outs, info.xla_metadata)
        for v, o in zip(eqn.outvars, outs):
            env[id(v)] = o
    fn.location = ""
    results = [read(a) for a in jaxpr.outvars]
    out_types = [tensor_type(a.aval) for a in jaxpr.outvars]
    if token:
        assert fn.token is not None
        results.append(fn.token)
        out_types.append(TOKEN_TYPE)
    vis = "public" if public else "private"
    results_decl = [
        f"{t} {{{result_attrs[i]}}}" if i < len(result_attrs) and result_attrs[i] else t for i, t in enumerate(out_types)
    ]
    head = f"  func.func {vis} @{name}({', '.join(params)}) -> ({', '.join(results_decl)}) {{"
    ret = f"    return {', '.join(results)} : {', '.join(out_types)}" if results else "    return"
    return "\n".join([head, *fn.lines, ret, "  }"])


def _mlir_string(text: str) -> str:
    """An MLIR string literal (quotes, backslashes and control characters escaped as hex)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else "".join(f"\\{b:02X}" for b in c.encode()) for c in text) + '"'


def donation_aliases(
    in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray], donated: Sequence[bool]
) -> tuple[int | None, ...]:
    """For each donated input, the first result of the same shape and dtype not yet taken
    (None where there is none: that buffer cannot be reused), as jax pairs them."""
    free = list(range(len(out_avals)))
    aliases: list[int | None] = []
    for aval, d in zip(in_avals, donated):
        match = None
        if d:
            match = next((j for j in free if out_avals[j].shape == aval.shape and out_avals[j].dtype == aval.dtype), None)
            if match is not None:
                free.remove(match)
        aliases.append(match)
    return tuple(aliases)


def lower_jaxpr(closed: ClosedJaxpr | Jaxpr, name: str = "main", aliases: Sequence[int | None] = ()) -> str:
    """A StableHLO module whose public ``@main`` takes the constvars then the invars.

    ``aliases`` (see ``donation_aliases``) marks parameters whose buffers a result reuses.
    """
    return lower_module(closed, name, aliases)[0]


def lower_module(
    closed: ClosedJaxpr | Jaxpr, name: str = "main", aliases: Sequence[int | None] = (),
    arg_attrs: Sequence[str] = (), result_attrs: Sequence[str] = (), mesh: tuple[str, int] | None = None,
) -> tuple[str, int]:
    """``lower_jaxpr`` with sharding attributes on ``@main``'s parameters and results, over
    ``mesh`` (Shardy text, device count) if given or if a rule declared one; returns the
    text and the number of partitions (1 for a one-device program)."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    module = ModuleBuilder()
    if mesh is not None:
        module.use_mesh(*mesh)
    main = lower_function(module, jaxpr, "main", public=True, aliases=aliases, arg_attrs=arg_attrs,
                          result_attrs=result_attrs)
    body = "\n".join([main, *module.functions])
    module_name = "".join(c if c.isalnum() or c == "_" else "_" for c in f"jit_{name}")
    decl = f"  sdy.mesh @mesh = {module.mesh}\n" if module.mesh is not None else ""
    if module.maximal:
        decl += "  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
    n = module.mesh_size
    return (
        f"module @{module_name} attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
        f"{decl}{body}\n}}\n"
    ), n




def parse_module(text: str) -> MlirModule:
    """The StableHLO text as an MLIR module object (``Lowered.compiler_ir()``), in a fresh
    context with the StableHLO dialects registered. Imported lazily: only this needs MLIR."""
    from jaxlib.mlir import ir as mlir_ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, sdy, stablehlo

    ctx = mlir_ir.Context()
    registry = mlir_ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    sdy.register_dialect(ctx)  # sharded programs name their mesh and shardings
    chlo.register_dialect(ctx)  # rules written with jaxlib's bindings may emit CHLO (binding_lowering)
    return mlir_ir.Module.parse(text, ctx)
