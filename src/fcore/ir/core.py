"""The IR: variables, literals, equations, jaxprs and closed jaxprs — frozen values.

Variables have identity (two ``Var`` s with the same aval are different variables);
jaxprs compare and hash *structurally*, up to a consistent renaming of variables.
Names are assigned when printing, never stored.
"""

from __future__ import annotations

import hashlib
import math
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.effects import NO_EFFECTS, Effects, union
from fcore.ir.params import EMPTY_PARAMS, Params, ParamValue, make_params
from fcore.ir.primitive import Primitive
from fcore.ir.source_info import SourceInfo

if TYPE_CHECKING:
    from fcore.ir.typecheck import JaxprType


# Constructors of the per-equation values (``Var``, ``JaxprEqn``) are written by hand: attrs'
# generated ``__init__`` of a frozen class sets each field through a bound ``object.__setattr__``
# (a name lookup per field); these set the slots directly, about 40% less per value. Tracing and
# eager ``grad`` build one or two of each per operation.


@attrs.frozen(slots=True, eq=False, repr=False, init=False)
class Var:
    """A variable: identity-compared, typed by its aval."""

    aval: ShapedArray

    def __init__(self, aval: ShapedArray) -> None:
        _set_var_aval(self, aval)

    def __repr__(self) -> str:
        return f"Var({self.aval.jaxpr_text()})"

    def replace(self, **changes: Any) -> Var:
        return attrs.evolve(self, **changes)


LiteralScalar: TypeAlias = Union[bool, int, float, complex]


def _literal_key(val: np.generic, aval: ShapedArray) -> tuple[object, ...]:
    # Bytes, not values: NaN literals must equal themselves and -0.0 differ from 0.0.
    return (aval, val.tobytes() if val.dtype == aval.dtype else np.asarray(val, aval.dtype).tobytes())


@attrs.frozen(slots=True, eq=False, repr=False)
class Literal:
    """A scalar constant written inline in an equation (``2.0:f32[]``).

    ``val`` is stored as a NumPy scalar of the aval's dtype: ``Literal(1.0, f32_aval)``
    (a Python scalar, as JAX accepts) holds ``np.float32(1.0)``.
    """

    val: np.generic
    aval: ShapedArray

    def __attrs_post_init__(self) -> None:
        val: object = self.val
        if type(val) is not self.aval.dtype.type:
            object.__setattr__(self, "val", np.asarray(val, self.aval.dtype)[()])

    @staticmethod
    def of(value: LiteralScalar | np.generic | np.ndarray[Any, Any], aval: ShapedArray) -> Literal:
        if aval.shape != ():
            raise ValueError(f"literals must be scalars, got aval {aval.jaxpr_text()}")
        arr = np.asarray(value, dtype=aval.dtype)
        return Literal(arr.dtype.type(arr), aval)

    def key(self) -> tuple[object, ...]:
        return _literal_key(self.val, self.aval)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal):
            return NotImplemented
        return self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def format_value(self) -> str:
        return format_scalar(self.val, self.aval.dtype)

    def __repr__(self) -> str:
        return f"Literal({self.format_value()}:{self.aval.jaxpr_text()})"

    def __str__(self) -> str:
        return f"{self.format_value()}:{self.aval.jaxpr_text()}"

    def replace(self, **changes: Any) -> Literal:
        return attrs.evolve(self, **changes)


def format_scalar(val: object, dtype: dtypes.DType) -> str:
    """Python-like text of a scalar that the parser reads back exactly."""
    arr = np.asarray(val, dtype)
    if dtypes.is_bool(dtype):
        return "True" if bool(arr) else "False"
    if dtypes.is_integer(dtype):
        return str(int(arr))
    if dtypes.is_complex(dtype):
        c = complex(arr)
        sign = "-" if math.copysign(1.0, c.imag) < 0 else "+"
        return f"({_format_float(c.real)}{sign}{_format_float(abs(c.imag))}j)"
    if arr.dtype == np.float64:
        return _format_float(float(arr))
    x = float(arr.astype(np.float64))
    if not math.isfinite(x):
        return _format_float(x)
    # NumPy's shortest text that round-trips in this precision (0.9, not 0.899999976),
    # positional or scientific by Python's repr rule.
    scalar: np.floating[Any] = arr.dtype.type(arr)
    if x == 0 or 1e-4 <= abs(x) < 1e16:
        return np.format_float_positional(scalar, unique=True, trim="0")
    return np.format_float_scientific(scalar, unique=True, trim="0")


def _format_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


Atom: TypeAlias = Union[Var, Literal]


@attrs.frozen(slots=True, repr=False, init=False)
class JaxprEqn:
    """One equation ``outvars = primitive[params] invars``.

    ``source_info`` (the user's line that bound it and its ``named_scope`` names, or ``None``)
    is provenance only: equality and hashing ignore it.
    """

    primitive: Primitive
    invars: tuple[Atom, ...]
    outvars: tuple[Var, ...]
    params: Params = EMPTY_PARAMS
    source_info: SourceInfo | None = attrs.field(default=None, eq=False)

    def __init__(
        self,
        primitive: Primitive,
        invars: tuple[Atom, ...],
        outvars: tuple[Var, ...],
        params: Params = EMPTY_PARAMS,
        source_info: SourceInfo | None = None,
    ) -> None:
        _set_eqn_primitive(self, primitive)
        _set_eqn_invars(self, invars)
        _set_eqn_outvars(self, outvars)
        _set_eqn_params(self, params)
        _set_eqn_source_info(self, source_info)

    def replace(self, **changes: Any) -> JaxprEqn:
        if "params" in changes:
            changes["params"] = make_params(changes["params"])
        return attrs.evolve(self, **changes)

    @property
    def effects(self) -> Effects:
        """What the equation does besides computing its results (see ``fcore.ir.effects``)."""
        return eqn_effects(self.primitive, self.params)

    def __repr__(self) -> str:
        from fcore.ir.printer import pp_eqn_standalone

        return pp_eqn_standalone(self)


_set_var_aval = Var.__dict__["aval"].__set__
_set_eqn_primitive, _set_eqn_invars, _set_eqn_outvars, _set_eqn_params, _set_eqn_source_info = (
    JaxprEqn.__dict__[name].__set__ for name in ("primitive", "invars", "outvars", "params", "source_info")
)


def eqn_effects(primitive: Primitive, params: Params) -> Effects:
    """The effects of an equation: its primitive's effects rule, else those of the jaxprs in its
    parameters (how calls and control flow propagate their bodies' effects)."""
    rule = primitive.effects_rule
    if rule is not None:
        return rule(**params)
    if not params:
        return NO_EFFECTS
    found: list[Effects] = []
    for value in params.values():
        _nested_effects(value, found)
    return union(found) if found else NO_EFFECTS


def _nested_effects(value: object, found: list[Effects]) -> None:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        if value.effects:
            found.append(value.effects)
    elif type(value) is tuple:
        for v in value:
            if isinstance(v, (tuple, Jaxpr, ClosedJaxpr)):
                _nested_effects(v, found)


def new_eqn(
    primitive: Primitive,
    invars: Sequence[Atom],
    outvars: Sequence[Var],
    params: Params | dict[str, ParamValue] | None = None,
    source_info: SourceInfo | None = None,
) -> JaxprEqn:
    return JaxprEqn(primitive, tuple(invars), tuple(outvars), make_params(params or EMPTY_PARAMS), source_info)


# Field converters (``tuple(t)`` of a tuple is the tuple itself: no copy on the common path).
def _var_tuple(xs: Iterable[Var]) -> tuple[Var, ...]:
    return tuple(xs)


def _atom_tuple(xs: Iterable[Atom]) -> tuple[Atom, ...]:
    return tuple(xs)


def _eqn_tuple(xs: Iterable[JaxprEqn]) -> tuple[JaxprEqn, ...]:
    return tuple(xs)


def _const_tuple(xs: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(xs)


@attrs.frozen(slots=True, eq=False, repr=False)
class Jaxpr:
    """An open jaxpr: ``{ lambda constvars ; invars . let eqns in outvars }``.

    Equality and hashing are structural (alpha-equivalence), computed in one linear
    pass and cached. Sequences given for the fields are stored as tuples.
    """

    constvars: tuple[Var, ...] = attrs.field(converter=_var_tuple)
    invars: tuple[Var, ...] = attrs.field(converter=_var_tuple)
    outvars: tuple[Atom, ...] = attrs.field(converter=_atom_tuple)
    eqns: tuple[JaxprEqn, ...] = attrs.field(converter=_eqn_tuple)
    #: The declared effects; ``None`` (the default) means the union of the equations' effects.
    _effects: Effects | None = attrs.field(default=None, alias="effects", repr=False)
    #: ``[]``, ``[structural key]``, or ``[key, token]`` once the jaxpr is nested in another's key.
    _key: list[Any] = attrs.field(factory=list, init=False, repr=False)

    @property
    def effects(self) -> Effects:
        """The jaxpr's effects (a frozen set; empty for a pure program), as JAX's ``Jaxpr.effects``."""
        effects = self._effects
        if effects is None:
            effects = union(e.effects for e in self.eqns)
            object.__setattr__(self, "_effects", effects)
        return effects

    def structural_key(self) -> tuple[object, ...]:
        """A value equal for alpha-equivalent jaxprs (variables numbered by binding order)."""
        cached = self._key
        if not cached:
            _tokenize_nested(self)
            self.effects  # computed after the nested jaxprs' effects, so without deep recursion
            cached.append(_structural_key(self))
        key: tuple[object, ...] = cached[0]
        return key

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Jaxpr):
            return NotImplemented
        return self.structural_key() == other.structural_key()

    def __hash__(self) -> int:
        return hash(self.structural_key())

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def replace(self, **changes: Any) -> Jaxpr:
        if "eqns" in changes and "effects" not in changes:
            changes["effects"] = None  # recomputed from the new equations
        return attrs.evolve(self, **changes)

    def fingerprint(self) -> str:
        """A hex digest stable across processes: equal for alpha-equivalent jaxprs."""
        return hashlib.sha256(str(self).encode()).hexdigest()

    def __str__(self) -> str:
        from fcore.ir.printer import pp_jaxpr

        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, *, source_info: bool = False, print_shapes: bool = True, name_stack: bool = False) -> str:
        """The text, optionally with each equation's user line and name stack (JAX's options)."""
        from fcore.ir.printer import pp_jaxpr

        return pp_jaxpr(self, source_info=source_info, print_shapes=print_shapes, name_stack=name_stack)

    def typecheck(self) -> JaxprType:
        from fcore.ir.typecheck import typecheck

        return typecheck(self)


def make_jaxpr_value(
    constvars: Sequence[Var], invars: Sequence[Var], outvars: Sequence[Atom], eqns: Sequence[JaxprEqn]
) -> Jaxpr:
    return Jaxpr(tuple(constvars), tuple(invars), tuple(outvars), tuple(eqns))


def _structural_key(jaxpr: Jaxpr) -> tuple[object, ...]:
    """The key of one jaxpr, its nested jaxprs standing for their interned tokens.

    ``Jaxpr.structural_key`` first gives every nested jaxpr a token, innermost first and without
    recursion (``_tokenize_nested``), so that nesting depth costs neither stack nor repeated work.
    """
    numbers: dict[int, int] = {}

    def bind(v: Var) -> int:
        n = len(numbers)
        numbers[id(v)] = n
        return n

    def use(a: Atom) -> object:
        if isinstance(a, Literal):
            return a.key()
        n = numbers.get(id(a))
        return ("free", id(a)) if n is None else n

    header = (
        tuple((bind(v), v.aval) for v in jaxpr.constvars),
        tuple((bind(v), v.aval) for v in jaxpr.invars),
    )
    eqn_keys = []
    for e in jaxpr.eqns:
        ins = tuple(use(a) for a in e.invars)
        outs = tuple((bind(v), v.aval) for v in e.outvars)
        params = e.params
        if params and any(_holds_jaxpr(v) for v in params.values()):
            params = Params({k: _tokenized(v) for k, v in params.items()})
        eqn_keys.append((e.primitive.name, id(e.primitive), ins, outs, params))
    return (header, tuple(eqn_keys), tuple(use(a) for a in jaxpr.outvars), jaxpr.effects)


class _JaxprToken:
    """Stands for one class of alpha-equivalent jaxprs inside the keys of jaxprs that nest them:
    equal nested jaxprs share a token, so comparing the outer keys never descends into them."""

    __slots__ = ("__weakref__",)


#: Structural key -> token, for the jaxprs that some live jaxpr nests.
_tokens: weakref.WeakValueDictionary[tuple[object, ...], _JaxprToken] = weakref.WeakValueDictionary()


@attrs.frozen(slots=True, eq=False)
class _ConstsKey:
    """A closed jaxpr's constants inside a key: equal as ``ClosedJaxpr.__eq__`` compares them."""

    consts: tuple[Any, ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ConstsKey) or len(self.consts) != len(other.consts):
            return False
        return all(_const_equal(a, b) for a, b in zip(self.consts, other.consts))

    def __hash__(self) -> int:
        return len(self.consts)


def _holds_jaxpr(value: object) -> bool:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return True
    return type(value) is tuple and any(_holds_jaxpr(v) for v in value)


def _tokenized(value: Any) -> Any:
    """A parameter value with each nested jaxpr replaced by its token (already assigned)."""
    if isinstance(value, Jaxpr):
        return value._key[1]
    if isinstance(value, ClosedJaxpr):
        return (value.jaxpr._key[1], _ConstsKey(value.consts))
    if type(value) is tuple and _holds_jaxpr(value):
        return tuple(_tokenized(v) for v in value)
    return value


def _nested_jaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    for e in jaxpr.eqns:
        if e.params:
            for value in e.params.values():
                yield from _jaxprs_in(value)


def _jaxprs_in(value: object) -> Iterator[Jaxpr]:
    if isinstance(value, ClosedJaxpr):
        yield value.jaxpr
    elif isinstance(value, Jaxpr):
        yield value
    elif type(value) is tuple:
        for v in value:
            if isinstance(v, (tuple, Jaxpr, ClosedJaxpr)):
                yield from _jaxprs_in(v)


def _tokenize_nested(root: Jaxpr) -> None:
    """Give every jaxpr nested in ``root`` its key and token, innermost first, with an explicit
    stack: a chain of thousands of nested calls must not reach Python's recursion limit."""
    stack: list[tuple[Jaxpr, Iterator[Jaxpr]]] = [(root, _nested_jaxprs(root))]
    seen: set[int] = set()
    while stack:
        node, children = stack[-1]
        for child in children:
            if len(child._key) < 2 and id(child) not in seen:
                seen.add(id(child))
                stack.append((child, _nested_jaxprs(child)))
                break
        else:
            stack.pop()
            if node is not root:
                node.effects  # its children's effects are cached by now: no deep recursion
                key = node._key[0] if node._key else _structural_key(node)
                token = _tokens.get(key)
                if token is None:
                    token = _tokens[key] = _JaxprToken()
                node._key[:] = [key, token]


class ConstValue(Protocol):
    """What a closed jaxpr's constant must offer: a shape and a dtype."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def dtype(self) -> np.dtype[Any]: ...


@attrs.frozen(slots=True, eq=False, repr=False)
class ClosedJaxpr:
    """A jaxpr with values for its constvars."""

    jaxpr: Jaxpr
    consts: tuple[Any, ...] = attrs.field(default=(), converter=_const_tuple)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> tuple[JaxprEqn, ...]:
        return self.jaxpr.eqns

    @property
    def literals(self) -> tuple[Any, ...]:
        """The constants under JAX's older name (``closed_jaxpr.literals``, as the tutorials use it)."""
        return self.consts

    @property
    def effects(self) -> Effects:
        return self.jaxpr.effects

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, ClosedJaxpr):
            return NotImplemented
        if self.jaxpr != other.jaxpr or len(self.consts) != len(other.consts):
            return False
        return all(_const_equal(a, b) for a, b in zip(self.consts, other.consts))

    def __hash__(self) -> int:
        return hash((self.jaxpr, len(self.consts)))

    def replace(self, **changes: Any) -> ClosedJaxpr:
        return attrs.evolve(self, **changes)

    def fingerprint(self) -> str:
        """Stable digest of the jaxpr and the constant values."""
        h = hashlib.sha256(str(self.jaxpr).encode())
        for c in self.consts:
            arr = np.asarray(c)
            h.update(str((arr.dtype, arr.shape)).encode())
            h.update(arr.tobytes())
        return h.hexdigest()

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, *, source_info: bool = False, print_shapes: bool = True, name_stack: bool = False) -> str:
        return self.jaxpr.pretty_print(source_info=source_info, print_shapes=print_shapes, name_stack=name_stack)


def _const_equal(a: object, b: object) -> bool:
    if a is b:
        return True
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return False
    return x.dtype == y.dtype and x.shape == y.shape and bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
