"""JAX's jaxprs in: ``from_jax`` and the converter the per-primitive translations extend.

JAX's objects are read by duck typing (``jax`` is never imported here): a jaxpr has
``constvars``, ``invars``, ``outvars`` and ``eqns``; an equation ``primitive.name``,
``params``, ``invars`` and ``outvars``; a variable ``aval`` (``shape``, ``dtype``,
``weak_type``); a literal also ``val``; a closed jaxpr ``jaxpr`` and ``consts``.

Primitives are matched by name: fcore's primitives have ``jax.lax``'s names and parameters.
Where JAX's form differs, ``SPECIAL`` holds a translation (filled by ``_jax_calls`` and
``_jax_random``), ``DROPPED`` names the JAX parameters an fcore primitive does not have,
per primitive, and ``DEFAULTS`` supplies fcore parameters JAX does not write.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fcore.errors import JaxprTypeError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.builder import JaxprBuilder
from fcore.ir.core import Atom, ClosedJaxpr, Literal, Var
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.parser import find_param_enum, find_param_struct
from fcore.ir.primitive import lookup_primitive
from fcore.ir.source_info import Frame, SourceInfo, Transform
from fcore.ir.typecheck import typecheck
from fcore.lax.call import jit_p
from fcore.lax.dot import Precision

__all__ = ["from_jax", "Converter", "SPECIAL", "convert_closed", "convert_open", "jax_aval", "is_jax_closed_jaxpr"]

NpArray = np.ndarray[Any, Any]

#: JAX parameters that say where values live, not what they are: dropped whatever their value.
_PLACEMENT_PARAMS = frozenset({"sharding", "out_sharding", "accumulation_type"})

#: JAX parameters an fcore primitive does not have, dropped for that primitive only (each
#: affects neither values nor derivatives).
DROPPED: dict[str, frozenset[str]] = {
    "scan": frozenset({"_split_transpose"}),  # how JAX splits the transposed loop (a schedule)
    "cond": frozenset({"branches_platforms"}),  # the platform each branch is for: the index operand
    # (``platform_index``, a constant for fcore's platform) already chooses
}

#: Structural primitives applied to typed PRNG keys: fcore applies them to the key data, whose
#: extra trailing axis of 2 words the parameters must cover (``KeyParams(params, operand avals)``).
KeyParams = Callable[[dict[str, ParamValue], list[ShapedArray]], dict[str, ParamValue]]
KEY_DATA_PARAMS: dict[str, KeyParams] = {}

#: fcore parameters JAX does not write, from the equation's operands (``scan``'s ``linear``:
#: JAX 0.10 keeps it out of the equation; nothing JAX stages is linear).
DEFAULTS: dict[str, Callable[[list[Atom]], dict[str, ParamValue]]] = {
    "scan": lambda ins: {"linear": (False,) * len(ins)},
}

#: n-ary elementwise primitives: JAX's versions also broadcast size-1 axes, fcore's only rank-0
#: operands, so ``from_jax`` makes such broadcasts explicit (``broadcast_in_dim``).
_ELEMENTWISE_NARY = frozenset({
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and", "or", "xor",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge", "complex", "select_n", "clamp",
})


def from_jax(jax_closed_jaxpr: object) -> ClosedJaxpr:
    """The fcore ``ClosedJaxpr`` of a JAX ``ClosedJaxpr`` (e.g. from ``jax.make_jaxpr(f)(x)``).

    Equations are rebuilt with fcore's primitives of the same name, typed by fcore's own
    abstract evaluation, and the result is type-checked. Nothing is lost that changes values
    or derivatives: JAX's ``pjit``/``jit`` calls become fcore ``jit`` equations,
    ``custom_jvp_call``/``custom_vjp_call`` fcore's custom-derivative equations (whose rules
    JAX traces when fcore first differentiates them), ``checkpoint`` fcore's ``remat2``; typed
    PRNG keys (``key<fry>[...]``) become their ``uint32[..., 2]`` key data, as in fcore.random.
    Non-scalar literals become constants. An unknown primitive, or a JAX parameter without
    fcore equivalent, raises ``NotImplementedError`` naming it.
    """
    jaxpr = getattr(jax_closed_jaxpr, "jaxpr", None)
    if jaxpr is None or not hasattr(jaxpr, "eqns"):
        raise TypeError(f"from_jax expects a JAX ClosedJaxpr (from jax.make_jaxpr), got {type(jax_closed_jaxpr).__name__}")
    return convert_closed(jax_closed_jaxpr)


def convert_closed(jax_closed: object) -> ClosedJaxpr:
    closed = Converter().convert(getattr(jax_closed, "jaxpr"), list(getattr(jax_closed, "consts", ())))
    typecheck(closed)
    return closed


def convert_open(jax_jaxpr: object, consts: Sequence[object] = ()) -> ClosedJaxpr:
    """An open JAX ``Jaxpr`` (e.g. scatter's ``update_jaxpr``) with values for its constvars."""
    closed = Converter().convert(jax_jaxpr, list(consts))
    typecheck(closed)
    return closed


def is_jax_key_dtype(dtype: object) -> bool:
    """JAX's PRNG key dtypes print as ``key<impl>``; fcore represents such keys by their data."""
    return str(dtype).startswith("key<")


def jax_aval(jax_aval_: object) -> ShapedArray:
    """An fcore aval from a JAX ``ShapedArray`` (shape, dtype, weak_type); a threefry key array
    ``key<fry>[s]`` is its key data ``u32[s, 2]``."""
    shape = getattr(jax_aval_, "shape", None)
    dtype = getattr(jax_aval_, "dtype", None)
    if shape is None or dtype is None:
        raise NotImplementedError(f"from_jax: abstract value {jax_aval_!r} is not an array type")
    dims = tuple(int(d) for d in shape)
    if is_jax_key_dtype(dtype):
        if str(dtype) != "key<fry>":
            raise NotImplementedError(f"from_jax: PRNG key dtype {dtype} (fcore.random implements threefry2x32 only)")
        return shaped_array((*dims, 2), dtypes.uint32)
    dt = np.dtype(dtype)
    if not dtypes.is_supported(dt):
        raise NotImplementedError(f"from_jax: dtype {dt} of {jax_aval_!r} is not supported by fcore")
    return shaped_array(dims, dt, bool(getattr(jax_aval_, "weak_type", False)))


def is_jax_closed_jaxpr(value: object) -> bool:
    return hasattr(value, "jaxpr") and hasattr(value, "consts") and hasattr(getattr(value, "jaxpr"), "eqns")


def _is_jax_open_jaxpr(value: object) -> bool:
    return hasattr(value, "eqns") and hasattr(value, "invars") and hasattr(value, "constvars")


def _is_literal(atom: object) -> bool:
    return hasattr(atom, "val")  # JAX's Var has no ``val``


def attr_seq(obj: object, name: str) -> list[object]:
    return list(getattr(obj, name))


class Converter:
    """Rebuilds one JAX jaxpr into a ``JaxprBuilder``; one instance per (nested) jaxpr."""

    __slots__ = ("builder", "consts", "env", "jax_invars", "key_typed")

    def __init__(self) -> None:
        self.builder = JaxprBuilder()
        self.consts: list[NpArray] = []
        self.env: dict[int, Atom] = {}
        #: The JAX operands of the equation being translated (custom rules refer to them).
        self.jax_invars: list[object] = []
        #: Whether that equation has typed PRNG key operands or results.
        self.key_typed = False

    def convert(self, jaxpr: object, consts: Sequence[object]) -> ClosedJaxpr:
        b = self.builder
        for v, c in zip(attr_seq(jaxpr, "constvars"), consts, strict=True):
            aval = jax_aval(getattr(v, "aval"))
            self.env[id(v)] = b.constvar(aval)
            self.consts.append(np.asarray(getattr(c, "_base_array", c)))  # a key array's data
        for v in attr_seq(jaxpr, "invars"):
            self.env[id(v)] = b.invar(jax_aval(getattr(v, "aval")))
        located: list[tuple[int, int, SourceInfo]] = []  # fcore equations [start, end) of a JAX one
        for i, eqn in enumerate(attr_seq(jaxpr, "eqns")):
            start = b.num_eqns
            name = str(getattr(getattr(eqn, "primitive"), "name"))
            self.jax_invars = attr_seq(eqn, "invars")
            self.key_typed = any(is_jax_key_dtype(getattr(getattr(v, "aval", None), "dtype", None))
                                 for v in [*self.jax_invars, *attr_seq(eqn, "outvars")])
            ins = [self.read(a) for a in self.jax_invars]
            out_avals = [jax_aval(getattr(v, "aval")) for v in attr_seq(eqn, "outvars")]
            params: Mapping[str, object] = getattr(eqn, "params")
            line = getattr(eqn, "line", None)  # set by the text reader
            where = f"JAX equation {i} ({name}{'' if line is None else f', line {line}'})"
            try:
                outs = self.equation(name, ins, params, out_avals)
            except NotImplementedError as e:
                raise NotImplementedError(f"from_jax: {where}: {e}") from None
            except JaxprTypeError as e:
                raise JaxprTypeError(f"from_jax: {where} is ill-typed for fcore: {e}") from None
            for v, o, want in zip(attr_seq(eqn, "outvars"), outs, out_avals, strict=True):
                got = o.aval
                if got.shape != want.shape or got.dtype != want.dtype:
                    raise TypeError(
                        f"from_jax: {where}: JAX types an output {want.jaxpr_text()}, "
                        f"fcore's abstract evaluation gives {got.jaxpr_text()}"
                    )
                self.env[id(v)] = o
            info = _source_info(getattr(eqn, "source_info", None))
            if info is not None and b.num_eqns > start:
                located.append((start, b.num_eqns, info))
        outs = [self.read(a) for a in attr_seq(jaxpr, "outvars")]
        closed = b.build_closed(outs, self.consts)
        if not located:
            return closed
        eqns = list(closed.jaxpr.eqns)
        for start, end, info in located:
            eqns[start:end] = [e.replace(source_info=info) for e in eqns[start:end]]
        return ClosedJaxpr(closed.jaxpr.replace(eqns=tuple(eqns)), closed.consts)

    def read(self, atom: object) -> Atom:
        if _is_literal(atom):
            aval = jax_aval(getattr(atom, "aval"))
            value = np.asarray(getattr(atom, "val"), aval.dtype)
            if aval.shape == ():
                return Literal.of(value, aval)
            return self.const(value.reshape(aval.shape), aval)  # array literals are constants in fcore
        return self.env[id(atom)]

    def const(self, value: NpArray, aval: ShapedArray | None = None) -> Var:
        var = self.builder.constvar(aval or shaped_array(value.shape, value.dtype))
        self.consts.append(value)
        return var

    def equation(
        self, name: str, ins: list[Atom], params: Mapping[str, object], out_avals: list[ShapedArray]
    ) -> list[Atom]:
        """Add the fcore equation(s) computing JAX's equation ``name``; return its results."""
        special = SPECIAL.get(name)
        if special is not None:
            return special(self, ins, params, out_avals)
        prim = lookup_primitive(name)
        if prim is None or prim is jit_p:
            raise NotImplementedError(f"JAX primitive '{name}' has no fcore counterpart")
        dropped = DROPPED.get(name, frozenset())
        new_params: dict[str, ParamValue] = {}
        for key, value in params.items():
            if prim.param_names is not None and key not in prim.param_names:
                if key in _PLACEMENT_PARAMS or key in dropped or value is None:
                    continue
                raise NotImplementedError(f"JAX parameter {key}={value!r} of '{name}' has no fcore equivalent")
            new_params[key] = convert_param(key, value)
        defaults = DEFAULTS.get(name)
        if defaults is not None:
            new_params = {**defaults(ins), **new_params}
        if self.key_typed:
            key_params = KEY_DATA_PARAMS.get(name)
            if key_params is None:
                raise NotImplementedError(f"'{name}' applied to typed PRNG keys")
            new_params = key_params(new_params, [a.aval for a in ins])
        if name in _ELEMENTWISE_NARY and out_avals:
            ins = [self.broadcast(a, out_avals[0].shape) for a in ins]
        return list(self.builder.eqn(prim, ins, **new_params))

    def broadcast(self, a: Atom, shape: tuple[int, ...]) -> Atom:
        """``a`` broadcast to ``shape`` NumPy-style, unless it is rank-0 or already has it."""
        s = a.aval.shape
        if s == () or s == shape:
            return a
        prim = lookup_primitive("broadcast_in_dim")
        assert prim is not None
        dims = tuple(range(len(shape) - len(s), len(shape)))
        (out,) = self.builder.eqn(prim, [a], shape=shape, broadcast_dimensions=dims)
        return out

    def inline(self, inner: ClosedJaxpr, ins: Sequence[Atom]) -> list[Atom]:
        """Replay ``inner``'s equations here (its consts become constants of this jaxpr)."""
        sub: dict[int, Atom] = {}
        for v, c in zip(inner.jaxpr.constvars, inner.consts):
            sub[id(v)] = self.const(np.asarray(c), v.aval)
        for v, a in zip(inner.jaxpr.invars, ins, strict=True):
            sub[id(v)] = a
        for e in inner.jaxpr.eqns:
            outs = self.builder.eqn(e.primitive, [_sub(sub, a) for a in e.invars], **e.params)
            for v, o in zip(e.outvars, outs):
                sub[id(v)] = o
        return [_sub(sub, a) for a in inner.jaxpr.outvars]


#: Path parts of JAX's own files: a frame in them is not the user's line.
_LIBRARY_PARTS = (f"{os.sep}jax{os.sep}", f"{os.sep}jaxlib{os.sep}", f"{os.sep}fcore{os.sep}")


def _source_info(jax_info: object) -> SourceInfo | None:
    """JAX's ``source_info`` as fcore's: the innermost frame outside JAX (JAX's user frame) and
    the name stack (``named_scope`` names and transformations)."""
    if jax_info is None:
        return None
    traceback = getattr(jax_info, "traceback", None)
    frames = list(getattr(traceback, "frames", None) or ())
    user = next((f for f in frames if not any(p in str(getattr(f, "file_name", "")) for p in _LIBRARY_PARTS)), None)
    frame = None
    if user is not None:
        line = int(getattr(user, "line_num", 0) or 0)
        frame = Frame(str(getattr(user, "file_name")), str(getattr(user, "function_name", "")), line, 0, line, 0)
    stack = tuple(  # JAX's entries are Scope(name) and Transform(name)
        Transform(str(getattr(n, "name", n))) if type(n).__name__ == "Transform" else str(getattr(n, "name", n))
        for n in getattr(getattr(jax_info, "name_stack", None), "stack", ())
    )
    if frame is None and not stack:
        return None
    return SourceInfo(frame, stack)


def _sub(sub: dict[int, Atom], a: Atom) -> Atom:
    return sub[id(a)] if isinstance(a, Var) else a


def _convert_enum(key: str, value: enum.Enum) -> ParamValue:
    """A JAX enum member as fcore's enum of the same class name (``Precision``,
    ``GatherScatterMode``), or as its integer value for ``IntEnum`` s fcore takes as ints."""
    cls = find_param_enum(type(value).__name__)
    if not isinstance(cls, str) and value.name in cls.__members__:
        return cls[value.name]
    if isinstance(value, int):  # IntEnums such as RoundingMethod: fcore takes the int
        return int(value)
    raise NotImplementedError(f"JAX parameter {key}={value!r}: enum {type(value).__name__} has no fcore equivalent")


def convert_param(key: str, value: object) -> ParamValue:
    """A JAX parameter value as an fcore ``ParamValue``: lists become tuples, NumPy scalars
    Python's, enums and named tuples (dimension numbers) fcore's classes of the same name,
    nested jaxprs fcore's."""
    if value is None or isinstance(value, (bool, str, np.dtype, ParamStruct)):
        return value
    if isinstance(value, enum.Enum):
        return _convert_enum(key, value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (complex, np.complexfloating)):
        return complex(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple: dimension numbers
        cls = find_param_struct(type(value).__name__)
        if isinstance(cls, str):
            raise NotImplementedError(f"JAX parameter {key}={value!r}: {cls}")
        fields: Mapping[str, object] = getattr(value, "_asdict")()
        return cls(**{k: convert_param(k, v) for k, v in fields.items()})
    if isinstance(value, (list, tuple)):
        if key == "precision" and len(value) == 2:
            return tuple(Precision.DEFAULT if p is None else convert_param(key, p) for p in value)
        return tuple(convert_param(key, v) for v in value)
    if key == "select_prim" and hasattr(value, "bind"):  # JAX holds the comparison primitive, fcore its name
        return str(getattr(value, "name"))
    if is_jax_closed_jaxpr(value):
        return convert_closed(value)
    if _is_jax_open_jaxpr(value):
        return convert_open(value)
    raise NotImplementedError(f"JAX parameter {key}={value!r} ({type(value).__name__}) has no fcore equivalent")


#: How to translate one JAX primitive: ``(converter, operands, JAX params, JAX out avals) -> results``.
Special = Callable[[Converter, list[Atom], Mapping[str, object], list[ShapedArray]], list[Atom]]

#: Translations of JAX primitives whose fcore form differs (filled by ``_jax_calls``, ``_jax_random``).
SPECIAL: dict[str, Special] = {}
