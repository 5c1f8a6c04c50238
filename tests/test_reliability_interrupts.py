"""Issue 23, class 7: a ``KeyboardInterrupt`` during a compile must not crash the process.

jaxlib's ``compile_and_load`` returned early on a pending signal and freed the MLIR module
its thread pool was still compiling; the pool then crashed with SIGSEGV at some later point.
fcore runs the call on a helper thread (``runtime.run_to_completion``). The loops run in a
subprocess, so a crash fails the test instead of killing pytest."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import _thread, faulthandler, threading
    import numpy as np
    import fcore, fcore.numpy as fnp
    from fcore.backend import runtime

    faulthandler.enable()

    def chain(x):
        for _ in range(20):
            x = fnp.sin(x) * 1.5 + fnp.cos(x @ x)
        return x

    x = np.eye(4, dtype=np.float32)
    text = fcore.jit(fcore.grad(lambda v: chain(v).sum())).lower(x).as_text()
    avals = [((4, 4), np.dtype(np.float32))]
    interrupted = 0
    for i in range(10):
        timer = threading.Timer(0.002 * (1 + i % 4), _thread.interrupt_main)
        try:
            timer.start()
            runtime.compile(text.replace("1.5", f"1.{i + 6}"), avals)
            timer.join()
        except KeyboardInterrupt:
            interrupted += 1
        timer.cancel()
        junk = [[str(j) * 3 for j in range(200)] for _ in range(100)]  # reuses freed memory
        fcore.make_jaxpr(chain)(x)
    for i in range(2):  # compiles after the interrupted ones, while those may still run
        runtime.compile(text.replace("1.5", f"2.{i + 6}"), avals)
    g = fcore.jit(fcore.grad(lambda v: chain(v).sum()))
    print("ok", interrupted, np.isfinite(np.asarray(g(x))).all())
    """
)


#: ``_thread.interrupt_main`` does nothing in a process that inherited SIGINT ignored (as a
#: pytest-xdist worker's children can: CI saw both tests below lose every interrupt), so the
#: programs install Python's handler themselves.
SIGINT_HANDLER = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def _run(program: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SIGINT_HANDLER + program], capture_output=True, text=True, timeout=120,
        env={**os.environ},
    )


def test_interrupted_compiles_do_not_crash() -> None:
    out = _run(PROGRAM)
    assert out.returncode == 0, out.stderr[-3000:]
    status, interrupted, finite = out.stdout.split()
    assert status == "ok" and finite == "True"
    assert int(interrupted) > 0  # the loop did interrupt compiles


def test_interrupt_propagates_while_the_helper_finishes() -> None:
    program = textwrap.dedent(
        """
        import _thread, threading
        from fcore.backend.runtime import run_to_completion
        release, done = threading.Event(), []
        def blocked():
            release.wait()
            done.append(1)
            return 7
        threading.Timer(0.01, _thread.interrupt_main).start()
        try:
            run_to_completion(blocked)
        except KeyboardInterrupt:
            print("interrupted", done)
        release.set()
        for t in threading.enumerate():
            if t.name == "fcore-compile":
                t.join()
        print(done, run_to_completion(lambda: 3))
        """
    )
    out = _run(program)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["interrupted []", "[1] 3"]
