"""Mutable array references (``fcore.new_ref``, ``fcore.Ref``, ``fcore.ref``) against JAX 0.10:
values, reprs, types and errors, eagerly, under ``jit`` (refs made inside, passed in, closed
over; cached calls), under ``grad``/``jvp``/``vmap``, and through loops and branches (carried);
staged bodies that fcore does not carry refs through (``checkpoint``, ``custom_jvp``) raise
``NotImplementedError``."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

import fcore
import fcore.numpy as fnp

PKGS: tuple[tuple[ModuleType, ModuleType], tuple[ModuleType, ModuleType]] = ((jax, jnp), (fcore, fnp))


def _outcome(thunk: Callable[[], Any]) -> tuple[str, str]:
    """What running ``thunk`` gives: ("ok", repr of the result) or (error class, message)."""
    try:
        return "ok", repr(thunk())
    except Exception as e:  # noqa: BLE001 - the outcome, whatever it is, is compared
        return type(e).__name__, str(e).replace("jax._src.core.Ref", "Ref").replace("fcore.api.refs.Ref", "Ref")


def jit_of(pkg: ModuleType) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    jit: Callable[[Callable[..., Any]], Callable[..., Any]] = pkg.jit
    return jit


def same_outcome(make: Callable[[ModuleType, ModuleType], Callable[[], Any]]) -> tuple[str, str]:
    theirs = _outcome(make(jax, jnp))
    ours = _outcome(make(fcore, fnp))
    assert ours == theirs
    return ours


# -- eager -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "init",
    [lambda np_: np_.zeros(3), lambda np_: 1.0, lambda np_: 3, lambda np_: True, lambda np_: 1j,
     lambda np_: np.arange(4).reshape(2, 2), lambda np_: np.float64(2.5), lambda np_: np_.asarray(2.0)],
)
def test_new_ref_repr_type_and_value_as_jax(init: Callable[[ModuleType], Any]) -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def run() -> Any:
            r = pkg.new_ref(init(np_))
            return r, pkg.typeof(r), r.shape, r.dtype, r.ndim, r[...], r[...].weak_type

        return run

    same_outcome(make)


def test_reads_writes_and_ref_module_as_jax() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def run() -> Any:
            r = pkg.new_ref(np_.zeros((2, 3)))
            r[1] = np_.ones(3)
            r[0, 1:] = np_.full(2, 2.0)
            r[...] += 1.0
            r[:, 0] += np_.arange(2.0)
            got = (r[0], r[:, 1], r[np_.array([1, 0])], r[None].shape, r[::2])
            old = pkg.ref.swap(r, 1, np_.zeros(3))
            pkg.ref.set(r, (0, 0), 9.0)
            pkg.ref.addupdate(r, ..., np_.ones((2, 3)))
            return got, old, pkg.ref.get(r, (0, 2)), pkg.ref.get(r), r, len(r), r.size

        return run

    same_outcome(make)


def test_indexes_holding_arrays_and_new_axes_as_jax() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def run() -> Any:
            r = pkg.new_ref(np_.arange(6.0).reshape(2, 3))
            got = (r[(np_.array([1, 0]),)], r[np_.array([0, 1]), np_.array([1, 2])], r[..., 2])
            r[(np_.array([1]),)] = np_.zeros((1, 3))
            r[..., 0] = np_.full(2, 7.0)
            return got, r

        return run

    same_outcome(make)


def test_weak_scalars_store_into_refs_of_their_kind_as_jax() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def run() -> Any:
            i8 = pkg.new_ref(np_.int8(1))
            i8[...] = 3
            f16 = pkg.new_ref(np_.float16(1))
            f16[...] = 3.0
            i32 = pkg.new_ref(np_.zeros(2, "int32"))
            i32[...] = np.array([5, 6])  # int64 NumPy, canonicalized
            return i8, f16, i32

        return run

    same_outcome(make)


@pytest.mark.parametrize(
    "bad",
    [
        lambda pkg, np_, r: r.__setitem__(..., np_.ones(4)),
        lambda pkg, np_, r: r.__setitem__(..., np_.ones(3, np_.int32)),
        lambda pkg, np_, r: r.__setitem__(..., 3),
        lambda pkg, np_, r: r.__setitem__(..., True),
        lambda pkg, np_, r: pkg.ref.addupdate(r, ..., 1.0),
        lambda pkg, np_, r: pkg.ref.addupdate(r, ..., np_.ones(3, "int32")),
        lambda pkg, np_, r: r[5],
        lambda pkg, np_, r: pkg.ref.get(np_.ones(3)),
        lambda pkg, np_, r: np_.add(r, 1),
        lambda pkg, np_, r: r + 1,
        lambda pkg, np_, r: r.sum(),
        lambda pkg, np_, r: r.at[0],
        lambda pkg, np_, r: float(pkg.new_ref(1.0)),
        lambda pkg, np_, r: bool(pkg.new_ref(1.0)),
        lambda pkg, np_, r: pkg.new_ref([1, 2]),
        lambda pkg, np_, r: pkg.new_ref(None),
        lambda pkg, np_, r: pkg.new_ref(np_.ones(2), dtype=np_.float32),
    ],
)
def test_misuse_is_jax_error(bad: Callable[[ModuleType, ModuleType, Any], Any]) -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        return lambda: bad(pkg, np_, pkg.new_ref(np_.zeros(3)))

    kind, _ = same_outcome(make)
    assert kind != "ok"


def test_math_on_a_ref_is_a_type_error() -> None:
    """JAX's message names its internal tracer class here; fcore's names the ``Ref``."""
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments, got <class 'fcore.api.refs.Ref'> at "
                       "position 0."):
        fnp.sin(fcore.new_ref(1.0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin(jax.new_ref(1.0))  # type: ignore[arg-type]


def test_misuse_of_an_indexed_write_names_the_shapes() -> None:
    for pkg, np_ in PKGS:
        r = pkg.new_ref(np_.zeros((2, 3)))
        with pytest.raises(ValueError, match=r"Invalid shape for `swap`. Ref shape: \(2, 3\). Expected shape: "
                           r"\(3,\). Value shape: \(2,\)."):
            r[1] = np_.ones(2)


def test_freeze_returns_the_value_and_ends_the_ref() -> None:
    """fcore ends a frozen ref's life eagerly too (JAX does so under jit only)."""
    r = fcore.new_ref(fnp.arange(3.0))
    np.testing.assert_array_equal(fcore.freeze(r), [0.0, 1.0, 2.0])
    assert repr(r) == "Ref([0., 1., 2.], dtype=float32)"
    with pytest.raises(ValueError, match=r"`get` must be called on `Ref` types: ~float32\[3\]."):
        r[...]
    with pytest.raises(ValueError, match="`swap` must be called on `Ref` types"):
        r[...] = fnp.ones(3)
    np.testing.assert_array_equal(fcore.freeze(fnp.ones(2)), jax.freeze(jnp.ones(2)))  # type: ignore[arg-type]  # an array: itself


def test_empty_ref_and_free_ref_under_jit_as_jax() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def f() -> Any:
            e = pkg.empty_ref(pkg.ShapeDtypeStruct((2,), np_.float32))
            e[...] = np_.ones(2)
            v = e[...]
            pkg.free_ref(e)
            return v

        jitted: Callable[[], Any] = pkg.jit(f)
        return jitted

    same_outcome(make)
    e = fcore.ref.empty_ref(fcore.ShapeDtypeStruct((2,), fnp.float32))  # eagerly too (JAX: not implemented)
    fcore.ref.free_ref(e)
    with pytest.raises(ValueError, match=r"`get` must be called on `Ref` types: float32\[2\]."):
        e[...]


def test_public_names() -> None:
    assert {n for n in dir(jax.ref) if not n.startswith("_")} <= set(dir(fcore.ref))
    assert fcore.Ref is fcore.ref.Ref and fcore.new_ref is fcore.ref.new_ref
    r = fcore.new_ref(1.0)
    assert isinstance(r, fcore.Ref) and fcore.Array not in type(r).__mro__
    assert isinstance(fcore.typeof(r), fcore.ref.AbstractRef) and str(fcore.typeof(r)) == "Ref{float32[]}"
    assert fcore.tree_util.tree_leaves([r]) == [r]


@settings(max_examples=10, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(-4, 4, width=32)), max_size=5))
def test_eager_writes_agree_with_numpy(writes: list[tuple[int, float]]) -> None:
    r = fcore.new_ref(fnp.zeros(4))
    expected = np.zeros(4, np.float32)
    for i, v in writes:
        r[i] += v
        expected[i] += np.float32(v)
    np.testing.assert_array_equal(r[...], expected)


# -- jit -----------------------------------------------------------------------------------------
def test_jit_closed_over_ref_is_read_and_written_every_call() -> None:
    """The docs' first example, twice, then with the ref changed between calls (cached)."""

    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        x_ref = pkg.new_ref(np_.zeros(3))

        @jit_of(pkg)
        def f() -> None:
            x_ref[1] += 1.0

        def run() -> Any:
            f()
            f()
            first = repr(x_ref)
            x_ref[...] = np_.full(3, 5.0)
            f()
            return first, x_ref

        return run

    assert same_outcome(make)[1].startswith("('Ref([0., 2., 0.], dtype=float32)'")


def test_jit_ref_arguments_refs_made_inside_and_nested_jits() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        @jit_of(pkg)
        def g(r: Any, y: Any) -> Any:
            r[...] += y
            return r[0] * 2

        @jit_of(pkg)
        def inner() -> Any:
            r = pkg.new_ref(np_.zeros(2))
            r[0] = 3.0
            r[...] += 1.0
            return r[...]

        y_ref = pkg.new_ref(np_.ones(2))

        @jit_of(pkg)
        def nest(a: Any) -> Any:
            @jit_of(pkg)
            def k(b: Any) -> Any:
                y_ref[...] = y_ref[...] * b
                return y_ref[0]

            return k(a) + k(a)

        def run() -> Any:
            a, b = pkg.new_ref(np_.zeros(3)), pkg.new_ref(np_.ones(3))
            outs = (g(a, 1.0), g(a, 2.0), g(b, 1.0), inner(), nest(2.0), nest(3.0))
            read_only = pkg.jit(pkg.grad(lambda x, r: x * r[1]))(2.0, b)  # a ref argument only read
            return outs, read_only, a, b, y_ref

        return run

    same_outcome(make)


@pytest.mark.parametrize(
    "bad",
    [
        lambda pkg, np_, r: pkg.jit(lambda: pkg.new_ref(1.0))(),
        lambda pkg, np_, r: pkg.jit(lambda a, b: a[...] + b[...])(r, r),
    ],
)
def test_jit_misuse_is_jax_error(bad: Callable[[ModuleType, ModuleType, Any], Any]) -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        return lambda: bad(pkg, np_, pkg.new_ref(np_.zeros(3)))

    for pkg, np_ in PKGS:
        with pytest.raises(ValueError):
            make(pkg, np_)()
    kind, message = _outcome(make(fcore, fnp))
    assert "mutable array reference" in message


def test_jit_returning_its_ref_argument_is_jax_error() -> None:
    for pkg, np_ in PKGS:
        with pytest.raises(ValueError, match="returned a mutable array reference of type Ref{float32\\[3\\]}, but "
                           "mutable array references cannot be returned.\n\nThe returned mutable array was passed in "
                           "as the argument r."):
            pkg.jit(lambda r: r)(pkg.new_ref(np_.zeros(3)))


def test_jit_ref_both_closed_over_and_passed_is_jax_error() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        x_ref = pkg.new_ref(0.0)

        @jit_of(pkg)
        def err3(y_ref: Any) -> None:
            y_ref[...] = x_ref[...]

        return lambda: err3(x_ref)

    kind, message = _outcome(make(fcore, fnp))
    assert (kind, message.split(" at ")[0]) == (lambda o: (o[0], o[1].split(" at ")[0]))(_outcome(make(jax, jnp)))
    assert message.endswith("was both closed over and passed as the argument y_ref")


def test_vmap_over_ref_arguments_as_jax() -> None:
    """JAX's docs' ``dist``: a mapped ref argument is a ref of one example's slice inside."""

    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def dist(x: Any, y: Any, out_ref: Any) -> None:
            out_ref[...] = np_.sum((x - y) ** 2)

        def run() -> Any:
            vecs = np_.arange(12.0).reshape(3, 4)
            out_ref = pkg.new_ref(np_.zeros((3, 3)))
            pkg.vmap(pkg.vmap(dist, (0, None, 0)), (None, 0, 0))(vecs, vecs, out_ref)
            r = pkg.new_ref(np_.arange(6.0).reshape(2, 3))
            read = pkg.vmap(lambda q: q[0] * 2, in_axes=1)(r)
            pkg.vmap(lambda q: q.__setitem__(..., q[...] + 1.0), in_axes=1)(r)
            return out_ref, read, r

        return run

    same_outcome(make)


def test_make_jaxpr_shows_refs_discharged() -> None:
    """No ref equations: a ref from outside is an input, its new value an output."""
    x_ref = fcore.new_ref(fnp.zeros(3))

    def f() -> None:
        x_ref[1] += 1.0

    closed = fcore.make_jaxpr(f)()
    assert [str(a) for a in closed.in_avals] == ["float32[3]"] and len(closed.out_avals) == 1
    assert "dynamic_update_slice" in str(closed)
    read_only = fcore.make_jaxpr(lambda r: r[0] * 2)(x_ref)
    assert len(read_only.out_avals) == 1  # an unchanged ref is no output
    np.testing.assert_array_equal(x_ref[...], [0.0, 0.0, 0.0])  # tracing changed nothing


# -- autodiff and vmap -----------------------------------------------------------------------------
def test_transformations_of_functions_that_make_refs_as_jax() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        g = make_g(pkg, np_)

        def run() -> Any:
            return pkg.grad(g)(1.0), pkg.jit(pkg.grad(g))(1.0), pkg.grad(pkg.jit(g))(1.0)

        return run

    outcome = same_outcome(make)
    assert "Array(0.5403023, dtype=float32, weak_type=True)" in outcome[1]
    g_jax, g_ours = (make_g(pkg, np_) for pkg, np_ in PKGS)
    np.testing.assert_allclose(fcore.jvp(g_ours, (1.0,), (1.0,)), jax.jvp(g_jax, (1.0,), (1.0,)), rtol=1e-6)
    np.testing.assert_allclose(fcore.vmap(g_ours)(fnp.arange(3.0)), jax.vmap(g_jax)(jnp.arange(3.0)), rtol=1e-6)


def make_g(pkg: ModuleType, np_: ModuleType) -> Callable[[Any], Any]:
    """The docs' ``g``: a ref made inside, written with ``sin(x)``, read."""

    def g(x: Any) -> Any:
        r = pkg.new_ref(0.0)
        r[...] = np_.sin(x)
        return r[...]

    return g


def test_outer_refs_under_grad_and_vmap_as_jax() -> None:
    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        def run() -> Any:
            o = pkg.new_ref(2.0)
            read = (pkg.grad(lambda x: o[...] * x)(3.0), pkg.vmap(lambda x: o[...] * x)(np_.arange(3.0)))

            def bump(x: Any) -> Any:
                o[...] += 1.0
                return x * 2

            return read, pkg.grad(bump)(1.0), pkg.grad(pkg.jit(bump))(1.0), float(o[...])

        return run

    same_outcome(make)


@pytest.mark.parametrize(
    "bad",
    [
        lambda pkg, np_, o: pkg.grad(lambda x: (o.__setitem__(..., x * 2), x)[1])(1.0),
        lambda pkg, np_, o: pkg.jvp(lambda x: (o.__setitem__(..., x * 2), x)[1], (1.0,), (1.0,)),
        lambda pkg, np_, o: pkg.vmap(lambda x: (o.__setitem__(..., x * 2), x)[1])(np_.arange(3.0)),
        lambda pkg, np_, o: pkg.vmap(lambda x: (o.__setitem__(..., o[...] + 1.0), x)[1])(np_.arange(3.0)),
    ],
)
def test_writing_traced_values_into_outer_refs_is_jax_error(bad: Callable[[ModuleType, ModuleType, Any], Any]) -> None:
    for pkg, np_ in PKGS:
        with pytest.raises(Exception, match="performing a set/swap operation with"):
            bad(pkg, np_, pkg.new_ref(0.0))


# -- loops and branches ----------------------------------------------------------------------------
def test_loops_and_branches_carry_outer_refs_as_jax() -> None:
    """Refs from outside a loop body or a branch are read and written through the carry."""

    def make(pkg: ModuleType, np_: ModuleType) -> Callable[[], Any]:
        lax = pkg.lax

        def run() -> Any:
            c = pkg.new_ref(0)

            def body(i: Any, carry: Any) -> Any:
                c[...] += i
                return carry + 1

            def step(carry: Any, x: Any) -> Any:
                c[...] += x
                return carry, c[...]

            def count(i: Any) -> Any:
                c[...] = c[...] + 1
                return i + 1

            outs = [
                lax.fori_loop(0, 5, body, 0),
                lax.scan(step, 0, np_.arange(4))[1],
                lax.cond(True, lambda: c.__setitem__(..., c[...] * 10), lambda: None),
                lax.while_loop(lambda i: i < 3, count, 0),
                pkg.jit(lambda: lax.fori_loop(0, 5, body, 0))(),
                lax.switch(1, [lambda: c.__setitem__(..., 1), lambda: c.__setitem__(..., c[...] + 7)]),
            ]
            return [np.asarray(o) if o is not None else None for o in outs], int(c[...])

        return run

    same_outcome(make)


def test_loops_carry_outer_refs_under_grad_and_vmap() -> None:
    for pkg, np_ in PKGS:
        o = pkg.new_ref(1.0)

        def f(x: Any, o: Any = o, pkg: Any = pkg) -> Any:
            def body(i: Any, acc: Any) -> Any:
                o[...] += 1.0
                return acc * x

            return pkg.lax.fori_loop(0, 3, body, 1.0)

        assert float(pkg.grad(f)(2.0)) == 12.0 and float(o[...]) == 4.0
        read_only = pkg.vmap(lambda x: pkg.lax.fori_loop(0, 3, lambda i, a: a + o[...], x))(np_.arange(3.0))
        np.testing.assert_array_equal(read_only, [12.0, 13.0, 14.0])


@pytest.mark.parametrize(
    "body",
    [
        lambda c: fcore.grad(fcore.checkpoint(lambda y: y * c[...]))(1.0),
        lambda c: fcore.lax.fori_loop(0, 2, lambda i, x: fcore.grad(fcore.checkpoint(lambda y: y * c[...]))(x), 1.0),
    ],
)
def test_outer_refs_in_other_staged_bodies_are_not_implemented(body: Callable[[Any], Any]) -> None:
    c = fcore.new_ref(2.0)
    with pytest.raises(NotImplementedError, match="created outside checkpoint.* was used inside it"):
        body(c)
    assert float(c[...]) == 2.0


def test_refs_made_inside_a_loop_body_work() -> None:
    def body(i: Any, acc: Any) -> Any:
        r = fcore.new_ref(acc)
        r[...] += i
        return r[...]

    assert int(fcore.lax.fori_loop(0, 4, body, 0)) == 6
