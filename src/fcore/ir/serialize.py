"""Jaxprs as bytes: ``pickle`` support, and ``serialize``/``deserialize``, a stable, versioned
format that holds the constants (docs/ir.md, "Serialization").

Pickling: an equation refers to its ``Primitive``, whose rules are functions (often local
ones), so a primitive pickles *by its registered name* (``reduce_primitive``; ``copyreg`` for
the IR's class, ``__reduce__`` in ``fcore.core.Primitive``) and unpickles as the
primitive registered under that name (fcore's own are registered when ``fcore`` is
imported). Everything else in a jaxpr is plain data.

``serialize`` writes::

    b"FCORE-JAXPR\\n"                          magic
    u32 version                               (little-endian; this module writes 1)
    u32 n, then n bytes of UTF-8 JSON         {"text": str(jaxpr), "consts": [{"dtype", "shape"}],
                                               "source_info": [...] (optional: per equation, nested
                                               ones in order, [frame fields, name stack] or null)}
    the constants' raw little-endian bytes, one after the other

The jaxpr is kept as fcore's text (SPEC §3.5; ``parse_jaxpr(str(j)) == j``), so a file stays
readable and survives changes of fcore's Python classes; the constants are kept exactly
(raw bytes with fcore's dtype names, so ``bfloat16`` and the narrow floats survive too).
"""

from __future__ import annotations

import copyreg
import importlib
import json
import pickle
import struct
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from fcore.errors import FcoreError
from fcore.ir import dtypes
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Var
from fcore.ir.effects import Effects
from fcore.ir.params import Params, ParamStruct, ParamValue, make_params
from fcore.ir.parser import parse_jaxpr
from fcore.ir.primitive import Primitive, lookup_primitive
from fcore.ir.source_info import Frame, SourceInfo, Transform
from fcore.ir.typecheck import typecheck

__all__ = ["serialize", "deserialize", "SerializationError", "FORMAT_VERSION", "primitive_named", "reduce_primitive"]

MAGIC = b"FCORE-JAXPR\n"
#: The version ``serialize`` writes; ``deserialize`` reads versions up to it.
FORMAT_VERSION = 1


class SerializationError(FcoreError, ValueError):
    """A jaxpr that cannot be serialized (a parameter holding a Python function), or bytes that
    are not a serialized jaxpr of a version this fcore reads."""


# -- pickling primitives by name ----------------------------------------------------------------
def primitive_named(name: str) -> Primitive:
    """The primitive registered under ``name`` (what a pickled primitive becomes)."""
    prim = lookup_primitive(name)
    if prim is None:
        importlib.import_module("fcore")  # registers fcore's own primitives
        prim = lookup_primitive(name)
    if prim is None:
        raise SerializationError(f"no primitive is registered under the name {name!r} (define it before unpickling)")
    return prim


def reduce_primitive(prim: Primitive) -> tuple[Callable[[str], Primitive], tuple[str]]:
    """``__reduce__`` of a primitive: rebuilt by ``primitive_named(prim.name)``."""
    if lookup_primitive(prim.name) is not prim:
        raise pickle.PicklingError(
            f"primitive {prim.name!r} is not the one registered under its name, so it cannot be pickled by name"
        )
    return primitive_named, (prim.name,)




# -- serialize / deserialize -------------------------------------------------------------------
def serialize(closed: ClosedJaxpr) -> bytes:
    """``closed`` as bytes (format in the module docstring); ``deserialize`` reads them back to
    a structurally equal ``ClosedJaxpr`` with equal constants. Raises ``SerializationError`` for
    parameters the text cannot hold (custom-derivative rules, nested jaxprs with constants)."""
    if not isinstance(closed, ClosedJaxpr):
        raise TypeError(f"serialize expects a ClosedJaxpr, got {type(closed).__name__}")
    _check_serializable(closed.jaxpr)
    consts = [np.asarray(c) for c in closed.consts]
    for k, (v, c) in enumerate(zip(closed.jaxpr.constvars, consts)):
        if c.shape != v.aval.shape or c.dtype != v.aval.dtype:
            raise SerializationError(f"const {k} is {c.dtype}{list(c.shape)} but its constvar is {v.aval.jaxpr_text()}")
    header: dict[str, Any] = {
        "text": str(closed.jaxpr),
        "consts": [{"dtype": dtypes.dtype_name(c.dtype), "shape": list(c.shape)} for c in consts],
    }
    infos = [_encode_source_info(e.source_info) for e in _equations(closed.jaxpr)]
    if any(info is not None for info in infos):
        header["source_info"] = infos
    head = json.dumps(header).encode()
    parts = [MAGIC, struct.pack("<II", FORMAT_VERSION, len(head)), head]
    parts += [np.ascontiguousarray(c, c.dtype.newbyteorder("<")).tobytes() for c in consts]
    return b"".join(parts)


def deserialize(data: bytes) -> ClosedJaxpr:
    """The ``ClosedJaxpr`` that ``serialize`` wrote into ``data`` (type-checked)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize expects bytes, got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(MAGIC):
        raise SerializationError("not a serialized fcore jaxpr (the magic bytes are missing)")
    offset = len(MAGIC)
    if len(data) < offset + 8:
        raise SerializationError("truncated serialized jaxpr (no header)")
    version, n = struct.unpack_from("<II", data, offset)
    if version > FORMAT_VERSION or version < 1:
        raise SerializationError(f"serialized jaxpr of format version {version}; this fcore reads 1 to {FORMAT_VERSION}")
    offset += 8
    try:
        header = json.loads(data[offset : offset + n].decode())
        text, specs = header["text"], header["consts"]
    except (ValueError, KeyError, TypeError) as e:
        raise SerializationError(f"malformed header of a serialized jaxpr: {e}") from None
    offset += n
    jaxpr = parse_jaxpr(text)
    infos = header.get("source_info")
    if infos is not None:
        try:
            decoded = [_decode_source_info(info) for info in infos]
        except (ValueError, TypeError, IndexError) as e:
            raise SerializationError(f"malformed source_info in a serialized jaxpr: {e}") from None
        if len(decoded) != sum(1 for _ in _equations(jaxpr)):
            raise SerializationError("source_info does not match the jaxpr's equations")
        jaxpr = _with_source_info(jaxpr, iter(decoded))
    consts: list[np.ndarray[Any, Any]] = []
    for spec in specs:
        dtype = dtypes.to_dtype(spec["dtype"])
        shape = tuple(int(d) for d in spec["shape"])
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if offset + size > len(data):
            raise SerializationError("truncated serialized jaxpr (constants)")
        raw = np.frombuffer(data, dtype.newbyteorder("<"), count=size // dtype.itemsize if dtype.itemsize else 0,
                            offset=offset)
        consts.append(raw.astype(dtype).reshape(shape))
        offset += size
    if offset != len(data):
        raise SerializationError(f"{len(data) - offset} stray bytes after the serialized jaxpr")
    if len(consts) != len(jaxpr.constvars):
        raise SerializationError(f"{len(jaxpr.constvars)} constvars but {len(consts)} constants")
    closed = ClosedJaxpr(jaxpr, tuple(consts))
    typecheck(closed)
    return closed


# -- source locations: one per equation, in the order ``_equations`` visits them --------------------
def _nested(params: Params) -> list[ClosedJaxpr | Jaxpr]:
    """The jaxprs in ``params``, in a fixed order (keys sorted, tuples in order)."""
    return [v for key in sorted(params) for v in _flat(params[key]) if isinstance(v, (ClosedJaxpr, Jaxpr))]


def _equations(jaxpr: Jaxpr) -> Iterator[JaxprEqn]:
    """Every equation, nested ones included: each followed by those of the jaxprs in its params."""
    stack: list[Iterator[JaxprEqn]] = [iter(jaxpr.eqns)]
    while stack:
        eqn = next(stack[-1], None)
        if eqn is None:
            stack.pop()
            continue
        yield eqn
        for inner in reversed(_nested(eqn.params)):
            stack.append(iter((inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner).eqns))


def _with_source_info(jaxpr: Jaxpr, infos: Iterator[SourceInfo | None]) -> Jaxpr:
    """``jaxpr`` with the source locations of ``infos`` (in ``_equations`` order)."""
    eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        info = next(infos)
        params = eqn.params
        if _nested(params):
            rebuilt = {key: _rebuild_jaxprs(params[key], infos) for key in sorted(params)}
            params = Params({key: rebuilt[key] for key in params})
        eqns.append(eqn.replace(source_info=info, params=params))
    return jaxpr.replace(eqns=tuple(eqns))


def _rebuild_jaxprs(value: ParamValue, infos: Iterator[SourceInfo | None]) -> ParamValue:
    """``value`` with each jaxpr in it given its source locations (in ``_nested`` order)."""
    if isinstance(value, tuple):
        return tuple(_rebuild_jaxprs(v, infos) for v in value)
    if isinstance(value, ClosedJaxpr):
        return ClosedJaxpr(_with_source_info(value.jaxpr, infos), value.consts)
    if isinstance(value, Jaxpr):
        return _with_source_info(value, infos)
    return value


def _encode_source_info(info: SourceInfo | None) -> list[Any] | None:
    if info is None:
        return None
    frame = info.frame
    names = [["transform", str(n)] if isinstance(n, Transform) else str(n) for n in info.name_stack]
    return [None if frame is None else list(frame), names]


def _decode_source_info(data: list[Any] | None) -> SourceInfo | None:
    if data is None:
        return None
    frame, names = data
    stack = tuple(Transform(n[1]) if isinstance(n, list) else str(n) for n in names)
    return SourceInfo(None if frame is None else Frame(str(frame[0]), str(frame[1]), *map(int, frame[2:6])), stack)


def _check_serializable(jaxpr: Jaxpr) -> None:
    """Refuse what the text cannot hold, naming the equation (iteratively over nested jaxprs)."""
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for i, eqn in enumerate(j.eqns):
            for key, value in eqn.params.items():
                for v in _flat(value):
                    if isinstance(v, ClosedJaxpr):
                        if v.consts:
                            raise SerializationError(
                                f"equation {i} ({eqn.primitive.name}): parameter {key} is a jaxpr with constants, "
                                "which the text format does not hold (hoist them into operands)"
                            )
                        stack.append(v.jaxpr)
                    elif isinstance(v, Jaxpr):
                        stack.append(v)
                    elif isinstance(v, ParamStruct) and not _printable_struct(v):
                        raise SerializationError(
                            f"equation {i} ({eqn.primitive.name}): parameter {key}={v!r} holds a Python function "
                            "(a custom rule), which cannot be serialized"
                        )


def _flat(value: ParamValue) -> list[ParamValue]:
    if isinstance(value, tuple):
        return [x for v in value for x in _flat(v)]
    return [value]


def _printable_struct(value: ParamStruct) -> bool:
    """Structs print as ``Name(field=value, ...)`` and parse back; rule holders print as a bare name."""
    return repr(value).startswith(type(value).__name__ + "(")


def _reduce_params(params: Params) -> tuple[Callable[[dict[str, ParamValue]], Params], tuple[dict[str, ParamValue]]]:
    return make_params, (params.as_dict(),)  # immutable: rebuilt from its items, not attribute by attribute


def _reduce_jaxpr(jaxpr: Jaxpr) -> tuple[Callable[..., Jaxpr], tuple[object, ...]]:
    """A jaxpr pickles without its cached structural key: that holds ``id()``s and tokens of
    this process, which would make an unpickled copy unequal to the same program traced again."""
    return _make_jaxpr, (jaxpr.constvars, jaxpr.invars, jaxpr.outvars, jaxpr.eqns, jaxpr.effects)


def _make_jaxpr(
    constvars: tuple[Var, ...], invars: tuple[Var, ...], outvars: tuple[Atom, ...], eqns: tuple[JaxprEqn, ...],
    effects: Effects,
) -> Jaxpr:
    return Jaxpr(constvars, invars, outvars, eqns, effects=effects)


# The IR's own class pickles by name too (fcore.core.Primitive, its subclass, has ``__reduce__``).
copyreg.pickle(Primitive, reduce_primitive)
copyreg.pickle(Params, _reduce_params)
copyreg.pickle(Jaxpr, _reduce_jaxpr)
