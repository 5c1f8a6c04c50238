"""Equation parameters: an immutable, hashable mapping of typed values.

Principle 8 of the design: params are typed, not ``dict[str, Any]``. A parameter
value is one of the few kinds listed in ``ParamValue``; nested jaxprs are values too.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
import pickle
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, Union

import attrs
import numpy as np
from typing_extensions import Self, TypeAlias

if TYPE_CHECKING:
    from fcore.ir.core import ClosedJaxpr, Jaxpr


class ParamStruct:
    """Base for frozen attrs classes used as parameter values (e.g. gather dimension numbers).

    Subclasses must be hashable and comparable, and print as ``Name(field=value, ...)``.
    """

    __slots__ = ()


class ByIdentity(ParamStruct):
    """A parameter value holding a Python callable (a custom rule, a host callback): equal only
    to itself, printed as its name, shared rather than copied, and refused by pickle (a Python
    function has no faithful serialized form). Subclasses add their typed fields and set
    ``what``, the kind of callable the pickling error names."""

    __slots__ = ("name",)

    #: e.g. ``"custom rule"``: ``a jaxpr holding the custom rule 'f_jvp' cannot be pickled``.
    what: ClassVar[str]

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return self.name

    def __copy__(self) -> Self:
        return self  # compared by identity: a copy is the same value

    def __deepcopy__(self, memo: object) -> Self:
        return self

    def __reduce__(self) -> NoReturn:
        raise pickle.PicklingError(
            f"a jaxpr holding the {self.what} {self.name!r} cannot be pickled: it is a Python function"
        )


ParamValue: TypeAlias = Union[
    None,
    bool,
    int,
    float,
    complex,
    str,
    "np.dtype[Any]",
    enum.Enum,
    "Jaxpr",
    "ClosedJaxpr",
    ParamStruct,
    tuple["ParamValue", ...],
]


class Params(Mapping[str, ParamValue]):
    """A frozen ``str -> ParamValue`` mapping; equal and hashable by content."""

    __slots__ = ("_items", "_hash")

    _items: dict[str, ParamValue]
    _hash: int | None

    def __init__(self, items: Mapping[str, ParamValue] | None = None) -> None:
        object.__setattr__(self, "_items", dict(items) if items else {})
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Params is immutable")

    def __getitem__(self, key: str) -> ParamValue:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(tuple(sorted(self._items.items(), key=lambda kv: kv[0])))
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Params):
            return NotImplemented
        return self._items == other._items or (
            self._items.keys() == other._items.keys()
            and all(_same_value(self._items[k], other._items[k]) for k in self._items)
        )

    def replace(self, **changes: ParamValue) -> Params:
        new = dict(self._items)
        new.update(changes)
        return Params(new)

    def as_dict(self) -> dict[str, ParamValue]:
        """A fresh mutable copy, e.g. for ``rule(**params.as_dict())``."""
        return dict(self._items)

    def __repr__(self) -> str:
        return f"Params({self._items!r})"


def _same_value(a: ParamValue, b: ParamValue) -> bool:
    """Equality where a NaN equals NaN (a ``fill_value=nan`` param must equal its parsed copy)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


EMPTY_PARAMS = Params()


def make_params(params: Mapping[str, ParamValue]) -> Params:
    """Share one empty ``Params`` between all parameterless equations."""
    if not params:
        return EMPTY_PARAMS
    if isinstance(params, Params):
        return params
    return Params(params)


@attrs.frozen(kw_only=True)
class NoParams:
    """The parameter schema of a primitive that takes no parameters (``params=NoParams``)."""
