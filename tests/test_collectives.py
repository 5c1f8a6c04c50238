"""Collectives over ``vmap(..., axis_name=)`` axes, against jax (one device, in process)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import lax

Body = Callable[[Any, Any], Callable[[Any], Any]]


def _shift(n: int, k: int) -> list[tuple[int, int]]:
    """The cyclic shift by ``k`` of ``n`` elements (JAX's vmap ppermute wants whole permutations)."""
    return [(i, (i + k) % n) for i in range(n)]

CASES: list[Body] = [
    lambda l, np_: (lambda v: v / l.psum(v, "i")),
    lambda l, np_: (lambda v: l.pmax(v, "i") - l.pmin(v, "i") + l.pmean(v, "i")),
    lambda l, np_: (lambda v: l.all_gather(v, "i")),
    lambda l, np_: (lambda v: l.all_gather(v, "i", axis=1)),
    lambda l, np_: (lambda v: l.all_gather(v, "i", tiled=True)),
    lambda l, np_: (lambda v: v * l.axis_index("i")),
    lambda l, np_: (lambda v: l.psum(np_.ones(2), "i") + v.sum()),  # a value the same on every element
    lambda l, np_: (lambda v: l.psum(v, "i") + l.all_gather(np_.ones(2), "i").sum()),
    lambda l, np_: (lambda v: l.psum({"a": v, "b": (v * 2,)}, "i")["b"][0]),
    lambda l, np_: (lambda v: l.ppermute(v, "i", _shift(l.axis_size("i"), 1))),
    lambda l, np_: (lambda v: l.ppermute(v, "i", _shift(l.axis_size("i"), -1)) * 2),
    lambda l, np_: (lambda v: l.ppermute(np_.ones(2), "i", _shift(l.axis_size("i"), 2)) + v.sum()),  # unbatched
    lambda l, np_: (lambda v: l.psum_scatter(l.all_gather(v, "i") * v, "i")),
    lambda l, np_: (lambda v: l.psum_scatter(l.all_gather(v, "i"), "i")),
    lambda l, np_: (lambda v: l.psum_scatter(l.all_gather(v, "i", tiled=True) * v[0], "i", tiled=True)),
    lambda l, np_: (lambda v: l.psum_scatter(l.all_gather(v, "i", axis=1) * v[:, None], "i", scatter_dimension=1)),
    lambda l, np_: (lambda v: l.all_to_all(l.all_gather(v, "i") * v, "i", 0, 1)),
    lambda l, np_: (lambda v: l.all_to_all(l.all_gather(v, "i", axis=1) * v[:, None], "i", 1, 0)),
    lambda l, np_: (lambda v: l.all_to_all(l.all_gather(v, "i") * v, "i", 0, 1, tiled=True)),
    lambda l, np_: (lambda v: l.all_to_all(l.all_gather(v, "i") * v, "i", 0, 0, tiled=True)),
    lambda l, np_: (lambda v: l.all_to_all(l.all_gather(v, "i") + v[0], "i", 0, 1)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("in_axes", [0, 1])
@pytest.mark.parametrize("jitted", [False, True])
def test_vmap_axis_collectives_match_jax(case: int, in_axes: int, jitted: bool) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    f = fcore.vmap(CASES[case](lax, fnp), in_axes=in_axes, axis_name="i")
    r = (fcore.jit(f) if jitted else f)(x)
    jr = jax.vmap(CASES[case](jax.lax, jnp), in_axes=in_axes, axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(r), np.asarray(jr), rtol=1e-6)
    assert r.shape == jr.shape and r.dtype == jr.dtype


def test_nested_named_vmaps_and_grad_match_jax() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4) + 1

    def f(l: Any) -> Callable[[Any], Any]:
        return lambda v: l.psum(v, "i") * l.psum(v, "j") + l.axis_index("j")

    r = fcore.vmap(fcore.vmap(f(lax), axis_name="j"), axis_name="i")(x)
    jr = jax.vmap(jax.vmap(f(jax.lax), axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(r), np.asarray(jr), rtol=1e-6)

    def loss(l: Any, vm: Any, np_: Any) -> Callable[[Any], Any]:
        return lambda w: vm(lambda v: np_.sin(v * w / l.psum(v * w * w, "i")).sum(), axis_name="i")(x).sum()

    g = fcore.grad(loss(lax, fcore.vmap, fnp))(np.float32(2.0))
    jg = jax.grad(loss(jax.lax, jax.vmap, jnp))(np.float32(2.0))
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", [9, 12, 16])
def test_grad_through_vmap_axis_exchanges_matches_jax(case: int) -> None:
    """ppermute, psum_scatter and all_to_all over a vmap axis differentiate as JAX's."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 + 1

    def loss(lib: Any, l: Any, np_: Any) -> Callable[[Any], Any]:
        return lambda v: (np_.sin(lib.vmap(CASES[case](l, np_), axis_name="i")(v)) ** 2).sum()

    g = fcore.grad(loss(fcore, lax, fnp))(x)
    jg = jax.grad(loss(jax, jax.lax, jnp))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-5)


def test_all_to_all_of_a_value_the_same_on_every_element() -> None:
    """JAX 0.10 returns a wrongly shaped result here (f32[3,4,3,3,4,1] for f32[3,4,3]); fcore
    gives what the same exchange of a batched copy gives."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    unbatched = fcore.vmap(lambda v: lax.all_to_all(lax.all_gather(v, "i"), "i", 0, 1), axis_name="i")(x)
    batched = fcore.vmap(lambda v: lax.all_to_all(lax.all_gather(v, "i") + 0 * v, "i", 0, 1), axis_name="i")(x)
    assert unbatched.shape == (3, 4, 3)
    np.testing.assert_array_equal(np.asarray(unbatched), np.asarray(batched))


def test_unsupported_vmap_collectives_say_so() -> None:
    with pytest.raises(NotImplementedError, match="ppermute over several vmap axes at once"):
        inner = fcore.vmap(lambda v: lax.ppermute(v, ("i", "j"), [(0, 1)]), axis_name="j")
        fcore.vmap(inner, axis_name="i")(np.ones((2, 2, 3)))
    with pytest.raises(NameError, match="unbound axis name: j"):
        fcore.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(np.ones((2, 3)))
