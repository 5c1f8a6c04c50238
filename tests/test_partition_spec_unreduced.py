"""``PartitionSpec(..., unreduced=, reduced=)`` against JAX: construction checks, printing,
equality and hashing, ``partitions``/``update``/``to_ct_spec``/``+``, the guards on indexing
and unpacking, pickling, and ``NamedSharding``'s checks (axes in the mesh, ``Explicit`` axes).
fcore has no sharding-in-types: a layout that uses such axes raises ``NotImplementedError``."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType as JAxisType
from jax.sharding import NamedSharding as JNamedSharding
from jax.sharding import PartitionSpec as JP

import fcore
from fcore.sharding import AxisType, NamedSharding, PartitionSpec

Case = Callable[[Any, Any, Any], Any]


def _outcome(f: Case, P: Any, NS: Any, mesh: Any) -> str:
    try:
        return repr(f(P, NS, mesh))
    except (ValueError, TypeError) as e:
        return f"{type(e).__name__}: {e}"


CASES: list[Case] = [
    lambda P, NS, m: P("x", unreduced={"y"}),
    lambda P, NS, m: P(unreduced={"y"}),
    lambda P, NS, m: P("x", None, reduced={"y"}, unreduced={"z"}),
    lambda P, NS, m: P("x", ("y", "z"), unreduced={"w"}),
    lambda P, NS, m: P("x", unreduced={"x"}),
    lambda P, NS, m: P(("x", "q"), reduced={"x"}),
    lambda P, NS, m: P(unreduced={"y"}, reduced={"y"}),
    lambda P, NS, m: P(unreduced=["y"]),
    lambda P, NS, m: P(reduced={None}),
    lambda P, NS, m: (P("x", unreduced={"y"}) == P("x", unreduced={"y"}), P("x", unreduced={"y"}) == P("x")),
    lambda P, NS, m: (P("x", unreduced={"y"}) != P("x"), hash(P("x", reduced={"y"})) == hash(P("x", reduced={"y"}))),
    lambda P, NS, m: P("x", unreduced={"y"})[0],
    lambda P, NS, m: list(P("x", unreduced={"y"})),
    lambda P, NS, m: (len(P("x", unreduced={"y"})), P("x", unreduced={"y"}).partitions, P("x").reduced),
    lambda P, NS, m: (P("x", unreduced={"y"}) + P("z"), P("x") + ("z",), ("z",) + P("x")),
    lambda P, NS, m: P("x", unreduced={"y"}) + ("z",),
    lambda P, NS, m: ("z",) + P("x", reduced={"y"}),
    lambda P, NS, m: (P("x", unreduced={"y"}).update(reduced={"z"}), P("x", unreduced={"y"}, reduced={"z"}).to_ct_spec()),
    lambda P, NS, m: pickle.loads(pickle.dumps(P("x", reduced={"y"}))) == P("x", reduced={"y"}),
    lambda P, NS, m: NS(m(False), P("x", unreduced={"y"})),
    lambda P, NS, m: NS(m(False), P("x", reduced={"y"})),
    lambda P, NS, m: NS(m(True), P("x", unreduced={"q"})),
    lambda P, NS, m: NS(m(True), P("x", unreduced={"y"})),
    lambda P, NS, m: NS(m(True), P("x", unreduced={"y"})) == NS(m(True), P("x")),
]


def _fmesh(explicit: bool) -> Any:
    return fcore.make_mesh((1, 1), ("x", "y"), axis_types=(AxisType.Explicit if explicit else AxisType.Auto,) * 2)


def _jmesh(explicit: bool) -> Any:
    return jax.make_mesh((1, 1), ("x", "y"), axis_types=(JAxisType.Explicit if explicit else JAxisType.Auto,) * 2)


@pytest.mark.parametrize("k", range(len(CASES)))
def test_partition_spec_unreduced_matches_jax(k: int) -> None:
    f = CASES[k]
    assert _outcome(f, PartitionSpec, NamedSharding, _fmesh) == _outcome(f, JP, JNamedSharding, _jmesh)


def test_layouts_with_unreduced_axes_are_not_implemented() -> None:
    s = NamedSharding(_fmesh(True), PartitionSpec("x", unreduced={"y"}))
    x = np.ones((2, 2), np.float32)
    with pytest.raises(NotImplementedError, match="unreduced or reduced mesh axes"):
        fcore.device_put(x, s)
    with pytest.raises(NotImplementedError, match="unreduced or reduced mesh axes"):
        fcore.jit(lambda a: fcore.lax.with_sharding_constraint(a * 2, s))(x)
    with pytest.raises(NotImplementedError, match="unreduced or reduced mesh axes"):
        s.shard_shape((2, 2))
