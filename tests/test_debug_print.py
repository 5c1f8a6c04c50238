"""``fcore.debug.print`` and ``fcore.debug.callback`` against ``jax.debug``: the same text on
stdout, eagerly and under jit, vmap, grad, scan, while and cond."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.backend
import fcore.numpy as fnp
from fcore import lax

Capsys = pytest.CaptureFixture[str]


def _printed(capsys: Capsys, run: Callable[[], Any]) -> str:
    capsys.readouterr()
    run()
    jax.effects_barrier()  # type: ignore[no-untyped-call]
    fcore.effects_barrier()
    return capsys.readouterr().out


def _same_output(capsys: Capsys, fcore_run: Callable[[], Any], jax_run: Callable[[], Any]) -> str:
    ours = _printed(capsys, fcore_run)
    theirs = _printed(capsys, jax_run)
    assert ours == theirs
    assert ours  # something was printed
    return ours


X = np.array([1.5, -2.0, 3.25], np.float32)


def _show(d: Any, p: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        d.print("x={x} sum={s:.3f} {}", x * 2, x=x, s=p.sum(x))
        return x + 1

    return f


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_print_matches_jax(capsys: Capsys, mode: str) -> None:
    f, g = _show(fcore.debug, fnp), _show(jax.debug, jnp)
    if mode == "jit":
        f, g = fcore.jit(f), jax.jit(g)
    out = _same_output(capsys, lambda: f(X), lambda: g(X))
    assert out.startswith("x=[ 1.5  -2.    3.25]")


def test_print_without_placeholders_and_strings(capsys: Capsys) -> None:
    def run(d: Any, j: Callable[..., Any]) -> Callable[[], Any]:
        def f(x: Any) -> Any:
            d.print("values", x, 3, skip_format_check=True)
            d.print("{} and {name}", "text", name=x[0])
            return x

        return lambda: j(f)(X)

    _same_output(capsys, run(fcore.debug, fcore.jit), run(jax.debug, jax.jit))


def test_print_two_call_form_and_format_errors(capsys: Capsys) -> None:
    _same_output(capsys, lambda: fcore.debug.print(ordered=True)("{}", X), lambda: jax.debug.print(ordered=True)("{}", X))
    with pytest.raises(ValueError, match="Unused keyword arguments"):
        fcore.debug.print("no fields", x=X)
    with pytest.raises(ValueError, match="Unused positional arguments"):
        fcore.debug.print("{}", X, X)


def test_print_under_vmap_prints_each_element(capsys: Capsys) -> None:
    def run(d: Any, v: Any, j: Any) -> Callable[[], Any]:
        def f(x: Any, y: Any) -> Any:
            d.print("x={} y={}", x, y)
            return x * y

        return lambda: j(v(f, in_axes=(0, None)))(X, np.float32(2.0))

    for wrap in ("eager", "jit"):
        ours = (lambda fn: fn) if wrap == "eager" else fcore.jit
        theirs = (lambda fn: fn) if wrap == "eager" else jax.jit
        out = _same_output(capsys, run(fcore.debug, fcore.vmap, ours), run(jax.debug, jax.vmap, theirs))
        assert out.count("\n") == 3


def test_print_under_grad_prints_primal_once(capsys: Capsys) -> None:
    def run(d: Any, p: Any, grad: Any, j: Any) -> Callable[[], Any]:
        def f(x: Any) -> Any:
            d.print("primal {}", x)
            return p.sum(x * x)

        return lambda: j(grad(f))(X)

    for ours, theirs in ((lambda fn: fn, lambda fn: fn), (fcore.jit, jax.jit)):
        out = _same_output(capsys, run(fcore.debug, fnp, fcore.grad, ours), run(jax.debug, jnp, jax.grad, theirs))
        assert out.count("primal") == 1


def test_print_in_scan_while_cond(capsys: Capsys) -> None:
    def run(d: Any, l: Any, j: Any) -> Callable[[], Any]:
        def f(x: Any) -> Any:
            def body(c: Any, xi: Any) -> Any:
                d.print("step c={} x={}", c, xi, ordered=True)
                return c + xi, c

            c, _ = l.scan(body, np.float32(0.0), x)

            def wbody(i: Any) -> Any:
                d.print("i={}", i)
                return i + 1

            n = l.while_loop(lambda i: i < 2, wbody, 0)
            l.cond(c > 0, lambda: d.print("pos {}", c), lambda: d.print("neg {}", c))
            return c + n

        return lambda: j(f)(X)

    ours = _printed(capsys, run(fcore.debug, lax, fcore.jit))
    theirs = _printed(capsys, run(jax.debug, jax.lax, jax.jit))
    # Unordered prints of different loops may interleave either way; each loop's are in order.
    assert sorted(ours.splitlines()) == sorted(theirs.splitlines())
    steps = [line for line in ours.splitlines() if line.startswith("step")]
    assert steps == [line for line in theirs.splitlines() if line.startswith("step")] and len(steps) == 3


def test_debug_callback_counts_and_order() -> None:
    def record(log: list[Any], d: Any, j: Any) -> list[Any]:
        def f(x: Any) -> Any:
            d.callback(lambda v, k: log.append((np.asarray(v).tolist(), k)), x, k="first")
            d.callback(lambda v: log.append(np.asarray(v).tolist()), x + 1, ordered=True)
            return x

        j(f)(X)
        jax.effects_barrier()  # type: ignore[no-untyped-call]
        return log

    for ours, theirs in ((lambda fn: fn, lambda fn: fn), (fcore.jit, jax.jit)):
        assert record([], fcore.debug, ours) == record([], jax.debug, theirs)


def test_debug_callback_error_surfaces() -> None:
    def bad(v: Any) -> None:
        raise ZeroDivisionError("callback failed here")

    with pytest.raises(ZeroDivisionError):
        fcore.debug.callback(bad, X)
    with pytest.raises(fcore.backend.XlaRuntimeError, match="callback failed here"):
        fcore.jit(lambda x: fcore.debug.callback(bad, x))(X)


def _transformed_programs(pkg: Any, np_: Any) -> dict[str, Callable[[], Any]]:
    d = pkg.debug
    xs = np.array([1.0, 2.0], np.float32)

    def f(x: Any) -> Any:
        d.print("f {}", x)
        return np_.sum(np_.sin(x))

    def g_primal(x: Any) -> Any:
        return np_.sin(x)

    g: Any = pkg.custom_vjp(g_primal)

    def g_fwd(x: Any) -> Any:
        d.print("fwd {}", x)
        return np_.sin(x), x

    def g_bwd(r: Any, ct: Any) -> Any:
        d.print("bwd {}", r)
        return (ct * np_.cos(r),)

    g.defvjp(g_fwd, g_bwd)

    def scanned(x: Any) -> Any:
        def body(c: Any, xi: Any) -> Any:
            d.print("b {} {}", c, xi)
            return c + xi, c

        return pkg.lax.scan(body, 0.0, x)

    return {
        "remat_grad": lambda: pkg.grad(pkg.checkpoint(f))(xs),
        "jit_remat_grad": lambda: pkg.jit(pkg.grad(pkg.checkpoint(f)))(xs),
        "custom_vjp_grad": lambda: pkg.grad(lambda x: np_.sum(g(x)))(xs),
        "jit_custom_vjp_grad": lambda: pkg.jit(pkg.grad(lambda x: np_.sum(g(x))))(xs),
        "vmap_scan": lambda: pkg.vmap(scanned)(np.stack([xs, xs + 1])),
        "jit_vmap_scan": lambda: pkg.jit(pkg.vmap(scanned))(np.stack([xs, xs + 1])),
        "jvp": lambda: pkg.jvp(f, (xs,), (xs,)),
        "linearize": lambda: pkg.linearize(f, xs)[1](xs),
        "vjp": lambda: pkg.vjp(f, xs)[1](np.float32(1.0)),
        "jacfwd": lambda: pkg.jacfwd(f)(xs),
    }


@pytest.mark.parametrize("name", sorted(_transformed_programs(fcore, fnp)))
def test_print_under_composed_transformations(capsys: Capsys, name: str) -> None:
    _same_output(capsys, _transformed_programs(fcore, fnp)[name], _transformed_programs(jax, jnp)[name])


def test_debug_log_goes_to_the_logger(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="fcore.debug"):
        fcore.jit(lambda x: fcore.debug.log("value {v:.2f}", v=x))(np.float32(1.5))
        fcore.debug.log("eager {}", 2)
    assert [r.getMessage() for r in caplog.records if r.name == "fcore.debug"] == ["value 1.50", "eager 2"]
