"""Issue 12 workloads: pytree flatten/unflatten, tree_map, key paths, treedef hashing, and jit
dispatch with a dict of 100 arrays as its argument (flattened and keyed on every call)."""

from __future__ import annotations

import operator
from typing import Any

from benchmarks.harness import Result, compare


def params_tree(layers: int = 200) -> dict[str, Any]:
    """A 1,000-leaf parameter tree: per layer a dict of weights, a bias and a (scale, shift) pair."""
    return {
        f"layer{i:03d}": {"w": float(i), "b": [float(i), float(-i)], "norm": (1.0, 0.0)}
        for i in range(layers)
    }


def run() -> list[Result]:
    import jax
    import numpy as np

    import fcore
    from fcore import tree_util

    params = params_tree()
    other = params_tree()
    assert len(tree_util.tree_leaves(params)) == len(jax.tree_util.tree_leaves(params)) == 1000

    def f_round_trip() -> object:
        leaves, treedef = tree_util.tree_flatten(params)
        return tree_util.tree_unflatten(treedef, leaves)

    def j_round_trip() -> object:
        leaves, treedef = jax.tree_util.tree_flatten(params)
        return jax.tree_util.tree_unflatten(treedef, leaves)

    results = [
        compare("flatten+unflatten 1000-leaf params", f_round_trip, j_round_trip, number=50,
                target="<= 1.0"),
        compare("tree_map(add) over two 1000-leaf trees",
                lambda: tree_util.tree_map(operator.add, params, other),
                lambda: jax.tree_util.tree_map(operator.add, params, other), number=50, target="<= 1.0"),
        compare("tree_leaves_with_path 1000-leaf params",
                lambda: tree_util.tree_leaves_with_path(params),
                lambda: jax.tree_util.tree_leaves_with_path(params), number=20, target="<= 1.0"),
    ]
    small = ((1.0, 2.0), {"x": 3.0})
    results.append(compare("flatten small call args ((a, b), {x})",
                           lambda: tree_util.tree_flatten(small),
                           lambda: jax.tree_util.tree_flatten(small), number=5000, target="<= 1.0"))
    f_def, j_def = tree_util.tree_structure(params), jax.tree_util.tree_structure(params)
    f_def2, j_def2 = tree_util.tree_structure(other), jax.tree_util.tree_structure(other)
    results.append(compare("treedef hash + == (1000 leaves)",
                           lambda: hash(f_def) == hash(f_def2) and f_def == f_def2,
                           lambda: hash(j_def) == hash(j_def2) and j_def == j_def2, number=500,
                           target="<= 1.0"))
    arrays = {f"w{i:02d}": np.full(4, i, np.float32) for i in range(100)}
    f_args, j_args = fcore.device_put(arrays), jax.device_put(arrays)
    f_jit = fcore.jit(lambda p: p["w00"] + p["w99"])
    j_jit = jax.jit(lambda p: p["w00"] + p["w99"])
    results.append(compare("jit dispatch f(dict of 100 f32[4]) (+wait)",
                           lambda: f_jit(f_args).block_until_ready(),
                           lambda: j_jit(j_args).block_until_ready(), number=500, target="<= 1.0"))
    return results
