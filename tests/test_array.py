"""``fcore.Array`` behaves like ``jax.Array``: repr and str, conversions, devices,
operators next to NumPy, hashing, pickling, copying and deletion; and using arrays never
imports jax. Differential against jax where jax defines the behaviour.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import tree_util
from fcore.interpreters.array import ArrayImpl

SRC = Path(__file__).resolve().parents[1] / "src"

VALUES: dict[str, Any] = {
    "f32": np.array([1.0, 2.0], np.float32),
    "weak float": 1.5,
    "weak int": 3,
    "bool": np.array([True, False]),
    "bool 0-d": np.bool_(True),
    "bf16": np.array([1, 2.5, -3], ml_dtypes.bfloat16),
    "f16": np.array([1, 2.5], np.float16),
    "0-d": np.float32(3.25),
    "i32": np.arange(5, dtype=np.int32),
    "u8": np.arange(3, dtype=np.uint8),
    "i8": np.array([-3, 4], np.int8),
    "c64": np.array([1 + 2j, 3j], np.complex64),
    "2-d": np.arange(6, dtype=np.float32).reshape(2, 3),
    "3-d": np.arange(24, dtype=np.int32).reshape(2, 3, 4),
    "large": np.arange(2000, dtype=np.float32),
    "large 2-d": np.arange(3000, dtype=np.float32).reshape(100, 30),
    "long line": np.linspace(0, 1, 13, dtype=np.float32),
    "long last line": np.arange(16, dtype=np.float32) * 1.5,
    "wide ints": np.array([1, 2**31 - 1], np.int32),
    "special": np.array([np.nan, np.inf, -np.inf, 1e10, 1e-5], np.float32),
    "empty": np.zeros((0, 3), np.float32),
    "empty 1-d": np.zeros((0,), np.int32),
}


def _pair(value: Any) -> tuple[Any, Any]:
    return fcore.device_put(value), jax.device_put(value)


@pytest.mark.parametrize("name", list(VALUES))
def test_repr_and_str_match_jax(name: str) -> None:
    ours, theirs = _pair(VALUES[name])
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    eager = fnp.asarray(VALUES[name])  # a host-computed array prints the same
    assert repr(eager) == repr(jnp.asarray(VALUES[name]))


def test_repr_of_computed_weak_and_x64_arrays() -> None:
    assert repr(fcore.jit(lambda: 2.0 * fnp.ones(3))()) == repr(jax.jit(lambda: 2.0 * jnp.ones(3))())
    assert repr(fnp.asarray(2.0) * 2) == repr(jnp.asarray(2.0) * 2)
    with fcore.enable_x64(True), jax.enable_x64(True):
        for v in [1.5, np.arange(3), np.ones(2, np.uint64)]:
            assert repr(fcore.device_put(v)) == repr(jax.device_put(v))


def test_attributes_and_conversions_match_jax() -> None:
    for v in [np.array([1.0, 2.0, 3.0], np.float32), np.arange(6, dtype=np.int8).reshape(2, 3), 2.5, np.int32(7)]:
        a, j = _pair(v)
        for attr in ["shape", "dtype", "ndim", "size", "weak_type", "nbytes", "itemsize"]:
            assert getattr(a, attr) == getattr(j, attr), attr
        assert a.T.shape == j.T.shape
        assert a.tolist() == j.tolist()
        if a.ndim == 0:
            assert a.item() == j.item() and type(a.item()) is type(j.item())
            assert (float(a), int(a), bool(a), complex(a)) == (float(j), int(j), bool(j), complex(j))
            assert f"{a:.2f}" == f"{j:.2f}"
        else:
            assert a.mT.shape == j.mT.shape if a.ndim >= 2 else True
            assert len(a) == len(j)
            assert [x.tolist() for x in a] == [x.tolist() for x in j]
            assert [x.tolist() for x in reversed(a)] == [x.tolist() for x in reversed(j)]
            assert a.item(1) == j.item(1)
    i, _ = _pair(np.int32(2))
    assert [10, 20, 30][i] == 30 and list(range(i)) == [0, 1]


@pytest.mark.parametrize(
    "op",
    [
        lambda a: float(a),
        lambda a: int(a),
        lambda a: bool(a),
        lambda a: len(a[0]),
        lambda a: list(a[0]),
        lambda a: a.mT,
        lambda a: None in a,
        lambda a: [1.0] in a,
        lambda a: hash(a),
        lambda a: {a},
        lambda a: a == [1.0, 2.0],
        lambda a: a + (1.0, 2.0),
        lambda a: [1.0, 2.0] * a,
    ],
)
def test_conversion_errors_match_jax(op: Callable[[Any], Any]) -> None:
    a, j = _pair(np.array([1.0, 2.0], np.float32))
    with pytest.raises(Exception) as want:
        op(j)
    with pytest.raises(want.type):
        op(a)


def test_membership() -> None:
    a, j = _pair(np.array([1.0, 2.0], np.float32))
    for q in [2.0, 5.0, np.float32(1.0), fcore.device_put(2.0)]:
        assert (q in a) == (np.asarray(q).item() in np.asarray(j).tolist())
    with pytest.raises(ValueError):
        1.0 in fcore.device_put(np.ones((2, 2)))


def test_numpy_conversion() -> None:
    a = fcore.device_put(np.array([1.0, 2.0], np.float32))
    view = np.asarray(a)
    assert not view.flags.writeable  # as jax: the array is immutable
    owned = np.array(a)
    assert owned.flags.writeable and owned.tolist() == [1.0, 2.0]
    assert np.asarray(a, np.float64).dtype == np.float64
    with pytest.raises(ValueError):
        np.array(a, np.float64, copy=False)
    assert np.array(a, copy=False) is view
    assert np.float32(fcore.device_put(np.float32(2.5))) == 2.5
    np.testing.assert_array_equal(np.from_dlpack(a), [1.0, 2.0])
    bf = fcore.device_put(np.array([1, 2.5], ml_dtypes.bfloat16))
    assert np.asarray(bf).dtype == ml_dtypes.bfloat16


@pytest.mark.parametrize(
    "op",
    [
        lambda a, n: n + a,
        lambda a, n: a + n,
        lambda a, n: n * a,
        lambda a, n: n - a,
        lambda a, n: n / a,
        lambda a, n: n == a,
        lambda a, n: a == n,
        lambda a, n: n < a,
        lambda a, n: n @ a,
        lambda a, n: n[0] + a,  # a NumPy float32 scalar
        lambda a, n: np.float64(1.5) + a,
        lambda a, n: np.int64(2) * a,
        lambda a, n: a == a,
        lambda a, n: a != None,  # noqa: E711
        lambda a, n: divmod(a, 2.0),
        lambda a, n: divmod(7.0, a),
        lambda a, n: round(a[0]),
        lambda a, n: round(a, 1),
        lambda a, n: np.sum(a),
        lambda a, n: abs(-a),
    ],
)
def test_operators_next_to_numpy_give_arrays(op: Callable[[Any, Any], Any]) -> None:
    n = np.array([0.5, 2.0, 3.0], np.float32)
    x = np.array([1.25, 2.0, 3.5], np.float32)
    got, want = op(fcore.device_put(x), n), op(jax.device_put(x), n)
    g_leaves, w_leaves = tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g_leaves) == len(w_leaves)
    for g, w in zip(g_leaves, w_leaves):
        assert isinstance(g, fcore.Array) == isinstance(w, jax.Array), (g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        if isinstance(g, fcore.Array):
            assert g.weak_type == w.weak_type


def test_block_until_ready() -> None:
    a = fcore.jit(lambda x: x * 2)(np.ones(3))
    assert a.block_until_ready() is a
    tree = {"a": a, "b": [fcore.device_put(1.0), 1.0, None]}
    assert fcore.block_until_ready(tree) is tree


def test_device_put() -> None:
    for v in [1, 1.5, True, 1j, np.float32(1), np.arange(3), {"a": [1.0, np.ones(2)], "b": None}]:
        got, want = fcore.device_put(v), jax.device_put(v)
        assert str(tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want))
        for g, w in zip(tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert type(g) is ArrayImpl
            assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    a = fcore.device_put(np.ones(2))
    assert fcore.device_put(a) is a  # already there, as jax
    dev = fcore.devices()[0]
    assert fcore.device_put(a, dev) is a
    assert fcore.device_put(np.ones(2), dev).devices() == {dev}
    host_made = fnp.ones(2) * 2
    assert fcore.device_put(host_made) is host_made and host_made.device == dev
    with pytest.raises(TypeError):
        fcore.device_put("x")
    # under jit device_put is the identity on traced values
    np.testing.assert_array_equal(np.asarray(fcore.jit(lambda x: fcore.device_put(x) + 1)(np.ones(2))), [2, 2])


def test_devices() -> None:
    devs = fcore.devices()
    assert len(devs) >= 1 and [d.platform for d in devs] == [d.platform for d in jax.devices()]
    a = fcore.device_put(np.ones(2))
    assert a.devices() == {a.device} == {devs[0]}
    assert a.is_fully_addressable and a.is_fully_replicated
    assert a.addressable_data(0) is a and a.on_device_size_in_bytes() == a.nbytes


@pytest.mark.parametrize("value", [np.array([1.0, 2.0], np.float32), 1.5, np.array([1, 2], ml_dtypes.bfloat16), 7])
def test_pickle_and_copy_keep_value_dtype_and_weak_type(value: Any) -> None:
    a, j = _pair(value)
    for ours, theirs in [
        (pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(j))),
        (copy.copy(a), copy.copy(j)),
        (copy.deepcopy(a), copy.deepcopy(j)),
        (a.copy(), j.copy()),
    ]:
        assert type(ours) is ArrayImpl and ours is not a
        assert repr(ours) == repr(theirs)
    assert not np.asarray(pickle.loads(pickle.dumps(a))).flags.writeable


def test_copy_survives_deleting_the_original() -> None:
    a = fcore.device_put(np.ones(2, np.float32))
    b = a.copy()
    a.delete()
    np.testing.assert_array_equal(np.asarray(b + 1), [2, 2])


@pytest.mark.parametrize(
    "use",
    [repr, str, np.asarray, lambda a: a + 1, lambda a: a.block_until_ready(),
     lambda a: a.tolist(), lambda a: a.devices()],
)
def test_deleted_arrays_raise(use: Callable[[Any], Any]) -> None:
    for a in [fcore.device_put(np.ones(2, np.float32)), fnp.ones(2) * 2]:  # on device; host-made
        assert not a.is_deleted()
        a.delete()
        assert a.is_deleted()
        with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2\]"):
            use(a)
        with pytest.raises(RuntimeError, match=r"Array has been deleted"):
            fcore.jit(lambda x: x)(a)
    j = jax.device_put(np.ones(2, np.float32))
    j.delete()
    with pytest.raises(RuntimeError):
        use(j)


def test_device_put_of_a_deleted_array_returns_it() -> None:
    for L in [fcore, jax]:
        a = L.device_put(np.ones(2, np.float32))
        a.delete()
        assert L.device_put(a) is a


_NO_JAX_SCRIPT = textwrap.dedent(
    """
    import copy, pickle, sys
    import ml_dtypes
    import numpy as np
    import fcore, fcore.numpy as fnp

    a = fcore.device_put(np.arange(3, dtype=np.float32))
    b = fcore.device_put(np.array([1, 2.5, 3], ml_dtypes.bfloat16))
    f = fcore.jit(lambda x, y: (x * 2, y + y, x.sum()))
    x2, yy, s = f(a, b)
    assert np.asarray(x2).tolist() == [0.0, 2.0, 4.0] and np.asarray(yy).tolist() == [2.0, 5.0, 6.0]
    repr(x2), repr(yy), str(s), float(s), x2.tolist(), list(x2), 2.0 in x2
    compiled = f.lower(a, b).compile()
    compiled(a, b), compiled.as_text(), compiled.cost_analysis(), compiled.memory_analysis()
    a.devices(), a.device, pickle.loads(pickle.dumps(x2)), copy.deepcopy(x2), fcore.block_until_ready(s)
    d = fcore.device_put(np.ones(2, np.float32))
    fcore.jit(lambda x: x + 1, donate_argnums=0)(d)
    assert d.is_deleted()
    np.ones(3, np.float32) + fnp.sin(a)
    bad = [m for m in sys.modules if m == "jax" or m.startswith("jax.")]
    assert not bad, bad
    print("OK")
    """
)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="needs jax installed to prove it is not imported")
def test_using_arrays_and_jit_never_imports_jax() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["FCORE_PLATFORM"] = "cpu"
    proc = subprocess.run([sys.executable, "-c", _NO_JAX_SCRIPT], env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("OK")
