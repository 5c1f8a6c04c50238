"""JAX's extension modules (``jax.interpreters.ad/batching/mlir``, ``jax.extend.mlir``) on fcore:
"Writing custom JAX primitives" done side by side in jax and in fcore, with the same code."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import jax.extend.core
import jax.extend.mlir.dialects.stablehlo
import jax.interpreters.ad
import jax.interpreters.batching
import jax.interpreters.mlir
import numpy as np
import pytest

import fcore
import fcore.export
import fcore.extend.core
import fcore.interpreters.ad
import fcore.interpreters.batching
import fcore.interpreters.mlir
from fcore.backend.lowering import LoweringError
from fcore.extend.mlir import ir
from fcore.extend.mlir.dialects import stablehlo

LIBS = {
    "jax": (jax, jax.extend.core, jax.interpreters.ad, jax.interpreters.batching, jax.interpreters.mlir,
            jax.extend.mlir.dialects.stablehlo),
    "fcore": (fcore, fcore.extend.core, fcore.interpreters.ad, fcore.interpreters.batching, fcore.interpreters.mlir,
              stablehlo),
}


def multiply_add(lib_name: str, name: str) -> Callable[..., Any]:
    """The tutorial's ``multiply_add`` primitive with every rule, written once for either library."""
    lib, core, ad, batching, mlir, hlo = LIBS[lib_name]
    lax: Any = lib.lax
    p = core.Primitive(name)

    def prim(x: Any, y: Any, z: Any) -> Any:
        return p.bind(x, y, z)

    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    p.def_abstract_eval(lambda xs, ys, zs: lib.core.ShapedArray(xs.shape, xs.dtype))
    mlir.register_lowering(p, lambda ctx, xc, yc, zc: [hlo.AddOp(hlo.MulOp(xc, yc), zc).result])

    def value_and_jvp(arg_values: Any, arg_tangents: Any) -> Any:
        x, y, z = arg_values

        def make_zero(tan: Any) -> Any:
            return lax.full_like(x, 0) if type(tan) is ad.Zero else tan

        xt, yt, zt = map(make_zero, arg_tangents)
        return prim(x, y, z), prim(xt, y, prim(x, yt, zt))

    ad.primitive_jvps[p] = value_and_jvp

    def transpose(ct: Any, x: Any, y: Any, z: Any) -> Any:
        if not ad.is_undefined_primal(x):
            assert ad.is_undefined_primal(y)
            ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else prim(x, ct, lax.full_like(x, 0))
            return None, ct_y, ct
        ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else prim(ct, y, lax.full_like(y, 0))
        return ct_x, None, ct

    ad.primitive_transposes[p] = transpose

    def batch(vals: Any, dims: Any) -> Any:
        size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
        return prim(*[batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]), 0

    batching.primitive_batchers[p] = batch
    return prim


PRIMS = {name: multiply_add(name, "compat_multiply_add") for name in LIBS}


def same(theirs: Any, ours: Any) -> None:
    t_leaves, t_tree = jax.tree_util.tree_flatten(theirs)
    o_leaves, o_tree = jax.tree_util.tree_flatten(ours)
    assert str(o_tree) == str(t_tree)
    for t, o in zip(t_leaves, o_leaves):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
        if isinstance(t, jax.Array):  # (jax hands an eager impl's NumPy result back as it is; fcore makes an Array)
            assert np.asarray(o).dtype == t.dtype


def test_the_tutorial_transformations_agree_with_jax() -> None:
    def run(lib_name: str) -> list[Any]:
        lib = LIBS[lib_name][0]
        prim = PRIMS[lib_name]

        def square_add(a: Any, b: Any) -> Any:
            return prim(a, a, b)

        xs, ys = np.array([2.0, 3.0], np.float32), np.array([10.0, 20.0], np.float32)
        return [
            lib.jit(square_add)(2.0, 10.0),
            lib.jit(square_add, static_argnums=1)(2.0, 10.0),
            lib.jvp(square_add, (2.0, 10.0), (1.0, 1.0)),
            lib.jit(lambda p, t: lib.jvp(square_add, p, t))((2.0, 10.0), (1.0, 1.0)),
            lib.grad(square_add)(2.0, 10.0),
            lib.jit(lib.grad(square_add))(2.0, 10.0),
            lib.vmap(square_add)(xs, ys),
            lib.jit(lib.vmap(square_add, in_axes=(0, None)))(xs, np.float32(1.0)),
        ]

    same(run("jax"), run("fcore"))
    assert float(PRIMS["fcore"](2.0, 2.0, 10.0)) == 14.0  # eager: the impl


def test_rules_inside_scan_under_grad_and_vmap() -> None:
    def run(lib_name: str) -> list[Any]:
        lib = LIBS[lib_name][0]
        prim = PRIMS[lib_name]
        xs = np.arange(1.0, 4.0, dtype=np.float32)

        def loop(c: Any) -> Any:
            # (the tutorial's transpose rule needs one of the two factors linear: ``c`` is, twice)
            carry, ys = lib.lax.scan(lambda c, x: (prim(c, c, x), prim(c, c, c)), c, xs)
            return carry + ys.sum()

        return [lib.jit(lib.grad(loop))(np.float32(0.5)), lib.jit(lib.vmap(loop))(xs)]

    same(run("jax"), run("fcore"))


def test_a_chlo_rule_in_while_and_cond_bodies() -> None:
    def run(lib_name: str) -> list[Any]:
        lib, core, _, _, mlir, _ = LIBS[lib_name]
        chlo: Any = importlib.import_module(f"{lib_name}.extend.mlir.dialects.chlo")
        erf = core.Primitive("compat_erf")
        erf.def_abstract_eval(lambda x: x)
        mlir.register_lowering(erf, lambda ctx, x: [chlo.ErfOp(x).result])
        loop = lambda x: lib.lax.while_loop(  # noqa: E731
            lambda c: c[0] < 3, lambda c: (c[0] + 1, erf.bind(c[1])), (0, x)
        )[1]
        branch = lambda x: lib.lax.cond(x > 0, lambda v: erf.bind(v), lambda v: -v, x)  # noqa: E731
        x = np.float32(0.5)
        return [lib.jit(loop)(x), lib.jit(branch)(x), type(lib.jit(branch).lower(x).compiler_ir()).__name__]

    same(run("jax"), run("fcore"))


def test_a_primitive_with_several_results() -> None:
    def run(lib_name: str) -> list[Any]:
        lib, core, ad, batching, mlir, hlo = LIBS[lib_name]
        sincos = core.Primitive("compat_sincos")
        sincos.multiple_results = True
        sincos.def_impl(lambda x: [np.sin(x), np.cos(x)])
        sincos.def_abstract_eval(lambda x: [x, x])
        mlir.register_lowering(sincos, lambda ctx, x: [hlo.SineOp(x).result, hlo.CosineOp(x).result])

        def jvp(primals: Any, tangents: Any) -> Any:
            (x,), (t,) = primals, tangents
            s, c = sincos.bind(x)
            if type(t) is ad.Zero:
                return [s, c], [ad.Zero(t.aval), ad.Zero(t.aval)]
            return [s, c], [c * t, -s * t]

        ad.primitive_jvps[sincos] = jvp
        batching.primitive_batchers[sincos] = lambda vals, dims: (sincos.bind(*vals), [dims[0], dims[0]])
        f = lambda x: (lambda sc: (sc[0] * sc[1]).sum())(sincos.bind(x))  # noqa: E731
        x = np.linspace(0, 1, 4, dtype=np.float32)
        return [lib.jit(f)(x), lib.jit(lib.grad(f))(x), lib.jit(lib.vmap(lambda v: sincos.bind(v)[0]))(x.reshape(2, 2))]

    same(run("jax"), run("fcore"))


def test_export_carries_the_rule() -> None:
    prim = PRIMS["fcore"]
    x = np.arange(3.0, dtype=np.float32)
    exp = fcore.export.export(fcore.jit(lambda a: prim(a, a, a)))(fcore.ShapeDtypeStruct((3,), np.float32))
    assert "compat_multiply_add_lowering" in exp.mlir_module()
    restored = fcore.export.deserialize(exp.serialize())
    np.testing.assert_array_equal(restored.call(x), x * x + x)


def test_lower_fun_as_a_rule_and_inside_a_binding_rule() -> None:
    def run(lib_name: str) -> list[Any]:
        lib, core, _, _, mlir, hlo = LIBS[lib_name]
        sq = core.Primitive("compat_sq_plus_one")
        sq.def_abstract_eval(lambda x: x)
        mlir.register_lowering(sq, mlir.lower_fun(lambda x: x * x + 1.0, multiple_results=False))
        cube = core.Primitive("compat_cube")
        cube.def_abstract_eval(lambda x: x)

        def cube_lowering(ctx: Any, x: Any) -> Any:
            # (a function whose results are not the primitive's: lower_fun does not read avals_out)
            total, square = mlir.lower_fun(lambda v: [v.sum(), v * v], multiple_results=True)(ctx, x)
            spread = hlo.BroadcastInDimOp(x.type, total, mlir.dense_int_array([]))
            return [hlo.AddOp(hlo.MulOp(square, x), spread).result]

        mlir.register_lowering(cube, cube_lowering)
        x = np.arange(4.0, dtype=np.float32)
        return [lib.jit(lambda v: sq.bind(v))(x), lib.jit(lambda v: cube.bind(v) + 1)(x)]

    same(run("jax"), run("fcore"))


def _primitive_with_lowering(name: str, rule: Callable[..., Any]) -> fcore.extend.core.Primitive:
    p: fcore.extend.core.Primitive = fcore.extend.core.Primitive(name)
    p.def_abstract_eval(lambda x: x)
    fcore.interpreters.mlir.register_lowering(p, rule)
    return p


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (lambda ctx, x: [x, x], "returned 2 values, but the primitive has 1 results"),
        (lambda ctx, x: [stablehlo.ConvertOp(fcore.interpreters.mlir.aval_to_ir_type(
            fcore.core.ShapedArray((3,), np.dtype(np.int32))), x).result], "returned a value of type tensor<3xi32>"),
        (lambda ctx, x: stablehlo.NegOp(x).result, "must return a sequence of ir.Value"),
        (lambda ctx, x: [stablehlo.NegOp(x)], "must return ir.Value s, got NegOp"),
    ],
    ids=["count", "type", "bare-value", "op-not-value"],
)
def test_a_bad_lowering_rule_is_a_named_error_before_xla(rule: Callable[..., Any], message: str) -> None:
    p = _primitive_with_lowering("compat_bad_lowering", rule)
    with pytest.raises(LoweringError, match=message):
        fcore.jit(lambda v: p.bind(v)).lower(np.zeros(3, np.float32)).as_text()


def test_lower_fun_with_the_wrong_results_and_an_unknown_platform_are_named_errors() -> None:
    mlir = fcore.interpreters.mlir
    p = _primitive_with_lowering("compat_lower_fun_results", mlir.lower_fun(lambda x: [x, x], multiple_results=True))
    message = r"returns \[float32\[3\], float32\[3\]\], but the primitive.s results are \[float32\[3\]\]"
    with pytest.raises(LoweringError, match=message):
        fcore.jit(lambda v: p.bind(v)).lower(np.zeros(3, np.float32)).as_text()
    with pytest.raises(NotImplementedError, match="unknown platform quantum"):
        mlir.register_lowering(p, lambda ctx, x: [x], platform="quantum")


def test_a_platform_rule_applies_only_on_its_platform() -> None:
    from fcore.backend import runtime

    other = "cuda" if runtime.platform() == "cpu" else "cpu"
    p = _primitive_with_lowering("compat_platform_rule", lambda ctx, x: [stablehlo.NegOp(x).result])
    fcore.interpreters.mlir.register_lowering(p, lambda ctx, x: [x], platform=other)
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(fcore.jit(lambda v: p.bind(v))(x), -x)  # the generic rule
    q = fcore.extend.core.Primitive("compat_platform_only")
    q.def_abstract_eval(lambda x: x)
    fcore.interpreters.mlir.register_lowering(q, lambda ctx, x: [x], platform=other)
    with pytest.raises(LoweringError, match=f"no lowering rule for platform {runtime.platform()}"):
        fcore.jit(lambda v: q.bind(v)).lower(x).as_text()


def test_ir_helpers_build_in_the_rules_context() -> None:
    def rule(ctx: Any, x: Any) -> Any:
        assert [a.shape for a in ctx.avals_in] == [(2,)] and ctx.avals_out[0].dtype == np.float32
        two = fcore.interpreters.mlir.ir_constant(np.full((2,), 2.0, np.float32))
        assert two.type == fcore.interpreters.mlir.aval_to_ir_type(ctx.avals_out[0])
        assert str(fcore.interpreters.mlir.dtype_to_ir_type(np.dtype(np.float32))) == "f32"
        return [stablehlo.MulOp(x, two).result]

    p = _primitive_with_lowering("compat_ir_helpers", rule)
    np.testing.assert_array_equal(fcore.jit(lambda v: p.bind(v))(np.ones(2, np.float32)), [2.0, 2.0])
    assert isinstance(ir.Context, type)


def test_registries_view_fcores_rule_tables() -> None:
    ad, batching = fcore.interpreters.ad, fcore.interpreters.batching
    p = fcore.extend.core.Primitive("compat_registry")
    p.def_abstract_eval(lambda x: x)

    def jvp(primals: Any, tangents: Any) -> Any:
        return p.bind(*primals), tangents[0]

    ad.primitive_jvps[p] = jvp
    assert ad.primitive_jvps[p] is jvp and p in ad.primitive_jvps
    assert fcore.lax.sin_p in ad.primitive_jvps and fcore.lax.sin_p in batching.primitive_batchers
    assert p not in ad.primitive_transposes
    with pytest.raises(NotImplementedError, match="compat_registry"):
        ad.get_primitive_transpose(p)
    with pytest.raises(TypeError, match="Primitive"):
        ad.primitive_jvps["sin"] = jvp  # type: ignore[index]
    aval = fcore.core.ShapedArray((2,), np.dtype(np.float32), weak_type=True)
    jax_aval = jax.core.ShapedArray((2,), np.float32, weak_type=True)
    assert repr(ad.Zero(aval)) == repr(jax.interpreters.ad.Zero(jax_aval)) == "Zero(~float32[2])"
    jax_undefined: Any = jax.interpreters.ad.UndefinedPrimal  # (unannotated in jax)
    assert repr(ad.UndefinedPrimal(aval)) == repr(jax_undefined(jax_aval)) == "UndefinedPrimal(~float32[2])"
    np.testing.assert_array_equal(ad.Zero(aval).instantiate(), np.zeros(2, np.float32))
    # fcore's own batching rule, called JAX's way (no axis size)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out, out_dim = batching.primitive_batchers[fcore.lax.sin_p]((x,), (1,))
    np.testing.assert_allclose(np.moveaxis(np.asarray(out), out_dim, 0), np.sin(x).T, rtol=1e-6)


def test_rule_helpers_against_jax() -> None:
    def run(lib_name: str) -> list[Any]:
        lib, core, ad, batching, mlir, _ = LIBS[lib_name]
        double = core.Primitive("compat_double")  # linear: deflinear2
        double.def_impl(lambda x: np.multiply(x, 2))
        double.def_abstract_eval(lambda x: x)
        mlir.register_lowering(double, mlir.lower_fun(lambda x: x * 2, multiple_results=False))
        ad.deflinear2(double, lambda ct, x: [double.bind(ct)])
        batching.defvectorized(double)
        cube = core.Primitive("compat_cube_jvp")  # defjvp, its tangent through the linear one
        cube.def_impl(lambda x: np.power(x, 3))
        cube.def_abstract_eval(lambda x: x)
        mlir.register_lowering(cube, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))
        ad.defjvp(cube, lambda t, x: double.bind(t * x * x) * 1.5)
        batching.defvectorized(cube)
        x = np.arange(1.0, 4.0, dtype=np.float32)
        f = lambda v: cube.bind(double.bind(v)).sum()  # noqa: E731
        return [lib.jit(lib.grad(f))(x), lib.jit(lib.vmap(lib.grad(f)))(x.reshape(3, 1))]

    same(run("jax"), run("fcore"))


def test_public_names_are_jaxs() -> None:
    for ours, theirs in [
        (fcore.interpreters.ad, jax.interpreters.ad),
        (fcore.interpreters.batching, jax.interpreters.batching),
        (fcore.interpreters.mlir, jax.interpreters.mlir),
    ]:
        assert isinstance(ours, ModuleType)
        missing = [n for n in ours.__all__ if not hasattr(theirs, n)]
        assert missing == [], f"{ours.__name__} has names jax's module lacks: {missing}"
    import fcore.extend.mlir.dialects as dialects

    assert fcore.extend.mlir is importlib.import_module("fcore.extend.mlir")  # an attribute, as jax.extend.mlir

    for name in ["arith", "builtin", "chlo", "func", "math", "memref", "scf", "sdy", "sparse_tensor", "stablehlo"]:
        theirs_mod = importlib.import_module(f"jax.extend.mlir.dialects.{name}")
        ours_mod = importlib.import_module(f"fcore.extend.mlir.dialects.{name}")
        assert ours_mod is getattr(dialects, name)
        lacking = [n for n in dir(theirs_mod) if not n.startswith("_") and not hasattr(ours_mod, n)]
        assert lacking == [], f"fcore.extend.mlir.dialects.{name} lacks {lacking}"
