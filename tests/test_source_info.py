"""Equations' source info (issue 19 item 4): the user's line and the name stack, recorded by
tracing, kept by the passes, printed on demand, lowered to StableHLO locations, named in
errors; compared with what JAX records for the same source lines."""

from __future__ import annotations

import pickle
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import source_info_util

import fcore
import fcore.numpy as fnp
from fcore.core import ShapedArray, eval_jaxpr, typecheck
from fcore.errors import JaxprTypeError
from fcore.ir.core import ClosedJaxpr, JaxprEqn, Var
from fcore.ir.source_info import Frame, SourceInfo

X = np.linspace(0.1, 1.0, 3, dtype=np.float32)


def program(np_mod: Any, named_scope: Any, named_call: Any, x: Any) -> Any:
    """The same source text traced by both libraries (so lines and columns agree)."""
    with named_scope("outer"):
        y = np_mod.sin(x)
        z = named_call(lambda a: a * 2.0, name="dbl")(y)
    return np_mod.exp(z) + 1.0


def fprog(x: Any) -> Any:
    return program(fnp, fcore.named_scope, fcore.named_call, x)


def jprog(x: Any) -> Any:
    return program(jnp, jax.named_scope, jax.named_call, x)


def total(prog: Any, x: Any) -> Any:
    return prog(x).sum()


@pytest.mark.parametrize("transform", ["grad", "vmap", "jvp"])
def test_transformed_equations_carry_lines_and_names_as_jax(transform: str) -> None:
    """The same sites, and the name stacks wrapped as JAX wraps them: ``jvp(outer)/dbl``,
    ``transpose(jvp(outer))``, ``vmap(outer)``."""
    make: dict[str, Any] = {
        "grad": lambda lib, prog: lib.grad(lambda x: total(prog, x)),
        "vmap": lambda lib, prog: lib.vmap(prog),
        "jvp": lambda lib, prog: lambda x: lib.jvp(prog, (x,), (x,)),
    }
    arg = np.stack([X, X]) if transform == "vmap" else X
    ours = _fcore_sites(fcore.make_jaxpr(make[transform](fcore, fprog))(arg))
    theirs = _jax_sites(jax.make_jaxpr(make[transform](jax, jprog))(arg))
    assert ours == theirs


def _fcore_sites(closed: ClosedJaxpr) -> list[tuple[str, int, int, str, str]]:
    out = []
    for e in closed.eqns:
        info = e.source_info
        assert info is not None and info.frame is not None, e
        f = info.frame
        out.append((e.primitive.name, f.start_line, f.start_column, f.function_name, info.name))
    return out


def _jax_sites(closed: Any) -> list[tuple[str, int, int, str, str]]:
    out = []
    for e in closed.eqns:
        f = source_info_util.user_frame(e.source_info.traceback)
        assert f is not None
        out.append((e.primitive.name, f.start_line, f.start_column, f.function_name, str(e.source_info.name_stack)))
    return out


def test_tracing_records_the_users_line_and_name_stack_as_jax() -> None:
    ours = _fcore_sites(fcore.make_jaxpr(fprog)(X))
    theirs = _jax_sites(jax.make_jaxpr(jprog)(X))
    assert ours == theirs
    assert [s[4] for s in ours] == ["outer", "outer/dbl", "", ""]
    assert all(e.source_info is not None and e.source_info.frame is not None
               and e.source_info.frame.file_name == __file__ for e in fcore.make_jaxpr(fprog)(X).eqns)


def test_source_info_is_not_structure() -> None:
    def one(x: Any) -> Any:
        return fnp.sin(x)

    def two(x: Any) -> Any:
        return fnp.sin(x)  # another line

    a, b = fcore.make_jaxpr(one)(X), fcore.make_jaxpr(two)(X)
    assert a.eqns[0].source_info != b.eqns[0].source_info
    assert a == b and hash(a) == hash(b) and a.jaxpr.fingerprint() == b.jaxpr.fingerprint()
    assert a.eqns[0] == b.eqns[0].replace(invars=a.eqns[0].invars, outvars=a.eqns[0].outvars)
    assert str(a) == str(b)


def _lines_by_primitive(closed: ClosedJaxpr) -> dict[str, set[tuple[int, str]]]:
    found: dict[str, set[tuple[int, str]]] = {}
    for e in closed.eqns:
        assert e.source_info is not None and e.source_info.frame is not None, e
        assert e.source_info.frame.file_name == __file__
        found.setdefault(e.primitive.name, set()).add((e.source_info.frame.start_line, e.source_info.name))
    return found


SIN_LINE = program.__code__.co_firstlineno + 3
MUL_LINE = SIN_LINE + 1
EXP_LINE = SIN_LINE + 2


def test_passes_keep_the_source_info() -> None:
    loss = lambda x: fprog(x).sum()  # noqa: E731
    grad = _lines_by_primitive(fcore.make_jaxpr(fcore.grad(loss))(X))
    assert grad["sin"] == {(SIN_LINE, "jvp(outer)")}
    assert grad["cos"] == {(SIN_LINE, "jvp(outer)")}  # sin's derivative
    # mul's primal and transpose, sin's cotangent times cos, exp's cotangent times exp
    assert grad["mul"] == {(MUL_LINE, "jvp(outer)/dbl"), (MUL_LINE, "transpose(jvp(outer))/dbl"),
                           (SIN_LINE, "transpose(jvp(outer))"), (EXP_LINE, "transpose(jvp())")}
    vmapped = _lines_by_primitive(fcore.make_jaxpr(fcore.vmap(fprog))(np.stack([X, X])))
    assert vmapped["sin"] == {(SIN_LINE, "vmap(outer)")} and vmapped["exp"] == {(EXP_LINE, "vmap()")}
    # The pure passes over a jaxpr: jvp_jaxpr, partial_eval_jaxpr, transpose_jaxpr.
    from fcore.transforms.autodiff import vjp_jaxpr
    from fcore.transforms.batching import batch_jaxpr

    closed = fcore.make_jaxpr(fprog)(X)
    primal, backward, _ = vjp_jaxpr(closed)
    assert _lines_by_primitive(primal)["cos"] == {(SIN_LINE, "jvp(outer)")}
    assert _lines_by_primitive(backward)["mul"] >= {(MUL_LINE, "transpose(jvp(outer))/dbl")}
    batched, _ = batch_jaxpr(closed, 2, [0])
    assert _lines_by_primitive(batched)["sin"] == {(SIN_LINE, "vmap(outer)")}


def test_replayed_equations_get_the_enclosing_scope() -> None:
    inner = fcore.make_jaxpr(fprog)(X)

    def outer(x: Any) -> Any:
        with fcore.named_scope("wrap"):
            return eval_jaxpr(inner.jaxpr, inner.consts, x)[0]

    names = [e.source_info.name for e in fcore.make_jaxpr(outer)(X).eqns if e.source_info is not None]
    assert names == ["wrap/outer", "wrap/outer/dbl", "wrap", "wrap"]


def test_pretty_print_matches_jax_annotations() -> None:
    ours = fcore.make_jaxpr(fprog)(X).pretty_print(source_info=True, name_stack=True)
    theirs: str = jax.make_jaxpr(jprog)(X).pretty_print(source_info=True, name_stack=True)  # type: ignore[no-untyped-call]

    def notes(text: str) -> list[str]:
        return [line.split("# ", 1)[1] for line in text.splitlines() if "# " in line]

    assert notes(ours) == notes(theirs)
    plain = fcore.make_jaxpr(fprog)(X)
    assert "#" not in plain.pretty_print() and plain.pretty_print() == str(plain)
    assert "# [" not in plain.pretty_print(source_info=True)
    assert "b = sin a" in plain.pretty_print(print_shapes=False)


def test_lowering_writes_locations() -> None:
    text = fcore.jit(fprog).lower(X).as_text()
    assert f'loc("outer/sin"("{__file__}":{SIN_LINE}:' in text
    assert f'loc("outer/dbl/mul"("{__file__}":{MUL_LINE}:' in text
    fcore.jit(fprog).lower(X).compiler_ir()  # MLIR reads the locations back
    np.testing.assert_allclose(np.asarray(fcore.jit(fprog)(X)), np.asarray(jax.jit(jprog)(X)), rtol=1e-6)


def test_typecheck_error_names_the_users_line() -> None:
    closed = fcore.make_jaxpr(fprog)(X)
    bad = closed.eqns[0].replace(outvars=(Var(ShapedArray((4,), np.dtype("float32"))),))
    broken = closed.jaxpr.replace(eqns=(bad, *closed.eqns[1:]), outvars=closed.jaxpr.outvars)
    with pytest.raises(JaxprTypeError, match=re.escape(f"(equation 0 was bound at {__file__}:{SIN_LINE}:")):
        typecheck(broken)


def test_errors_while_evaluating_name_the_users_line() -> None:
    def boom(x: Any) -> None:
        raise ValueError("boom")

    def f(x: Any) -> Any:
        fcore.debug.callback(boom, x)
        return x + 1

    closed = fcore.make_jaxpr(f)(X)
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match="boom") as info:
        eval_jaxpr(closed.jaxpr, closed.consts, X)
    assert any(f"{__file__}:{line}:" in note for note in getattr(info.value, "__notes__", []))


def test_source_info_pickles_and_equations_without_it_work() -> None:
    info = fcore.make_jaxpr(fprog)(X).eqns[0].source_info
    assert info is not None
    again = pickle.loads(pickle.dumps(info))
    assert again == info and again.frame == info.frame and again.name_stack == ("outer",)
    assert SourceInfo(Frame("f.py", "g", 3, 0, 3, 4)).summary() == "f.py:3 (g)"
    assert SourceInfo(None).summary() == "unknown"
    eqn = fcore.make_jaxpr(fnp.sin)(X).eqns[0]
    bare = JaxprEqn(eqn.primitive, eqn.invars, eqn.outvars, eqn.params)
    assert bare.source_info is None and bare == eqn


def test_an_eager_callback_error_names_the_line_that_bound_it() -> None:
    def bad(x: Any) -> Any:
        raise ValueError("nope")

    def f(x: Any) -> Any:
        return fcore.pure_callback(bad, fcore.ShapeDtypeStruct((3,), np.float32), x)

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match="nope") as info:
        f(X)
    assert f"(in the callback bound at {__file__}:{line}:15 (" in "".join(getattr(info.value, "__notes__", []))


def test_extend_source_info_util(tmp_path: Any) -> None:
    from fcore.extend import source_info_util as siu

    lib = tmp_path / "srcinfo_mylib.py"
    lib.write_text("import fcore.numpy as fnp\n\ndef lib_sin(x):\n    return fnp.sin(x)\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("srcinfo_mylib", lib)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def f(x: Any) -> Any:
        return mod.lib_sin(x)

    def where() -> Frame | None:
        info = fcore.make_jaxpr(f)(X).eqns[0].source_info
        return None if info is None else info.frame

    before = where()
    assert before is not None and before.file_name == str(lib) and before.start_line == 4
    siu.register_exclusion(str(tmp_path))  # a library's frames: the user's line is the caller's
    after = where()
    assert after is not None and after.file_name == __file__ and after.function_name.endswith("f")

    imported = SourceInfo(Frame("model.py", "layer", 7, 2, 7, 9), ("imported",))
    with siu.extend_name_stack("outer"), siu.user_context(imported):
        eqn = fcore.make_jaxpr(fnp.cos)(X).eqns[0]
        here = siu.current()
    assert eqn.source_info is not None and eqn.source_info.frame == imported.frame
    assert eqn.source_info.name_stack == ("outer", "imported")
    assert siu.summarize(eqn.source_info) == "model.py:7:2 (layer)"
    assert here.name_stack == ("outer", "imported")
    mine = siu.current()
    assert mine.frame is not None and mine.frame.file_name == __file__ and mine.name_stack == ()
    assert siu.summarize(siu.new_source_info()) == "unknown"


def test_persistent_cache_key_ignores_locations() -> None:
    from fcore.backend.compilation_cache import cache_key
    from fcore.backend.lowering import lower_jaxpr

    def one(x: Any) -> Any:
        return fnp.sin(x)

    def two(x: Any) -> Any:
        return fnp.sin(x)  # another line

    a, b = (lower_jaxpr(fcore.make_jaxpr(f)(X), "f") for f in (one, two))
    assert a != b and "loc(" in a
    assert cache_key(a, "v", "cpu", "cpu", b"") == cache_key(b, "v", "cpu", "cpu", b"")
    assert cache_key(a, "v", "cpu", "cpu", b"") != cache_key(a.replace("sine", "cosine"), "v", "cpu", "cpu", b"")
