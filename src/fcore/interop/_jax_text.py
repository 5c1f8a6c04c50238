"""JAX's jaxpr text in: what ``str(jax.make_jaxpr(f)(...))`` prints, read into objects shaped
like JAX's (duck-typed for ``from_jax``'s converter), then converted like a live JAX jaxpr.

JAX's text differs from fcore's (docs/ir.md, "Differences from JAX's text"), and the reader
follows JAX's printer: an equation's arguments may continue on the next line (an equation
starts at ``name:type ... =``), parameter values are Python-like with lists, ``None``, dtypes,
enum members (``GatherScatterMode.CLIP``), named tuples (``GatherDimensionNumbers(...)``),
NumPy reprs (``np.int64(1)``), bare names (``name=<lambda>``) and nested ``{ lambda ... }``
jaxprs; jaxprs JAX shares are hoisted to the front as ``let name = { ... } in`` and referred
to by name. Parameters JAX's printer hides are restored (``_HIDDEN``). The text holds no
custom-derivative rules (JAX prints only their names) and no constant values, so a
``custom_jvp_call``/``custom_vjp_call`` reads as a call of its body, and the constvars of the
top-level jaxpr stay constvars.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import numpy as np

from fcore.errors import JaxprParseError, JaxprTypeError
from fcore.interop._from_jax import SPECIAL, Converter
from fcore.ir import dtypes
from fcore.ir.core import Jaxpr
from fcore.ir.parser import find_param_enum, find_param_struct
from fcore.ir.primitive import lookup_primitive
from fcore.ir.typecheck import typecheck

__all__ = ["parse_jax_text"]

_NUM = r"-?(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|inf|nan)"
_TOKEN_RE = re.compile(
    r"\s*("
    r":[a-z0-9_]+(?:<[a-z0-9_]+>)?\[[0-9, ]*\](?:\{weak\})?"  # a type: ':f32[3]', ':key<fry>[]'
    r"|[a-z][a-z0-9_]*(?:-[a-z][a-z0-9_]*)+"  # a hyphenated primitive: 'scatter-add'
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"  # a name, possibly dotted
    r"|<[A-Za-z_][A-Za-z0-9_]*>"  # a function name such as '<lambda>'
    rf"|{_NUM}(?![A-Za-z0-9_])"  # a number
    r"""|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""  # a quoted string
    r"|\S"  # punctuation, or a stray character
    r")"
)
_TYPE_RE = re.compile(r":([a-z0-9_]+(?:<[a-z0-9_]+>)?)\[([0-9, ]*)\](\{weak\})?")
_LITERAL_WORDS = {"True": True, "False": False}
_DTYPE_NAMES: dict[str, dtypes.DType] = {dtypes.dtype_name(d): d for d in dtypes.SUPPORTED_DTYPES}
_NUMPY_SCALARS = re.compile(r"(?:np|numpy)\.(?:u?int\d+|float\d+|bool_?|complex\d+)")


# -- objects shaped like JAX's (what from_jax reads) ----------------------------------------------
class _Aval:
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: tuple[int, ...], dtype: object, weak_type: bool) -> None:
        self.shape, self.dtype, self.weak_type = shape, dtype, weak_type


class _Var:
    __slots__ = ("aval",)

    def __init__(self, aval: _Aval) -> None:
        self.aval = aval


class _Literal:
    __slots__ = ("val", "aval")

    def __init__(self, val: object, aval: _Aval) -> None:
        self.val, self.aval = val, aval


class _Primitive:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _Eqn:
    __slots__ = ("primitive", "params", "invars", "outvars", "line")

    def __init__(self, name: str, params: dict[str, object], invars: list[object], outvars: list[_Var], line: int) -> None:
        self.primitive, self.params, self.invars, self.outvars, self.line = _Primitive(name), params, invars, outvars, line


class _Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, constvars: list[_Var], invars: list[_Var], outvars: list[object], eqns: list[_Eqn]) -> None:
        self.constvars, self.invars, self.outvars, self.eqns = constvars, invars, outvars, eqns


class _Closed:
    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: _Jaxpr) -> None:
        self.jaxpr, self.consts = jaxpr, ()


class _SharedRef:
    """A reference to a jaxpr JAX hoisted to the front (``let name = { ... } in``), which may be
    printed after the jaxprs that refer to it: resolved when the converter reads it."""

    __slots__ = ("shared", "name", "consts")

    def __init__(self, shared: dict[str, _Closed], name: str) -> None:
        self.shared, self.name, self.consts = shared, name, ()

    @property
    def jaxpr(self) -> _Jaxpr:
        return self.shared[self.name].jaxpr


#: Parameters JAX's printer leaves out, restored from the equation (its result types).
_HIDDEN: dict[str, Callable[[list[_Var]], dict[str, object]]] = {
    "broadcast_in_dim": lambda outs: {"shape": outs[0].aval.shape, "broadcast_dimensions": ()},
    "dot_general": lambda outs: {"precision": None, "preferred_element_type": None},
    "custom_jvp_call": lambda outs: {"num_consts": 0},
    "custom_vjp_call": lambda outs: {"num_consts": 0},
}

#: Calls whose rules the text does not hold: read as calls of their bodies.
_RULE_CALLS = frozenset({"custom_jvp_call", "custom_vjp_call"})


def parse_jax_text(text: str) -> Jaxpr:
    """The type-checked fcore ``Jaxpr`` of JAX's jaxpr text (see the module docstring)."""
    reader = _Reader(text)
    jax_jaxpr = reader.program()
    n_consts = len(jax_jaxpr.constvars)
    placeholders = [np.zeros(v.aval.shape, _np_dtype(v.aval.dtype)) for v in jax_jaxpr.constvars]
    try:
        closed = Converter().convert(jax_jaxpr, placeholders)
        typecheck(closed)
    except (NotImplementedError, JaxprTypeError, TypeError) as e:
        raise JaxprParseError(f"JAX text: {e}") from None
    if len(closed.consts) != n_consts:
        raise JaxprParseError("JAX text: the program needs constant values (array literals) the text does not hold")
    return closed.jaxpr


def _np_dtype(dtype: object) -> dtypes.DType:
    """A key type's data is ``uint32``; other dtypes are fcore's already."""
    return dtype if isinstance(dtype, np.dtype) else dtypes.uint32


class _Reader:
    __slots__ = ("toks", "starts", "text", "i", "shared", "shared_names", "newlines")

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.toks: list[str] = []
        self.starts: list[int] = []
        for m in _TOKEN_RE.finditer(text):
            self.toks.append(m.group(1))
            self.starts.append(m.start(1))
        self.toks += ["", ""]
        self.starts += [len(text), len(text)]
        self.i = 0
        self.shared: dict[str, _Closed] = {}
        self.shared_names = set(re.findall(r"^let ([A-Za-z_][A-Za-z0-9_]*) = \{", text, re.M))

    def fail(self, index: int, message: str) -> NoReturn:
        pos = self.starts[index]
        line = self.text.count("\n", 0, pos) + 1
        column = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        raise JaxprParseError(f"line {line}, column {column}: {message}")

    def line_of(self, index: int) -> int:
        return bisect.bisect_right(self.newlines, self.starts[index]) + 1

    def expect(self, tok: str, what: str) -> None:
        if self.toks[self.i] != tok:
            got = self.toks[self.i]
            self.fail(self.i, f"expected {what}, got {repr(got) if got else 'end of input'}")
        self.i += 1

    def program(self) -> _Jaxpr:
        """``(let NAME = jaxpr in)* jaxpr``: JAX hoists shared jaxprs to the front."""
        while self.toks[self.i] == "let" and self.toks[self.i + 2] == "=":
            name = self.toks[self.i + 1]
            self.i += 3
            self.shared[name] = _Closed(self.jaxpr())
            self.expect("in", "'in' after a shared jaxpr")
        jaxpr = self.jaxpr()
        if self.toks[self.i] != "":
            self.fail(self.i, "expected end of input after the jaxpr")
        return jaxpr

    # -- jaxprs -------------------------------------------------------------------------
    def aval(self, index: int) -> _Aval:
        m = _TYPE_RE.fullmatch(self.toks[index])
        if m is None:
            self.fail(index, f"expected a type such as ':f32[3]', got {self.toks[index]!r}")
        name, dims, weak = m.groups()
        dtype: object = name
        if not name.startswith("key<"):
            try:
                dtype = dtypes.from_short_name(name)
            except ValueError as e:
                self.fail(index, str(e))
        parts = [d.strip() for d in dims.split(",")] if dims.strip() else []
        return _Aval(tuple(int(d) for d in parts), dtype, weak is not None)

    def is_binder(self, index: int) -> bool:
        """``name:type`` at ``index`` (``inf:f32[]`` too: JAX's 8th-thousand name is ``inf``)."""
        tok, nxt = self.toks[index], self.toks[index + 1]
        return nxt[:1] == ":" and len(nxt) > 1 and tok.isidentifier() and tok not in _LITERAL_WORDS

    def starts_equation(self, index: int) -> bool:
        """Binders then ``=``: how an equation is told from a literal argument such as ``inf:f32[]``
        (JAX continues long argument lists on the next line, so line ends do not tell)."""
        j = index
        while self.is_binder(j):
            j += 2
        # An equation's binders share the line of its '=': 'mul a inf:f32[]' ends a line before
        # 'c:f32[] = ...'.
        return j > index and self.toks[j] == "=" and self.line_of(index) == self.line_of(j)

    def binder(self, env: dict[str, _Var]) -> _Var:
        if not self.is_binder(self.i):
            self.fail(self.i, f"expected a binder 'name:type', got {self.toks[self.i]!r}")
        v = _Var(self.aval(self.i + 1))
        # '_' binds too: JAX names a call body's result after the caller's dropped '_' and
        # returns it ('_:f32[] = select_n b c a in (_,)').
        env[self.toks[self.i]] = v
        self.i += 2
        return v

    def jaxpr(self) -> _Jaxpr:
        self.expect("{", "'{' to open a jaxpr")
        self.expect("lambda", "'lambda' after '{'")
        env: dict[str, _Var] = {}
        constvars: list[_Var] = []
        while self.toks[self.i] != ";":
            constvars.append(self.binder(env))
        self.i += 1
        invars: list[_Var] = []
        while self.toks[self.i] != ".":
            invars.append(self.binder(env))
        self.i += 1
        self.expect("let", "'let' after the input variables")
        eqns: list[_Eqn] = []
        while not (self.toks[self.i] == "in" and self.toks[self.i + 1] == "("):
            if self.toks[self.i] == ";":  # the one-line form separates equations by ';'
                self.i += 1
                continue
            eqns.append(self.eqn(env))
        self.i += 2
        outs: list[object] = []
        while self.toks[self.i] != ")":
            outs.append(self.atom(env))
            if self.toks[self.i] == ",":
                self.i += 1
        self.i += 1
        self.expect("}", "'}' to close the jaxpr")
        return _Jaxpr(constvars, invars, outs, eqns)

    def eqn(self, env: dict[str, _Var]) -> _Eqn:
        outvars: list[_Var] = []
        pending: dict[str, _Var] = {}
        while self.is_binder(self.i):
            outvars.append(self.binder(pending))
        if outvars:
            self.expect("=", "'=' after the equation's results")
        index = self.i
        name = self.toks[index]
        if not name or not (name[0].isalpha() or name[0] == "_"):
            self.fail(index, f"expected an equation or 'in (...)', got {repr(name) if name else 'end of input'}")
        if lookup_primitive(name) is None and name not in SPECIAL:
            self.fail(index, f"unknown primitive {name!r}")
        self.i += 1
        params: dict[str, object] = {}
        if self.toks[self.i] == "[":
            params = self.params()
        invars: list[object] = []
        while not self.ends_args():
            invars.append(self.atom(env))
        env.update(pending)
        hidden = _HIDDEN.get(name)
        for key, value in (hidden(outvars) if hidden is not None else {}).items():
            params.setdefault(key, value)
        if name in _RULE_CALLS:
            params = {"call_jaxpr": params.get("call_jaxpr"), "name": params.get("name")}
            name = "closed_call"
        return _Eqn(name, params, invars, outvars, self.line_of(index))

    def ends_args(self) -> bool:
        tok = self.toks[self.i]
        return tok in ("", "}", ";") or (tok == "in" and self.toks[self.i + 1] == "(") or self.starts_equation(self.i) \
            or (tok == "_" and self.toks[self.i + 1] == "=")

    def atom(self, env: Mapping[str, _Var]) -> object:
        i = self.i
        tok, nxt = self.toks[i], self.toks[i + 1]
        if nxt[:1] == ":" and len(nxt) > 1:
            self.i = i + 2
            aval = self.aval(i + 1)
            return _Literal(self.scalar(i), aval)
        v = env.get(tok)
        if v is None:
            self.fail(i, f"variable {tok!r} used before it is bound" if tok.isidentifier()
                      else f"expected a variable or a literal, got {tok!r}")
        self.i = i + 1
        return v

    def scalar(self, index: int) -> object:
        tok = self.toks[index]
        if tok in _LITERAL_WORDS:
            return _LITERAL_WORDS[tok]
        try:
            return int(tok) if tok.lstrip("-").isdigit() else float(tok)
        except ValueError:
            self.fail(index, f"expected a literal value, got {tok!r}")

    # -- parameters ---------------------------------------------------------------------
    def params(self) -> dict[str, object]:
        self.i += 1
        items: dict[str, object] = {}
        while self.toks[self.i] != "]":
            key = self.toks[self.i]
            if not key.isidentifier() or self.toks[self.i + 1] != "=":
                self.fail(self.i, f"expected 'name=value' or ']', got {key!r}")
            self.i += 2
            if key == "name" and self.toks[self.i] in self.shared_names:  # a call's name, not the shared jaxpr
                items[key] = self.toks[self.i]
                self.i += 1
                continue
            items[key] = self.value()
        self.i += 1
        return items

    def value(self) -> object:
        i = self.i
        tok = self.toks[i]
        if tok == "{":
            return _Closed(self.jaxpr())
        if tok in ("(", "["):
            return self.sequence(")" if tok == "(" else "]")
        self.i = i + 1
        if tok[:1].isdigit() or (tok[:1] == "-" and len(tok) > 1) or tok in ("inf", "nan"):
            return self.scalar(i)
        if tok[:1] in ("'", '"'):
            return tok[1:-1]
        if tok in ("None", "True", "False"):
            return {"None": None, "True": True, "False": False}[tok]
        if self.toks[self.i] == "(":
            return self.call(i)
        if tok in self.shared_names:
            return _SharedRef(self.shared, tok)
        if tok in _DTYPE_NAMES:
            return _DTYPE_NAMES[tok]
        if "." in tok:
            cls_name, _, member = tok.rpartition(".")
            cls = find_param_enum(cls_name)
            if isinstance(cls, str):
                self.fail(i, cls)
            if member not in cls.__members__:
                self.fail(i, f"enum {cls_name} has no member {member!r}")
            return cls[member]
        if tok[:1] == "<" or tok.isidentifier():
            return tok  # a name: jit's ``name=<lambda>``, ``impl=fry``, a rule's name
        self.fail(i, f"expected a parameter value, got {tok!r}")

    def sequence(self, close: str) -> tuple[object, ...]:
        self.i += 1
        items: list[object] = []
        while self.toks[self.i] != close:
            if self.toks[self.i] == "":
                self.fail(self.i, f"expected {close!r} to close a sequence, got end of input")
            items.append(self.value())
            if self.toks[self.i] == ",":
                self.i += 1
        self.i += 1
        return tuple(items)

    def call(self, index: int) -> object:
        """``Name(field=value, ...)``: a named tuple (dimension numbers), or a NumPy scalar's repr."""
        name = self.toks[index]
        self.i += 1
        args: list[object] = []
        kwargs: dict[str, Any] = {}
        while self.toks[self.i] != ")":
            if self.toks[self.i] == "":
                self.fail(self.i, f"expected ')' to close {name}(...), got end of input")
            if self.toks[self.i].isidentifier() and self.toks[self.i + 1] == "=":
                key = self.toks[self.i]
                self.i += 2
                kwargs[key] = self.value()
            else:
                args.append(self.value())
            if self.toks[self.i] == ",":
                self.i += 1
        self.i += 1
        if _NUMPY_SCALARS.fullmatch(name) and len(args) == 1 and not kwargs:
            return args[0]
        if name == "dtype" and len(args) == 1 and str(args[0]) in _DTYPE_NAMES:
            return _DTYPE_NAMES[str(args[0])]
        cls = find_param_struct(name)
        if isinstance(cls, str):
            self.fail(index, cls)
        try:
            return cls(*args, **kwargs)
        except (TypeError, ValueError) as e:
            self.fail(index, f"cannot build {name} from the text: {e}")
