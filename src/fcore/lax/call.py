"""Calls of a closed jaxpr: the ``jit`` primitive, and what every call-like primitive shares.

``jit[jaxpr name] *consts *args`` runs ``jaxpr``; its impl compiles the jaxpr with XLA
(cached by the jaxpr's structure, so alpha-equivalent jaxprs share an executable) and runs
it on device buffers. The jaxpr parameter never has consts: they are hoisted into explicit
leading operands, which is what lets a jitted function close over tracers of outer
transformations (docs/backend.md). The helpers above the ``jit`` block (hoisting consts,
evaluating a jaxpr, eager results, lowering as a ``func.call``, typed parameter access) serve
the other call-like primitives too: ``remat2``, the custom-derivative calls, control flow.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import attrs
import numpy as np
from typing_extensions import TypeGuard

from fcore.backend import runtime
from fcore.backend.lru import LruCache
from fcore.config_options import compile_log_level
from fcore.backend.lowering import (
    TOKEN_TYPE, LoweringRuleContext, donation_aliases, lower_jaxpr, lowering_rules, ordered_token, tensor_type,
    threads_token,
)
from fcore.errors import FcoreError
from fcore.interpreters.array import Array, ArrayImpl, register_device_placer
from fcore.interpreters.eval import check_allocation, to_numpy_arg
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr, JaxprEqn
from fcore.ir.params import ParamValue
from fcore.ir.printer import pp_eqn_in
from fcore.lax._base import ArrayLike, check_operands
from fcore.lax._primitive import Primitive
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, is_undefined
from fcore.transforms.batching import Dim, batch_jaxpr, batching_rules
from fcore.transforms.dce import dce_jaxpr_open, dce_rules
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from fcore.transforms.transpose import transpose_jaxpr, transpose_rules

T = TypeVar("T")
_logger = logging.getLogger(__name__)
#: The operands of a call: fcore arrays, or (eagerly) anything ``fcore.lax`` takes.
A = TypeVar("A", bound=ArrayLike)


# =========================================================================================
# What every call-like primitive shares
# =========================================================================================
def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[ArrayLike]]:
    """Constvars become leading invars; returns the const-free jaxpr and the consts."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    return ClosedJaxpr(Jaxpr((), j.constvars + j.invars, j.outvars, j.eqns), ()), list(closed.consts)


def eval_closed(closed: ClosedJaxpr, args: Sequence[A]) -> list[A | Array]:
    """Evaluate ``closed`` on ``args`` under the current trace (binding each equation); an
    output that is an input comes back as it was given."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def as_eager_results(outs: Sequence[ArrayLike], avals: Sequence[ShapedArray]) -> list[ArrayImpl]:
    """Eager results as ``ArrayImpl`` s of the given types (an output may be an input as passed)."""
    result: list[ArrayImpl] = []
    for o, a in zip(outs, avals, strict=True):
        if type(o) is ArrayImpl and o.dtype == a.dtype and o.weak_type == a.weak_type:
            result.append(o)
        else:
            arr, _ = to_numpy_arg(o)
            result.append(ArrayImpl(np.asarray(arr, a.dtype), a.weak_type))
    return result


def lower_call(ctx: LoweringRuleContext, args: Sequence[str], closed: ClosedJaxpr, name: str) -> list[str]:
    """Lower a call of the const-free ``closed`` as a ``func.call`` of a private function
    (passing and taking back the token when the callee has ordered effects)."""
    sym = ctx.module.private_function(closed.jaxpr, name)
    in_types = [tensor_type(a) for a in ctx.avals_in]
    out_types = [tensor_type(a) for a in closed.out_avals]
    token = threads_token(closed.jaxpr)
    if token:
        args = [*args, ordered_token(ctx)]
        in_types.append(TOKEN_TYPE)
        out_types.append(TOKEN_TYPE)
    call = f"func.call @{sym}({', '.join(args)}) : ({', '.join(in_types)}) -> ({', '.join(out_types)})"
    if not out_types:
        ctx.fn.lines.append(f"    {call}{ctx.fn.location}")
        return []
    result = ctx.emit(call, n_results=len(out_types))
    names = [result] if len(out_types) == 1 else [f"{result}#{i}" for i in range(len(out_types))]
    if token:
        ctx.fn.token = names.pop()
    return names


def param_of(eqn: JaxprEqn, name: str, cls: type[T]) -> T:
    """The parameter ``name`` of ``eqn``, which the primitive declares of type ``cls`` (for
    DCE rules, which receive the equation rather than its parameters as keywords)."""
    value = eqn.params[name]
    assert isinstance(value, cls), (name, value)
    return value


def _all_of(value: ParamValue, cls: type[T]) -> TypeGuard[tuple[T, ...]]:
    return isinstance(value, tuple) and all(isinstance(x, cls) for x in value)


def tuple_param_of(eqn: JaxprEqn, name: str, cls: type[T]) -> tuple[T, ...]:
    """``param_of`` for a parameter declared ``tuple[cls, ...]``."""
    value = eqn.params[name]
    assert _all_of(value, cls), (name, value)
    return value


# =========================================================================================
# Executables: compile once per jaxpr structure, run on device buffers
# =========================================================================================
#: How many executables the structure-keyed caches keep beyond those functions hold: each
#: function's own trace cache keeps (weakly, by the function) what it uses, so 2,000 fresh
#: lambdas do not keep 2,000 executables alive (issue 23, class 9).
SHARED_EXECUTABLES = 64
_compiled: LruCache[Hashable, runtime.Executable] = LruCache(SHARED_EXECUTABLES)
_compile_lock = threading.Lock()


def clear_executable_cache() -> None:
    with _compile_lock:
        _compiled.clear()
        _launches.clear()


class CompileError(FcoreError, RuntimeError):
    """XLA rejected the program; the message names the jaxpr equation that produced the op."""


def compile_jaxpr(
    closed: ClosedJaxpr, name: str, aliases: Sequence[int | None] = (), device: runtime.Device | None = None
) -> runtime.Executable:
    """The executable for ``closed`` (consts as leading parameters), from the cache if seen.
    ``aliases`` gives the result each donated parameter's buffer is reused for; ``device``
    the device it runs on (None: the default device)."""
    key: Hashable = closed.jaxpr if not any(a is not None for a in aliases) else (closed.jaxpr, tuple(aliases))
    if device is not None:
        key = (key, device)
    exe = _compiled.get(key)
    if exe is None:
        check_allocation(closed.out_avals)  # before XLA fails to allocate them, asynchronously
        level = compile_log_level()  # ``jax_log_compiles``: JAX's log lines
        logged = _logger.isEnabledFor(level)
        if logged:
            avals = ", ".join(repr(a) for a in closed.in_avals)
            mapping = ", ".join(["UnspecifiedValue"] * len(closed.in_avals))
            _logger.log(level, "Compiling jit(%s) with global shapes and types (%s). Argument mapping: (%s).",
                        name, avals, mapping)
            start = time.perf_counter()
        text = lower_jaxpr(closed, name, aliases)
        if logged:
            _logger.log(level, "Finished jaxpr to MLIR module conversion jit(%s) in %.9f sec",
                        name, time.perf_counter() - start)
            start = time.perf_counter()
        try:
            exe = runtime.compile(text, [(a.shape, a.dtype) for a in closed.out_avals], device=device)
        except runtime.XlaCompileError as e:
            raise CompileError(_explain_compile_error(e, text, closed.jaxpr)) from e
        if logged:
            _logger.log(level, "Finished XLA compilation of jit(%s) in %.9f sec", name, time.perf_counter() - start)
        with _compile_lock:
            exe = _compiled.setdefault(key, exe)
    return exe


def _explain_compile_error(e: runtime.XlaCompileError, text: str, jaxpr: Jaxpr) -> str:
    """Find the failing op's ``loc("main.eqnN.prim")`` and name that jaxpr equation, or its
    ``loc("names/prim"("file":line:col))`` and name the user's line."""
    m = re.search(r"-:(\d+):\d+", e.xla_message)
    lines = text.split("\n")
    if m and 0 < int(m.group(1)) <= len(lines):
        loc = re.search(r'loc\("(\w+)\.eqn(\d+)\.([\w]+)"\)', lines[int(m.group(1)) - 1])
        if loc and loc.group(1) == "main":
            i = int(loc.group(2))
            return f"XLA failed on the lowering of primitive '{loc.group(3)}' (equation {i}: {pp_eqn_in(jaxpr, i)}): {e.xla_message}"
        if loc:
            return f"XLA failed on primitive '{loc.group(3)}' in nested function {loc.group(1)}: {e.xla_message}"
        user = re.search(r'loc\("(?:[^"]*/)?(\w+)"\("([^"]*)":(\d+):(\d+)\)\)', lines[int(m.group(1)) - 1])
        if user:  # an equation with source info: name the user's line (and the equation, if in main)
            prim, file, line, col = user.group(1), user.group(2), int(user.group(3)), int(user.group(4))
            where = f"bound at {file}:{line}"
            for i, eqn in enumerate(jaxpr.eqns):
                frame = eqn.source_info.frame if eqn.source_info is not None else None
                if eqn.primitive.name == prim and frame is not None and (
                    frame.file_name, frame.start_line, frame.start_column) == (file, line, col):
                    where = f"equation {i}: {pp_eqn_in(jaxpr, i)}; {where}"
                    break
            return f"XLA failed on the lowering of primitive '{prim}' ({where}): {e.xla_message}"
    return f"XLA compilation failed: {e.xla_message}"


def to_device(x: ArrayLike) -> runtime.DeviceBuffer:
    """A device buffer for an operand; an ``ArrayImpl`` keeps its buffer for next time."""
    if type(x) is ArrayImpl:
        buf = x.device_buffer()
        if type(buf) is runtime.DeviceBuffer:
            return buf
        new = runtime.device_put(x.host())  # a deleted array raises here
        x.set_device_buffer(new)
        return new
    arr, _ = to_numpy_arg(x)
    return runtime.device_put(arr)


register_device_placer(to_device)


class Launch:
    """A compiled program ready to run on concrete operands, with everything a call needs
    looked up once: the executable's launch function and result handlers, the device
    arrays of the hoisted consts, per output its (weak type, runtime aval, aval), and which
    arguments the program takes (``kept``: None for all; as in JAX, parameters that nothing
    uses are left out of the compiled program, so a call does not pass their buffers).
    """

    __slots__ = ("executable", "run", "handlers", "consts", "outs", "single", "donated", "kept", "device")

    def __init__(
        self,
        exe: runtime.Executable,
        out_avals: Sequence[ShapedArray],
        consts: Sequence[ArrayLike],
        donated: tuple[int, ...] = (),
        kept: tuple[int, ...] | None = None,
        device: runtime.Device | None = None,
    ) -> None:
        self.executable = exe
        self.run, self.handlers, rt_avals = exe.launch_parts()
        #: The device the program runs on, when not the default one (arguments committed there).
        self.device = device
        # Consts never change: put them once (an ArrayImpl const also keeps its device copy).
        self.consts: tuple[runtime.RawArray, ...] = tuple(self._put(c) for c in consts)
        self.outs: tuple[tuple[bool, runtime.OutAval, ShapedArray], ...] = tuple(
            (a.weak_type, r, a) for a, r in zip(out_avals, rt_avals, strict=True)
        )
        #: Positions (after the consts) of the arguments whose buffers the results reuse.
        self.donated = donated
        #: Positions (after the consts) of the arguments the program takes; None: all of them.
        self.kept = kept

    def __call__(self, args: Sequence[ArrayLike]) -> list[ArrayImpl]:
        """Run on ``args`` (after the consts): ``ArrayImpl``s or anything ``to_device`` takes."""
        raw = [*self.consts]
        kept = self.kept
        if kept is not None:
            for a in args:  # an unused argument is not passed, but a leaked tracer is still an error
                if type(a) is not ArrayImpl and isinstance(a, Tracer):
                    to_numpy_arg(a)  # raises UnexpectedTracerError
            args = [args[i] for i in kept]
        if self.device is None:
            for a in args:
                if type(a) is ArrayImpl:
                    buf = a._device
                    if type(buf) is runtime.DeviceBuffer:  # already on the device (``to_device``, inlined)
                        raw.append(buf._array)
                        continue
                raw.append(to_device(a).raw_array())
        else:
            raw.extend(self._put(a) for a in args)
        outs = self.run(raw).consume_with_handlers(self.handlers)
        for i in self.donated:  # (never with ``kept``: donating launches are not pruned)  # their buffers now belong to the results, as in jax
            arg = args[i]
            if type(arg) is ArrayImpl:
                arg.delete()
        return [ArrayImpl(None, w, runtime.DeviceBuffer(o, r), av) for o, (w, r, av) in zip(outs, self.outs)]

    def _put(self, x: ArrayLike) -> runtime.RawArray:
        """``x``'s jaxlib array on this launch's device (copied there if it is elsewhere: an
        argument not committed to a device moves to the committed ones', as in JAX)."""
        if self.device is None:
            return to_device(x).raw_array()
        if type(x) is ArrayImpl and type(x._device) is runtime.DeviceBuffer and x._device.device == self.device:
            return x._device.raw_array()
        host, _ = to_numpy_arg(x)
        return runtime.device_put(host, self.device).raw_array()

    def fast_parts(self, unflatten: Callable[[list[ArrayImpl]], object] | None) -> FastParts:
        """What jit's cached path needs to run this launch on its arguments' jaxlib arrays
        (``DeviceBuffer.raw_array()``, every argument in order), looked up once: the launch
        function (which drops the unused arguments and puts the consts first, where there are
        any), the result handlers, each result's (runtime aval, weak type, aval) for the caller
        to wrap, and ``unflatten`` from the wrapped results to the call's result (None: the one
        result is the call's). Donating launches have their own path (``__call__``)."""
        assert not self.donated
        assert unflatten is not None or len(self.outs) == 1
        launch, consts, kept = self.run, self.consts, self.kept
        run = launch
        if kept is not None or consts:
            def run_with_consts(raw: Sequence[runtime.RawArray]) -> runtime.ExecuteResults:
                if kept is not None:
                    raw = [raw[i] for i in kept]
                return launch([*consts, *raw])

            run = run_with_consts
        wraps = tuple((rt_aval, weak, aval) for weak, rt_aval, aval in self.outs)
        return run, self.handlers, wraps, unflatten


#: ``Launch.fast_parts``: launch function, result handlers, each result's (runtime aval, weak
#: type, aval), and the function from the wrapped results to the call's result (None: the one
#: result is the call's).
FastParts = tuple[
    runtime.LaunchFn,
    list[runtime.ResultHandler],
    tuple[tuple[runtime.OutAval, bool, ShapedArray], ...],
    "Callable[[list[ArrayImpl]], object] | None",
]


def prune_unused(closed: ClosedJaxpr, n_consts: int) -> tuple[ClosedJaxpr, list[int], tuple[int, ...] | None]:
    """``closed`` (const-free, the ``n_consts`` consts as leading invars) without the invars
    that no equation and no output uses (JAX's ``keep_unused=False``); returns it, the
    positions of the consts it keeps, and the positions of the arguments it keeps (None:
    nothing was pruned)."""
    jaxpr = closed.jaxpr
    used: set[int] = {id(a) for a in jaxpr.outvars}
    for eqn in jaxpr.eqns:
        used.update(map(id, eqn.invars))
    keep = [i for i, v in enumerate(jaxpr.invars) if id(v) in used]
    if len(keep) == len(jaxpr.invars):
        return closed, list(range(n_consts)), None
    pruned = Jaxpr((), tuple(jaxpr.invars[i] for i in keep), jaxpr.outvars, jaxpr.eqns)
    return (
        ClosedJaxpr(pruned, ()),
        [i for i in keep if i < n_consts],
        tuple(i - n_consts for i in keep if i >= n_consts),
    )


#: Const-free launches by jaxpr structure, as ``_compiled`` (what the ``jit_p`` impl runs).
_launches: LruCache[Jaxpr, Launch] = LruCache(SHARED_EXECUTABLES)


def launch_for(
    closed: ClosedJaxpr,
    name: str,
    consts: Sequence[ArrayLike] = (),
    donated: Sequence[bool] = (),
    device: runtime.Device | None = None,
) -> Launch:
    """A ``Launch`` of ``closed`` (compiled once per structure, see ``compile_jaxpr``), with
    ``consts`` as its leading operands; const-free ones are cached. ``donated`` flags the
    arguments (after the consts) whose buffers the results may reuse; a donated argument
    that no result matches in shape and dtype is kept, with a warning (as jax). Without
    donation, parameters that nothing uses are left out of the program (``prune_unused``).
    ``device``: run on that device instead of the default one (not cached here)."""
    if device is not None:
        pruned, kept_consts, kept = prune_unused(closed, len(consts))
        return Launch(compile_jaxpr(pruned, name, (), device), closed.out_avals, [consts[i] for i in kept_consts],
                      (), kept, device)
    if any(donated):
        flags = [False] * len(consts) + list(donated)
        aliases = donation_aliases(closed.in_avals, closed.out_avals, flags)
        unused = [a for a, d, al in zip(closed.in_avals, flags, aliases) if d and al is None]
        if unused:
            warnings.warn(
                "Some donated buffers were not usable: " + ", ".join(_short(a) for a in unused) + ".",
                UserWarning,
                stacklevel=_user_stacklevel(),
            )
        used = tuple(i - len(consts) for i, al in enumerate(aliases) if al is not None)
        return Launch(compile_jaxpr(closed, name, aliases), closed.out_avals, consts, used)
    if consts:
        pruned, kept_consts, kept = prune_unused(closed, len(consts))
        return Launch(compile_jaxpr(pruned, name), closed.out_avals, [consts[i] for i in kept_consts], (), kept)
    launch = _launches.get(closed.jaxpr)
    if launch is None:
        pruned, _, kept = prune_unused(closed, 0)
        launch = Launch(compile_jaxpr(pruned, name), closed.out_avals, (), (), kept)
        with _compile_lock:
            launch = _launches.setdefault(closed.jaxpr, launch)
    return launch


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning from this module's caller at the user's code."""
    level, frame = 2, sys._getframe(2)
    while frame.f_code.co_filename.startswith(_FCORE_DIR) and frame.f_back is not None:
        level, frame = level + 1, frame.f_back
    return level


_FCORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _short(aval: ShapedArray) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


# =========================================================================================
# jit
# =========================================================================================
@attrs.frozen(kw_only=True)
class JitParams:
    """``jit[jaxpr name]``: the const-free jaxpr to call, and the function's name."""

    jaxpr: ClosedJaxpr
    name: str


jit_p = Primitive("jit", multiple_results=True, params=JitParams)
jit_p.impl_takes_arrays = True
#: Runs a call over a device mesh (installed by ``fcore.api.spmd``): the results, or None
#: when the program and its arguments are on one device.
spmd_runner: list[Callable[[ClosedJaxpr, str, Sequence[ArrayLike]], "list[ArrayImpl] | None"]] = []


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str) -> list[ShapedArray]:
    check_operands(f"jit of {name}", avals, jaxpr.in_avals)
    return jaxpr.out_avals


@jit_p.def_impl
def _jit_impl(*args: ArrayLike, jaxpr: ClosedJaxpr, name: str) -> list[ArrayImpl]:
    if spmd_runner:
        outs = spmd_runner[0](jaxpr, name, args)
        if outs is not None:
            return outs
    return launch_for(jaxpr, name, device=_committed_device(args))(args)


def _committed_device(args: Sequence[ArrayLike]) -> runtime.Device | None:
    """The device an argument is committed to (off the default one), where the call runs as
    ``fcore.jit``'s does (which also names two such devices as an error before getting here)."""
    for a in args:
        if type(a) is ArrayImpl and type(a._device) is runtime.DeviceBuffer and a._device.placed:
            return a._device.device
    return None


@jvp_rules.register(jit_p, symbolic_zeros=True)
def _jit_jvp(
    primals: list[Array], tangents: list[Tangent], *, jaxpr: ClosedJaxpr, name: str
) -> tuple[list[Array], list[Tangent]]:
    nonzeros = [type(t) is not Zero for t in tangents]
    jvp_closed, out_nz = jvp_jaxpr(jaxpr, nonzeros, False)
    outs = bind_jit(jvp_closed, [*primals, *[t for t in tangents if not isinstance(t, Zero)]], f"jvp_{name}")
    n = len(jaxpr.out_avals)
    tangent_it = iter(outs[n:])
    touts: list[Tangent] = [next(tangent_it) if nz else Zero(a) for nz, a in zip(out_nz, jaxpr.out_avals)]
    return outs[:n], touts


@transpose_rules.register(jit_p)
def _jit_transpose(
    cts: list[Array], *invals: Array | UndefinedPrimal, jaxpr: ClosedJaxpr, name: str
) -> list[Array | None]:
    linear = [is_undefined(x) for x in invals]
    transposed = transpose_jaxpr(jaxpr, linear)
    nonlinear = [x for x in invals if not isinstance(x, UndefinedPrimal)]
    outs = iter(bind_jit(transposed, [*nonlinear, *cts], f"transpose_{name}"))
    return [next(outs) if lin else None for lin in linear]


@batching_rules.register(jit_p)
def _jit_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, jaxpr: ClosedJaxpr, name: str
) -> tuple[list[Array], list[Dim]]:
    batched, out_dims = batch_jaxpr(jaxpr, axis_size, dims)
    return bind_jit(batched, vals, f"vmap_{name}"), out_dims


@partial_eval_rules.register(jit_p)
def _jit_partial_eval(
    unknowns: list[bool], *, jaxpr: ClosedJaxpr, name: str
) -> tuple[dict[str, ParamValue], dict[str, ParamValue], list[bool], int]:
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(jaxpr, unknowns, False)
    return {"jaxpr": known, "name": name}, {"jaxpr": unknown, "name": name}, out_unknowns, num_res


@dce_rules.register(jit_p)
def _jit_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    closed = param_of(eqn, "jaxpr", ClosedJaxpr)
    new, used_inputs = dce_jaxpr_open(closed.jaxpr, used_outputs)
    invars = tuple(a for a, u in zip(eqn.invars, used_inputs) if u)
    outvars = tuple(v for v, u in zip(eqn.outvars, used_outputs) if u)
    params = eqn.params.replace(jaxpr=ClosedJaxpr(new, ()))
    return used_inputs, eqn.replace(invars=invars, outvars=outvars, params=params)


@lowering_rules.register(jit_p)
def _jit_lowering(ctx: LoweringRuleContext, *args: str, jaxpr: ClosedJaxpr, name: str) -> list[str]:
    return lower_call(ctx, args, jaxpr, name)


def bind_jit(closed: ClosedJaxpr, args: Sequence[ArrayLike], name: str) -> list[Array]:
    """Bind ``jit`` on ``closed`` (its consts hoisted into leading operands)."""
    hoisted, consts = hoist_consts(closed)
    outs: list[Array] = jit_p.bind(*consts, *args, jaxpr=hoisted, name=name)
    return outs
