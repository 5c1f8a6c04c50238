"""Jaxprs as bytes: ``pickle`` and ``fcore.ir.serialize``/``deserialize`` round-trip traced
random programs (fcore.testing's strategy) and the JAX corpus (tests/jax_corpus.py, imported
with ``from_jax``) with structural equality and equal constants."""

from __future__ import annotations

import copy
import json
import pickle
import struct
import subprocess
import sys
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from jax_corpus import CORPUS

import fcore
import fcore.numpy as fnp
from fcore.core import ClosedJaxpr, eval_jaxpr
from fcore.interop import from_jax
from fcore.ir import SerializationError, deserialize, serialize
from fcore.testing import Program, programs

#: Programs whose custom-derivative rules are Python functions: they neither pickle nor serialize.
WITH_RULES = {"custom_jvp", "custom_vjp", "custom_closures", "softmax_jit", "det_searchsorted"}


def _round_trips(closed: ClosedJaxpr) -> None:
    back = deserialize(serialize(closed))
    assert back == closed, f"{back}\n!=\n{closed}"
    unpickled = pickle.loads(pickle.dumps(closed))
    assert unpickled == closed
    assert all(a.primitive is b.primitive for a, b in zip(unpickled.eqns, closed.eqns))


@settings(max_examples=15, deadline=None)
@given(programs(max_steps=6))
def test_traced_programs_round_trip(program: Program) -> None:
    _round_trips(program.jaxpr())


@pytest.mark.parametrize("entry", [e for e in CORPUS if e[0] not in WITH_RULES], ids=lambda e: str(e[0]))
def test_jax_corpus_round_trips(entry: tuple[str, Any, tuple[Any, ...]]) -> None:
    _, f, args = entry
    _round_trips(from_jax(jax.make_jaxpr(f)(*args)))


def test_constants_of_every_kind_survive() -> None:
    bf16 = np.array([1.5, -2.25], ml_dtypes.bfloat16)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    c64 = np.array([1 + 2j, -0.5j], np.complex64)
    closed = fcore.make_jaxpr(lambda x: (x.astype(ml_dtypes.bfloat16) * bf16, fnp.sum(ints) + 1, c64 * x))(
        np.float32(2.0))
    assert len(closed.consts) == 3
    back = deserialize(serialize(closed))
    assert back == closed
    for a, b in zip(back.consts, closed.consts):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_control_flow_and_evaluation_after_loading() -> None:
    def f(x: Any) -> Any:
        y = fcore.lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x)
        return fcore.lax.cond(y.sum() > 0, fnp.sin, fnp.cos, y) + np.arange(3, dtype=np.float32)

    x = np.linspace(-1, 1, 3, dtype=np.float32)
    closed = fcore.make_jaxpr(f)(x)
    back = deserialize(serialize(closed))
    assert back == closed
    np.testing.assert_allclose(eval_jaxpr(back.jaxpr, back.consts, x)[0], f(x), rtol=1e-6)


def test_pickle_in_a_fresh_process() -> None:
    closed = fcore.make_jaxpr(lambda x: fnp.tanh(x) * np.float32(3))(np.ones(3, np.float32))
    code = (
        "import pickle, sys\n"
        "c = pickle.loads(sys.stdin.buffer.read())\n"
        "print(c.eqns[0].primitive.name, type(c).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(closed), capture_output=True, check=True,
                         timeout=120)
    assert out.stdout.decode().split() == ["tanh", "fcore.ir.core"]


def test_pickled_after_hashing_equals_the_same_program_in_a_fresh_process() -> None:
    """The cached structural key (``id()``s of this process) is not pickled with the jaxpr."""
    f = "lambda x: fcore.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v + 1, x)"
    closed = fcore.make_jaxpr(eval(f))(np.ones(3, np.float32))
    hash(closed.jaxpr)
    code = (
        "import pickle, sys, numpy as np, fcore\n"
        "c = pickle.loads(sys.stdin.buffer.read())\n"
        f"fresh = fcore.make_jaxpr({f})(np.ones(3, np.float32))\n"
        "print(c.jaxpr == fresh.jaxpr, hash(c.jaxpr) == hash(fresh.jaxpr))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(closed), capture_output=True, check=True,
                         timeout=120)
    assert out.stdout.decode().split() == ["True", "True"]


@pytest.mark.parametrize(("name", "rule"), [("custom_jvp", "jvp"), ("custom_vjp", "(bwd|fwd)")])
def test_custom_rules_are_refused_by_name(name: str, rule: str) -> None:
    (_, f, args), = [e for e in CORPUS if e[0] == name]
    closed = from_jax(jax.make_jaxpr(f)(*args))
    with pytest.raises(SerializationError, match=rf"equation \d+ \({name}_call\): parameter {rule}=.*Python function"):
        serialize(closed)
    with pytest.raises(pickle.PicklingError, match="custom .*rule .* cannot be pickled"):
        pickle.dumps(closed)
    assert copy.deepcopy(closed) == closed  # the rules are shared, not copied


def _header(data: bytes) -> dict[str, Any]:
    (n,) = struct.unpack_from("<I", data, 16)
    loaded: dict[str, Any] = json.loads(data[20 : 20 + n])
    return loaded


def test_format_is_versioned_and_checked() -> None:
    closed = fcore.make_jaxpr(lambda x: x + np.arange(2, dtype=np.float32))(np.ones(2, np.float32))
    data = serialize(closed)
    assert data.startswith(b"FCORE-JAXPR\n") and struct.unpack_from("<I", data, 12) == (1,)
    assert _header(data)["consts"] == [{"dtype": "float32", "shape": [2]}]
    with pytest.raises(SerializationError, match="format version 99"):
        deserialize(data[:12] + struct.pack("<I", 99) + data[16:])
    with pytest.raises(SerializationError, match="magic"):
        deserialize(b"not a jaxpr")
    with pytest.raises(SerializationError, match="truncated"):
        deserialize(data[:-3])
    with pytest.raises(SerializationError, match="stray bytes"):
        deserialize(data + b"x")
    with pytest.raises(TypeError, match="ClosedJaxpr"):
        serialize(closed.jaxpr)  # type: ignore[arg-type]


def test_source_locations_survive() -> None:
    def f(x: Any) -> Any:
        with fcore.named_scope("outer"):
            y = fcore.lax.cond(x.sum() > 0, fnp.sin, fnp.cos, x)
        return fcore.lax.fori_loop(0, 2, lambda i, c: c * 2.0, y)

    closed = fcore.make_jaxpr(f)(np.ones(3, np.float32))
    back = deserialize(serialize(closed))
    assert back == closed
    text = closed.pretty_print(source_info=True, name_stack=True)
    assert "test_serialize.py" in text and "outer" in text
    assert back.pretty_print(source_info=True, name_stack=True) == text
