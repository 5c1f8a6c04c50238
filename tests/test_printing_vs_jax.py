"""``str(fcore.make_jaxpr(f)(...))`` against ``str(jax.make_jaxpr(f)(...))`` on ordinary programs.

Each program is written once against a namespace (``L.np``, ``L.lax``, ``L.api``) and traced by
both libraries. The texts must be identical once the differences documented in docs/ir.md
("Differences from JAX's text") are normalized away:

* fcore writes weak types (``f32[]{weak}``); jax does not print them;
* jax prints parameters fcore's primitives do not have (``out_sharding=None``, ``sharding=None``);
* jax prints some integer parameters as NumPy reprs (``axes=(np.int64(1),)``);
* jax's custom printing hides ``broadcast_in_dim``'s ``shape`` (and empty
  ``broadcast_dimensions``) and ``dot_general``'s ``None`` parameters, and prints
  ``dot_general`` dimension numbers with lists; fcore's scan has a ``linear`` parameter;
* whitespace: a line that jax's extra parameters make too long breaks differently.

Programs whose *staged program* differs (not just the text) are listed in ``DIFFERENT`` with
the reason, also documented; for them only fcore's own round trip is checked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.core import parse_jaxpr, typecheck


class _F:
    np, lax, api = fnp, fcore.lax, fcore


class _J:
    np, lax, api = jnp, jax.lax, jax


X3 = np.arange(3, dtype=np.float32)
M23 = np.arange(6, dtype=np.float32).reshape(2, 3)
M34 = np.arange(12, dtype=np.float32).reshape(3, 4)
I3 = np.arange(3, dtype=np.int32)
C3 = np.array([1.0, 2.0, 3.0], np.float32)

Program = tuple[Callable[[Any], Callable[..., Any]], tuple[Any, ...]]
CORPUS: dict[str, Program] = {
    "sin": (lambda L: L.np.sin, (X3,)),
    "add_weak_scalar": (lambda L: lambda x: x + 1.0, (X3,)),
    "mul_int_scalar": (lambda L: lambda x: x * 2, (X3,)),
    "python_float_arg": (lambda L: lambda x: x * 2.0, (3.0,)),
    "python_int_arg": (lambda L: lambda x: x + 1, (3,)),
    "bool_arg": (lambda L: L.np.logical_not, (np.array([True, False]),)),
    "sum": (lambda L: L.np.sum, (M23,)),
    "sum_axis": (lambda L: lambda x: L.np.sum(x, axis=1), (M23,)),
    "mean": (lambda L: L.np.mean, (M23,)),
    "max_axis": (lambda L: lambda x: L.np.max(x, axis=0), (M23,)),
    "argmax": (lambda L: lambda x: L.np.argmax(x, axis=0), (M23,)),
    "matmul": (lambda L: lambda x, y: x @ y, (M23, M34)),
    "dot_vectors": (lambda L: L.np.dot, (X3, X3)),
    "dot_general": (lambda L: lambda x, y: L.lax.dot_general(x, y, (((1,), (0,)), ((), ()))), (M23, M34)),
    "einsum": (lambda L: lambda x, y: L.np.einsum("ij,jk->ik", x, y), (M23, M34)),
    "static_index": (lambda L: lambda x: x[0], (M23,)),
    "static_slice": (lambda L: lambda x: x[:, 1:], (M23,)),
    "dynamic_index": (lambda L: lambda x, i: x[i], (X3, np.int32(1))),
    "dynamic_slice": (lambda L: lambda x, i: L.lax.dynamic_slice(x, (i,), (2,)), (X3, np.int32(0))),
    "dynamic_update_slice": (lambda L: lambda x, i: L.lax.dynamic_update_slice(x, x[:1], (i,)), (X3, np.int32(0))),
    "reshape": (lambda L: lambda x: x.reshape(3, 2), (M23,)),
    "transpose": (lambda L: lambda x: x.T, (M23,)),
    "expand_dims": (lambda L: lambda x: L.np.expand_dims(x, 0), (X3,)),
    "squeeze": (lambda L: lambda x: L.np.squeeze(x[None]), (X3,)),
    "concatenate": (lambda L: lambda x: L.np.concatenate([x, x]), (X3,)),
    "stack_split": (lambda L: lambda x: L.np.split(L.np.stack([x, x]), 3, axis=1), (X3,)),
    "square_tile": (lambda L: lambda x: L.lax.tile(L.np.square(x), (2,)), (X3,)),
    "convert": (lambda L: lambda x: x.astype(L.np.int32), (X3,)),
    "integer_pow": (lambda L: lambda x: x**2, (X3,)),
    "exp_log": (lambda L: lambda x: L.np.log(L.np.exp(x) + 1), (X3,)),
    "compare": (lambda L: lambda x: x > 1.0, (X3,)),
    "select": (lambda L: L.lax.select, (X3 > 1, X3, X3)),
    "abs_sign": (lambda L: lambda x: L.np.abs(x) + L.np.sign(x), (X3,)),
    "tanh_logistic": (lambda L: lambda x: L.lax.logistic(L.np.tanh(x)), (X3,)),
    "iota": (lambda L: lambda x: x + L.np.arange(3), (X3,)),
    "zeros": (lambda L: lambda x: x + L.np.zeros(3), (X3,)),
    "closure_array": (lambda L: lambda x: x + C3, (X3,)),
    "closure_numpy_scalar": (lambda L: lambda x: x + np.float32(2), (X3,)),
    "pytree_in_out": (lambda L: lambda d: {"s": d["a"] + d["b"][0], "t": d["b"][1]}, ({"a": X3, "b": (X3, 1.0)},)),
    "cond": (lambda L: lambda p, x: L.lax.cond(p, lambda y: y + 1, lambda y: y - 1, x), (True, X3)),
    "switch": (lambda L: lambda i, x: L.lax.switch(i, [lambda y: y, lambda y: -y], x), (np.int32(1), X3)),
    "fori_loop": (lambda L: lambda x: L.lax.fori_loop(0, 3, lambda i, c: c + i, x), (X3,)),
    "grad": (lambda L: L.api.grad(lambda x: L.np.sum(L.np.sin(x))), (X3,)),
    "vmap": (lambda L: L.api.vmap(lambda x: L.np.sum(x * 2)), (M23,)),
    "jvp": (lambda L: lambda x: L.api.jvp(L.np.sin, (x,), (x,)), (X3,)),
}

DIFFERENT: dict[str, tuple[Program, str]] = {
    "numpy_broadcasting": (
        (lambda L: lambda x, y: x + y, (M23, X3)),
        "jax's lax ops broadcast size-1 dimensions, so jnp only broadcasts to f32[1,3]",
    ),
    "integer_array_index": ((lambda L: lambda x, i: x[i], (X3, I3)), "fcore clamps indices (mode CLIP); jax promises in-bounds"),
    "at_set": ((lambda L: lambda x: x.at[1].set(5.0), (X3,)), "fcore computes the static index with iota/slice"),
    "where": ((lambda L: lambda x: L.np.where(x > 1, x, 0.0), (X3,)), "jnp.where is a jit-wrapped function in jax"),
    "clip": ((lambda L: lambda x: L.np.clip(x, 0.0, 1.0), (X3,)), "jnp.clip is a jit-wrapped function in jax"),
    "cumsum": ((lambda L: L.np.cumsum, (X3,)), "jnp.cumsum is a jit-wrapped function in jax"),
    "while_loop": (
        (lambda L: lambda x: L.lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2), (0, x)), (X3,)),
        "fcore's lt of weak operands is strongly typed, converted back to a weak bool",
    ),
    "scan": (
        (lambda L: lambda x: L.lax.scan(lambda c, y: (c + y, c * y), 0.0, x), (X3,)),
        "fcore converts a weak init outside the body, jax inside",
    ),
    "inner_jit": ((lambda L: lambda x: L.api.jit(lambda y: L.np.sin(y) * 2)(x), (X3,)), "jax's jit printing rule"),
}


def _tuples(v: Any) -> Any:
    return tuple(_tuples(x) for x in v) if isinstance(v, (list, tuple)) else v


def _layout(text: str) -> str:
    return " ".join(text.split()).replace("[ ", "[").replace(" ]", "]")


def normalize_jax(text: str) -> str:
    text = re.sub(r" ?\b(out_sharding|sharding)=None", "", text)
    text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", text)  # NumPy 2 reprs of vmap's axes
    text = re.sub(
        r"dimension_numbers=(\(\(\[[^\]]*\], \[[^\]]*\]\), \(\[[^\]]*\], \[[^\]]*\]\)\))",
        lambda m: "dimension_numbers=" + repr(_tuples(ast.literal_eval(m.group(1)))),
        text,
    )
    return _layout(text)


def normalize_fcore(text: str) -> str:
    text = text.replace("{weak}", "")
    text = re.sub(r"(broadcast_in_dim\[broadcast_dimensions=\([0-9, ]*\)) shape=\([0-9, ]*\)", r"\1", text)
    text = text.replace("broadcast_in_dim[broadcast_dimensions=()]", "broadcast_in_dim")
    text = re.sub(r"\s*\b(precision|preferred_element_type)=None\b", "", text)
    text = re.sub(r"\s*\blinear=\([A-Za-z, ]*\)", "", text)
    return _layout(text)


def _texts(program: Program) -> tuple[str, str]:
    make, args = program
    return str(fcore.make_jaxpr(make(_F))(*args)), str(jax.make_jaxpr(make(_J))(*args))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_text_matches_jax(name: str) -> None:
    ours, theirs = _texts(CORPUS[name])
    assert normalize_fcore(ours) == normalize_jax(theirs), f"\nfcore:\n{ours}\njax:\n{theirs}"
    assert str(parse_jaxpr(ours)) == ours


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_documented_differences_still_roundtrip(name: str) -> None:
    (make, args), _ = DIFFERENT[name]
    closed = fcore.make_jaxpr(make(_F))(*args)
    assert parse_jaxpr(str(closed)) == closed.jaxpr
    typecheck(closed)


def test_exact_text_of_the_spec_example() -> None:
    closed = fcore.make_jaxpr(lambda a, b: fcore.lax.reduce_sum(a * b, (0,)))(np.float32(2), X3)
    assert str(closed) == (
        "{ lambda ; a:f32[] b:f32[3]. let\n"
        "    c:f32[3] = mul a b\n"
        "    d:f32[] = reduce_sum[axes=(0,)] c\n"
        "  in (d,) }"
    )


def test_names_are_unique_across_nested_jaxprs_and_unused_results_are_dropped() -> None:
    ours, theirs = _texts(CORPUS["fori_loop"])
    assert "_:i32[]{weak} b:f32[3] = scan[" in ours and "_:i32[] b:f32[3] = scan[" in theirs
    assert "jaxpr={ lambda ; c:i32[]{weak} d:f32[3]. let" in ours
    ours, _ = _texts(CORPUS["cond"])
    assert "{ lambda ; e:f32[3]. let f:f32[3] = sub e 1.0:f32[] in (f,) }" in ours


def test_empty_body_is_printed_as_jax_does() -> None:
    ours, theirs = _texts((lambda L: lambda x: (x, 1.0), (X3,)))
    assert ours.replace("{weak}", "") == theirs == "{ lambda ; a:f32[3]. let  in (a, 1.0:f32[]) }"
