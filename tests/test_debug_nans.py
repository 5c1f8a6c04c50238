"""``jax_debug_nans`` / ``jax_debug_infs`` against jax: which exception, which primitive named.

Each case runs the same program in jax and in fcore (``jax`` renamed) with the same setting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    yield
    for lib in (jax, fcore):
        lib.config.update("jax_debug_nans", False)
        lib.config.update("jax_debug_infs", False)


def _outcome(f: Callable[[], object]) -> str:
    try:
        f()
    except FloatingPointError as e:
        return f"FloatingPointError: {str(e)[:60]}"
    return "ok"


def _both(program: Callable[[ModuleType, Any], object], option: str) -> tuple[str, str]:
    """The outcome of ``program(lib, lib.numpy)`` in jax and in fcore, with ``option`` on."""
    outcomes = []
    for lib, np_ in ((jax, jnp), (fcore, fnp)):
        lib.config.update(option, True)
        try:
            outcomes.append(_outcome(lambda: program(lib, np_)))
        finally:
            lib.config.update(option, False)
    return outcomes[0], outcomes[1]


def test_eager_primitives_name_themselves() -> None:
    expected, got = _both(lambda lib, np_: np_.log(-1.0), "jax_debug_nans")
    assert got == expected == "FloatingPointError: invalid value (nan) encountered in log"
    expected, got = _both(lambda lib, np_: np_.log(np_.asarray(-1.0, "bfloat16")), "jax_debug_nans")
    assert got == expected == "FloatingPointError: invalid value (nan) encountered in log"  # not a NumPy float
    expected, got = _both(lambda lib, np_: np_.log(np.float32(0)), "jax_debug_infs")
    assert got == expected == "FloatingPointError: invalid value (inf) encountered in log"
    # Integer results and finite ones pass; off, nothing is checked.
    assert _both(lambda lib, np_: np_.floor_divide(np.int32(1), np.int32(0)), "jax_debug_nans") == ("ok", "ok")
    assert fcore.numpy.isnan(fnp.log(-1.0))


def test_jit_reruns_op_by_op_to_name_the_primitive(capsys: pytest.CaptureFixture[str]) -> None:
    expected, got = _both(lambda lib, np_: lib.jit(lambda x: np_.log(x) * 2)(-1.0), "jax_debug_nans")
    assert got == expected == "FloatingPointError: invalid value (nan) encountered in log"
    assert "Calling the de-optimized version." in capsys.readouterr().out
    # A NaN that only the compiled program shows (here: an input passed through) gets JAX's note.
    expected, got = _both(lambda lib, np_: lib.jit(lambda x: x * 2)(np.float32(np.nan)), "jax_debug_nans")
    assert got == expected and "('jit(<lambda>)', 'nan'). Because jax_config.debug_nans" in got


def test_the_backward_pass_is_checked() -> None:
    def program(lib: ModuleType, np_: Any) -> object:
        return lib.grad(lambda x: np_.sqrt(x) * 2)(0.0)  # forward 0, backward 1/0

    expected, got = _both(program, "jax_debug_infs")
    assert got == expected == "FloatingPointError: invalid value (inf) encountered in div"
    expected, got = _both(lambda lib, np_: lib.grad(lib.jit(lambda x: np_.sqrt(x) * 2))(0.0), "jax_debug_infs")
    assert got == expected == "FloatingPointError: invalid value (inf) encountered in div"


def test_aot_calls_and_pmap_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    """An AOT ``Compiled`` call checks its outputs without a re-run (JAX raises its
    ``InternalFloatingPointError``, not a FloatingPointError, with the same text); ``pmap``
    re-runs into the eager ``shard_map``, whose check names a sharded computation."""
    texts = []
    for lib, np_ in ((jax, jnp), (fcore, fnp)):
        lib.config.update("jax_debug_infs", True)
        with pytest.raises(Exception) as info:
            lib.jit(lambda x: np_.log(x) * 2).lower(np.float32(1)).compile()(np.float32(0))
        texts.append(str(info.value))
    assert texts[0] == texts[1] == "('jit(<lambda>)', 'inf')" and info.type is FloatingPointError
    expected, got = _both(lambda lib, np_: lib.pmap(np_.log)(np.array([-1.0], np.float32)), "jax_debug_nans")
    assert got == expected == "FloatingPointError: Invalid value (nan) encountered in sharded computation."
    assert "Calling the de-optimized version." in capsys.readouterr().out
    # A NaN passed through (JAX recurses without end on it here) is reported the same way.
    with fcore.debug_nans(True), pytest.raises(FloatingPointError, match=r"^Invalid value \(nan\) .* sharded"):
        fcore.pmap(lambda x: x * 2)(np.array([np.nan], np.float32))


def test_context_managers_reads_and_the_cached_jit_path() -> None:
    f = fcore.jit(lambda x: fnp.log(x))
    x = fnp.asarray(-1.0)
    assert fnp.isnan(f(x)) and fnp.isnan(f(x))  # off: the cached (fast) path, unchecked
    with fcore.debug_nans(True):
        assert fcore.config.jax_debug_nans is True and fcore.config.read("jax_debug_nans") is True
        with pytest.raises(FloatingPointError, match="encountered in log"):
            f(x)
        with fcore.debug_nans(False):
            assert fnp.isnan(f(x))
    assert fcore.config.read("jax_debug_nans") is False and fcore.config.values["debug_infs"] is False
    with fcore.debug_infs():
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in exp"):
            fnp.exp(np.float32(100))


def test_update_is_process_wide_and_reaches_overriding_contexts() -> None:
    seen: list[str] = []
    started, updated = threading.Event(), threading.Event()

    def worker() -> None:
        started.set()
        updated.wait()
        seen.append(_outcome(lambda: fnp.log(-1.0)))

    t = threading.Thread(target=worker)
    t.start()
    started.wait()
    with fcore.debug_infs(True):  # a context of its own, yet a global update reaches it
        fcore.config.update("jax_debug_nans", True)
        assert _outcome(lambda: fnp.log(-1.0)).endswith("encountered in log")
    updated.set()
    t.join()
    assert seen == ["FloatingPointError: invalid value (nan) encountered in log"]
