"""The whole ``jax.tree_util`` / ``jax.tree`` surface of fcore, differentially against JAX.

Covers the names beyond tree_flatten/tree_map (``Partial``, ``register_static``,
``register_pytree_with_keys_class``, ``flatten_one_level``, ``treedef_tuple``,
``tree_broadcast``, ``tree_reduce_associative``, ``fcore.tree``), the edge cases where
pytree libraries usually differ (``None``, namedtuples, ``OrderedDict``, ``defaultdict``, dict
key sorting, ``is_leaf``, wrong leaf counts), and fcore's iterative fallback for trees deeper
than the recursion limit, which must build exactly the treedef jaxlib builds.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import pickle
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.tree_util as jtu
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore import tree_util as ftu
from fcore.backend import pytree as cpp


def _public(module: Any) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_")}


def test_every_public_name_of_jax_tree_util_and_jax_tree() -> None:
    assert _public(jtu) <= _public(ftu)
    assert _public(jax.tree) <= _public(fcore.tree)
    assert fcore.tree.map is ftu.tree_map and fcore.tree.flatten is ftu.tree_flatten


def test_treedefs_are_jaxlibs_on_fcores_own_registry() -> None:
    assert ftu.PyTreeDef is type(jtu.tree_structure(0))
    assert ftu.default_registry is not jtu.default_registry

    class OnlyFcore:
        pass

    ftu.register_pytree_node(OnlyFcore, lambda o: ((), None), lambda _, c: OnlyFcore())
    assert ftu.is_tree_node(OnlyFcore) and not jtu.is_tree_node(OnlyFcore)
    assert ftu.tree_leaves(OnlyFcore()) == [] and len(jtu.tree_leaves(OnlyFcore())) == 1


class Pt(NamedTuple):
    x: Any
    y: Any


@dataclasses.dataclass(frozen=True)
class Layer:
    w: Any
    b: Any
    act: str = fcore.tree.static(default="relu")


ftu.register_dataclass(Layer)
jtu.register_dataclass(Layer)

EDGE_TREES: list[Any] = [
    None,
    [None, (None,)],
    {"a": None},
    Pt(None, [1]),
    Pt(Pt(1, 2), ()),
    collections.OrderedDict([("z", 1), ("a", None)]),
    collections.defaultdict(int, {"b": [1], "a": 2}),
    {1: "int", 2.5: "float", -3: "negative"},  # mixed numeric keys sort together
    {(1, "a"): 1, (0, "b"): 2},
    {False: 0, True: 1},
    [Layer(1, (2, 3)), Layer(None, [], act="tanh")],
    np.arange(3),
    "a string is a leaf",
    (1, [2, {"k": (3, None)}], Pt([4], {"j": 5})),
]


@pytest.mark.parametrize("tree", EDGE_TREES, ids=[f"{i}-{type(t).__name__}" for i, t in enumerate(EDGE_TREES)])
def test_edge_cases_match_jax(tree: Any) -> None:
    leaves, treedef = ftu.tree_flatten(tree)
    jleaves, jtreedef = jtu.tree_flatten(tree)
    assert len(leaves) == len(jleaves) and all(a is b for a, b in zip(leaves, jleaves))
    assert str(treedef) == str(jtreedef)
    assert treedef.node_data() == jtreedef.node_data()
    assert [str(c) for c in ftu.treedef_children(treedef)] == [str(c) for c in jtu.treedef_children(jtreedef)]
    fresh = list(range(len(leaves)))
    assert ftu.tree_leaves(ftu.tree_unflatten(treedef, fresh)) == jtu.tree_leaves(jtu.tree_unflatten(jtreedef, fresh))
    paths = [(ftu.keystr(p), x) for p, x in ftu.tree_leaves_with_path(tree)]
    assert paths == [(jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(tree)]


def test_unsortable_dict_keys_match_jax() -> None:
    for tree in ({1: 2, "a": 3}, [{"a": 1, None: 2}]):
        with pytest.raises(ValueError) as ours:
            ftu.tree_flatten(tree)
        with pytest.raises(ValueError) as theirs:
            jtu.tree_flatten(tree)
        assert str(ours.value) == str(theirs.value)


def test_wrong_leaf_counts_are_value_errors_as_in_jax() -> None:
    for tree, leaves in [((1, 2), [1]), ((1, 2), [1, 2, 3]), ([], [0]), (Pt(1, None), [])]:
        with pytest.raises(ValueError):
            jtu.tree_unflatten(jtu.tree_structure(tree), leaves)
        with pytest.raises(ValueError, match=rf"expected {len(jtu.tree_leaves(tree))}, got {len(leaves)}"):
            ftu.tree_unflatten(ftu.tree_structure(tree), leaves)


def test_is_leaf_everywhere_matches_jax() -> None:
    tree = {"a": [1, (2, 3)], "b": Pt(None, [4])}
    preds: list[Callable[[Any], bool]] = [lambda x: isinstance(x, tuple), lambda x: x is None, lambda x: isinstance(x, list)]
    for pred in preds:
        assert str(ftu.tree_structure(tree, is_leaf=pred)) == str(jtu.tree_structure(tree, is_leaf=pred))
        assert fcore.tree.map(repr, tree, is_leaf=pred) == jax.tree.map(repr, tree, is_leaf=pred)
        assert ftu.all_leaves([tree], is_leaf=pred) == jtu.all_leaves([tree], is_leaf=pred)
        assert fcore.tree.reduce(lambda a, b: a + 1, tree, 0, is_leaf=pred) == jax.tree.reduce(
            lambda a, b: a + 1, tree, 0, is_leaf=pred
        )


def test_flatten_one_level_matches_jax() -> None:
    for node in ({"b": 1, "a": 2}, (1, 2), [3], None, collections.OrderedDict(b=1), Layer(1, 2)):
        assert ftu.flatten_one_level(node) == jtu.flatten_one_level(node)
        assert ftu.flatten_one_level_with_keys(node) == jtu.flatten_one_level_with_keys(node)
    for leaf in (1, "s", np.ones(2)):
        with pytest.raises(ValueError, match="can't tree-flatten"):
            ftu.flatten_one_level(leaf)
        with pytest.raises(ValueError, match="can't tree-flatten"):
            ftu.flatten_one_level_with_keys(leaf)
    # Namedtuple fields are named by their own names (jaxlib 0.10.2 repeats the first name).
    keyed, data = ftu.flatten_one_level_with_keys(Pt(1, 2))
    assert list(keyed) == [(ftu.GetAttrKey("x"), 1), (ftu.GetAttrKey("y"), 2)] and data is Pt


def test_is_tree_node_matches_jax() -> None:
    for typ in (tuple, list, dict, type(None), Pt, collections.OrderedDict, collections.defaultdict, Layer, int, str):
        assert ftu.is_tree_node(typ) == jtu.is_tree_node(typ), typ
    assert ftu.is_tree_node(ftu.Partial) and jtu.is_tree_node(jtu.Partial)
    assert not ftu.is_tree_node(np.ndarray)


def test_treedef_tuple_and_children_match_jax() -> None:
    parts: list[Any] = [[1, 2], {"a": 3}, None, Pt(1, 2)]
    ours = ftu.treedef_tuple(ftu.tree_structure(p) for p in parts)
    theirs = jtu.treedef_tuple([jtu.tree_structure(p) for p in parts])
    assert str(ours) == str(theirs)
    assert ours == ftu.tree_structure(tuple(parts))
    assert ftu.treedef_children(ours) == [ftu.tree_structure(p) for p in parts]


def test_tree_reduce_associative_matches_jax() -> None:
    pair: Callable[[Any, Any], Any] = lambda a, b: (a, b)  # noqa: E731
    for tree in ([1], [1, 2], list(range(7)), {"a": 1, "b": [2, 3]}):
        assert ftu.tree_reduce_associative(pair, tree) == jtu.tree_reduce_associative(pair, tree)
        assert fcore.tree.reduce_associative(operator.add, tree) == jax.tree.reduce_associative(operator.add, tree)
    assert ftu.tree_reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        ftu.tree_reduce_associative(operator.add, [])


BROADCASTS: list[tuple[Any, Any]] = [
    (0, [1, (2, 3)]),
    ((0, 1), ((1, 2), {"a": 3, "b": None})),
    ({"a": 0}, {"a": Pt(1, [2])}),
    ((0, None), ((1, 2), None)),
    ([Layer(0, 1)], [Layer((1, 2), [3])]),
]


@pytest.mark.parametrize(("prefix", "full"), BROADCASTS)
def test_tree_broadcast_matches_jax(prefix: Any, full: Any) -> None:
    assert ftu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    assert fcore.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)


def test_tree_broadcast_errors_and_is_leaf() -> None:
    for prefix, full in [([0, 1], (1, 2)), ((0, 1), (1, 2, 3)), ((None, 0), (1, 2))]:
        with pytest.raises(ValueError):
            jtu.tree_broadcast(prefix, full)
        with pytest.raises(ValueError, match="not a tree prefix"):
            ftu.tree_broadcast(prefix, full)
    is_list: Callable[[Any], bool] = lambda x: isinstance(x, list)  # noqa: E731
    assert ftu.tree_broadcast(([0], 1), ((1, 2), 3), is_leaf=is_list) == jtu.tree_broadcast(
        ([0], 1), ((1, 2), 3), is_leaf=is_list
    )


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def test_register_static_matches_jax() -> None:
    class Mode(str):
        pass

    ftu.register_static(Mode)
    jtu.register_static(Mode)
    tree = {"x": 1.0, "mode": Mode("add")}
    assert ftu.tree_leaves(tree) == jtu.tree_leaves(tree) == [1.0]
    assert str(ftu.tree_structure(tree)) == str(jtu.tree_structure(tree))
    assert ftu.tree_structure(tree) != ftu.tree_structure({"x": 1.0, "mode": Mode("sub")})
    assert ftu.tree_unflatten(ftu.tree_structure(tree), [2.0])["mode"] == "add"

    @fcore.jit
    def f(t: dict[str, Any]) -> Any:
        return t["x"] + 1 if t["mode"] == "add" else t["x"] - 1

    assert float(f({"x": 1.0, "mode": Mode("add")})) == 2.0
    assert float(f({"x": 1.0, "mode": Mode("sub")})) == 0.0


def _make_keyed_class(tu: Any, with_plain_flatten: bool) -> type[Any]:
    class Keyed:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

        def tree_flatten_with_keys(self) -> tuple[tuple[tuple[Any, Any], ...], str]:
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), "meta"

        @classmethod
        def tree_unflatten(cls, aux: str, children: Any) -> Any:
            return cls(*children)

    if with_plain_flatten:

        def tree_flatten(self: Any) -> tuple[tuple[Any, Any], str]:
            return (self.a, self.b), "meta"

        setattr(Keyed, "tree_flatten", tree_flatten)
    return tu.register_pytree_with_keys_class(Keyed)  # type: ignore[no-any-return]


@pytest.mark.parametrize("with_plain_flatten", [False, True])
def test_register_pytree_with_keys_class_matches_jax(with_plain_flatten: bool) -> None:
    ours, theirs = _make_keyed_class(ftu, with_plain_flatten), _make_keyed_class(jtu, with_plain_flatten)
    f_tree, j_tree = ours([1, 2], {"k": 3}), theirs([1, 2], {"k": 3})
    assert [(ftu.keystr(p), x) for p, x in ftu.tree_leaves_with_path(f_tree)] == [
        (jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(j_tree)
    ]
    assert str(ftu.tree_structure(f_tree)).replace("Keyed", "K") == str(jtu.tree_structure(j_tree)).replace("Keyed", "K")
    assert ftu.tree_map(lambda x: x * 2, f_tree).b == {"k": 6}


def test_register_pytree_node_with_keys_func() -> None:
    class Two:
        def __init__(self, p: Any, q: Any) -> None:
            self.p, self.q = p, q

    for tu in (ftu, jtu):
        tu.register_pytree_node(
            Two,
            lambda t: ((t.p, t.q), None),
            lambda _, c: Two(*c),
            lambda t: (((tu.GetAttrKey("p"), t.p), (tu.GetAttrKey("q"), t.q)), None),
        )
    tree = [Two(1, (2, 3))]
    assert [ftu.keystr(p) for p, _ in ftu.tree_leaves_with_path(tree)] == [
        jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(tree)
    ] == ["[0].p", "[0].q[0]", "[0].q[1]"]


def test_tree_static_field() -> None:
    @dataclasses.dataclass
    class Documented:
        x: Any
        n: int = fcore.tree.static(default=3, metadata={"doc": "d"})

    n = dataclasses.fields(Documented)[1]
    assert n.metadata == {"static": True, "doc": "d"} and n.default == 3
    ftu.register_dataclass(Documented)
    assert str(ftu.tree_structure(Documented(1.0))) == "PyTreeDef(CustomNode(Documented[(3,)], [*]))"
    assert str(ftu.tree_structure(Layer(1, 2))) == str(jtu.tree_structure(Layer(1, 2)))
    assert ftu.tree_leaves(Layer(1, 2, act="gelu")) == [1, 2]


def test_treedef_pickles_by_reference_to_fcores_registry() -> None:
    for tree in (Layer(1, 2), collections.defaultdict(list, {"a": [1]}), [Pt(1, {"k": None})]):
        treedef = ftu.tree_structure(tree)
        restored = pickle.loads(pickle.dumps(treedef))
        assert restored == treedef and str(restored) == str(treedef)


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


def test_partial_matches_jax() -> None:
    def f(a: Any, b: Any, *, c: Any = 0) -> Any:
        return a * 100 + b * 10 + c

    jax_partial: Any = jtu.Partial  # untyped in jax
    for partial in (ftu.Partial, jax_partial):
        p = partial(f, 1, c=3)
        assert p(2) == 123
        leaves = jtu.tree_leaves(p) if partial is jax_partial else ftu.tree_leaves(p)
        assert leaves == [1, 3]
    assert str(ftu.tree_structure(ftu.Partial(f, 1, c=3))) == str(jtu.tree_structure(jax_partial(f, 1, c=3)))
    # A functools.partial as the function: its arguments stay out of the pytree.
    inner = functools.partial(f, 4)
    ours, theirs = ftu.Partial(inner, 5), jax_partial(inner, 5)
    assert ftu.tree_leaves(ours) == jtu.tree_leaves(theirs) == [5]
    assert ours() == theirs() == 450
    assert ftu.tree_unflatten(ftu.tree_structure(ours), [6])() == 460
    # Two Partials of the same function have equal structures (the function is aux data).
    assert ftu.tree_structure(ftu.Partial(f, 1)) == ftu.tree_structure(ftu.Partial(f, 2))
    assert ftu.tree_structure(ftu.Partial(inner, 1)) == ftu.tree_structure(ftu.Partial(inner, 2))


def test_partial_passes_through_transformations() -> None:
    add_one = ftu.Partial(fnp.add, 1.0)

    @fcore.jit
    def call(fun: Callable[..., Any], x: Any) -> Any:
        return fun(x)

    assert float(call(add_one, 2.0)) == 3.0
    assert float(call(ftu.Partial(fnp.multiply, 4.0), 2.0)) == 8.0
    assert float(fcore.grad(lambda p: p(2.0))(ftu.Partial(fnp.multiply, 3.0)).args[0]) == 2.0


# ---------------------------------------------------------------------------
# Trees deeper than the recursion limit
# ---------------------------------------------------------------------------


class Wrap:
    def __init__(self, inner: Any) -> None:
        self.inner = inner


ftu.register_pytree_node(Wrap, lambda w: ((w.inner,), "w"), lambda _, c: Wrap(c[0]))


def _headroom() -> int:
    """How many more nested Python calls this thread can make."""

    def down(k: int) -> int:
        try:
            return down(k + 1)
        except RecursionError:
            return k

    return down(0)


@pytest.mark.parametrize("kind", ["dict", "custom", "list", "ordereddict", "dataclass", "namedtuple"])
def test_deep_trees_flatten_and_keep_the_recursion_budget(kind: str) -> None:
    nest: Callable[[Any, int], Any] = {
        "dict": lambda t, i: {"k": t, "j": i},
        "custom": lambda t, i: Wrap([t, i]),
        "list": lambda t, i: [i, t],
        "ordereddict": lambda t, i: collections.OrderedDict(z=t, a=i),
        "dataclass": lambda t, i: Layer(t, i),
        "namedtuple": lambda t, i: Pt(t, i),
    }[kind]
    tree: Any = 0
    for i in range(sys.getrecursionlimit() + 500):
        tree = nest(tree, i)
    before = _headroom()
    leaves, treedef = ftu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves) and ftu.tree_structure(treedef.unflatten(leaves)) == treedef
    pairs, path_def = ftu.tree_flatten_with_path(tree)
    assert path_def == treedef and [x for _, x in pairs] == leaves
    assert len(ftu.broadcast_prefix(0, tree)) == len(leaves)
    # jaxlib leaks the recursion levels of a failed flatten; fcore gives them back.
    assert _headroom() >= before


def test_cyclic_containers_raise_recursion_error() -> None:
    cyclic: dict[str, Any] = {"b": 1}
    cyclic["a"] = cyclic
    before = _headroom()
    with pytest.raises(RecursionError, match="reference cycle"):
        ftu.tree_leaves(cyclic)
    assert _headroom() >= before


_keys = st.sampled_from(["a", "b", "c"])
_leaf = st.one_of(st.integers(-3, 3), st.none(), st.just("s"))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_keys, children, max_size=3),
        st.tuples(children, children).map(lambda t: Pt(*t)),
        st.tuples(children, children).map(lambda t: Layer(*t)),
        st.dictionaries(_keys, children, max_size=3).map(lambda d: collections.OrderedDict(reversed(d.items()))),
        children.map(Wrap),
        st.tuples(children, children).map(lambda t: ftu.Partial(print, *t)),
    )


@settings(max_examples=150, deadline=None)
@given(st.recursive(_leaf, _extend, max_leaves=15), st.booleans())
def test_property_iterative_flatten_builds_jaxlibs_treedef(tree: Any, with_path: bool) -> None:
    """The fallback for deep trees builds the same treedef (and leaves, and paths) as jaxlib."""
    reg = ftu.default_registry
    expected = reg.flatten_with_path(tree) if with_path else reg.flatten(tree)
    got = cpp.flatten_deep(reg, tree, None, with_path)
    assert got[1] == expected[1] and str(got[1]) == str(expected[1])
    assert got[0] == expected[0]
    is_tuple: Callable[..., bool] = (lambda p, x: isinstance(x, tuple)) if with_path else (lambda x: isinstance(x, tuple))
    expected = reg.flatten_with_path(tree, is_tuple) if with_path else reg.flatten(tree, is_tuple)
    got = cpp.flatten_deep(reg, tree, is_tuple, with_path)
    assert got[1] == expected[1] and got[0] == expected[0]
    none_leaf = cpp.none_leaf_registry
    assert cpp.flatten_deep(none_leaf, tree, None, False)[1] == none_leaf.flatten(tree)[1]
