"""``debug.visualize_sharding`` / ``visualize_array_sharding`` / ``inspect_array_sharding`` and
the rest of ``fcore.sharding``'s names, differentially against jax (the drawings compared as
the text rich prints; the multi-device layouts in one 4-device subprocess)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import pickle
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fcore
import fcore.numpy as fnp
import fcore.sharding as fsharding
from multidevice import run_script


def _drawn(capsys: pytest.CaptureFixture[str], draw: Callable[[], object]) -> str:
    capsys.readouterr()
    draw()
    return capsys.readouterr().out


def test_public_names_match_jax() -> None:
    assert sorted(fcore.debug.__all__) == sorted(jax.debug.__all__)
    public = {n for n in dir(jax.sharding) if not n.startswith("_")}
    assert public <= set(dir(fsharding)), public - set(dir(fsharding))


def _blue_red(v: float) -> tuple[float, float, float, float]:
    return (v, 0.25, 1.0 - v, 1.0)


@pytest.mark.parametrize("shape", [(8,), (8, 4), (3, 16)])
def test_visualize_sharding_one_device_matches_jax(capsys: pytest.CaptureFixture[str], shape: tuple[int, ...]) -> None:
    s, js = fsharding.SingleDeviceSharding(fcore.devices()[0]), jax.sharding.SingleDeviceSharding(jax.devices()[0])
    options: list[dict[str, Any]] = [{}, {"scale": 2.0}, {"min_width": 20, "max_width": 40}, {"use_color": False}]
    for kw in options:
        ours = _drawn(capsys, lambda: fcore.debug.visualize_sharding(shape, s, **kw))
        assert ours == _drawn(capsys, lambda: jax.debug.visualize_sharding(shape, js, **kw)), kw
        assert "CPU 0" in ours


def test_colors_match_jax(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.delenv("NO_COLOR", raising=False)
    s, js = fsharding.SingleDeviceSharding(fcore.devices()[0]), jax.sharding.SingleDeviceSharding(jax.devices()[0])
    ours = _drawn(capsys, lambda: fcore.debug.visualize_sharding((4, 4), s, color_map=_blue_red))
    assert "\x1b[" in ours  # coloured: ANSI escapes, and no box
    assert ours == _drawn(capsys, lambda: jax.debug.visualize_sharding((4, 4), js, color_map=_blue_red))
    # Without a colour map, colours need matplotlib (as jax): compare whichever way it goes.
    ours = _drawn(capsys, lambda: fcore.debug.visualize_sharding((4,), s))
    assert ours == _drawn(capsys, lambda: jax.debug.visualize_sharding((4,), js))


class _Dev:
    """A stand-in device: the drawing reads only ``id`` and ``platform``."""

    def __init__(self, i: int) -> None:
        self.id, self.platform = i, "cpu"


class _Layout(fsharding.Sharding):
    """Any grid of blocks, each on ``replicas`` devices: what both libraries' drawings read
    (``device_set`` and ``devices_indices_map``), without a mesh of real devices."""

    def __init__(self, grid: tuple[int, ...], replicas: int, order: list[int]) -> None:
        self.grid, self.replicas, self.devices = grid, replicas, [_Dev(i) for i in order]

    @property
    def device_set(self) -> set[Any]:
        return set(self.devices)

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Any, tuple[slice, ...]]:
        out: dict[Any, tuple[slice, ...]] = {}
        devices = iter(self.devices)
        for block in np.ndindex(*self.grid):
            index = tuple(slice(None) if n == 1 else slice(b * (size // n), (b + 1) * (size // n))
                          for b, n, size in zip(block, self.grid, global_shape))
            for _ in range(self.replicas):
                out[next(devices)] = index
        return out


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_any_layout_draws_as_jax(data: st.DataObject) -> None:
    grid = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    replicas = data.draw(st.integers(1, 2))
    order = data.draw(st.permutations(range(int(np.prod(grid)) * replicas)))
    shape = tuple(n * data.draw(st.integers(1, 5)) for n in grid)
    kw: dict[str, Any] = {"scale": data.draw(st.sampled_from([0.5, 1.0, 2.0])),
                          "min_width": data.draw(st.integers(1, 12)), "max_width": data.draw(st.integers(10, 80))}
    layout = _Layout(grid, replicas, order)
    ours, theirs = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(ours):
        fcore.debug.visualize_sharding(shape, layout, **kw)
    with contextlib.redirect_stdout(theirs):
        jax.debug.visualize_sharding(shape, layout, **kw)  # type: ignore[arg-type]
    assert ours.getvalue() == theirs.getvalue() and ours.getvalue().startswith("┌")


def test_visualize_errors_match_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    s, js = fsharding.SingleDeviceSharding(fcore.devices()[0]), jax.sharding.SingleDeviceSharding(jax.devices()[0])
    for shape in [(2, 2, 2), ()]:
        with pytest.raises(ValueError) as ours:
            fcore.debug.visualize_sharding(shape, s)
        with pytest.raises(ValueError) as theirs:
            jax.debug.visualize_sharding(shape, js)
        assert str(ours.value) == str(theirs.value)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rich" else find_spec(name, *a))
    with pytest.raises(ValueError, match="requires `rich` to be installed"):
        fcore.debug.visualize_array_sharding(fnp.arange(4.0))
    with pytest.raises(ValueError, match="requires `rich` to be installed"):
        jax.debug.visualize_array_sharding(jnp.arange(4.0))  # type: ignore[no-untyped-call]


def test_inspect_array_sharding_one_device_as_jax(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[Any] = []
    x = fnp.arange(8.0)
    fcore.debug.inspect_array_sharding({"a": x, "b": [x, x]}, callback=seen.append)
    assert seen == [fsharding.SingleDeviceSharding(fcore.devices()[0])] * 3
    # vmap reports the whole batch, grad the primal: eagerly, as jax
    fcore.vmap(lambda v: fcore.debug.inspect_array_sharding(v, callback=seen.append))(x.reshape(2, 4))
    def summed(v: Any) -> Any:
        fcore.debug.inspect_array_sharding(v, callback=seen.append)
        return v.sum()

    fcore.grad(summed)(x)
    assert len(seen) == 5 and all(isinstance(s, fsharding.SingleDeviceSharding) for s in seen)
    # inside jit on one device: reported while lowering, once per compilation
    seen.clear()
    f = fcore.jit(lambda v: fcore.debug.inspect_array_sharding(v * 2, callback=seen.append))
    f(x)
    f(x)
    assert [{d.id for d in s.device_set} for s in seen] == [{0}]
    jseen: list[Any] = []
    jax.jit(lambda v: jax.debug.inspect_array_sharding(v * 2, callback=jseen.append))(jnp.arange(8.0))
    assert [{d.id for d in s.device_set} for s in jseen] == [{0}]
    # the drawing under jit, and the jaxpr, are jax's
    ours = _drawn(capsys, lambda: fcore.jit(lambda v: fcore.debug.visualize_array_sharding(v))(x))
    jax_draw = jax.jit(lambda v: jax.debug.visualize_array_sharding(v))  # type: ignore[no-untyped-call]
    assert ours == _drawn(capsys, lambda: jax_draw(jnp.arange(8.0)))
    assert str(fcore.make_jaxpr(lambda v: fcore.debug.inspect_array_sharding(v, callback=print))(x)) == str(
        jax.make_jaxpr(lambda v: jax.debug.inspect_array_sharding(v, callback=print))(jnp.arange(8.0)))
    # a NumPy value has no sharding (jax: AttributeError too)
    with pytest.raises(AttributeError, match="sharding"):
        fcore.debug.inspect_array_sharding(np.arange(3.0), callback=print)


def test_sharding_names_match_jax() -> None:
    def run(mod: Any) -> list[str]:
        out = []
        m = mod.ManualAxisType(varying={"x"})
        out += [repr(m), repr(m.to_ct_mat()), repr(m.update(reduced=frozenset({"y"}))), repr(m.vur)]
        out += [str(m is mod.ManualAxisType(varying=frozenset({"x"}))), str(m.empty), str(mod.ManualAxisType().empty)]
        out.append(str(pickle.loads(pickle.dumps(m)) is m))
        for bad in [{"varying": {"x"}, "reduced": {"x"}}, {"varying": {"y"}, "unreduced": {"y"}}]:
            with pytest.raises(ValueError) as e:
                mod.ManualAxisType(**bad)
            out.append(str(e.value))
        d = mod.AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu")
        am = mod.AbstractMesh((2,), ("x",), (mod.AxisType.Auto,), abstract_device=d)
        out += [repr(d), repr(am), repr(mod.AbstractMesh((), ())), str(am == mod.AbstractMesh((2,), ("x",)))]
        with mod.use_abstract_mesh(am):
            out.append(repr(mod.get_abstract_mesh()))
            with pytest.raises(ValueError) as e:
                with mod.use_abstract_mesh(mod.AbstractMesh((4,), ("y",))):
                    pass
            out += [str(e.value), repr(mod.get_abstract_mesh())]
        with pytest.raises(ValueError) as e:
            mod.use_abstract_mesh(mod.Mesh(np.asarray([mod_devices(mod)[0]]), ("x",)))
        out.append(str(e.value).split("Got type")[0])
        out.append(repr(mod.make_single_device_sharding(mod_devices(mod)[0])))
        return out

    def mod_devices(mod: Any) -> list[Any]:
        return fcore.devices() if mod is fsharding else jax.devices()

    assert run(fsharding) == run(jax.sharding)
    assert fsharding.get_abstract_mesh() is None  # restored
    mesh = fcore.make_mesh((1,), ("x",))
    assert repr(mesh.abstract_mesh) == repr(jax.make_mesh((1,), ("x",), (jax.sharding.AxisType.Auto,)).abstract_mesh)


def test_multi_device_drawings_and_inspection_match_jax() -> None:
    out = run_script(
        """
        import contextlib, io, os
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding as JNS, PartitionSpec as JP, AxisType
        jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        mesh = fcore.make_mesh((2, 2), ("x", "y"))

        def drawn(draw):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                draw()
            return buf.getvalue()

        layouts = [((8,), ("x",)), ((8,), (("x", "y"),)), ((8,), ("y",)), ((8,), ()),
                   ((8, 4), ("x", "y")), ((8, 4), ("y", "x")), ((8, 4), (None, "y")), ((4, 8), (("y", "x"),)),
                   ((8, 4), ("x",)), ((2, 16), (None, ("x", "y")))]
        for shape, spec in layouts:
            s, js = NamedSharding(mesh, P(*spec)), JNS(jmesh, JP(*spec))
            for kw in [{}, {"scale": 0.5, "min_width": 4}, {"max_width": 30}]:
                ours = drawn(lambda: fcore.debug.visualize_sharding(shape, s, **kw))
                assert ours == drawn(lambda: jax.debug.visualize_sharding(shape, js, **kw)), (shape, spec, kw, ours)
            x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
            a, ja = fcore.device_put(x, s), jax.device_put(x, js)
            assert drawn(lambda: fcore.debug.visualize_array_sharding(a)) == drawn(
                lambda: jax.debug.visualize_array_sharding(ja))
        # coloured cells (a terminal with colour, a colour map): the colours step across the map as jax's
        os.environ.update(FORCE_COLOR="1", COLORTERM="truecolor")
        cmap = lambda v: (v, 0.5, 1.0 - v, 1.0)
        for shape, spec in [((8, 4), ("x", "y")), ((8,), (("x", "y"),)), ((8, 4), ("y",))]:
            s, js = NamedSharding(mesh, P(*spec)), JNS(jmesh, JP(*spec))
            ours = drawn(lambda: fcore.debug.visualize_sharding(shape, s, color_map=cmap))
            assert "\x1b[" in ours and ours == drawn(lambda: jax.debug.visualize_sharding(shape, js, color_map=cmap))
        del os.environ["FORCE_COLOR"]
        print("drawings ok")

        # Inside jit: XLA's choices, reported while compiling, as jax reports them.
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        a, ja = fcore.device_put(x, NamedSharding(mesh, P("x", "y"))), jax.device_put(x, JNS(jmesh, JP("x", "y")))
        got, jgot = [], []
        def g(a):
            fcore.debug.inspect_array_sharding(a, callback=lambda s: got.append(repr(s)))
            b = a.T * 2
            fcore.debug.inspect_array_sharding((b, b.sum(), a[None]), callback=lambda s: got.append(repr(s)))
            c = lax.with_sharding_constraint(a + 1, NamedSharding(mesh, P(None, "y")))
            fcore.debug.inspect_array_sharding(c, callback=lambda s: got.append(repr(s)))
            return c
        def jg(a):
            jax.debug.inspect_array_sharding(a, callback=lambda s: jgot.append(repr(s)))
            b = a.T * 2
            jax.debug.inspect_array_sharding((b, b.sum(), a[None]), callback=lambda s: jgot.append(repr(s)))
            c = jax.lax.with_sharding_constraint(a + 1, JNS(jmesh, JP(None, "y")))
            jax.debug.inspect_array_sharding(c, callback=lambda s: jgot.append(repr(s)))
            return c
        lowered = fcore.jit(g).lower(a)
        assert got == []  # not while lowering: XLA chooses while compiling
        lowered.compile()
        jax.jit(jg).lower(ja).compile()
        assert got == jgot and len(got) == 5, (got, jgot)
        # inside shard_map the blocks are manual: P(), as jax
        got.clear(), jgot.clear()
        fcore.jit(fcore.shard_map(lambda b: (fcore.debug.inspect_array_sharding(b, callback=lambda s: got.append(repr(s))), b * 2)[1],
                                  mesh=mesh, in_specs=P("x"), out_specs=P("x")))(a)
        jax.jit(jax.shard_map(lambda b: (jax.debug.inspect_array_sharding(b, callback=lambda s: jgot.append(repr(s))), b * 2)[1],
                              mesh=jmesh, in_specs=JP("x"), out_specs=JP("x")))(ja)
        assert got == jgot and len(got) == 1, (got, jgot)
        # drawn under jit
        fv = lambda v: fcore.debug.visualize_array_sharding(v * 2)
        jv = lambda v: jax.debug.visualize_array_sharding(v * 2)
        assert drawn(lambda: fcore.jit(fv)(a)) == drawn(lambda: jax.jit(jv)(ja))
        print("inspection ok")
        """,
        num_devices=4,
    )
    assert out.split() == ["drawings", "ok", "inspection", "ok"]
