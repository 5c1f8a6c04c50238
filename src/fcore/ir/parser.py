"""Jaxpr text back to a ``Jaxpr``: the inverse of ``fcore.ir.printer``.

``parse_jaxpr(str(j)) == j`` for every jaxpr the printer writes (see ``docs/ir.md``,
"Text format", for the grammar). Each line is split into tokens by one regular
expression and equations are read in a loop, so a jaxpr of 10⁵ equations parses in
linear time with no recursion; the parser recurses only into nested jaxprs and
tuples inside parameters.

Two details of the format matter to the parser:

* In the multi-line form an equation ends at the end of its line (in the one-line
  form at ``;``): variable names such as ``in``, ``inf`` or ``nan`` are valid
  (the printer's 222nd variable is ``in``), and only line ends tell ``... inf:f32[] = ...``
  (the next equation's binder) from ``inf:f32[]`` (a literal argument).
* Parameter values print as Python-like text. Enum members (``Name.MEMBER``) and
  ``ParamStruct`` values (``Name(field=value, ...)``) are resolved by class name:
  first in the registries filled by :func:`register_param_enum` and
  :func:`register_param_struct`, then among all loaded subclasses of
  ``enum.Enum`` / ``ParamStruct`` when exactly one has that name (or exactly one
  of them is fcore's own). Modules that define parameter enums or structs should
  register them so that names stay unambiguous.
"""

from __future__ import annotations

import ast
import bisect
import enum
import gc
import importlib
import re
from collections.abc import Callable
from typing import NoReturn, TypeVar

from fcore.errors import InvalidShapeError, JaxprParseError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, LiteralScalar, Var
from fcore.ir.params import EMPTY_PARAMS, Params, ParamStruct, ParamValue, make_params
from fcore.ir.primitive import Primitive, lookup_primitive

__all__ = ["parse_jaxpr", "register_param_enum", "register_param_struct", "find_param_enum", "find_param_struct"]

E = TypeVar("E", bound=enum.Enum)
S = TypeVar("S", bound=ParamStruct)

# ---------------------------------------------------------------------------------------
# Registries of parameter classes (resolved by ``__name__``, as the printer writes them)
# ---------------------------------------------------------------------------------------

_PACKAGE = __name__.split(".")[0]
_ENUMS: dict[str, type[enum.Enum]] = {}
_STRUCTS: dict[str, type[ParamStruct]] = {}


def register_param_enum(cls: type[E]) -> type[E]:
    """Make ``cls``'s members parseable as ``cls.__name__ + '.' + member`` (usable as a decorator)."""
    _check_free(_ENUMS.get(cls.__name__), cls)
    _ENUMS[cls.__name__] = cls
    return cls


def register_param_struct(cls: type[S]) -> type[S]:
    """Make ``cls`` parseable from its repr ``Name(field=value, ...)`` (usable as a decorator)."""
    _check_free(_STRUCTS.get(cls.__name__), cls)
    _STRUCTS[cls.__name__] = cls
    return cls


def _check_free(known: type | None, cls: type) -> None:
    """Two classes with one name would make the text ambiguous: refuse the second."""
    if known is not None and known is not cls:
        raise ValueError(f"another class named {cls.__name__!r} is already registered for the jaxpr parser")


def _subclasses_named(base: type, name: str) -> list[type]:
    """Loaded subclasses of ``base`` called ``name`` (the fallback for unregistered classes)."""
    found: list[type] = []
    stack = [base]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        subs: list[type] = cls.__subclasses__()
        for sub in subs:
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
                if sub.__name__ == name:
                    found.append(sub)
    return found


def _prefer_own(found: list[type]) -> list[type]:
    """Of several same-named classes, fcore's own (``jax.lax.Precision`` vs fcore's, in tests)."""
    own = [c for c in found if c.__module__.split(".")[0] == _PACKAGE]
    return own if len(found) > 1 and len(own) == 1 else found


def find_param_enum(name: str) -> type[enum.Enum] | str:
    """The parameter enum class called ``name`` (as the parser resolves it), or why there is none."""
    return _find_enum(name)


def find_param_struct(name: str) -> type[ParamStruct] | str:
    """The ``ParamStruct`` class called ``name`` (as the parser resolves it), or why there is none."""
    return _find_struct(name)


def _find_enum(name: str) -> type[enum.Enum] | str:
    """The enum class called ``name``, or a message saying why there is none."""
    cls = _ENUMS.get(name)
    if cls is not None:
        return cls
    found = _prefer_own([c for c in _subclasses_named(enum.Enum, name) if issubclass(c, enum.Enum)])
    if len(found) == 1 and issubclass(found[0], enum.Enum):
        return found[0]
    if not found:
        return f"unknown enum class {name!r} (register it with fcore.ir.parser.register_param_enum)"
    return f"ambiguous enum class name {name!r}: {len(found)} classes have it (register one)"


def _find_struct(name: str) -> type[ParamStruct] | str:
    cls = _STRUCTS.get(name)
    if cls is not None:
        return cls
    found = _prefer_own([c for c in _subclasses_named(ParamStruct, name) if issubclass(c, ParamStruct)])
    if len(found) == 1 and issubclass(found[0], ParamStruct):
        return found[0]
    if not found:
        return f"unknown ParamStruct class {name!r} (register it with fcore.ir.parser.register_param_struct)"
    return f"ambiguous ParamStruct class name {name!r}: {len(found)} classes have it (register one)"


# ---------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------

_NUM = r"(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|inf|nan)"
# One token per match; the common shapes of token come first (the order only affects speed:
# where two alternatives match, they match the same text). The input is tokenized line by
# line, so that the parser knows which tokens start a line (see the module docstring).
_TOKEN_RE = re.compile(
    r"[ \t\r\f\v]*("
    r"[a-z][a-z0-9_]*(?![A-Za-z0-9_.(-])"  # a plain name: variable, primitive, keyword
    r"|[a-z][a-z0-9_]*(?:-[a-z][a-z0-9_]*)+(?![A-Za-z0-9_.(])"  # a hyphenated primitive: 'scatter-add'
    r"|:[a-z0-9_]+\[[0-9,]*\](?:\{weak\})?"  # a type, colon included: ':f32[3,4]{weak}'
    r"|(?!in\()[A-Za-z_][A-Za-z0-9_]*\("  # a call, '(' included: 'GatherDimensionNumbers(', 'dtype('
    r"|\??[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"  # any name, possibly dotted
    r"|:[A-Za-z0-9_]+\[[0-9, ]*\](?:\{weak\})?"  # any type
    rf"|\([+-]?{_NUM}[+-]{_NUM}j\)"  # a complex scalar: '(1.0-2.5j)'
    r"|-?(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|inf|nan)j?(?![A-Za-z0-9_])"  # a real or imaginary number
    r"""|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""  # a quoted string
    r"|\S"  # punctuation, or a stray character reported by the parser
    r")"
)
_TYPE_RE = re.compile(r":([A-Za-z0-9_]+)\[([0-9, ]*)\](\{weak\})?")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_START = re.compile(r"[A-Za-z_]")

_DTYPES_BY_NAME: dict[str, dtypes.DType] = {dtypes.dtype_name(d): d for d in dtypes.SUPPORTED_DTYPES}
_WORDS: dict[str, ParamValue] = {"True": True, "False": False, "None": None}
_END = ""  # the sentinel token after the last one


def _is_type(tok: str) -> bool:
    return len(tok) > 1 and tok[0] == ":"


def _describe(tok: str) -> str:
    return "end of input" if tok == _END else repr(tok)


def _fits_kind(value: LiteralScalar, dtype: dtypes.DType) -> bool:
    """A literal's text must be of its dtype's kind: no silent truncation of ``1.5:i32[]``."""
    if isinstance(value, bool):
        return dtypes.is_bool(dtype)
    if isinstance(value, int):
        return dtypes.is_integer(dtype) or dtypes.is_inexact(dtype)
    if isinstance(value, float):
        return dtypes.is_inexact(dtype)
    return dtypes.is_complex(dtype)


# ---------------------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------------------


def parse_jaxpr(text: str, dialect: str = "fcore") -> Jaxpr:
    """Read the text ``printer.pp_jaxpr`` writes (one-line or multi-line form) into a ``Jaxpr``.

    Nested jaxprs in parameters become ``ClosedJaxpr(jaxpr, ())`` (a plain ``Jaxpr``
    when they have constvars, whose values the text does not hold). Raises
    ``JaxprParseError`` naming the line, the column and what was expected.

    ``dialect="jax"`` reads what JAX prints instead (``str(jax.make_jaxpr(f)(x))``): JAX's
    primitives and parameters are translated as ``fcore.interop.from_jax`` translates a live
    JAX jaxpr, and the result is type-checked (docs/interop.md, "Reading JAX's text").
    """
    if dialect == "jax":
        # The JAX dialect is interop's: imported when asked for (fcore.interop sits above the IR).
        reader: Callable[[str], Jaxpr] = getattr(importlib.import_module("fcore.interop._jax_text"), "parse_jax_text")
        return reader(text)
    if dialect != "fcore":
        raise ValueError(f"parse_jaxpr: unknown dialect {dialect!r} (expected 'fcore' or 'jax')")
    # Parsing allocates a few objects per token and no cycles; collections triggered by them
    # would rescan all of them again and again (40% of the time on 10^5 equations).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        parser = _Parser(text)
        jaxpr = parser.jaxpr()
        if parser.toks[parser.i] != _END:
            parser.fail(parser.i, "expected end of input after the jaxpr")
        return jaxpr
    finally:
        if gc_was_enabled:
            gc.enable()


class _Parser:
    """Recursive descent over a token list; equations are read by a loop, not recursion."""

    __slots__ = ("lines", "line_starts", "toks", "line_firsts", "i", "avals", "literals", "prims", "param_cache")

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        toks: list[str] = []
        starts: list[int] = []
        findall = _TOKEN_RE.findall
        for line in self.lines:
            starts.append(len(toks))
            toks += findall(line)
        # Sentinels: lookahead of two tokens never runs off the end.
        toks += [_END, _END]
        self.toks = toks
        self.line_starts = starts
        self.line_firsts = set(starts)  # indices of the tokens that start a line
        self.i = 0
        self.avals: dict[str, ShapedArray] = {}
        self.literals: dict[tuple[str, str], Literal] = {}
        self.prims: dict[str, Primitive] = {}
        self.param_cache: dict[tuple[str, ...], Params] = {}

    # -- errors -------------------------------------------------------------------------
    def fail(self, index: int, message: str) -> NoReturn:
        """Raise with the line and column of token ``index`` (found by re-scanning one line)."""
        row = bisect.bisect_right(self.line_starts, index) - 1
        line = self.lines[row]
        column = len(line) + 1  # the end of the input
        for k, m in enumerate(_TOKEN_RE.finditer(line), self.line_starts[row]):
            if k == index:
                column = m.start(1) + 1
                break
        raise JaxprParseError(f"line {row + 1}, column {column}: {message}")

    def expect(self, tok: str, what: str) -> None:
        got = self.toks[self.i]
        if got != tok:
            self.fail(self.i, f"expected {what}, got {_describe(got)}")
        self.i += 1

    # -- types, binders, atoms ----------------------------------------------------------
    def aval(self, index: int) -> ShapedArray:
        tok = self.toks[index]
        aval = self.avals.get(tok)
        if aval is not None:
            return aval
        m = _TYPE_RE.fullmatch(tok)
        if m is None:
            self.fail(index, f"expected a type such as ':f32[3]', got {_describe(tok)}")
        name, dims, weak = m.groups()
        try:
            dtype = dtypes.from_short_name(name)
        except ValueError as e:
            self.fail(index, str(e))
        parts = [d.strip() for d in dims.split(",")] if dims.strip() else []
        if any(not d for d in parts):
            self.fail(index, f"malformed shape in type {tok[1:]!r}")
        try:
            aval = shaped_array(tuple(int(d) for d in parts), dtype, weak is not None)
        except InvalidShapeError as e:
            self.fail(index, str(e))
        self.avals[tok] = aval
        return aval

    def binder(self, env: dict[str, Var]) -> Var:
        """``name:type`` at ``self.i``; binds ``name`` in ``env``."""
        i = self.i
        name = self.toks[i]
        if not name.isidentifier():
            self.fail(i, f"expected a variable name, got {_describe(name)}")
        ty = self.toks[i + 1]
        if not _is_type(ty):
            if ty == ":":
                self.fail(i + 2, f"expected a type such as 'f32[3]' after ':', got {_describe(self.toks[i + 2])}")
            self.fail(i + 1, f"expected ':' after variable name, got {_describe(ty)}")
        v = Var(self.aval(i + 1))
        if name != "_":  # '_' is a result nothing uses (JAX's dropped variable): never bound
            if name in env:
                self.fail(i, f"variable {name!r} is bound twice")
            env[name] = v
        self.i = i + 2
        return v

    def literal(self, index: int) -> Literal:
        """The literal ``value:type`` whose value is token ``index``."""
        key = (self.toks[index], self.toks[index + 1])
        lit = self.literals.get(key)
        if lit is None:
            aval = self.aval(index + 1)
            value = self.scalar(index)
            if aval.shape != ():
                self.fail(index + 1, f"literals must be scalars, got type {aval.jaxpr_text()}")
            dt = aval.dtype
            if not _fits_kind(value, dt):
                self.fail(index, f"literal {key[0]} is not a value of dtype {dtypes.dtype_name(dt)}")
            try:
                lit = Literal.of(value, aval)
            except (OverflowError, ValueError) as e:
                self.fail(index, f"literal {key[0]} does not fit dtype {dtypes.dtype_name(dt)}: {e}")
            self.literals[key] = lit
        return lit

    def scalar(self, index: int) -> LiteralScalar:
        tok = self.toks[index]
        if tok == "True" or tok == "False":
            return tok == "True"
        try:
            if tok[:1] == "(" or tok[-1:] == "j":
                return complex(tok)
            if tok.lstrip("-").isdigit():
                return int(tok)
            return float(tok)
        except ValueError:
            pass
        if tok.isidentifier():
            self.fail(
                index,
                f"{tok!r} is followed by a type, so it starts an equation: "
                "equations on one line must be separated by ';'",
            )
        self.fail(index, f"expected a literal value, got {_describe(tok)}")

    def atom(self, env: dict[str, Var]) -> Atom:
        i = self.i
        if _is_type(self.toks[i + 1]):
            self.i = i + 2
            return self.literal(i)
        self.i = i + 1
        return self.use(i, env)

    def use(self, index: int, env: dict[str, Var]) -> Var:
        tok = self.toks[index]
        v = env.get(tok)
        if v is None:
            if tok.isidentifier() or tok[:1] == "?":
                self.fail(index, f"variable {tok!r} used before it is bound")
            self.fail(index, f"expected a variable or a literal, got {_describe(tok)}")
        return v

    def primitive(self, index: int) -> Primitive:
        name = self.toks[index]
        prim = self.prims.get(name)
        if prim is None:
            found = lookup_primitive(name)
            if found is None:
                if not name or not (name[0].isalpha() or name[0] == "_"):
                    self.fail(index, f"expected a primitive name after '=', got {_describe(name)}")
                self.fail(index, f"unknown primitive {name!r}")
            prim = self.prims[name] = found
        return prim

    # -- jaxprs -------------------------------------------------------------------------
    def jaxpr(self) -> Jaxpr:
        """``{ lambda consts ; invars . let eqns in (outs) }`` at ``self.i``."""
        self.expect("{", "'{' to open a jaxpr")
        self.expect("lambda", "'lambda' after '{'")
        env: dict[str, Var] = {}
        constvars: list[Var] = []
        while self.toks[self.i] != ";":
            constvars.append(self.binder(env))
        self.i += 1
        invars: list[Var] = []
        while self.toks[self.i] != ".":
            invars.append(self.binder(env))
        self.i += 1
        self.expect("let", "'let' after the input variables")
        eqns = self.eqns(env)
        self.i += 1  # 'in'
        outvars = self.outvars(env)
        self.expect("}", "'}' to close the jaxpr")
        return Jaxpr(tuple(constvars), tuple(invars), tuple(outvars), tuple(eqns))

    def eqns(self, env: dict[str, Var]) -> list[JaxprEqn]:
        """Equations up to the keyword ``in`` (which is followed by ``(``, unlike a variable ``in``)."""
        toks, line_firsts = self.toks, self.line_firsts
        eqns: list[JaxprEqn] = []
        append = eqns.append
        avals, literals = self.avals, self.literals
        i = self.i
        while True:
            t = toks[i]
            if t == ";":
                i += 1
                continue
            if t == "in" and toks[i + 1] == "(":
                break
            if not (t.isidentifier() or t[:1] == "?"):
                self.fail(i, f"expected an equation 'name:type = ...' or 'in (...)', got {_describe(t)}")
            # Binders: 'name:type'+, '_ =' or nothing (no results: JAX writes 'prim[...] args').
            outvars: list[Var] = []
            nxt_tok = toks[i + 1]
            if t == "_" and nxt_tok == "=":
                i += 1
            elif nxt_tok[:1] != ":" and nxt_tok != "=" and t != "_":
                i -= 1  # ``t`` is the primitive
            else:
                while True:
                    ty = toks[i + 1]
                    aval = avals.get(ty)
                    if aval is None or t in env or not t.isidentifier():
                        self.i = i
                        v = self.binder(env)
                        i = self.i
                    else:
                        v = Var(aval)
                        if t != "_":
                            env[t] = v
                        i += 2
                    outvars.append(v)
                    t = toks[i]
                    if t == "=":
                        break
                    if not (t.isidentifier() and _is_type(toks[i + 1])):
                        self.fail(i, f"expected '=' or another 'name:type' binder, got {_describe(t)}")
            prim = self.prims.get(toks[i + 1]) or self.primitive(i + 1)
            i += 2
            params = EMPTY_PARAMS
            if toks[i] == "[":
                self.i = i
                params = self.params()
                i = self.i
            # Arguments: up to the end of the line, ';', or 'in ('.
            invars: list[Atom] = []
            while True:
                t = toks[i]
                if i in line_firsts or t == ";" or t == "}" or t == _END or (t == "in" and toks[i + 1] == "("):
                    break
                nxt = toks[i + 1]
                if nxt == ":":
                    self.fail(i + 2, f"expected a type such as 'f32[]' after ':', got {_describe(toks[i + 2])}")
                if nxt[:1] == ":":
                    lit = literals.get((t, nxt))
                    invars.append(lit if lit is not None else self.literal(i))
                    i += 2
                else:
                    v_in = env.get(t)
                    invars.append(v_in if v_in is not None else self.use(i, env))
                    i += 1
            append(JaxprEqn(prim, tuple(invars), tuple(outvars), params))
        self.i = i
        return eqns

    def outvars(self, env: dict[str, Var]) -> list[Atom]:
        self.expect("(", "'(' to open the output list")
        outs: list[Atom] = []
        while self.toks[self.i] != ")":
            outs.append(self.atom(env))
            tok = self.toks[self.i]
            if tok == ",":
                self.i += 1
            elif tok != ")":
                self.fail(self.i, f"expected ',' or ')' in the output list, got {_describe(tok)}")
        self.i += 1
        return outs

    # -- parameters ---------------------------------------------------------------------
    def params(self) -> Params:
        """``[key=value ...]`` at ``self.i`` (items separated by spaces or lines).

        Params without nested jaxprs are cached by their tokens: long programs repeat
        the same few (``integer_pow[y=2]``), and ``Params`` values are immutable.
        """
        toks = self.toks
        start = self.i
        try:
            end = toks.index("]", start)  # the closing bracket, unless there are nested jaxprs
        except ValueError:
            end = len(toks) - 1
        text = tuple(toks[start + 1 : end])
        cacheable = "{" not in text and "[" not in text
        if cacheable:
            cached = self.param_cache.get(text)
            if cached is not None:
                self.i = end + 1
                return cached
        self.i = start + 1
        items: dict[str, ParamValue] = {}
        while toks[self.i] != "]":
            i = self.i
            key = toks[i]
            if not _IDENT_RE.fullmatch(key):
                self.fail(i, f"expected a parameter name or ']', got {_describe(key)}")
            if toks[i + 1] != "=":
                self.fail(i + 1, f"expected '=' after parameter name {key!r}, got {_describe(toks[i + 1])}")
            if key in items:
                self.fail(i, f"parameter {key!r} is given twice")
            self.i = i + 2
            items[key] = self.value()
        self.i += 1
        params = make_params(items)
        if cacheable:
            self.param_cache[text] = params
        return params

    def value(self) -> ParamValue:
        i = self.i
        tok = self.toks[i]
        c = tok[:1]
        if tok == "{":
            jaxpr = self.jaxpr()
            return jaxpr if jaxpr.constvars else ClosedJaxpr(jaxpr, ())
        if tok == "(":
            return self.tuple_value()
        if tok == "<":
            return self.enum_repr()
        self.i = i + 1
        if c.isdigit() or c == "-" or (c == "(" and len(tok) > 1) or tok in ("inf", "nan", "infj", "nanj"):
            return self.number(i)
        if tok[-1:] == "(":
            return self.call(i)
        if c == "'" or c == '"':
            try:
                text = ast.literal_eval(tok)
            except (SyntaxError, ValueError) as e:
                self.fail(i, f"malformed string {tok}: {e}")
            assert isinstance(text, str)
            return text
        if not _NAME_START.fullmatch(c):
            self.fail(i, f"expected a parameter value, got {_describe(tok)}")
        if tok in _WORDS:
            return _WORDS[tok]
        if "." in tok:
            return self.enum_member(i, tok)
        dtype = _DTYPES_BY_NAME.get(tok)
        return dtype if dtype is not None else tok

    def number(self, index: int) -> int | float | complex:
        tok = self.toks[index]
        try:
            if tok[:1] == "(" or tok[-1:] == "j":
                return complex(tok)
            if tok.lstrip("-").isdigit():
                return int(tok)
            return float(tok)
        except ValueError:
            self.fail(index, f"malformed number {tok!r}")

    def tuple_value(self) -> tuple[ParamValue, ...]:
        """``(a, b)``, ``(a,)``, ``()``; items of tuples holding jaxprs are separated by lines only."""
        self.i += 1
        items: list[ParamValue] = []
        while self.toks[self.i] != ")":
            if self.toks[self.i] == _END:
                self.fail(self.i, "expected ')' to close the tuple, got end of input")
            items.append(self.value())
            if self.toks[self.i] == ",":
                self.i += 1
        self.i += 1
        return tuple(items)

    def enum_member(self, index: int, tok: str) -> enum.Enum:
        cls_name, _, member = tok.partition(".")
        if "." in member:
            self.fail(index, f"expected an enum member 'Class.MEMBER', got {tok!r}")
        cls = _find_enum(cls_name)
        if isinstance(cls, str):
            self.fail(index, cls)
        try:
            return cls[member]
        except KeyError:
            self.fail(index, f"enum {cls_name} has no member {member!r}")

    def enum_repr(self) -> enum.Enum:
        """``<Class.MEMBER: value>``, the repr an enum has inside a ``ParamStruct``'s repr."""
        start = self.i
        tok = self.toks[start + 1]
        if "." not in tok or self.toks[start + 2] != ":":
            self.fail(start + 1, f"expected an enum repr '<Class.MEMBER: value>', got {_describe(tok)}")
        member = self.enum_member(start + 1, tok)
        i = start + 3
        while self.toks[i] != ">":
            if self.toks[i] == _END:
                self.fail(i, "expected '>' to close the enum repr, got end of input")
            i += 1
        self.i = i + 1
        return member

    def call(self, index: int) -> ParamValue:
        """``Name(args)``: a ``ParamStruct`` by its repr, or ``dtype('float32')`` inside one."""
        name = self.toks[index][:-1]
        self.i = index + 1
        args: list[ParamValue] = []
        kwargs: dict[str, ParamValue] = {}
        toks = self.toks
        while toks[self.i] != ")":
            i = self.i
            if toks[i] == _END:
                self.fail(i, f"expected ')' to close {name}(...), got end of input")
            if _IDENT_RE.fullmatch(toks[i]) and toks[i + 1] == "=":
                self.i = i + 2
                kwargs[toks[i]] = self.value()
            else:
                args.append(self.value())
            if toks[self.i] == ",":
                self.i += 1
            elif toks[self.i] != ")":
                self.fail(self.i, f"expected ',' or ')' in {name}(...), got {_describe(toks[self.i])}")
        self.i += 1
        if name == "dtype":
            dtype = _DTYPES_BY_NAME.get(str(args[0])) if len(args) == 1 and not kwargs else None
            if dtype is None:
                self.fail(index, f"expected dtype('<supported dtype name>'), got dtype{tuple(args)!r}")
            return dtype
        cls = _find_struct(name)
        if isinstance(cls, str):
            self.fail(index, cls)
        factory: Callable[..., object] = cls
        try:
            value = factory(*args, **kwargs)
        except (TypeError, ValueError) as e:
            self.fail(index, f"cannot build {name} from the text: {e}")
        assert isinstance(value, ParamStruct)
        return value
