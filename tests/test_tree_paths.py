"""Key paths and the smaller pytree utilities, differentially against ``jax.tree_util``.

``tree_flatten_with_path``, ``tree_leaves_with_path``, ``tree_map_with_path``, ``keystr``, the
key classes (``DictKey``, ``SequenceKey``, ``GetAttrKey``, ``FlattenedIndexKey``),
``register_pytree_with_keys``, ``tree_reduce``, ``tree_all``, ``all_leaves`` and ``Partial``:
each is run on the same trees with fcore and with jax, and the results (paths as text, leaves,
structures as text) must agree.
"""

from __future__ import annotations

import collections
import dataclasses
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import jax.tree_util as jtu
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fcore import tree_util as ftu


class Pair(NamedTuple):
    x: Any
    y: Any


@dataclasses.dataclass(frozen=True)
class Params:
    w: Any
    b: Any
    name: str = dataclasses.field(default="p", metadata={"static": True})


ftu.register_dataclass(Params)
jtu.register_dataclass(Params)


class Box:
    """A custom node registered without keys: its children get ``FlattenedIndexKey`` s."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b


for _tu in (ftu, jtu):
    _tu.register_pytree_node(Box, lambda bx: ((bx.a, bx.b), None), lambda _, ch: Box(*ch))


class Named:
    """A custom node registered with keys of its own."""

    def __init__(self, left: Any, right: Any) -> None:
        self.left, self.right = left, right


ftu.register_pytree_with_keys(
    Named,
    lambda n: (((ftu.GetAttrKey("left"), n.left), (ftu.GetAttrKey("right"), n.right)), None),
    lambda _, ch: Named(*ch),
)
jtu.register_pytree_with_keys(
    Named,
    lambda n: (((jtu.GetAttrKey("left"), n.left), (jtu.GetAttrKey("right"), n.right)), None),
    lambda _, ch: Named(*ch),
)

TREES: dict[str, Any] = {
    "leaf": 1,
    "none": None,
    "empty_containers": [(), [], {}],
    "nested": {"b": [1, (2, None)], "a": Pair(3, 4), "c": collections.OrderedDict([("z", 5), ("y", 6)])},
    "defaultdict": collections.defaultdict(list, {"q": 1, "p": [2]}),
    "dataclass": [Params(1, (2, 3))],
    "custom_no_keys": Box(1, [2, 3]),
    "custom_with_keys": Named({"k": 1}, Box(2, 3)),
    "int_keys": {2: "x", 1: ("y",)},
}


def _paths(tu: Any, tree: Any, **kw: Any) -> tuple[list[tuple[str, Any]], str]:
    pairs, treedef = tu.tree_flatten_with_path(tree, **kw)
    return [(tu.keystr(p), x) for p, x in pairs], str(treedef)


@pytest.mark.parametrize("name", sorted(TREES))
def test_flatten_with_path_matches_jax(name: str) -> None:
    tree = TREES[name]
    assert _paths(ftu, tree) == _paths(jtu, tree)
    got = [(ftu.keystr(p, simple=True, separator="/"), x) for p, x in ftu.tree_leaves_with_path(tree)]
    want = [(jtu.keystr(p, simple=True, separator="/"), x) for p, x in jtu.tree_leaves_with_path(tree)]
    assert got == want
    # the leaves and the structure are tree_flatten's
    pairs, treedef = ftu.tree_flatten_with_path(tree)
    assert ([x for _, x in pairs], treedef) == ftu.tree_flatten(tree)


def test_key_classes_match_jax() -> None:
    for f_key, j_key in [
        (ftu.DictKey("a"), jtu.DictKey("a")),
        (ftu.DictKey(3), jtu.DictKey(3)),
        (ftu.SequenceKey(2), jtu.SequenceKey(2)),
        (ftu.GetAttrKey("w"), jtu.GetAttrKey("w")),
        (ftu.FlattenedIndexKey(1), jtu.FlattenedIndexKey(1)),
    ]:
        assert (repr(f_key), str(f_key)) == (repr(j_key), str(j_key))
        assert f_key == type(f_key)(*attr_values(f_key)) and hash(f_key) == hash(type(f_key)(*attr_values(f_key)))
    assert ftu.DictKey("a").key == "a" and ftu.SequenceKey(2).idx == 2 and ftu.GetAttrKey("w").name == "w"
    assert ftu.DictKey("a") != ftu.DictKey("b")


def attr_values(key: Any) -> list[Any]:
    return [getattr(key, f) for f in ("key", "idx", "name") if hasattr(key, f)]


def test_is_leaf_with_and_without_path() -> None:
    tree = {"a": [1, 2], "b": Pair([3], 4)}
    for kw in ({"is_leaf": lambda x: isinstance(x, list)},):
        assert _paths(ftu, tree, **kw) == _paths(jtu, tree, **kw)
    by_path = {"is_leaf": lambda p, x: len(p) == 2, "is_leaf_takes_path": True}
    assert _paths(ftu, tree, **by_path) == _paths(jtu, tree, **by_path)


def test_map_with_path_matches_jax() -> None:
    tree = TREES["nested"]
    describe: Callable[[Any], Callable[..., Any]] = lambda tu: lambda p, x: f"{tu.keystr(p)}={x}"  # noqa: E731
    assert ftu.tree_map_with_path(describe(ftu), tree) == jtu.tree_map_with_path(describe(jtu), tree)
    # several trees: the first is a prefix of the others
    got = ftu.tree_map_with_path(lambda p, x, y: (len(p), y), [1, 2], [3, (4,)])
    assert got == jtu.tree_map_with_path(lambda p, x, y: (len(p), y), [1, 2], [3, (4,)])
    with pytest.raises(ValueError):
        ftu.tree_map_with_path(lambda p, x, y: x, [1, 2], [3])


def test_reduce_all_and_all_leaves_match_jax() -> None:
    tree = [1, (2, {"a": 3}), None]
    for tu in (ftu, jtu):
        assert tu.tree_reduce(operator.add, tree) == 6
        assert tu.tree_reduce(operator.add, tree, 10) == 16
        assert tu.tree_reduce(operator.add, [], 0) == 0
        with pytest.raises(TypeError):
            tu.tree_reduce(operator.add, [])
    for t in ([True, (True, 1)], [True, (0,)], [], [None]):
        assert ftu.tree_all(t) == jtu.tree_all(t), t
    for items in ([1, 2], [1, [2]], [None], [], [(), 3]):
        assert ftu.all_leaves(items) == jtu.all_leaves(items), items
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    assert ftu.all_leaves([[1], [2]], is_leaf=is_list) == jtu.all_leaves([[1], [2]], is_leaf=is_list)


def test_partial_is_a_pytree() -> None:
    def f(a: Any, b: Any, *, c: Any) -> Any:
        return a + b + c

    tu: Any
    for tu in (ftu, jtu):
        p = tu.Partial(f, 1, c=3)
        assert p(2) == 6
        leaves, treedef = tu.tree_flatten(p)
        assert leaves == [1, 3]
        rebuilt = tu.tree_unflatten(treedef, [10, 30])
        assert isinstance(rebuilt, tu.Partial) and rebuilt.func is f and rebuilt(2) == 42
        doubled = tu.tree_map(lambda x: 2 * x, p)
        assert doubled(0) == 8
    jax_partial: Any = jtu.Partial
    assert str(ftu.tree_structure(ftu.Partial(f, 1, c=3))) == str(jtu.tree_structure(jax_partial(f, 1, c=3)))


def test_register_pytree_with_keys_derives_flatten() -> None:
    assert ftu.tree_leaves(Named(1, [2, 3])) == [1, 2, 3]
    assert ftu.tree_map(lambda x: x + 1, Named(1, 2)).right == 3
    with pytest.raises(ValueError, match="Duplicate"):
        ftu.register_pytree_with_keys(Named, lambda n: ((), None), lambda _, ch: Named(1, 2))


_leaves = st.one_of(st.integers(-5, 5), st.none(), st.sampled_from(["s", "t"]))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3),
        st.tuples(children, children).map(lambda t: Pair(*t)),
        st.tuples(children, children).map(lambda t: Params(*t)),
        st.tuples(children, children).map(lambda t: Box(*t)),
    )


@settings(max_examples=60, deadline=None)
@given(st.recursive(_leaves, _extend, max_leaves=12))
def test_property_paths_match_jax(tree: Any) -> None:
    assert _paths(ftu, tree) == _paths(jtu, tree)
