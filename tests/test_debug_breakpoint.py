"""``fcore.debug.breakpoint`` (issue 15): staged as an effectful debug callback, it calls the
registered debugger with the user's frames and the traced locals' runtime values, eagerly
and under ``jit``; the ``cli`` debugger runs on given input. Also ``debug.callback``'s
two-call form and ``debug.print``'s keyword parameters, as JAX's."""

from __future__ import annotations

import io
import re
from typing import Any

import jax
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.api import debugger
from fcore.ir.effects import DebugEffect, OrderedDebugEffect

X = np.array([0.5, 1.5], np.float32)
Calls = list[tuple[list[debugger.DebuggerFrame], dict[str, Any]]]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """A recording debugger of highest priority (the registry restored afterwards)."""
    seen: Calls = []

    def record(frames: list[debugger.DebuggerFrame], thread_id: int | None, **kwargs: Any) -> None:
        seen.append((frames, kwargs))

    monkeypatch.setattr(debugger, "_debugger_registry", dict(debugger._debugger_registry))
    debugger.register_debugger("record", record, 100)
    return seen


def stops(x: Any) -> Any:
    y = fnp.sin(x) * 2.0
    fcore.debug.breakpoint(note="here")
    return y + 1.0


BREAK_LINE = stops.__code__.co_firstlineno + 2


@pytest.mark.parametrize("compiled", [False, True])
def test_breakpoint_calls_the_debugger_with_runtime_locals(calls: Calls, compiled: bool) -> None:
    f = fcore.jit(stops) if compiled else stops
    out = f(X)
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * 2 + 1, rtol=1e-6)
    assert len(calls) == 1
    frames, kwargs = calls[0]
    assert kwargs == {"note": "here"}
    top = frames[0]
    assert top.filename == __file__ and top.lineno == BREAK_LINE
    assert top.offset is not None and "breakpoint" in top.source[top.offset]
    assert not isinstance(top.locals["y"], fcore.core.Tracer)  # the value, not the tracer
    np.testing.assert_allclose(np.asarray(top.locals["y"]), np.sin(X) * 2, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(top.locals["x"]), X)
    assert all("/fcore/" not in f.filename for f in frames)  # fcore's own frames filtered out


def test_breakpoint_stages_a_debug_callback_with_its_effect(calls: Calls) -> None:
    plain = fcore.make_jaxpr(stops)(X)
    [eqn] = [e for e in plain.eqns if e.primitive.name == "debug_callback"]
    assert eqn.effects == {DebugEffect()}
    ordered = fcore.make_jaxpr(lambda x: fcore.debug.breakpoint(ordered=True))(X)
    assert ordered.effects == {OrderedDebugEffect()}
    dropped_output = fcore.make_jaxpr(lambda x: (fcore.debug.breakpoint(), x)[1] * 0)(X)
    from fcore.transforms.dce import dce_jaxpr

    kept, _ = dce_jaxpr(dropped_output, [True])
    assert any(e.primitive.name == "debug_callback" for e in kept.eqns)  # DCE keeps the effect
    assert not calls  # tracing alone never stops


def test_breakpoint_with_a_token_runs_when_the_token_is_computed(calls: Calls) -> None:
    def f(x: Any) -> Any:
        y = x * 3.0
        return fcore.debug.breakpoint(token=y, num_frames=1) + 1.0

    np.testing.assert_allclose(np.asarray(fcore.jit(f)(X)), X * 3 + 1)
    assert len(calls) == 1 and len(calls[0][0]) == 1
    np.testing.assert_allclose(np.asarray(calls[0][0][0].locals["y"]), X * 3)
    eqn_names = [e.primitive.name for e in fcore.make_jaxpr(f)(X).eqns]
    assert "pure_callback" in eqn_names


def test_breakpoint_errors_as_jax() -> None:
    with pytest.raises(ValueError) as theirs:
        jax.debug.breakpoint(ordered=True, token=np.float32(1))
    with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
        fcore.debug.breakpoint(ordered=True, token=np.float32(1))


def test_backend_choice_and_registry(calls: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    other: list[int] = []
    debugger.register_debugger("other", lambda frames, tid, **kw: other.append(1), 0)
    fcore.debug.breakpoint(backend="other")
    assert other == [1] and not calls
    fcore.debug.breakpoint()
    assert len(calls) == 1  # the highest priority
    with pytest.raises(ValueError, match='Debugger with name "other" already registered'):
        debugger.register_debugger("other", lambda frames, tid, **kw: None, 0)
    monkeypatch.setattr(debugger, "_debugger_registry", {})
    with pytest.raises(ValueError, match="No debuggers registered!"):
        fcore.debug.breakpoint()


def test_cli_debugger_reads_commands() -> None:
    def g(x: Any) -> Any:
        z = x + 10.0
        fcore.debug.breakpoint(backend="cli", stdin=io.StringIO("p z\npp z.shape\nup\nw\nc\n"), stdout=out)
        return z

    out = io.StringIO()
    fcore.jit(g)(X)
    text = out.getvalue()
    assert "Entering fdb:" in text
    assert "Array([10.5, 11.5], dtype=float32)" in text
    assert "(2,)" in text
    assert f'File "{__file__}"' in text


def test_debug_callback_two_call_form_and_print_params(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[Any] = []
    fcore.debug.callback(ordered=True)(lambda a, k: seen.append((np.asarray(a), k)), X, k=2)
    assert len(seen) == 1 and seen[0][1] == 2
    with pytest.raises(TypeError, match="must be callable"):
        fcore.debug.callback(X, ordered=True)  # type: ignore[call-overload]
    with pytest.raises(TypeError) as theirs:
        jax.debug.callback(None, X)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=re.escape(str(theirs.value).split(":")[0])):
        fcore.debug.callback(None, X)  # type: ignore[call-overload]

    def f(x: Any) -> Any:
        fcore.debug.print("x={x}", x=x, ordered=False, partitioned=True)
        fcore.debug.print("{}", x, skip_format_check=True)
        fcore.debug.print(ordered=True, partitioned=False)("y={}", x)
        return x

    fcore.jit(f)(X)
    assert capsys.readouterr().out == "x=[0.5 1.5]\n[0.5 1.5]\ny=[0.5 1.5]\n"
