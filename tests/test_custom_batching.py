# mypy: disable-error-code="untyped-decorator"
"""``fcore.custom_batching`` against ``jax.custom_batching``: the rule replaces the body under
vmap (also inside jit, and under jvp), ``custom_vjp`` around it gives reverse mode,
``sequential_vmap`` loops, and the errors are JAX's."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp


def _functions(lib: Any, np_: Any) -> tuple[Any, Any, Any, Any]:
    cb = lib.custom_batching

    @cb.custom_vmap
    def f(x: Any, y: Any) -> Any:
        return np_.sin(x) * y

    @f.def_vmap
    def f_rule(axis_size: int, in_batched: list[bool], xs: Any, ys: Any) -> tuple[Any, bool]:
        assert xs.shape[:1] == (axis_size,) or not in_batched[0]
        return np_.sin(xs) * ys * 10, True  # distinguishable from the body

    @lib.custom_vjp
    @cb.custom_vmap
    def g(x: Any, y: Any) -> Any:
        return np_.sin(x) * y

    @g.def_vmap
    def g_rule(axis_size: int, in_batched: list[bool], xs: Any, ys: Any) -> tuple[Any, bool]:
        return np_.cos(xs) * ys, True

    g.defvjp(lambda x, y: (g(x, y), (np_.cos(x), np_.sin(x), y)),
             lambda res, ct: (res[0] * ct * res[2], res[1] * ct))

    @cb.custom_vmap
    def p(d: Any, scale: float = 2.0) -> Any:
        return {"a": d["a"] * scale, "b": d["b"].sum()}

    @p.def_vmap
    def p_rule(axis_size: int, in_batched: list[Any], d: Any, scale: float) -> tuple[Any, Any]:
        return {"a": d["a"] * scale + 100, "b": d["b"].sum(axis=-1)}, dict(in_batched[0])

    @cb.sequential_vmap
    def s(x: Any, y: Any) -> Any:
        return x * 2 + y

    return f, g, p, s


def _program(lib: Any, np_: Any) -> Any:
    f, g, p, s = _functions(lib, np_)

    def program(x: Any) -> Any:
        y = x + 1
        return (
            f(x[0], y[0]),
            lib.vmap(f)(x, y),
            lib.vmap(f, in_axes=(0, None))(x, y[0]),
            lib.vmap(lib.jit(f))(x, y),
            lib.jvp(f, (x[0], y[0]), (np_.float32(1), np_.float32(0))),
            lib.vmap(lambda a: lib.jvp(f, (a, y[0]), (np_.float32(1), np_.float32(0))))(x),
            lib.jvp(lib.vmap(f), (x, y), (y, x)),
            lib.vmap(g)(x, y),
            lib.vmap(lib.grad(g))(x, y),
            lib.vmap(lambda a, b: p({"a": a, "b": b}, scale=3.0), in_axes=(0, None))(x, y[:2]),
            lib.vmap(s, in_axes=(0, None))(x, y[0]),
        )

    return program


def test_custom_vmap_matches_jax() -> None:
    x = np.array([0.0, 0.5, 1.0], np.float32)
    ours = fcore.jit(_program(fcore, fnp))(x)
    theirs = jax.jit(_program(jax, jnp))(x)
    lo, lt = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(lo) == len(lt)
    for o, t in zip(lo, lt):
        assert np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-5, atol=1e-6)


def test_eager_call_runs_the_body_and_the_jaxpr_names_the_rule() -> None:
    f, _, _, _ = _functions(fcore, fnp)
    np.testing.assert_allclose(float(f(1.0, 2.0)), np.sin(1.0) * 2.0, rtol=1e-6)
    text = str(fcore.make_jaxpr(f)(1.0, 2.0))
    assert "custom_vmap_call[" in text and "rule=f_rule" in text


@pytest.mark.parametrize("lib", [fcore, jax], ids=["fcore", "jax"])
def test_errors_match_jax(lib: Any) -> None:
    cb = lib.custom_batching
    ones = np.ones(3, np.float32)
    with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap function <lambda> using def_vmap"):
        cb.custom_vmap(lambda x: x)(1.0)

    @cb.custom_vmap
    def h(x: Any) -> Any:
        return x

    h.def_vmap(lambda n, inb, x: ((x, x), True))
    with pytest.raises(ValueError, match="structure of output value and output batching specification"):
        lib.vmap(h)(ones)
    h.def_vmap(lambda n, inb, x: ((x, x), (True, True)))
    with pytest.raises(ValueError, match="does not match that of original custom-vmapped function"):
        lib.vmap(h)(ones)
    with pytest.raises(ValueError):  # no reverse mode: JAX's linearization fails, fcore's transpose refuses
        lib.grad(h)(1.0)
    with pytest.raises(TypeError, match="could not be resolved to positional-only arguments"):
        h(1.0, z=2.0)


def test_closing_over_a_batched_value_is_refused() -> None:
    """JAX asserts here; fcore names the problem."""

    def outer(c: Any) -> Any:
        k = fcore.custom_batching.custom_vmap(lambda x: x * c)
        k.def_vmap(lambda n, inb, x: (x * c, True))
        return k(1.0)

    with pytest.raises(ValueError, match="closes over a value that the enclosing vmap batches"):
        fcore.vmap(outer)(np.ones((2, 3), np.float32))
