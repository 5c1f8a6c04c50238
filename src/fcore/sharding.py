"""``fcore.sharding``: meshes of devices and how an array's dimensions are laid over them.

As ``jax.sharding``: a ``Mesh`` names the axes of an n-d grid of devices; a
``NamedSharding(mesh, PartitionSpec(...))`` splits array dimension ``i`` over the mesh axes
named by ``spec[i]`` and replicates it over the others. The layout is handed to XLA's SPMD
partitioner (Shardy) as ``#sdy.sharding`` attributes and to jaxlib's arrays as an
``HloSharding``; this module computes both, and each device's slice of the global array.
Axis types (JAX's ``Explicit`` sharding-in-types) are accepted and ignored: every axis
behaves as ``AxisType.Auto``.
"""

from __future__ import annotations

import collections

import dataclasses
import enum
import itertools
import math
import threading
import functools
import weakref
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Union

import numpy as np
import numpy.typing as npt

from fcore.backend import runtime
from fcore.backend.sharded import SdySharding, hlo_sharding, tile_assignment
from fcore.ir.params import ParamStruct

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "IndivisibleError",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
]

Device = runtime.Device
Index = tuple[slice, ...]
SpecEntry = Union[None, str, tuple[str, ...]]


class IndivisibleError(ValueError):
    """A dimension's size is not a multiple of the number of pieces a sharding cuts it into."""


class AxisType(enum.Enum):
    """JAX's mesh axis types; fcore treats every axis as ``Auto`` (see the module docstring)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name  # as jax prints them: (Auto, Auto)


class ManualAxisType:
    """The mesh axes a value inside ``shard_map`` varies over, or holds unreduced / reduced
    partial sums of (``jax.sharding.ManualAxisType``). Interned, so equal ones are identical.

    JAX keeps one in each aval; fcore's avals carry none (its ``shard_map`` infers varying axes
    itself), so this is the value type alone."""

    __slots__ = ("varying", "unreduced", "reduced", "__weakref__")

    varying: frozenset[str]
    unreduced: frozenset[str]
    reduced: frozenset[str]
    _interned: weakref.WeakValueDictionary[tuple[frozenset[str], ...], ManualAxisType] = weakref.WeakValueDictionary()

    def __new__(cls, *, varying: AbstractSet[str] = frozenset(), unreduced: AbstractSet[str] = frozenset(),
                reduced: AbstractSet[str] = frozenset()) -> ManualAxisType:
        if varying & unreduced:
            raise ValueError(f"varying and unreduced cannot have common mesh axes. Got varying={varying} "
                             f"and unreduced={unreduced}")
        if varying & reduced:
            raise ValueError(f"varying and reduced cannot have common mesh axes. Got varying={varying} "
                             f"and reduced={reduced}")
        key = (frozenset(varying), frozenset(unreduced), frozenset(reduced))
        obj = cls._interned.get(key)
        if obj is None:
            obj = object.__new__(cls)
            for name, value in zip(cls.__slots__, key):
                object.__setattr__(obj, name, value)
            cls._interned[key] = obj
        return obj

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ManualAxisType is immutable (setting {name})")

    def __repr__(self) -> str:
        return f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, reduced={self.reduced})"

    def __reduce__(self) -> tuple[Callable[..., ManualAxisType], tuple[frozenset[str], ...]]:
        return _manual_axis_type, (self.varying, self.unreduced, self.reduced)

    def update(self, *, varying: AbstractSet[str] | None = None, unreduced: AbstractSet[str] | None = None,
               reduced: AbstractSet[str] | None = None) -> ManualAxisType:
        return ManualAxisType(
            varying=self.varying if varying is None else varying,
            unreduced=self.unreduced if unreduced is None else unreduced,
            reduced=self.reduced if reduced is None else reduced,
        )

    def to_ct_mat(self) -> ManualAxisType:
        """The type of a cotangent: unreduced and reduced swap places."""
        return self.update(unreduced=self.reduced, reduced=self.unreduced)

    @property
    def empty(self) -> bool:
        return self is ManualAxisType()

    @property
    def vur(self) -> frozenset[str]:
        return self.varying | self.unreduced | self.reduced


def _manual_axis_type(varying: frozenset[str], unreduced: frozenset[str], reduced: frozenset[str]) -> ManualAxisType:
    return ManualAxisType(varying=varying, unreduced=unreduced, reduced=reduced)


class _Unconstrained:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec(tuple[SpecEntry, ...]):
    """Per array dimension, the mesh axis (or tuple of axes, or None) it is split over.

    Trailing dimensions left out are replicated. ``unreduced`` / ``reduced`` (JAX's sets of
    mesh axes over which the value holds partial sums / is reduced) are accepted, printed and
    compared as JAX does; fcore has no sharding-in-types, so a layout that uses them raises
    ``NotImplementedError`` rather than computing something else."""

    UNCONSTRAINED = _Unconstrained()
    unreduced: frozenset[str]
    reduced: frozenset[str]

    def __new__(
        cls, *partitions: SpecEntry | list[str], unreduced: AbstractSet[str] = frozenset(),
        reduced: AbstractSet[str] = frozenset(),
    ) -> PartitionSpec:
        norm: list[SpecEntry] = []
        for p in partitions:
            if p is None or isinstance(p, str):
                norm.append(p)
            elif isinstance(p, (tuple, list)) and all(isinstance(a, str) for a in p):
                norm.append(tuple(p) if len(p) != 1 else p[0])
            else:
                raise TypeError(f"PartitionSpec entries must be None, an axis name or a tuple of names, got {p!r}")
        u, r = _axis_set(unreduced, "unreduced"), _axis_set(reduced, "reduced")
        _check_unreduced(tuple(norm), u, r)
        spec = super().__new__(cls, norm)
        spec.unreduced, spec.reduced = u, r
        return spec

    @property
    def partitions(self) -> tuple[SpecEntry, ...]:
        """The per-dimension entries (a plain tuple, also when ``unreduced``/``reduced`` are set)."""
        return tuple.__getitem__(self, slice(None))

    def __repr__(self) -> str:
        pr = ", ".join(repr(p) for p in self.partitions) + ("," if len(self) == 1 else "")
        if not self.unreduced and not self.reduced:
            return f"P({pr})"
        parts = [f"unreduced={set(self.unreduced)!r}"] if self.unreduced else []
        parts += [f"reduced={set(self.reduced)!r}"] if self.reduced else []
        pr = "" if not pr else f"{pr} " if pr.endswith(",") else f"{pr}, "
        return f"P({pr}{', '.join(parts)})"

    def _guard(self, what: str, use: str) -> None:
        if self.unreduced or self.reduced:
            raise ValueError(
                f"Using {what} is dangerous when PartitionSpec has non-empty unreduced/reduced set. "
                f"Please use {use}"
            )

    def __getitem__(self, i: Any) -> Any:
        self._guard("pspec[...]", "spec.partitions[...]")
        return tuple.__getitem__(self, i)

    def __iter__(self) -> Iterator[SpecEntry]:
        self._guard("*pspec", "*spec.partitions")
        return tuple.__iter__(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, tuple):
            return NotImplemented
        mine = (self.unreduced, self.reduced)
        theirs = (other.unreduced, other.reduced) if isinstance(other, PartitionSpec) else (frozenset(), frozenset())
        return tuple.__eq__(self, other) is True and mine == theirs

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        if not self.unreduced and not self.reduced:
            return tuple.__hash__(self)
        return hash((self.partitions, self.unreduced, self.reduced))

    def __add__(self, other: object) -> PartitionSpec:
        if isinstance(other, PartitionSpec):
            return PartitionSpec(
                *self.partitions, *other.partitions, unreduced={*self.unreduced, *other.unreduced},
                reduced={*self.reduced, *other.reduced},
            )
        if isinstance(other, tuple):
            self._no_tuple(other, "__add__")
            return PartitionSpec(*self.partitions, *other)
        return NotImplemented

    def __radd__(self, other: object) -> PartitionSpec:
        if not isinstance(other, tuple):
            return NotImplemented
        self._no_tuple(other, "__radd__")
        return PartitionSpec(*other, *self.partitions)

    def _no_tuple(self, other: tuple[Any, ...], method: str) -> None:
        for name, axes in (("unreduced", self.unreduced), ("reduced", self.reduced)):
            if axes:
                raise TypeError(
                    f"other {other} cannot be of instance `tuple` when self {self} has {name} in `{method}` of "
                    "PartitionSpec."
                )

    def __getnewargs_ex__(self) -> tuple[tuple[SpecEntry, ...], dict[str, frozenset[str]]]:
        return self.partitions, {"unreduced": self.unreduced, "reduced": self.reduced}

    def update(
        self, partitions: Sequence[SpecEntry] | None = None, unreduced: AbstractSet[str] | None = None,
        reduced: AbstractSet[str] | None = None,
    ) -> PartitionSpec:
        """A copy with the given parts replaced."""
        return PartitionSpec(
            *(self.partitions if partitions is None else partitions),
            unreduced=self.unreduced if unreduced is None else unreduced,
            reduced=self.reduced if reduced is None else reduced,
        )

    def to_ct_spec(self) -> PartitionSpec:
        """The spec of a cotangent: unreduced and reduced swap (JAX's ``to_ct_spec``)."""
        return self.update(unreduced=self.reduced, reduced=self.unreduced)

    def axes_of(self, dim: int) -> tuple[str, ...]:
        if self.unreduced or self.reduced:
            raise NotImplementedError(
                f"fcore does not implement unreduced or reduced mesh axes in a layout ({self}): it has no "
                "sharding-in-types (JAX's Explicit mesh axes), so it cannot keep partial sums unreduced. Reduce "
                "them (psum) and use a PartitionSpec without unreduced/reduced."
            )
        if dim >= len(self):
            return ()
        p = tuple.__getitem__(self, dim)
        return () if p is None else (p,) if isinstance(p, str) else p

    def _normalized(self, ndim: int) -> tuple[tuple[str, ...], ...]:
        return tuple(self.axes_of(i) for i in range(ndim))


def _axis_set(axes: object, name: str) -> frozenset[str]:
    if isinstance(axes, frozenset):
        return axes
    if not isinstance(axes, set):
        raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or `set`. Got type {axes}")
    return frozenset(axes)


def _check_unreduced(partitions: tuple[SpecEntry, ...], unreduced: frozenset[str], reduced: frozenset[str]) -> None:
    """JAX's checks of ``unreduced`` / ``reduced``: mesh axes, disjoint, not partitioning a dimension."""
    if not unreduced and not reduced:
        return
    for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
        if None in axes:
            raise ValueError(f"{name} cannot contain None. All elements in {name} should refer to the mesh axes.")
    if unreduced & reduced:
        raise ValueError(
            "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
            f"Got unreduced: {unreduced} and reduced: {reduced}"
        )
    for entry in partitions:
        for a in (entry,) if not isinstance(entry, tuple) else entry:
            for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if a in axes:
                    raise ValueError(
                        f"partitions cannot overlap with {name} axes passed to PartitionSpec. Got partitions: "
                        f"{partitions} and {name} axes: {axes}"
                    )


P = PartitionSpec


class Mesh(ParamStruct):
    """An n-d array of devices with a name per axis (``Mesh(devices, ("x", "y"))``).

    Used as a context manager it is the mesh that a bare ``PartitionSpec`` refers to."""

    __slots__ = ("devices", "axis_names", "axis_types", "_flat", "_hash")

    def __init__(
        self, devices: npt.ArrayLike | Sequence[Device], axis_names: str | Sequence[str],
        axis_types: Sequence[AxisType] | AxisType | None = None,
    ) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        devs = np.asarray(devices, dtype=object)
        if devs.ndim != len(names):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
                f"argument (`axis_names`), but got devices.ndim == {devs.ndim} and len(axis_names) == {len(names)}."
            )
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be unique, got {names}")
        flat = tuple(devs.reshape(-1))
        if len({d.id for d in flat}) != len(flat):
            raise ValueError(f"Mesh devices must be distinct, got {list(flat)}")
        self.devices: npt.NDArray[Any] = devs
        self.axis_names: tuple[str, ...] = names
        if axis_types is None:
            types: tuple[AxisType, ...] = (AxisType.Auto,) * len(names)
        elif isinstance(axis_types, AxisType):
            types = (axis_types,) * len(names)
        else:
            types = tuple(axis_types)
        self.axis_types = types
        self._flat: tuple[Device, ...] = flat
        self._hash = hash((tuple(d.id for d in flat), devs.shape, names))

    @property
    def shape(self) -> collections.OrderedDict[str, int]:
        """Axis sizes by name, in axis order (an ``OrderedDict``, as JAX's prints)."""
        return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def device_ids(self) -> npt.NDArray[Any]:
        ids: npt.NDArray[Any] = np.asarray([d.id for d in self._flat], dtype=np.int64).reshape(self.devices.shape)
        return ids

    @property
    def local_devices(self) -> list[Device]:
        pid = runtime.process_index()
        return [d for d in self._flat if d.process_index == pid]

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh without its devices."""
        if not self.axis_names:
            return AbstractMesh((), ())
        d = self._flat[0]
        cores = getattr(d, "core_count", None) if d.platform == "gpu" else None
        device = AbstractDevice(device_kind=d.device_kind, num_cores=cores, platform=d.platform)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types, abstract_device=device)

    @property
    def flat_devices(self) -> tuple[Device, ...]:
        """The devices in row-major order: the device assignment of programs over this mesh."""
        return self._flat

    def sdy_text(self) -> str:
        """Shardy's spelling of the mesh, ``<["x"=2, "y"=2]>``."""
        return "<[" + ", ".join(f'"{n}"={s}' for n, s in zip(self.axis_names, self.devices.shape)) + "]>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mesh):
            return NotImplemented
        return (
            self is other
            or (self.axis_names == other.axis_names and self.devices.shape == other.devices.shape
                and all(a.id == b.id for a, b in zip(self._flat, other._flat)))
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        shape = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.devices.shape))
        types = ", ".join(t.name for t in self.axis_types)
        return f"Mesh({shape}, axis_types=({types}{',' if len(self.axis_types) == 1 else ''}))"

    def __enter__(self) -> Mesh:
        _current.stack.append(_current.mesh)
        _current.mesh = self
        return self

    def __exit__(self, *exc: object) -> None:
        _current.mesh = _current.stack.pop()


@dataclasses.dataclass(frozen=True, slots=True)
class AbstractDevice:
    """The kind of device a mesh is made of, without the devices (``jax.sharding.AbstractDevice``):
    what an ``AbstractMesh`` may name so that programs can be traced for another platform."""

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return f"AbstractDevice({self.fields_text()})"

    def fields_text(self) -> str:
        return f"device_kind={self.device_kind}, num_cores={self.num_cores}, platform={self.platform}"


class AbstractMesh:
    """A mesh's axis names, sizes and types without devices (``jax.sharding.AbstractMesh``):
    what a program's shardings refer to before it is placed on devices."""

    __slots__ = ("axis_sizes", "axis_names", "axis_types", "abstract_device")

    def __init__(
        self, axis_sizes: tuple[int, ...], axis_names: tuple[str, ...],
        axis_types: AxisType | tuple[AxisType, ...] | None = None, *,
        abstract_device: AbstractDevice | None = None,
    ) -> None:
        sizes, names = tuple(int(s) for s in axis_sizes), tuple(axis_names)
        if len(sizes) != len(names):
            raise ValueError(f"axis_sizes {sizes} and axis_names {names} must have the same length")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be unique, got {names}")
        self.axis_sizes, self.axis_names = sizes, names
        self.abstract_device = abstract_device
        if axis_types is None:
            self.axis_types: tuple[AxisType, ...] = (AxisType.Auto,) * len(names)
        elif isinstance(axis_types, AxisType):
            self.axis_types = (axis_types,) * len(names)
        else:
            self.axis_types = tuple(axis_types)

    @property
    def shape(self) -> collections.OrderedDict[str, int]:
        """Axis sizes by name, in axis order (an ``OrderedDict``, as JAX's prints)."""
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return self.size == 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AbstractMesh):
            return NotImplemented
        return (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device) == (
            other.axis_sizes, other.axis_names, other.axis_types, other.abstract_device)

    def __hash__(self) -> int:
        return hash((self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device))

    def __repr__(self) -> str:
        shape = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        types = ", ".join(t.name for t in self.axis_types)
        device = "" if self.abstract_device is None else f", {self.abstract_device.fields_text()}"
        return f"AbstractMesh({shape or '()'}, axis_types=({types}{',' if len(self.axis_types) == 1 else ''}){device})"


class _CurrentMesh(threading.local):
    """The mesh that bare ``PartitionSpec`` s refer to, per thread (``set_mesh``, ``with mesh:``)."""

    def __init__(self) -> None:
        self.mesh: Mesh | None = None
        self.stack: list[Mesh | None] = []
        #: Set by ``use_abstract_mesh``: what ``get_abstract_mesh`` returns instead of ``mesh``.
        self.abstract: AbstractMesh | None = None
        #: The mesh of the SPMD program being lowered and compiled (``lowering_over``).
        self.program: Mesh | None = None


_current = _CurrentMesh()


def get_abstract_mesh() -> Mesh | AbstractMesh | None:
    """The mesh set by ``set_mesh`` or the innermost ``with mesh:`` block, or None; inside
    ``use_abstract_mesh(m)``, ``m``. (Code that needs the devices asks ``get_mesh``.)"""
    abstract = _current.abstract
    return _current.mesh if abstract is None else abstract


def get_mesh() -> Mesh | None:
    """The concrete mesh set by ``set_mesh`` or the innermost ``with mesh:`` block, or None."""
    return _current.mesh


class use_abstract_mesh:  # noqa: N801 - JAX's name (a class used as a context manager)
    """``with use_abstract_mesh(abstract_mesh):`` makes ``get_abstract_mesh()`` return it.

    As JAX, it names no devices, so bare ``PartitionSpec`` s still refer to the concrete mesh
    (``set_mesh``); and inside another abstract mesh it must keep that mesh's size."""

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got type: {type(mesh)}")
        self.mesh = mesh
        self.prev: AbstractMesh | None = None

    def __enter__(self) -> None:
        self.prev, _current.abstract = _current.abstract, self.mesh
        prev = self.prev if self.prev is not None else (
            None if _current.mesh is None else _current.mesh.abstract_mesh)
        if prev is not None and not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
            _current.abstract = self.prev
            raise ValueError(
                f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: {self.mesh} with "
                f"size={self.mesh.size} and prev mesh: {prev} with size={prev.size}"
            )

    def __exit__(self, *exc: object) -> None:
        _current.abstract = self.prev


class lowering_over:  # noqa: N801 - a context manager, named for how it reads
    """``with lowering_over(mesh):`` around lowering and compiling a program over ``mesh``, so
    that what the partitioner reports while compiling (``debug.inspect_array_sharding``) can
    name the mesh's devices."""

    __slots__ = ("mesh", "_previous")

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self._previous: Mesh | None = None

    def __enter__(self) -> None:
        self._previous, _current.program = _current.program, self.mesh

    def __exit__(self, *exc: object) -> None:
        _current.program = self._previous


def program_mesh() -> Mesh | None:
    """The mesh of the SPMD program being lowered or compiled on this thread, if any."""
    return _current.program


class _MeshSetting:
    """What ``set_mesh`` returns: the mesh is already set; a ``with`` block restores the previous one."""

    __slots__ = ("_previous",)

    def __init__(self, mesh: Mesh | None) -> None:
        self._previous = _current.mesh
        _current.mesh = mesh

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _current.mesh = self._previous


def set_mesh(mesh: Mesh | None) -> _MeshSetting:
    """Set the mesh that bare ``PartitionSpec`` s refer to (this thread): for the rest of the
    program, or, used as ``with set_mesh(mesh):``, for the block (as ``jax.set_mesh``)."""
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh requires a Mesh or None, got {type(mesh).__name__}")
    return _MeshSetting(mesh)


class Sharding:
    """How an array is laid out over devices (the common interface of the shardings)."""

    __slots__ = ()

    @property
    def device_set(self) -> set[Device]:
        return set(self._device_assignment)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        raise NotImplementedError

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    @property
    def memory_kind(self) -> str | None:
        return None

    def with_memory_kind(self, kind: str) -> Sharding:
        """The same layout in the memory ``kind`` of its devices (``device``, ``pinned_host``, ...)."""
        raise NotImplementedError

    @property
    def is_fully_addressable(self) -> bool:
        pid = runtime.process_index()
        return all(d.process_index == pid for d in self._device_assignment)

    @property
    def addressable_devices(self) -> set[Device]:
        pid = runtime.process_index()
        return {d for d in self._device_assignment if d.process_index == pid}

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        raise NotImplementedError

    def addressable_devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        pid = runtime.process_index()
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d.process_index == pid}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        raise NotImplementedError


def checked_memory_kind(kind: str | None, device: Device | None) -> str:
    """``kind`` (default ``device``) if ``device`` can address memory of that kind, as JAX checks.

    On CPU the kinds are ``device``, ``pinned_host`` and ``unpinned_host``, all host memory: fcore
    keeps every array in the device's default memory and records the kind in its sharding."""
    if kind is None:
        return "device"
    kinds = [m.kind for m in device.addressable_memories()] if device is not None else [kind]
    if kind not in kinds:
        platform = device.platform if device is not None else "unknown"
        raise ValueError(
            f"Could not find memory addressable by device {platform}. Device {platform} can address the following "
            f"memory kinds: {', '.join(kinds)}. Got memory kind: {kind}"
        )
    return kind


class SingleDeviceSharding(Sharding, ParamStruct):
    """The whole array on one device."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: Device, *, memory_kind: str | None = None) -> None:
        self._device = device
        self._memory_kind = checked_memory_kind(memory_kind, device)

    @property
    def memory_kind(self) -> str:
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        return SingleDeviceSharding(self._device, memory_kind=kind)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(global_shape)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SingleDeviceSharding) and other._device == self._device
            and other._memory_kind == self._memory_kind
        )

    def __hash__(self) -> int:
        return hash(("single", self._device.id, self._memory_kind))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"


def make_single_device_sharding(device: Device, *, memory_kind: str | None = None) -> SingleDeviceSharding:
    """``jax.sharding.make_single_device_sharding``: ``SingleDeviceSharding(device)``."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class NamedSharding(Sharding, ParamStruct):
    """Array dimension ``i`` split over the mesh axes ``spec[i]``, replicated over the rest."""

    __slots__ = ("mesh", "spec", "_key", "_hash", "_memory_kind")

    def __init__(self, mesh: Mesh, spec: PartitionSpec | Sequence[SpecEntry] = PartitionSpec(), *,
                 memory_kind: str | None = None) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding's mesh must be a Mesh, got {type(mesh).__name__}")
        self.mesh = mesh
        self.spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        self._check_spec()
        self._memory_kind = checked_memory_kind(memory_kind, mesh.flat_devices[0] if mesh.size else None)
        # The spec without trailing replicated dimensions: P("x") and P("x", None) are one layout.
        entries = self.spec.partitions
        key: list[object] = [() if e is None else (e,) if isinstance(e, str) else e for e in entries]
        while key and not key[-1]:
            key.pop()
        if self.spec.unreduced or self.spec.reduced:
            key.append((self.spec.unreduced, self.spec.reduced))
        if self._memory_kind != "device":
            key.append(self._memory_kind)
        self._key = tuple(key)
        self._hash = hash((mesh, self._key))

    def _check_spec(self) -> None:
        seen: set[str] = set()
        types = dict(zip(self.mesh.axis_names, self.mesh.axis_types))
        for name, axes in (("Unreduced", self.spec.unreduced), ("Reduced", self.spec.reduced)):
            for u in sorted(axes):
                if u not in types:
                    raise ValueError(
                        f"{name} axes {u} is not found in mesh.axis_names={self.mesh.axis_names}. Got pspec={self.spec}"
                    )
                if types[u] is not AxisType.Explicit:
                    raise ValueError(
                        f"{name} axes can only refer to mesh axes that is of type `Explicit`. Got {name.lower()} "
                        f"axes: {axes} and mesh: {self.mesh!r}"
                    )
        for entry in self.spec.partitions:
            for a in () if entry is None else (entry,) if isinstance(entry, str) else entry:
                if a not in self.mesh.axis_names:
                    raise ValueError(
                        f"Resource axis: {a} of {self.spec} is not found in mesh: {self.mesh.axis_names}."
                    )
                if a in seen:
                    raise ValueError(f"A single NamedSharding spec specification can map every mesh axis to at most "
                                     f"one positional dimension, but {self.spec} has duplicate entries for `{a}`")
                seen.add(a)

    def check_shape(self, shape: tuple[int, ...], what: str | None = None) -> None:
        """A clear error before XLA sees a layout that cannot hold ``shape`` (``what`` names
        the value, as jit's messages do; without it, jax's ``shard_shape`` message)."""
        if len(self.spec) > len(shape):
            raise ValueError(
                f"{what or 'A value'} was given the sharding of {self}, which implies that it has a rank of at "
                f"least {len(self.spec)}, but it is {len(shape)}"
            )
        ways = [self._ways(d) for d in range(len(shape))]
        for dim, size in enumerate(shape):
            if size % ways[dim]:
                if what is None:
                    raise IndivisibleError(
                        f"Sharding {self} implies that array axis {dim} is partitioned {ways[dim]} times, but the "
                        f"dimension size is {size} (full shape: {shape}, per-dimension tiling factors: {ways} should "
                        "evenly divide the shape)"
                    )
                raise IndivisibleError(
                    f"{what} was given the sharding of {self}, which implies that the global size of its "
                    f"dimension {dim} should be divisible by {ways[dim]}, but it is equal to {size} (full shape: {shape})"
                )

    def _ways(self, dim: int) -> int:
        sizes = self.mesh.shape
        return math.prod(sizes[a] for a in self.spec.axes_of(dim))

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self.mesh.flat_devices

    @property
    def is_fully_replicated(self) -> bool:
        return all(self._ways(d) == 1 for d in range(len(self.spec)))

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        self.check_shape(tuple(global_shape))
        return tuple(s // self._ways(d) for d, s in enumerate(global_shape))

    def tiles(self, ndim: int) -> npt.NDArray[np.int64]:
        """The tile assignment: positions of the mesh's flat devices, shape ``[ways per dim..., replicas]``."""
        names = self.mesh.axis_names
        positions = np.arange(self.mesh.size, dtype=np.int64).reshape(self.mesh.axis_sizes)
        used = [a for d in range(ndim) for a in self.spec.axes_of(d)]
        rest = [a for a in names if a not in used]
        order = [names.index(a) for a in used + rest]
        moved = positions.transpose(order)
        dims = [self._ways(d) for d in range(ndim)]
        return moved.reshape(dims + [-1])

    def sdy(self, ndim: int) -> SdySharding:
        dims = ", ".join("{" + ", ".join(f'"{a}"' for a in self.spec.axes_of(d)) + "}" for d in range(ndim))
        return SdySharding(self.mesh.sdy_text(), f"[{dims}]", hlo_sharding(self.tiles(ndim), True))

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        self.check_shape(tuple(global_shape))
        return _indices_from_tiles(self.tiles(len(global_shape)), global_shape, self.mesh.flat_devices)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, NamedSharding):
            return False
        return self._hash == other._hash and self._key == other._key and self.mesh == other.mesh

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, memory_kind={self._memory_kind})"

    @property
    def memory_kind(self) -> str:
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> NamedSharding:
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)


def _indices_from_tiles(
    tiles: npt.NDArray[np.int64], shape: Sequence[int], devices: tuple[Device, ...]
) -> dict[Device, Index]:
    """Each device's slice of the global array, from a tile assignment with a replica axis."""
    ndim = len(shape)
    out: dict[Device, Index] = {}
    for pos in np.ndindex(*tiles.shape):
        idx = []
        for d in range(ndim):
            n = tiles.shape[d]
            step = shape[d] // n
            idx.append(slice(None) if n == 1 else slice(pos[d] * step, (pos[d] + 1) * step))
        out[devices[int(tiles[pos])]] = tuple(idx)
    return {d: out[d] for d in devices}


def named_sharding_from_xla(mesh: Mesh, proto: Any, shape: tuple[int, ...]) -> NamedSharding:
    """The ``NamedSharding`` on ``mesh`` with the layout XLA chose (``proto``: an OpSharding),
    found by matching each device's slice against the specs that could produce it."""
    tiles = tile_assignment(proto, len(shape), mesh.size)
    want = _indices_from_tiles(tiles, shape, mesh.flat_devices)
    for spec in _candidate_specs(mesh.axis_names, len(shape)):
        s = NamedSharding(mesh, spec)
        try:
            if s.devices_indices_map(shape) == want:
                return s
        except ValueError:
            continue
    raise NotImplementedError(f"XLA chose a layout no PartitionSpec on {mesh} describes")


def _candidate_specs(names: tuple[str, ...], ndim: int) -> Iterator[PartitionSpec]:
    """Specs from the fewest sharded axes up (so the replicated spec comes first)."""
    for k in range(len(names) + 1):
        for axes in itertools.permutations(names, k):
            for dims in itertools.product(range(ndim), repeat=k):
                per: list[list[str]] = [[] for _ in range(ndim)]
                for a, d in zip(axes, dims):
                    per[d].append(a)
                entries: list[SpecEntry] = [None if not p else p[0] if len(p) == 1 else tuple(p) for p in per]
                # As jax names XLA's choices: one entry per dimension, or P() when replicated.
                yield PartitionSpec(*entries) if k else PartitionSpec()


def resolve_spec(spec_or_sharding: object, what: str) -> NamedSharding:
    """A ``NamedSharding`` from a sharding or a bare ``PartitionSpec`` (under a mesh context)."""
    if isinstance(spec_or_sharding, NamedSharding):
        return spec_or_sharding
    if isinstance(spec_or_sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise RuntimeError(
                f"{what}: a bare PartitionSpec {spec_or_sharding} needs a mesh; use NamedSharding(mesh, spec) "
                "or a `with mesh:` block"
            )
        return NamedSharding(mesh, spec_or_sharding)
    raise TypeError(f"{what}: expected a NamedSharding or PartitionSpec, got {type(spec_or_sharding).__name__}")


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``jax.sharding.reshard``, the same function as ``fcore.reshard``."""
    # Imported here: fcore.lax.sharding_constraint imports this module (a real cycle).
    from fcore.lax.sharding_constraint import reshard as _reshard

    return _reshard(xs, out_shardings)


def make_mesh(
    axis_shapes: Sequence[int], axis_names: str | Sequence[str], axis_types: Sequence[AxisType] | None = None, *,
    devices: Sequence[Device] | None = None,
) -> Mesh:
    """A mesh of the first ``prod(axis_shapes)`` devices (as ``jax.make_mesh`` on CPU)."""
    shape = tuple(int(s) for s in axis_shapes)
    names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)  # one name, as jax
    if len(shape) != len(names):
        raise ValueError(f"axis_shapes {shape} and axis_names {names} must have the same length")
    devs = list(runtime.devices() if devices is None else devices)
    n = math.prod(shape)
    if n > len(devs):
        raise ValueError(
            f"Number of devices {len(devs)} must be >= the product of mesh_shape {shape}"
        )
    return Mesh(np.asarray(devs[:n], dtype=object).reshape(shape), names, axis_types)


def apply_out_sharding(x: Any, out_sharding: Any) -> Any:
    """``x`` laid out as an ``out_sharding=`` argument asks (None: left as computed)."""
    return x if out_sharding is None else reshard(x, out_sharding)


def auto_axes(
    f: Callable[..., Any] | None = None, /, *, axes: str | tuple[str, ...] | None = None, out_sharding: Any = None,
) -> Any:
    """``jax.sharding.auto_axes``: run ``f`` with the mesh axes left to XLA, then lay its
    results out as ``out_sharding`` (given here or as a keyword of each call).

    fcore's axes are all ``Auto`` already, so only the final ``reshard`` remains.
    """
    del axes

    def wrap(fun: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fun)
        def call(*args: Any, **kwargs: Any) -> Any:
            spec = out_sharding
            if spec is None:
                if "out_sharding" not in kwargs:
                    raise TypeError("Missing required keyword argument: 'out_sharding'")
                spec = kwargs.pop("out_sharding")
            return reshard(fun(*args, **kwargs), spec)

        return call

    return wrap if f is None else wrap(f)


def explicit_axes(
    f: Callable[..., Any] | None = None, /, *, axes: str | tuple[str, ...] | None = None, in_sharding: Any = None,
) -> Any:
    """``jax.sharding.explicit_axes``: lay the arguments out as ``in_sharding`` (given here
    or as a keyword of each call), then run ``f``; fcore keeps no shardings in types."""
    del axes

    def wrap(fun: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fun)
        def call(*args: Any, **kwargs: Any) -> Any:
            spec = in_sharding
            if spec is None:
                if "in_sharding" not in kwargs:
                    raise TypeError("Missing required keyword argument: 'in_sharding'")
                spec = kwargs.pop("in_sharding")
            if get_mesh() is None:
                raise ValueError(
                    "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter"
                    " into a mesh context when using `explicit_axes` API."
                )
            return fun(*reshard(args, spec), **kwargs)

        return call

    return wrap if f is None else wrap(f)
