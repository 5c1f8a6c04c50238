"""Tests for fcore.tree_util, mostly differential against ``jax.tree_util``.

JAX is the reference: for a corpus of trees (and for hypothesis-generated
ones) leaves, structure printing, sizes, children and node data must agree
exactly.  fcore-only behaviour (deep trees, error messages, broadcast_prefix)
is tested directly.
"""

from __future__ import annotations

import collections
import dataclasses
import pickle
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import attrs
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import tree_util as jtu
from jax._src.tree_util import broadcast_prefix as jax_broadcast_prefix

from fcore import tree_util as tu

# jaxlib's PyTreeDef has no type stubs mypy can resolve, so JAX treedefs are
# handled as ``Any`` through these two wrappers.


def jflatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], Any]:
    leaves, treedef = jtu.tree_flatten(tree, is_leaf)
    return leaves, treedef


def jstructure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    return jtu.tree_structure(tree, is_leaf)


# ---------------------------------------------------------------------------
# Node types, registered identically with fcore and with JAX
# ---------------------------------------------------------------------------


class Point(NamedTuple):
    x: Any
    y: Any


class Empty(NamedTuple):
    pass


Pair = collections.namedtuple("Pair", ["first", "second"])


class Foo:
    """Registered with register_pytree_node; aux is a string."""

    def __init__(self, a: Any, b: Any, tag: str = "aux") -> None:
        self.a = a
        self.b = b
        self.tag = tag

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Foo)
            and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)
        )

    def __hash__(self) -> int:
        return hash((Foo, self.tag))


def _foo_flatten(f: Foo) -> tuple[tuple[Any, Any], str]:
    return (f.a, f.b), f.tag


def _foo_unflatten(tag: str, children: Iterable[Any]) -> Foo:
    a, b = children
    return Foo(a, b, tag)


tu.register_pytree_node(Foo, _foo_flatten, _foo_unflatten)
jtu.register_pytree_node(Foo, _foo_flatten, _foo_unflatten)


@jtu.register_pytree_node_class
@tu.register_pytree_node_class
class Box:
    """Registered with register_pytree_node_class; aux is a tuple."""

    def __init__(self, items: list[Any], name: str) -> None:
        self.items = items
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and (self.items, self.name) == (other.items, other.name)

    def __hash__(self) -> int:
        return hash((Box, self.name))

    def tree_flatten(self) -> tuple[list[Any], tuple[str, int]]:
        return list(self.items), (self.name, len(self.items))

    @classmethod
    def tree_unflatten(cls, aux: tuple[str, int], children: Iterable[Any]) -> Box:
        return cls(list(children), aux[0])


@dataclasses.dataclass(frozen=True)
class DC:
    x: Any
    y: Any
    op: str = dataclasses.field(default="add", metadata=dict(static=True))


tu.register_dataclass(DC)
jtu.register_dataclass(DC)


@dataclasses.dataclass
class DCExplicit:
    w: Any
    b: Any
    name: str


tu.register_dataclass(DCExplicit, data_fields=["w", "b"], meta_fields=["name"])
jtu.register_dataclass(DCExplicit, data_fields=["w", "b"], meta_fields=["name"])


@attrs.frozen
class AT:
    """A frozen attrs class with a private attribute (init alias ``p``)."""

    v: Any
    _p: Any
    mode: str = attrs.field(default="m", metadata={"static": True})


tu.register_dataclass(AT)  # fcore infers the fields for attrs classes
jtu.register_dataclass(AT, data_fields=["v", "_p"], meta_fields=["mode"])
# JAX rebuilds with AT(**{"_p": ...}), which attrs rejects; fcore uses the alias.


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------

A = np.arange(3.0)

CORPUS: list[Any] = [
    1,
    "leaf",
    A,
    None,
    (),
    [],
    {},
    (1,),
    [1],
    (1, [2, 3]),
    {"a": 1, "b": [2, 3]},
    {"b": 1, "a": 2, "c": (3, 4)},
    {"b": None, "a": (None,)},
    {1.5: 1, 0: 2},
    {(1, 2): 1, (0, 5): 2},
    ((1,),),
    [[[]]],
    {"a": {}},
    (None,),
    [1, None, (2,)],
    [None, None],
    Point(1, 2),
    Point(1, Point(2, 3)),
    Point(None, []),
    Empty(),
    Pair(A, (A, A)),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.OrderedDict(),
    collections.OrderedDict([("z", (1, 2)), ("y", {"q": 3})]),
    collections.defaultdict(list, {"b": 1, "a": 2}),
    Foo(1, 2),
    Foo((1, 2), None, "other tag"),
    Foo([Foo(1, 2)], {"k": 3}),
    Box([1, 2, 3], "box"),
    Box([], "empty"),
    DC(1, (2, 3)),
    DC(x=None, y=[1], op="mul"),
    DCExplicit(A, 2, "layer"),
    AT(1, 2),
    {"params": {"w": A, "b": A}, "state": (Point(A, None), [1, 2.0, "s"])},
    [(1, {"x": [2, (3,)]}), Point([4], {"y": 5}), None, collections.OrderedDict(k=6)],
]


def _corpus_ids() -> list[str]:
    # Stable across pytest-xdist workers: no reprs (they may contain addresses).
    return [f"{i}-{type(t).__name__}" for i, t in enumerate(CORPUS)]


def _leaves_equal(xs: list[Any], ys: list[Any]) -> bool:
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys))


@pytest.mark.parametrize("tree", CORPUS, ids=_corpus_ids())
def test_corpus_matches_jax(tree: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree)
    jleaves, jtreedef = jflatten(tree)
    assert _leaves_equal(leaves, jleaves)
    assert str(treedef) == str(jtreedef)
    assert repr(treedef) == repr(jtreedef)
    assert treedef.num_leaves == jtreedef.num_leaves
    assert treedef.num_nodes == jtreedef.num_nodes
    assert [str(c) for c in treedef.children()] == [str(c) for c in jtreedef.children()]
    assert treedef.node_data() == jtreedef.node_data()
    assert tu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(jtreedef)
    assert _leaves_equal(tu.tree_leaves(tree), jleaves)
    assert tu.tree_structure(tree) == treedef


@pytest.mark.parametrize("tree", CORPUS, ids=_corpus_ids())
def test_corpus_round_trip(tree: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is type(tree)
    assert tu.tree_structure(rebuilt) == treedef
    assert _leaves_equal(tu.tree_leaves(rebuilt), leaves)
    # Rebuilding from fresh leaves matches what JAX rebuilds (AT excluded:
    # JAX cannot rebuild attrs classes with private attributes).
    fresh = list(range(len(leaves)))
    ours = treedef.unflatten(fresh)
    if not isinstance(tree, AT):
        theirs = jtu.tree_unflatten(jstructure(tree), fresh)
        assert str(tu.tree_structure(ours)) == str(jstructure(theirs))
        assert tu.tree_leaves(ours) == jtu.tree_leaves(theirs)
    # The children's structures are those of the root's child subtrees.
    children = treedef.children()
    if treedef.num_nodes > 1:
        assert sum(c.num_leaves for c in children) == treedef.num_leaves
        assert sum(c.num_nodes for c in children) == treedef.num_nodes - 1
    else:
        assert children == []


@pytest.mark.parametrize("tree", CORPUS, ids=_corpus_ids())
def test_corpus_flatten_up_to_self(tree: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree)
    assert _leaves_equal(treedef.flatten_up_to(tree), leaves)


def test_printing_examples() -> None:
    assert str(tu.tree_structure((1, [2, 3]))) == "PyTreeDef((*, [*, *]))"
    assert str(tu.tree_structure({"a": 1, "b": [2, 3]})) == "PyTreeDef({'a': *, 'b': [*, *]})"
    assert str(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert str(tu.tree_structure(1)) == "PyTreeDef(*)"
    assert str(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert str(tu.tree_structure(Point(1, 2))) == "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"
    assert (
        str(tu.tree_structure(collections.OrderedDict([("b", 1), ("a", 2)])))
        == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"
    )
    assert str(tu.tree_structure(Foo(1, 2))) == "PyTreeDef(CustomNode(Foo[aux], [*, *]))"
    assert str(tu.tree_structure(DC(1, 2))) == "PyTreeDef(CustomNode(DC[('add',)], [*, *]))"
    assert str(tu.tree_structure(AT(1, 2))) == "PyTreeDef(CustomNode(AT[('m',)], [*, *]))"


def test_dict_order() -> None:
    d = {"b": 1, "c": 2, "a": 3}
    leaves, treedef = tu.tree_flatten(d)
    assert leaves == [3, 1, 2]
    rebuilt = treedef.unflatten(leaves)
    assert list(rebuilt) == ["a", "b", "c"]
    assert list(rebuilt) == list(jtu.tree_unflatten(jstructure(d), leaves))
    # Key order does not matter for equality of structures.
    assert tu.tree_structure({"a": 1, "b": 2}) == tu.tree_structure({"b": 1, "a": 2})


def test_ordereddict_keeps_insertion_order() -> None:
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]
    rebuilt = treedef.unflatten(["x", "y"])
    assert isinstance(rebuilt, collections.OrderedDict)
    assert list(rebuilt.items()) == [("b", "x"), ("a", "y")]
    assert treedef != tu.tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))
    assert treedef != tu.tree_structure({"b": 1, "a": 2})


def test_defaultdict_round_trip() -> None:
    dd: collections.defaultdict[str, Any] = collections.defaultdict(list, {"b": 1, "a": 2})
    rebuilt = tu.tree_unflatten(tu.tree_structure(dd), [10, 20])
    assert isinstance(rebuilt, collections.defaultdict)
    assert rebuilt.default_factory is list
    assert dict(rebuilt) == {"a": 10, "b": 20}


def test_none_is_empty_node() -> None:
    assert tu.tree_leaves([None, 1, None]) == [1]
    treedef = tu.tree_structure(None)
    assert treedef.num_leaves == 0 and treedef.num_nodes == 1
    assert tu.treedef_is_leaf(treedef)
    assert treedef.unflatten([]) is None
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert str(tu.tree_structure(None, is_leaf=lambda x: x is None)) == "PyTreeDef(*)"


def test_is_leaf_matches_jax() -> None:
    tree = [1, (2, 3), [4, (5,)], {"a": (6, 7)}, None]
    predicates: list[Callable[[Any], bool]] = [
        lambda x: isinstance(x, tuple),
        lambda x: isinstance(x, list) and len(x) == 2,
        lambda x: x is None,
        lambda x: isinstance(x, dict),
        lambda x: True,
    ]
    for pred in predicates:
        leaves, treedef = tu.tree_flatten(tree, is_leaf=pred)
        jleaves, jtreedef = jflatten(tree, is_leaf=pred)
        assert _leaves_equal(leaves, jleaves)
        assert str(treedef) == str(jtreedef)


def test_non_namedtuple_subclasses_are_leaves() -> None:
    class MyTuple(tuple[int, ...]):
        pass

    class MyList(list[int]):
        pass

    class MyDict(dict[str, int]):
        pass

    for tree in (MyTuple((1, 2)), MyList([1]), MyDict(a=1), [MyTuple((1,))]):
        assert str(tu.tree_structure(tree)) == str(jstructure(tree))
        assert _leaves_equal(tu.tree_leaves(tree), jtu.tree_leaves(tree))


def test_namedtuple_subclass_is_node() -> None:
    class SubPoint(Point):
        pass

    tree = SubPoint(1, 2)
    assert str(tu.tree_structure(tree)) == str(jstructure(tree))
    assert type(tu.tree_unflatten(tu.tree_structure(tree), [3, 4])) is SubPoint


# ---------------------------------------------------------------------------
# Equality and hashing
# ---------------------------------------------------------------------------


def test_equality_matches_jax_pairwise() -> None:
    for a in CORPUS:
        for b in CORPUS:
            ours = tu.tree_structure(a) == tu.tree_structure(b)
            theirs = jstructure(a) == jstructure(b)
            assert ours == theirs, (a, b)
            if ours:
                assert hash(tu.tree_structure(a)) == hash(tu.tree_structure(b))


def test_equality_and_hash() -> None:
    t1 = tu.tree_structure((1, [2, 3]))
    t2 = tu.tree_structure(("a", ["b", A]))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != tu.tree_structure((1, (2, 3)))
    assert tu.tree_structure(1) != tu.tree_structure(None)
    assert tu.tree_structure(()) != tu.tree_structure([])
    assert tu.tree_structure({"a": 1}) != tu.tree_structure({"b": 1})
    assert tu.tree_structure(Foo(1, 2, "x")) != tu.tree_structure(Foo(1, 2, "y"))
    assert tu.tree_structure(Foo(1, 2, "x")) == tu.tree_structure(Foo(3, 4, "x"))
    # Same name, different namedtuple class: different structure (as JAX).
    Point2 = collections.namedtuple("Point2", ["x", "y"])
    Point2.__name__ = "Point"
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Point2(1, 2))
    cache = {t1: "hit"}
    assert cache[t2] == "hit"
    assert (t1 == (1, [2, 3])) is False
    assert (t1 == object()) is False
    # jaxlib's PyTreeDef answers False to both == and != against other types, as in JAX.
    jt1 = jstructure((1, [2, 3]))
    assert (t1 != (1, [2, 3])) == (jt1 != (1, [2, 3]))


def test_unhashable_aux_data() -> None:
    class Odd:
        def __init__(self, x: Any) -> None:
            self.x = x

    tu.register_pytree_node(  # type: ignore[type-var]  # unhashable aux on purpose
        Odd, lambda o: ((o.x,), ["unhashable"]), lambda aux, ch: Odd(ch[0])
    )
    t = tu.tree_structure(Odd(1))
    assert hash(t) == hash(tu.tree_structure(Odd(2)))
    assert t == tu.tree_structure(Odd(2))


def test_treedef_is_immutable() -> None:
    treedef = tu.tree_structure((1, 2))
    with pytest.raises(AttributeError):
        setattr(treedef, "_nodes", ())
    with pytest.raises(AttributeError):
        setattr(treedef, "num_leaves", 3)
    with pytest.raises(AttributeError):
        delattr(treedef, "_nodes")
    with pytest.raises(TypeError):
        tu.PyTreeDef()


def test_pickle_round_trip() -> None:
    for tree in CORPUS:
        treedef = tu.tree_structure(tree)
        restored = pickle.loads(pickle.dumps(treedef))
        assert restored == treedef and str(restored) == str(treedef)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_unflatten_wrong_leaf_count() -> None:
    treedef = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"Too few leaves .*expected 2, got 1"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match=r"Too many leaves .*expected 2, got 3"):
        tu.tree_unflatten(treedef, [1, 2, 3])
    with pytest.raises(ValueError, match=r"Too many leaves for PyTreeDef\(None\); expected 0, got 1"):
        tu.tree_unflatten(tu.tree_structure(None), [1])
    # The method itself is jaxlib's: JAX's messages, word for word.
    for tree, leaves in [((1, 2), [1]), ((1, 2), [1, 2, 3]), (None, [1]), ({"a": [1]}, [])]:
        with pytest.raises(ValueError) as ours:
            tu.tree_structure(tree).unflatten(leaves)
        with pytest.raises(ValueError) as theirs:
            jstructure(tree).unflatten(leaves)
        assert str(ours.value) == str(theirs.value)


def test_unsortable_dict_keys() -> None:
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        tu.tree_flatten({1: 2, "a": 3})
    with pytest.raises(ValueError):
        jflatten({1: 2, "a": 3})


FLATTEN_UP_TO_MISMATCHES: list[tuple[Any, Any, str]] = [
    # (tree giving the structure, tree to flatten up to it, key-path message fcore adds)
    ((1, [2, 3]), (5, 6), r"at key path \[1\]: Expected list, got 6"),
    ((1, [2, 3]), (5, [6, 7, 8]), r"at key path \[1\]: List arity mismatch: 3 != 2"),
    ((1, [2, 3]), [5, [6, 7]], r"at the root: Expected tuple, got \[5, \[6, 7\]\]"),
    ((1, [2, 3]), (5,), r"at the root: Tuple arity mismatch: 1 != 2"),
    ({"a": 1}, {"b": 1}, r"Dict key mismatch; expected keys: \['a'\]"),
    ({"x": Point(1, None)}, {"x": Point(1, 1)}, r"key path \['x'\]\.y: Expected None, got 1"),
    (Point(1, 2), (1, 2), "at the root: Expected named tuple"),
    (collections.OrderedDict(a=1), {"a": 1}, "Custom node type mismatch"),
    (Foo(1, 2, "x"), Foo(1, 2, "y"), "Mismatch custom node data"),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict"),
    ([DC(1, 2)], [DC(1, 2, "mul")], r"at key path \[0\]: Mismatch custom dataclass node data"),
    ([Foo([1, 2], 3)], [Foo([1], 3)], r"at key path \[0\]\[<flat index 0>\]: List arity mismatch"),
]


@pytest.mark.parametrize(("structure", "tree", "pattern"), FLATTEN_UP_TO_MISMATCHES)
def test_flatten_up_to_errors_match_jax(structure: Any, tree: Any, pattern: str) -> None:
    """``PyTreeDef.flatten_up_to`` is jaxlib's: the same ValueError as JAX, word for word."""
    with pytest.raises(ValueError) as ours:
        tu.tree_structure(structure).flatten_up_to(tree)
    with pytest.raises(ValueError) as theirs:
        jstructure(structure).flatten_up_to(tree)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(("structure", "tree", "pattern"), FLATTEN_UP_TO_MISMATCHES)
def test_tree_map_mismatch_names_the_key_path(structure: Any, tree: Any, pattern: str) -> None:
    """fcore's tree_map says where the trees part (jaxlib's reason, prefixed by the key path)."""
    with pytest.raises(ValueError, match=pattern):
        tu.tree_map(lambda *xs: None, structure, tree)
    with pytest.raises(ValueError):
        jtu.tree_map(lambda *xs: None, structure, tree)


def test_flatten_up_to_prefix_cases() -> None:
    treedef = tu.tree_structure((1, [2, 3]))
    assert treedef.flatten_up_to((5, [6, (7, 8)])) == [5, 6, (7, 8)]
    # Full-tree None under a prefix leaf is fine.
    assert tu.tree_structure((1, 2)).flatten_up_to((None, [None])) == [None, [None]]


def test_tree_map_structure_mismatch_names_both() -> None:
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, (1, 2), [1, 2])
    message = str(info.value)
    assert "PyTreeDef((*, *))" in message and "PyTreeDef([*, *])" in message
    with pytest.raises(ValueError, match=r"(?s)PyTreeDef\(\{'a': \*\}\).*PyTreeDef\(\{'b': \*\}\)"):
        tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="tree 3 does not match"):
        tu.tree_map(lambda a, b, c: a, (1, 2), (1, 2), (1, 2, 3))
    with pytest.raises(ValueError):
        jtu.tree_map(lambda a, b: a, (1, None), (3, 5))
    with pytest.raises(ValueError, match=r"key path \[1\]: Expected None"):
        tu.tree_map(lambda a, b: a, (1, None), (3, 5))


def test_registration_errors() -> None:
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Foo, _foo_flatten, _foo_unflatten)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))

    class NotADataclass:
        pass

    with pytest.raises(TypeError, match="required"):
        tu.register_dataclass(NotADataclass)

    @dataclasses.dataclass
    class D:
        x: int
        y: int

    with pytest.raises(TypeError, match="both"):
        tu.register_dataclass(D, data_fields=["x"])
    with pytest.raises(ValueError, match="Missing fields"):
        tu.register_dataclass(D, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match="Unexpected fields"):
        tu.register_dataclass(D, data_fields=["x", "y", "z"], meta_fields=[])
    with pytest.raises(ValueError, match="overlap"):
        tu.register_dataclass(D, data_fields=["x", "y"], meta_fields=["y"])


def test_cyclic_tree_is_reported() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(RecursionError, match="cycle"):
        tu.tree_flatten(cyclic)


# ---------------------------------------------------------------------------
# tree_map, broadcast_prefix, transpose, compose
# ---------------------------------------------------------------------------


def test_tree_map_matches_jax() -> None:
    tree = {"a": (1, [2, 3]), "b": Point(4, None), "c": DC(5, 6)}
    ours = tu.tree_map(lambda x: x * 10, tree)
    theirs = jtu.tree_map(lambda x: x * 10, tree)
    assert ours == theirs
    # The first tree is a prefix of the others.
    prefix = (1, 2)
    full = ((3, 4), [5])
    assert tu.tree_map(lambda a, b: (a, b), prefix, full) == jtu.tree_map(
        lambda a, b: (a, b), prefix, full
    )
    assert tu.tree_map(lambda a, b: (a, b), (1, None), (3, None)) == ((1, 3), None)
    assert tu.tree_map(lambda x: x, None) is None
    with_none = tu.tree_map(
        lambda x, y: (x, y), [None, 1], [2, 3], is_leaf=lambda x: x is None
    )
    assert with_none == [(None, 2), (1, 3)]


BROADCAST_CASES: list[tuple[Any, Any]] = [
    ((0, None), ((1, 2), 3)),
    ({"a": 0, "b": 1}, {"a": (1, 2), "b": None}),
    (0, [1, [2, 3]]),
    (None, [1, [2, 3]]),
    ([0, 1], [A, {"x": A, "y": (A, A)}]),
    (Point(0, None), Point((1, 2), {"z": 3})),
    ((0, 1, 2), (None, 1, [])),
]


@pytest.mark.parametrize(("prefix", "full"), BROADCAST_CASES)
def test_broadcast_prefix_matches_jax(prefix: Any, full: Any) -> None:
    ours = tu.broadcast_prefix(prefix, full)
    theirs = jax_broadcast_prefix(prefix, full, is_leaf=lambda x: x is None)
    assert ours == theirs
    assert len(ours) == tu.tree_structure(full).num_leaves


def test_broadcast_prefix_errors() -> None:
    with pytest.raises(ValueError, match=r"(?s)not a tree prefix.*PyTreeDef\(\(\*, \*\)\)"):
        tu.broadcast_prefix((0, 1), ((1, 2),))
    with pytest.raises(ValueError, match=r"Expected list"):
        tu.broadcast_prefix([0, 1], (1, 2))
    with pytest.raises(ValueError, match=r"key path \['b'\]"):
        tu.broadcast_prefix({"a": 0, "b": (0, 1)}, {"a": 1, "b": (1, 2, 3)})


def test_broadcast_prefix_is_leaf() -> None:
    out = tu.broadcast_prefix(([0, 1], 2), ([A, A, A], A), is_leaf=lambda x: isinstance(x, list))
    assert len(out) == 4 and out[0] == [0, 1] and out[3] == 2


def test_tree_transpose_matches_jax() -> None:
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure((0, 0))
    tree = [(1, 2), (3, 4)]
    expected = jtu.tree_transpose(jstructure([0, 0]), jstructure((0, 0)), tree)
    assert tu.tree_transpose(outer, inner, tree) == expected
    assert tu.tree_transpose(outer, None, tree) == expected
    with pytest.raises(TypeError, match="mismatch"):
        tu.tree_transpose(outer, inner, [(1, 2), (3,)])


def test_compose_matches_jax() -> None:
    pairs: list[tuple[Any, Any]] = [
        (Point(1, 2), (1, 2)),
        ({"a": 1, "b": [2, None]}, [1, {"c": 2}]),
        ((1, 2), None),
        (None, (1, 2)),
        (1, [1, 2]),
    ]
    for outer, inner in pairs:
        ours = tu.tree_structure(outer).compose(tu.tree_structure(inner))
        theirs = jstructure(outer).compose(jstructure(inner))
        assert str(ours) == str(theirs)
        assert ours.num_leaves == theirs.num_leaves
        assert ours.num_nodes == theirs.num_nodes


def test_register_dataclass_rebuilds() -> None:
    at = AT(1, (2, 3), mode="q")
    leaves, treedef = tu.tree_flatten(at)
    assert leaves == [1, 2, 3]
    rebuilt = treedef.unflatten([7, 8, 9])
    assert rebuilt == AT(7, (8, 9), mode="q")
    dc = DC(x=[1], y=None, op="mul")
    assert tu.tree_unflatten(*reversed(tu.tree_flatten(dc))) == dc
    assert tu.tree_structure(DC(1, 2, "add")) != tu.tree_structure(DC(1, 2, "mul"))


def test_register_dataclass_drop_fields() -> None:
    @dataclasses.dataclass
    class WithCache:
        x: Any
        cache: Any = None

    tu.register_dataclass(WithCache, drop_fields=["cache"])
    leaves, treedef = tu.tree_flatten(WithCache(1, cache="stale"))
    assert leaves == [1]
    assert treedef.unflatten([2]) == WithCache(2)


# ---------------------------------------------------------------------------
# Depth
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["list", "tuple", "dict", "namedtuple", "custom"])
def test_deep_trees(kind: str) -> None:
    depth = 5000
    tree: Any = 0
    for i in range(depth):
        if kind == "list":
            tree = [tree, i]
        elif kind == "tuple":
            tree = (i, tree)
        elif kind == "dict":
            tree = {"k": tree, "j": None}
        elif kind == "namedtuple":
            tree = Point(tree, i)
        else:
            tree = Foo(tree, i)
    leaves, treedef = tu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves)
    text = str(treedef)
    assert text.startswith("PyTreeDef(") and text.count("*") == len(leaves)
    other = tu.tree_structure(tree)
    assert other == treedef and hash(other) == hash(treedef)
    rebuilt = treedef.unflatten(leaves)
    assert tu.tree_structure(rebuilt) == treedef
    assert _leaves_equal(treedef.flatten_up_to(tree), leaves)
    assert sum(c.num_nodes for c in treedef.children()) == treedef.num_nodes - 1
    assert tu.tree_map(lambda x: x, tree) is not None
    assert len(tu.broadcast_prefix(0, tree)) == len(leaves)


def test_depth_1000_lists() -> None:
    tree: Any = 1
    for _ in range(1000):
        tree = [tree]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [1]
    assert treedef.num_nodes == 1001
    assert str(treedef) == "PyTreeDef(" + "[" * 1000 + "*" + "]" * 1000 + ")"


# ---------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------

_keys = st.text(alphabet="abcde", min_size=1, max_size=2)
_leaf_values = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=3))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=4).map(tuple),
        st.lists(children, max_size=4),
        st.dictionaries(_keys, children, max_size=4),
        st.builds(Point, children, children),
        st.dictionaries(_keys, children, max_size=3).map(
            lambda d: collections.OrderedDict(reversed(list(d.items())))
        ),
        st.builds(Foo, children, children, st.sampled_from(["p", "q"])),
        st.builds(DC, children, children, st.sampled_from(["add", "mul"])),
    )


_trees = st.recursive(st.one_of(_leaf_values, st.none()), _extend, max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(_trees)
def test_property_round_trip_and_matches_jax(tree: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(*reversed(tu.tree_flatten(tree)))
    assert tu.tree_structure(rebuilt) == treedef
    assert _leaves_equal(tu.tree_leaves(rebuilt), leaves)
    jleaves, jtreedef = jflatten(tree)
    assert _leaves_equal(leaves, jleaves)
    assert str(treedef) == str(jtreedef)
    assert treedef.num_nodes == jtreedef.num_nodes
    assert _leaves_equal(treedef.flatten_up_to(tree), leaves)
    renumbered = treedef.unflatten(range(treedef.num_leaves))
    assert tu.tree_leaves(renumbered) == list(range(treedef.num_leaves))


@settings(max_examples=200, deadline=None)
@given(_trees, _trees)
def test_property_equality_matches_jax(a: Any, b: Any) -> None:
    ours = tu.tree_structure(a) == tu.tree_structure(b)
    assert ours == (jstructure(a) == jstructure(b))
    if ours:
        assert hash(tu.tree_structure(a)) == hash(tu.tree_structure(b))
    # Replacing leaves never changes the structure.
    same = tu.tree_map(lambda _: 0, a)
    assert tu.tree_structure(same) == tu.tree_structure(a)
    assert hash(tu.tree_structure(same)) == hash(tu.tree_structure(a))


@settings(max_examples=200, deadline=None)
@given(_trees)
def test_property_is_leaf_matches_jax(tree: Any) -> None:
    def pred(x: Any) -> bool:
        return isinstance(x, list | Point)

    leaves, treedef = tu.tree_flatten(tree, is_leaf=pred)
    jleaves, jtreedef = jflatten(tree, is_leaf=pred)
    assert _leaves_equal(leaves, jleaves)
    assert str(treedef) == str(jtreedef)


def test_jax_is_the_reference_version() -> None:
    assert jax.__version__.startswith("0.10.")
