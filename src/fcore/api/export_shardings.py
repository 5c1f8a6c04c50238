"""The shardings an ``Exported`` records: for each argument and result, the ``PartitionSpec``
it is laid out by over the export's mesh (or None: unspecified), as JAX's ``Exported`` keeps
them (``in_shardings_jax(mesh)`` rebuilds ``NamedSharding`` s over a mesh of the same shape).

They come from the arguments (a ``ShapeDtypeStruct``'s ``sharding``, a sharded array's) and
from ``jit``'s ``in_shardings`` / ``out_shardings``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcore import tree_util
from fcore.api.spmd import arg_sharding
from fcore.api.staging import ShapeDtypeStruct
from fcore.ir.avals import ShapedArray
from fcore.sharding import Mesh, NamedSharding, PartitionSpec, Sharding, get_mesh

__all__ = ["ExportShardings", "export_shardings"]

#: A mesh's shape: ``(axis name, size)`` per axis.
MeshShape = tuple[tuple[str, int], ...]


class ExportShardings:
    """Per argument and per result a ``PartitionSpec`` or None, over a mesh of ``mesh_shape``
    (None: a one-device export)."""

    __slots__ = ("in_specs", "mesh_shape", "out_specs")

    def __init__(
        self, mesh_shape: MeshShape | None, in_specs: tuple[PartitionSpec | None, ...],
        out_specs: tuple[PartitionSpec | None, ...],
    ) -> None:
        self.mesh_shape, self.in_specs, self.out_specs = mesh_shape, in_specs, out_specs

    @property
    def nr_devices(self) -> int:
        n = 1
        for _, size in self.mesh_shape or ():
            n *= size
        return n

    def over(self, mesh: Mesh, specs: tuple[PartitionSpec | None, ...]) -> tuple[NamedSharding | None, ...]:
        """``specs`` as shardings over ``mesh``, which must have the export's axes and sizes."""
        if self.mesh_shape is not None and tuple(mesh.shape.items()) != self.mesh_shape:
            raise ValueError(
                f"NamedSharding new mesh {mesh} does not match the mesh used for export "
                f"{dict(self.mesh_shape)}."
            )
        return tuple(None if s is None else NamedSharding(mesh, s) for s in specs)

    def to_json(self) -> dict[str, Any]:
        return {
            "mesh": None if self.mesh_shape is None else [list(a) for a in self.mesh_shape],
            "in": [_spec_json(s) for s in self.in_specs], "out": [_spec_json(s) for s in self.out_specs],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, n_in: int, n_out: int) -> ExportShardings:
        if data is None:
            return cls(None, (None,) * n_in, (None,) * n_out)
        mesh = None if data["mesh"] is None else tuple((str(n), int(s)) for n, s in data["mesh"])
        return cls(mesh, tuple(_spec_from_json(s) for s in data["in"]), tuple(_spec_from_json(s) for s in data["out"]))


def _spec_json(spec: PartitionSpec | None) -> list[Any] | None:
    return None if spec is None else [list(p) if isinstance(p, tuple) else p for p in spec]


def _spec_from_json(entries: list[Any] | None) -> PartitionSpec | None:
    return None if entries is None else PartitionSpec(*(tuple(e) if isinstance(e, list) else e for e in entries))


def _named(s: object) -> NamedSharding | None:
    if isinstance(s, NamedSharding):
        return s
    if isinstance(s, PartitionSpec):
        mesh = get_mesh()
        return None if mesh is None else NamedSharding(mesh, s)
    return None


def _leaf_sharding(x: Any) -> NamedSharding | None:
    if isinstance(x, ShapeDtypeStruct):
        return _named(x.sharding)
    return arg_sharding(x)


def _is_sharding_leaf(x: object) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def export_shardings(
    dyn_leaves: Sequence[Any], in_shardings: Any, out_shardings: Any, dyn_args: tuple[Any, ...],
    out_tree: tree_util.PyTreeDef, in_avals: Sequence[ShapedArray],
) -> ExportShardings:
    """The shardings of an export: ``jit``'s ``in_shardings`` (a prefix of ``dyn_args``) where
    given, else each argument leaf's own; ``jit``'s ``out_shardings`` for the results."""
    ins: list[NamedSharding | None] = [_leaf_sharding(x) for x in dyn_leaves]
    if len(ins) != len(in_avals):
        ins = [None] * len(in_avals)
    if in_shardings is not None:
        spec = tuple(in_shardings) if isinstance(in_shardings, list) else in_shardings
        given = tree_util.broadcast_prefix(spec, dyn_args, is_leaf=_is_sharding_leaf)
        ins = [_named(g) or i for g, i in zip(given, ins)] + ins[len(given):]
    outs: list[NamedSharding | None] = [None] * out_tree.num_leaves
    if out_shardings is not None:
        dummy = out_tree.unflatten([0] * out_tree.num_leaves)
        outs = [_named(s) for s in tree_util.broadcast_prefix(out_shardings, dummy, is_leaf=_is_sharding_leaf)]
    meshes = {s.mesh for s in (*ins, *outs) if s is not None}
    if len(meshes) > 1:
        raise ValueError(f"export: the shardings of the arguments and results use more than one mesh: {meshes}")
    mesh_shape = tuple(next(iter(meshes)).shape.items()) if meshes else None
    return ExportShardings(
        mesh_shape, tuple(None if s is None else s.spec for s in ins), tuple(None if s is None else s.spec for s in outs)
    )
