"""``fcore.debug.breakpoint``: stop a program, eager or compiled, in an interactive debugger
over the user's stack frames, with the traced locals' runtime values (``jax.debug.breakpoint``).

The frames are captured while tracing; their traced values travel to the host through a debug
callback, so the debugger runs when the compiled program reaches the breakpoint. Debuggers are
looked up by name and priority in ``_debugger_registry`` (JAX's ``register_debugger``); the
built-in one is the command-line ``cli`` debugger.
"""

from __future__ import annotations

import cmd
import inspect
import pprint
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import IO, Any

from typing_extensions import TypeAlias

import attrs

from fcore import tree_util
from fcore.interpreters.trace import Tracer, is_internal_code
from fcore.lax.callbacks import debug_callback, pure_callback

__all__ = ["DebuggerFrame", "breakpoint", "get_debugger", "register_debugger"]


@attrs.frozen
class DebuggerFrame:
    """One Python frame as the debugger shows it (JAX's ``DebuggerFrame``)."""

    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: str
    source: list[str]
    lineno: int
    offset: int | None

    @staticmethod
    def from_frameinfo(info: inspect.FrameInfo) -> DebuggerFrame:
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = [line.rstrip("\n") for line in lines]
            offset: int | None = info.lineno - max(start, 1)
            if offset is None or offset >= len(source):
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        context = "".join(info.code_context or ())
        return DebuggerFrame(info.filename, dict(info.frame.f_locals), {}, context, source, info.lineno, offset)


#: A debugger: ``debugger(frames, thread_id, **kwargs)``, frames innermost first.
Debugger: TypeAlias = Callable[..., None]


_debugger_registry: dict[str, tuple[int, Debugger]] = {}
_debug_lock = threading.Lock()


def get_debugger(backend: str | None = None) -> Debugger:
    """The debugger named ``backend``, else the registered one of highest priority."""
    if backend is not None and backend in _debugger_registry:
        return _debugger_registry[backend][1]
    debuggers = sorted(_debugger_registry.values(), key=lambda entry: -entry[0])
    if not debuggers:
        raise ValueError("No debuggers registered!")
    return debuggers[0][1]


def register_debugger(name: str, debugger: Debugger, priority: int) -> None:
    if name in _debugger_registry:
        raise ValueError(f'Debugger with name "{name}" already registered.')
    _debugger_registry[name] = (priority, debugger)


class _Frames:
    """The captured frames split into their traced values (the callback's arguments) and the
    rest (kept as they are), so that the debugger sees each local's runtime value."""

    def __init__(self, frames: Sequence[DebuggerFrame]) -> None:
        self.frames = list(frames)
        self.slots: list[tuple[int, str, tree_util.PyTreeDef, list[Any], list[bool]]] = []
        self.dynamic: list[Any] = []
        for i, frame in enumerate(self.frames):
            for name, value in frame.locals.items():
                try:
                    with warnings.catch_warnings():  # e.g. a generator, a leaf: shown as it is
                        warnings.simplefilter("ignore")
                        leaves, treedef = tree_util.tree_flatten(value)
                except Exception:  # an object that does not flatten is shown as it is
                    continue
                traced = [isinstance(leaf, Tracer) for leaf in leaves]
                if any(traced):
                    self.slots.append((i, name, treedef, leaves, traced))
                    self.dynamic.extend(leaf for leaf, t in zip(leaves, traced) if t)

    def rebuild(self, values: Sequence[Any]) -> list[DebuggerFrame]:
        it = iter(values)
        frames = [attrs.evolve(f, locals=dict(f.locals)) for f in self.frames]
        for i, name, treedef, leaves, traced in self.slots:
            merged = [next(it) if t else leaf for leaf, t in zip(leaves, traced)]
            frames[i].locals[name] = tree_util.tree_unflatten(treedef, merged)
        return frames


def breakpoint(  # noqa: A001 - JAX's name
    *, backend: str | None = None, filter_frames: bool = True, num_frames: int | None = None,
    ordered: bool = False, token: Any = None, **kwargs: Any,
) -> Any:
    """Enter a debugger here when the program runs (``jax.debug.breakpoint``): ``backend``
    names a registered debugger (default: the one of highest priority), ``filter_frames``
    leaves fcore's own frames out, ``num_frames`` keeps that many frames from the innermost,
    ``ordered`` orders it with the other ordered effects. With ``token`` (a pytree of arrays,
    returned unchanged) it runs once the token is computed, and is dropped with it if unused.
    ``kwargs`` go to the debugger."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [info for info in infos if not is_internal_code(info.frame.f_code)]
    frames = [DebuggerFrame.from_frameinfo(info) for info in infos]
    del infos
    if num_frames is not None:
        frames = frames[:num_frames]
    captured = _Frames(frames)

    def enter(*values: Any) -> None:
        thread_id = None if threading.current_thread() is threading.main_thread() else threading.get_ident()
        debugger = get_debugger(backend)
        with _debug_lock:
            debugger(captured.rebuild(values), thread_id, **kwargs)

    if token is None:
        debug_callback(enter, *captured.dynamic, ordered=ordered)
        return None
    from fcore.lax import stop_gradient

    token, dynamic = tree_util.tree_map(stop_gradient, (token, captured.dynamic))

    def enter_then_return(tok: Any, *values: Any) -> Any:
        enter(*values)
        return tok

    return pure_callback(enter_then_return, token, token, *dynamic)


class CliDebugger(cmd.Cmd):
    """A text debugger over the captured frames (JAX's ``jdb``): evaluate expressions, ``p``/``pp``,
    ``up``/``down``, ``list``, ``where``, ``continue``, ``quit``."""

    prompt = "(fdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, completekey: str = "tab") -> None:
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering fdb:"

    def current_frame(self) -> DebuggerFrame:
        return self.frames[self.frame_index]

    def evaluate(self, expr: str) -> Any:
        frame = self.current_frame()
        return eval(expr, {}, {**frame.globals, **frame.locals})  # noqa: S307 - the user's own input

    def default(self, line: str) -> None:
        self._show(line, repr)

    def _show(self, expr: str, fmt: Any) -> None:
        try:
            print(fmt(self.evaluate(expr)), file=self.stdout)
        except Exception:
            print(traceback.format_exc(limit=1).rstrip(), file=self.stdout)

    def do_p(self, arg: str) -> None:
        """p expression: print the value of the expression."""
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression: pretty-print the value of the expression."""
        self._show(arg, pprint.pformat)

    def do_up(self, _: str) -> None:
        """u(p): move one frame out."""
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()

    do_u = do_up

    def do_down(self, _: str) -> None:
        """d(own): move one frame in."""
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()

    do_d = do_down

    def print_context(self, num_lines: int = 2) -> None:
        frame = self.current_frame()
        print(f"> {frame.filename}({frame.lineno})", file=self.stdout)
        if frame.offset is None:
            return
        lo, hi = max(frame.offset - num_lines, 0), min(frame.offset + num_lines + 1, len(frame.source))
        for i in range(lo, hi):
            marker = "->" if i == frame.offset else "  "
            print(f"{marker} {frame.source[i]}", file=self.stdout)

    def do_list(self, _: str) -> None:
        """l(ist): show the source around the current line."""
        self.print_context(num_lines=5)

    do_l = do_list

    def do_where(self, _: str) -> None:
        """w(here): the stack, most recent frame last."""
        for frame in reversed(self.frames):
            print(f'  File "{frame.filename}", line {frame.lineno}', file=self.stdout)
            if frame.code_context:
                print(f"    {frame.code_context.strip()}", file=self.stdout)

    do_w = do_bt = do_where

    def do_continue(self, _: str) -> bool:
        """c(ont(inue)): leave the debugger; the program goes on."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, _: str) -> bool:
        """q(uit): leave the debugger and exit."""
        sys.exit(0)

    do_q = do_EOF = do_exit = do_quit

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=self.stdout)


def run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None, **kwargs: Any) -> None:
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", run_cli_debugger, -1)
