"""The ahead-of-time stages of ``jit``: ``Traced`` -> ``Lowered`` -> ``Compiled``, as in JAX.

A ``Specialization`` is one traced instance of a jitted function (its jaxpr, the trees of
its dynamic arguments and results); ``jit`` caches them and the stages expose them.
A ``Compiled`` runs its one executable: it accepts only arguments of the tree, shapes and
dtypes it was compiled for (``TypeError`` otherwise) and never re-traces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

import attrs

from fcore import tree_util
from fcore.api._float0 import float0, float0_zeros
from fcore.api.staging import ShapeDtypeStruct, abstractify
from fcore.backend import runtime
from fcore.backend.lowering import donation_aliases, lower_jaxpr, parse_module
from fcore.config import eager_checks
from fcore.interpreters.float_checks import check_compiled
from fcore.interpreters.trace import Tracer
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.dtypes import dtype_name
from fcore.lax.call import Launch, compile_jaxpr, launch_for

if TYPE_CHECKING:
    from fcore.backend.lowering import MlirModule


@attrs.define(slots=True, eq=False)
class Specialization:
    """A traced instance of a jitted function, and once it has run outside
    transformations, its ``Launch`` (dropped by ``clear_caches``)."""

    name: str
    closed: ClosedJaxpr  # as traced: consts are constvars
    hoisted: ClosedJaxpr  # consts as leading invars (what is compiled)
    consts: tuple[Any, ...]
    in_tree: tree_util.PyTreeDef  # of (dynamic positional args, dynamic kwargs)
    out_tree: tree_util.PyTreeDef
    leaf_out: bool  # out_tree is a single leaf: the result is the one output itself
    arg_names: tuple[str, ...]  # per flat dynamic argument, for error messages
    donated: tuple[bool, ...]  # per flat dynamic argument
    launch: Launch | None = None
    #: (leaf index, shape) of each ``float0`` result: a tangent of an integer value, which
    #: carries no data, so it is made outside the compiled program (as jax's are).
    float0_outs: tuple[tuple[int, tuple[int, ...]], ...] = ()
    #: Launches on devices other than the default one, where committed arguments live.
    device_launches: dict[runtime.Device, Launch] = attrs.field(factory=dict)

    def results(self, outs: Sequence[Any]) -> Any:
        """The result tree from the compiled program's outputs."""
        return self.out_tree.unflatten(self.with_float0(outs, float0_zeros))

    def with_float0(self, leaves: Sequence[Any], make: Callable[[tuple[int, ...]], Any]) -> list[Any]:
        """``leaves`` of the staged results with ``make(shape)`` at each float0 result."""
        out = list(leaves)
        for i, shape in self.float0_outs:
            out.insert(i, make(shape))
        return out

    @property
    def in_avals(self) -> Sequence[ShapedArray]:
        return self.closed.in_avals

    @property
    def out_avals(self) -> Sequence[ShapedArray]:
        return self.closed.out_avals

    def get_launch(self) -> Launch:
        launch = self.launch
        if launch is None:
            launch = launch_for(self.hoisted, self.name, self.consts, self.donated)
            self.launch = launch
        return launch

    def launch_on(self, device: runtime.Device) -> Launch:
        """The launch that runs on ``device`` (arguments committed to it; no donation there)."""
        launch = self.device_launches.get(device)
        if launch is None:
            launch = self.device_launches[device] = launch_for(self.hoisted, self.name, self.consts, device=device)
        return launch

    def aliases(self) -> tuple[int | None, ...]:
        """Per parameter of the compiled program (consts first), the result its buffer is donated to."""
        if not any(self.donated):
            return ()
        flags = [False] * len(self.consts) + list(self.donated)
        return donation_aliases(self.hoisted.in_avals, self.hoisted.out_avals, flags)


@attrs.frozen(slots=True)
class ArgInfo:
    """The abstract value of one argument of a stage and whether it is donated."""

    _aval: ShapedArray
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype


class _Stage:
    """What every stage knows about its arguments (JAX's ``Stage``)."""

    __slots__ = ("_spec",)

    def __init__(self, spec: Specialization) -> None:
        self._spec = spec

    @property
    def in_tree(self) -> tree_util.PyTreeDef:
        """Tree structure of the pair (positional arguments, keyword arguments); no static ones."""
        return self._spec.in_tree

    @property
    def in_avals(self) -> Any:
        """The tree of input avals."""
        return tree_util.tree_unflatten(self._spec.in_tree, self._spec.in_avals)

    @property
    def args_info(self) -> Any:
        """The tree of ``ArgInfo`` of the inputs."""
        spec = self._spec
        return tree_util.tree_unflatten(spec.in_tree, [ArgInfo(a, d) for a, d in zip(spec.in_avals, spec.donated)])

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """Flat indices of the donated inputs."""
        return tuple(i for i, d in enumerate(self._spec.donated) if d)

    @property
    def out_tree(self) -> tree_util.PyTreeDef:
        return self._spec.out_tree

    @property
    def out_info(self) -> Any:
        """The tree of ``ShapeDtypeStruct`` of the results (weak types only in ``Traced``'s, as jax)."""
        return self._out_structs(weak=False)

    def _out_structs(self, weak: bool) -> Any:
        structs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type and weak) for a in self._spec.out_avals]
        return tree_util.tree_unflatten(self._spec.out_tree, self._spec.with_float0(structs, _float0_struct))


P = ParamSpec("P")
R = TypeVar("R")


class Traced(_Stage, Generic[P, R]):
    """The staged jaxpr of a specialization; ``.lower()`` continues."""

    __slots__ = ()

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._spec.closed

    @property
    def fun_name(self) -> str:
        return self._spec.name

    @property
    def out_avals(self) -> Any:
        avals = self._spec.with_float0(self._spec.out_avals, _float0_struct)
        return tree_util.tree_unflatten(self._spec.out_tree, avals)

    @property
    def out_info(self) -> Any:
        return self._out_structs(weak=True)

    def lower(self) -> Lowered[P, R]:
        return Lowered(self._spec)

    def __repr__(self) -> str:
        return f"Traced(jit({self._spec.name}))"


class Lowered(_Stage, Generic[P, R]):
    """The StableHLO module of a specialization; ``.compile()`` continues."""

    __slots__ = ()

    def as_text(self) -> str:
        """The StableHLO module (text) that XLA compiles."""
        return lower_jaxpr(self._spec.hoisted, self._spec.name, self._spec.aliases())

    def compile(self) -> Compiled[P, R]:
        return Compiled(self._spec, self._spec.get_launch())

    def compiler_ir(self, dialect: str | None = None) -> MlirModule:
        """The module as an MLIR object (``jaxlib.mlir.ir.Module``); only "stablehlo" exists."""
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"Unknown dialect {dialect!r}: fcore lowers to 'stablehlo' only")
        return parse_module(self.as_text())

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimates (``flops``, ``bytes accessed``, ...) for this program."""
        return compile_jaxpr(self._spec.hoisted, self._spec.name, self._spec.aliases()).cost_analysis()

    def __repr__(self) -> str:
        return f"Lowered(jit({self._spec.name}))"


class Compiled(_Stage, Generic[P, R]):
    """A compiled specialization: call it with arguments of the types it was compiled for."""

    __slots__ = ("_launch",)

    def __init__(self, spec: Specialization, launch: Launch) -> None:
        super().__init__(spec)
        self._launch = launch

    def as_text(self) -> str:
        """XLA's optimized HLO."""
        return self._launch.executable.as_text()

    def cost_analysis(self) -> dict[str, float]:
        return self._launch.executable.cost_analysis()

    def memory_analysis(self) -> runtime.MemoryStats:
        """XLA's estimate of argument, output, temporary and generated-code bytes."""
        return self._launch.executable.memory_analysis()

    def runtime_executable(self) -> runtime.Executable:
        return self._launch.executable

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        """Typed by the result only: arguments that were static at ``lower`` are not passed again."""
        spec = self._spec
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != spec.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was called with: "
                f"compiled for {spec.in_tree}, called with {in_tree}"
            )
        for x in flat:
            if isinstance(x, Tracer):
                raise TypeError(
                    "Cannot apply transformations to a function lowered and compiled for a particular "
                    f"signature. Detected argument of Tracer type {type(x).__name__}."
                )
        _check_argument_types(spec, [abstractify(x) for x in flat])
        outs = self._launch(flat)
        if eager_checks().floats:
            check_compiled(f"jit({spec.name})", outs)
        out: R = spec.results(outs)
        return out

    def __repr__(self) -> str:
        return f"Compiled(jit({self._spec.name}))"


def _check_argument_types(spec: Specialization, avals: Sequence[ShapedArray]) -> None:
    """Shapes and dtypes must match (weak types may differ: the program is the same)."""
    mismatches = [
        f"Argument '{name}' compiled with {_short(want)} and called with {_short(got)}"
        for name, want, got in zip(spec.arg_names, spec.in_avals, avals)
        if want.shape != got.shape or want.dtype != got.dtype
    ]
    if mismatches:
        raise TypeError(
            "Argument types differ from the types for which this computation was compiled. Perhaps you are "
            "calling the compiled executable with a different enable_x64 mode than when it was AOT compiled? "
            "The mismatches are:\n" + "\n".join(mismatches)
        )


def _short(aval: ShapedArray) -> str:
    return f"{dtype_name(aval.dtype)}[{','.join(map(str, aval.shape))}]"


def _float0_struct(shape: tuple[int, ...]) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(shape, float0)
