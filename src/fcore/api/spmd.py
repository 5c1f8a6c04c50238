"""``jit`` over a device mesh: programs annotated for XLA's SPMD partitioner (Shardy).

A jitted call takes this path when its function was given ``in_shardings`` /
``out_shardings``, when an argument is a sharded array, or when its jaxpr names a mesh
(``with_sharding_constraint``, ``shard_map``). The program's parameters carry
``#sdy.sharding`` attributes (an argument without a sharding is replicated), results carry
the requested shardings or are left for XLA to choose, and the module is compiled for
``num_partitions = mesh.size`` with the mesh's devices as the device assignment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore.backend import runtime
from fcore.backend.lowering import lower_module
from fcore.backend.sharded import ShardedBuffer, compile_spmd, put_sharded
from fcore.api.staging import ShapeDtypeStruct
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import to_numpy_arg
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr
from fcore.ir.params import ParamValue
from fcore.lax.call import CompileError, spmd_runner
from fcore.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding, lowering_over

__all__ = ["SpmdLaunch", "jaxpr_mesh", "spmd_launch"]


def _mesh_in(value: ParamValue, found: list[Mesh]) -> None:
    if isinstance(value, Mesh):
        found.append(value)
    elif isinstance(value, NamedSharding):
        found.append(value.mesh)
    elif isinstance(value, ClosedJaxpr):
        _meshes(value.jaxpr, found)
    elif isinstance(value, Jaxpr):
        _meshes(value, found)
    elif isinstance(value, tuple):
        for v in value:
            _mesh_in(v, found)


def _meshes(jaxpr: Jaxpr, found: list[Mesh]) -> None:
    for eqn in jaxpr.eqns:
        for v in eqn.params.values():
            _mesh_in(v, found)


#: By identity (hashing a jaxpr hashes its whole structure); the jaxpr is kept alive with its entry.
_jaxpr_meshes: dict[int, tuple[Jaxpr, Mesh | None]] = {}


def jaxpr_mesh(jaxpr: Jaxpr) -> Mesh | None:
    """The mesh a jaxpr's equations name (sharding constraints, ``shard_map``), if any."""
    hit = _jaxpr_meshes.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    found: list[Mesh] = []
    _meshes(jaxpr, found)
    mesh = _one_mesh(found)
    if len(_jaxpr_meshes) >= 4096:
        _jaxpr_meshes.clear()
    _jaxpr_meshes[id(jaxpr)] = (jaxpr, mesh)
    return mesh


def _one_mesh(meshes: Sequence[Mesh]) -> Mesh | None:
    mesh = None
    for m in meshes:
        if mesh is None:
            mesh = m
        elif m != mesh:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got meshes "
                f"{mesh} (devices {[d.id for d in mesh.flat_devices]}) and {m} "
                f"(devices {[d.id for d in m.flat_devices]})"
            )
    return mesh


class SpmdLaunch:
    """A program compiled over a mesh, with each operand's and result's sharding."""

    __slots__ = ("mesh", "exe", "in_shardings", "arg_shardings", "out_shardings", "outs", "consts", "text")

    def __init__(
        self, closed: ClosedJaxpr, name: str, consts: Sequence[Any], mesh: Mesh,
        in_shardings: Sequence[NamedSharding], out_shardings: Sequence[NamedSharding | None],
    ) -> None:
        in_avals, out_avals = closed.in_avals, closed.out_avals
        for s, a in zip(in_shardings, in_avals):
            s.check_shape(a.shape, "One of pjit arguments")
        for so, a in zip(out_shardings, out_avals):
            if so is not None:
                so.check_shape(a.shape, "One of pjit outputs")
        arg_attrs = [_sdy_attr(s, a) for s, a in zip(in_shardings, in_avals)]
        res_attrs = ["" if s is None else _sdy_attr(s, a) for s, a in zip(out_shardings, out_avals)]
        with lowering_over(mesh):
            text, _ = lower_module(closed, name, (), arg_attrs, res_attrs, mesh=(mesh.sdy_text(), mesh.size))
            self.text = text
            try:
                exe = compile_spmd(text, mesh.flat_devices)
            except runtime.XlaCompileError as e:
                raise CompileError(f"XLA failed on the SPMD program of {name}: {e.xla_message}") from e
        exe.set_outputs([(a.shape, np.dtype(a.dtype)) for a in out_avals])
        from fcore.sharding import named_sharding_from_xla

        named = _named_in_program(closed.jaxpr, mesh)
        self.out_shardings: list[NamedSharding] = [
            s if s is not None else _like_input(named_sharding_from_xla(mesh, p, a.shape), a, in_shardings, in_avals, named)
            for s, p, a in zip(out_shardings, exe.out_hlo, out_avals)
        ]
        self.mesh = mesh
        self.exe = exe
        self.in_shardings = list(in_shardings)
        self.outs = [
            (a.weak_type, a, np.dtype(a.dtype), s.sdy(a.ndim), s) for a, s in zip(out_avals, self.out_shardings)
        ]
        n = len(consts)
        self.consts = [_place(c, s) for c, s in zip(consts, self.in_shardings[:n])]
        self.arg_shardings = self.in_shardings[n:]

    def __call__(self, args: Sequence[Any]) -> list[ArrayImpl]:
        raw = [*self.consts, *map(_place, args, self.arg_shardings)]
        outs = self.exe.run(raw)
        devices = self.mesh.flat_devices
        return [
            ArrayImpl(None, w, ShardedBuffer(o, a.shape, dt, devices, sdy, s), a)
            for o, (w, a, dt, sdy, s) in zip(outs, self.outs)
        ]


def _named_in_program(jaxpr: Jaxpr, mesh: Mesh) -> list[NamedSharding]:
    """The layouts the program's results are given by name: ``shard_map`` out_specs and
    sharding constraints producing its outputs."""
    outs = {id(v) for v in jaxpr.outvars}
    found: list[NamedSharding] = []
    for eqn in jaxpr.eqns:
        produced = [id(v) in outs for v in eqn.outvars]
        if not any(produced):
            continue
        sharding = eqn.params.get("sharding")
        if isinstance(sharding, NamedSharding):
            found.append(sharding)
        specs = eqn.params.get("out_specs")
        if isinstance(specs, tuple):
            found += [NamedSharding(mesh, s) for s, p in zip(specs, produced) if p and isinstance(s, PartitionSpec)]
    return found


def _like_input(
    chosen: NamedSharding, aval: ShapedArray, ins: Sequence[NamedSharding], in_avals: Sequence[ShapedArray],
    named: Sequence[NamedSharding],
) -> NamedSharding:
    """A sharding the program names (a ``shard_map`` out_spec, a constraint) or an input's,
    spelled as the user spelled it, where XLA gave a result the same layout (as jax does);
    else XLA's choice."""
    want = chosen.devices_indices_map(aval.shape)
    candidates = [*named, *(s for s, a in zip(ins, in_avals) if a.ndim == aval.ndim)]
    for s in candidates:
        try:
            if s.devices_indices_map(aval.shape) == want:
                return s
        except ValueError:  # not a layout this shape can have
            continue
    return chosen


def _sdy_attr(s: NamedSharding, aval: ShapedArray) -> str:
    return f"sdy.sharding = #sdy.sharding<@mesh, {s.sdy(aval.ndim).dims}>"


def _place(x: Any, sharding: NamedSharding) -> runtime.RawArray:
    """``x`` as a jaxlib array laid out as ``sharding`` (moved through the host if needed)."""
    if type(x) is ArrayImpl:
        buf = x._device
        if type(buf) is ShardedBuffer and (buf.sharding is sharding or buf.sharding == sharding):
            return buf._sharded
        host = x.host()
    else:
        host, _ = to_numpy_arg(x)
    host = np.asarray(host)
    idx = sharding.devices_indices_map(host.shape)
    devices = sharding.mesh.flat_devices
    return put_sharded(host, devices, [idx[d] for d in devices], sharding.sdy(host.ndim), sharding).raw_array()


def arg_sharding(x: Any) -> NamedSharding | None:
    """The sharding a sharded argument brings (None for host or one-device values); a
    ``ShapeDtypeStruct``'s ``NamedSharding`` (``jit(f).lower(spec)``)."""
    if type(x) is ArrayImpl:
        buf = x._device
        if type(buf) is ShardedBuffer:
            s = buf.sharding
            assert isinstance(s, NamedSharding)
            return s
    elif type(x) is ShapeDtypeStruct:
        given = x.sharding
        return given if isinstance(given, NamedSharding) else None
    return None


def spmd_launch(
    closed: ClosedJaxpr, name: str, consts: Sequence[Any], flat_args: Sequence[Any],
    in_shardings: Sequence[NamedSharding | SingleDeviceSharding | None],
    out_shardings: Sequence[NamedSharding | SingleDeviceSharding | None] | None,
    cache: dict[Any, SpmdLaunch],
) -> SpmdLaunch:
    """The launch of ``closed`` for these arguments' shardings (compiled once per layout)."""
    given = [s if s is not None else arg_sharding(a) for s, a in zip(in_shardings, flat_args)]
    outs = list(out_shardings) if out_shardings is not None else [None] * len(closed.out_avals)
    key = (tuple(given), tuple(outs))
    launch = cache.get(key)
    if launch is not None:
        return launch
    named = [s for s in [*given, *outs] if isinstance(s, NamedSharding)]
    mesh = _one_mesh([*(s.mesh for s in named), *([m] if (m := jaxpr_mesh(closed.jaxpr)) is not None else [])])
    if mesh is None:
        raise ValueError(f"jit of {name}: no mesh among the shardings")
    if any(isinstance(s, SingleDeviceSharding) for s in [*given, *outs]):
        raise ValueError(
            f"Received incompatible devices for jitted computation of {name}: a SingleDeviceSharding and "
            f"a sharding over {mesh}"
        )
    rep = NamedSharding(mesh, PartitionSpec())
    full_in = [rep] * len(consts) + [s if isinstance(s, NamedSharding) else rep for s in given]
    full_out = [s if isinstance(s, NamedSharding) else None for s in outs]
    launch = SpmdLaunch(closed, name, consts, mesh, full_in, full_out)
    cache[key] = launch
    return launch


_eager_launches: dict[Jaxpr, dict[Any, SpmdLaunch]] = {}


def _run_eager_call(closed: ClosedJaxpr, name: str, args: Sequence[Any]) -> list[ArrayImpl] | None:
    """The ``jit`` primitive's eager impl over a mesh: for programs that name one, or
    arguments that are sharded (None: the one-device path)."""
    named = jaxpr_mesh(closed.jaxpr) is not None
    if not named and not any(arg_sharding(a) is not None for a in args):
        return None
    cache = _eager_launches.get(closed.jaxpr)
    if cache is None:
        cache = {}
        if len(_eager_launches) < 1024:
            _eager_launches[closed.jaxpr] = cache
    try:
        launch = spmd_launch(closed, name, (), args, [None] * len(args), None, cache)
    except NotImplementedError:
        if named:
            raise
        return None  # e.g. host callbacks: sharded arguments are gathered onto one device instead
    return launch(args)


spmd_runner[:] = [_run_eager_call]
