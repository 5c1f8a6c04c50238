"""``fcore.export.export``: a jitted function staged once for fixed argument types, as JAX's
``jax.export`` (static shapes; no symbolic shapes, no serialization to JAX's format).

An ``Exported`` holds the staged jaxpr, the argument and result types and trees, and the
platforms it was exported for; ``mlir_module()`` is the StableHLO text fcore compiles, and
``call`` runs it again (eagerly or inside any transformation: the jaxpr is inlined where it
is called). ``serialize`` / ``deserialize`` round-trip it through fcore's own jaxpr format
(docs/ir.md, "Serialization"), not JAX's flatbuffer format.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

from fcore import tree_util
from fcore.api.jit import Jitted, jit
from fcore.backend import runtime
from fcore.api.export_shardings import ExportShardings, export_shardings
from fcore.backend.lowering import lower_jaxpr, lower_module
from fcore.interpreters.eval import get_aval
from fcore.interpreters.eval_jaxpr import jaxpr_as_fun
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.serialize import deserialize as _deserialize_jaxpr
from fcore.ir.serialize import serialize as _serialize_jaxpr
from fcore.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "default_export_platform",
    "deserialize",
    "export",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
]

#: The calling-convention versions JAX 0.10 reads and writes; fcore writes the newest.
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10

_MAGIC = b"FCORE-EXPORTED\n"


def default_export_platform() -> str:
    """The platform ``export`` targets when none is named: this process's backend."""
    return runtime.platform()


class DisabledSafetyCheck:
    """A safety check ``Exported.call`` skips: ``platform()`` (run on a platform it was not
    exported for) or ``custom_call(target)`` (accepted; fcore's modules have no custom calls)."""

    __slots__ = ("_impl",)

    def __init__(self, _impl: str) -> None:
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        return self._impl[len("custom_call:"):] if self._impl.startswith("custom_call:") else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and other._impl == self._impl

    def __hash__(self) -> int:
        return hash(self._impl)

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__


class Exported:
    """A function exported for fixed argument types (``export(jit(f))(*specs)``)."""

    def __init__(
        self, *, fun_name: str, in_tree: tree_util.PyTreeDef, in_avals: tuple[ShapedArray, ...],
        out_tree: tree_util.PyTreeDef, out_avals: tuple[ShapedArray, ...], platforms: tuple[str, ...],
        disabled_safety_checks: tuple[DisabledSafetyCheck, ...], jaxpr: ClosedJaxpr,
        shardings: ExportShardings | None = None,
    ) -> None:
        self.fun_name, self.in_tree, self.in_avals = fun_name, in_tree, in_avals
        self.out_tree, self.out_avals, self.platforms = out_tree, out_avals, platforms
        self.disabled_safety_checks = disabled_safety_checks
        self.jaxpr = jaxpr
        self._shardings = shardings or ExportShardings(None, (None,) * len(in_avals), (None,) * len(out_avals))
        self.nr_devices = self._shardings.nr_devices
        self.in_shardings_hlo: tuple[None, ...] = (None,) * len(in_avals)
        self.out_shardings_hlo: tuple[None, ...] = (None,) * len(out_avals)
        self.ordered_effects: tuple[Any, ...] = ()
        self.unordered_effects: tuple[Any, ...] = ()
        self.calling_convention_version = maximum_supported_calling_convention_version
        self._run: Callable[..., list[Any]] | None = None

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    __repr__ = __str__

    def in_shardings_jax(self, mesh: Mesh) -> tuple[NamedSharding | None, ...]:
        """The arguments' shardings over ``mesh`` (one of the export's axis names and sizes);
        None where the export left one unspecified."""
        return self._shardings.over(mesh, self._shardings.in_specs)

    def out_shardings_jax(self, mesh: Mesh) -> tuple[NamedSharding | None, ...]:
        """The results' shardings over ``mesh``, as ``in_shardings_jax``."""
        return self._shardings.over(mesh, self._shardings.out_specs)

    def mlir_module(self) -> str:
        """The StableHLO module text (what fcore compiles); with the arguments' and results'
        shardings over the export's mesh when it has one."""
        sh = self._shardings
        if sh.mesh_shape is None:
            return lower_jaxpr(self.jaxpr, self.fun_name)
        mesh = "<[" + ", ".join(f'"{n}"={size}' for n, size in sh.mesh_shape) + "]>"
        arg_attrs = [_sdy_attr(s, a) for s, a in zip(sh.in_specs, self.in_avals)]
        res_attrs = [_sdy_attr(s, a) for s, a in zip(sh.out_specs, self.out_avals)]
        return lower_module(self.jaxpr, self.fun_name, (), arg_attrs, res_attrs, mesh=(mesh, sh.nr_devices))[0]

    @property
    def mlir_module_serialized(self) -> bytes:
        return self.mlir_module().encode()

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """Bytes that ``deserialize`` turns back into this ``Exported`` (fcore's format)."""
        if vjp_order:
            raise NotImplementedError("fcore's Exported serializes no VJPs (vjp_order=0 only)")
        header = json.dumps({
            "fun_name": self.fun_name, "platforms": list(self.platforms),
            "disabled": [str(c) for c in self.disabled_safety_checks],
            "in_tree": self.in_tree.serialize_using_proto().hex(),
            "out_tree": self.out_tree.serialize_using_proto().hex(),
            "shardings": self._shardings.to_json(),
        }).encode()
        return bytearray(_MAGIC + struct.pack("<I", len(header)) + header + _serialize_jaxpr(self.jaxpr))

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the exported function on arguments of the exported types and tree."""
        here = default_export_platform()
        if here not in self.platforms and DisabledSafetyCheck.platform() not in self.disabled_safety_checks:
            raise ValueError(
                f"Function '{self.fun_name}' was exported for platforms '{self.platforms}' but it is used on "
                f"'{(here,)}'."
            )
        flat, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when the function "
                f"'{self.fun_name}' was exported, but they have {tree} instead of {self.in_tree}."
            )
        for i, (x, want) in enumerate(zip(flat, self.in_avals)):
            got = get_aval(x)
            if got.shape != want.shape or got.dtype != want.dtype:
                raise ValueError(
                    f"Shape or dtype mismatch for argument {i} of '{self.fun_name}': expected "
                    f"{want.str_short()} and called with {got.str_short()}"
                )
        if self._run is None:
            self._run = jit(jaxpr_as_fun(self.jaxpr))
        return self.out_tree.unflatten(self._run(*flat))


def export(
    fun_jit: Any, *, platforms: Sequence[str] | None = None, disabled_checks: Sequence[DisabledSafetyCheck] = (),
) -> Callable[..., Exported]:
    """``export(jit(f))(*args)``: ``f`` staged for the types of ``args`` (arrays or
    ``ShapeDtypeStruct`` s), for ``platforms`` (default: this backend's)."""
    if not isinstance(fun_jit, Jitted):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    targets = tuple(platforms) if platforms is not None else (default_export_platform(),)

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        traced = fun_jit.trace(*args, **kwargs)
        closed = traced.jaxpr
        statics = set(fun_jit.static_argnums)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in set(fun_jit.static_argnames)}
        shardings = export_shardings(
            tree_util.tree_leaves((dyn_args, dyn_kwargs)), fun_jit.in_shardings, fun_jit.out_shardings, dyn_args,
            traced.out_tree, closed.in_avals,
        )
        return Exported(
            fun_name=traced.fun_name, in_tree=traced.in_tree,
            in_avals=tuple(a.strip_weak_type() for a in closed.in_avals), out_tree=traced.out_tree,
            out_avals=tuple(a.strip_weak_type() for a in closed.out_avals), platforms=targets,
            disabled_safety_checks=tuple(disabled_checks), jaxpr=closed, shardings=shardings,
        )

    return do_export


def deserialize(blob: bytes | bytearray) -> Exported:
    """The ``Exported`` that ``Exported.serialize`` wrote."""
    data = bytes(blob)
    if not data.startswith(_MAGIC):
        raise ValueError("not an fcore Exported (fcore reads only what Exported.serialize wrote)")
    (n,) = struct.unpack_from("<I", data, len(_MAGIC))
    start = len(_MAGIC) + 4
    header = json.loads(data[start:start + n])
    closed = _deserialize_jaxpr(data[start + n:])
    treedef = type(tree_util.tree_structure(0))
    return Exported(
        fun_name=header["fun_name"],
        in_tree=treedef.deserialize_using_proto(tree_util.default_registry, bytes.fromhex(header["in_tree"])),
        in_avals=tuple(a.strip_weak_type() for a in closed.in_avals),
        out_tree=treedef.deserialize_using_proto(tree_util.default_registry, bytes.fromhex(header["out_tree"])),
        out_avals=tuple(a.strip_weak_type() for a in closed.out_avals),
        platforms=tuple(header["platforms"]),
        disabled_safety_checks=tuple(DisabledSafetyCheck(d) for d in header["disabled"]), jaxpr=closed,
        shardings=ExportShardings.from_json(header.get("shardings"), len(closed.in_avals), len(closed.out_avals)),
    )


def _sdy_attr(spec: PartitionSpec | None, aval: ShapedArray) -> str:
    """Shardy's sharding attribute of a parameter or result laid out by ``spec`` (empty: none)."""
    if spec is None:
        return ""
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in spec.axes_of(d)) + "}" for d in range(aval.ndim))
    return f"sdy.sharding = #sdy.sharding<@mesh, [{dims}]>"
