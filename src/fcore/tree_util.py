"""Pytrees: nested containers of leaves, flattened and rebuilt (docs/guide.md, "Pytrees"), as ``jax.tree_util``.

Every transformation in fcore takes and returns *pytrees*: arbitrarily nested tuples, lists,
dicts, ``None``, namedtuples, ``OrderedDict``/``defaultdict`` and user-registered node types,
whose non-node contents are *leaves*. A transformation flattens its inputs to a list of leaves
plus a :class:`PyTreeDef` (the structure, a hashable cache key), works on the leaves, and
rebuilds the outputs with ``PyTreeDef.unflatten``.

The work is done by jaxlib's C++ ``PyTreeRegistry`` and ``PyTreeDef`` (the machinery behind
``jax.tree_util``) on fcore's own registry (``fcore.backend.pytree``), so behaviour, printing
(``PyTreeDef((*, [*, *]))``) and error messages are JAX's:

* dicts flatten in sorted key order and unflatten to a dict with sorted keys;
* ``None`` is a node with no children (it holds zero leaves);
* namedtuples and ``OrderedDict`` print as ``CustomNode(...)``;
* ``PyTreeDef.flatten_up_to`` demands exact node types.

fcore adds key paths to structure-mismatch errors (``tree_map``, ``broadcast_prefix``) and
flattens trees deeper than Python's recursion limit (jaxlib's flattener recurses).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import sys
from collections.abc import Callable, Hashable, Iterable, Sequence, Sized
from typing import Any, Final, NoReturn, Protocol, Self, TypeVar, overload

import attrs

from fcore.backend import pytree as _cpp
from fcore.backend.pytree import DictKey as DictKey
from fcore.backend.pytree import FlattenedIndexKey as FlattenedIndexKey
from fcore.backend.pytree import GetAttrKey as GetAttrKey
from fcore.backend.pytree import PyTreeDef as PyTreeDef
from fcore.backend.pytree import SequenceKey as SequenceKey

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "broadcast_prefix",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

T = TypeVar("T")
L = TypeVar("L")  # a leaf, as ``tree_map``'s function takes and returns it
_AuxT = TypeVar("_AuxT", bound=Hashable)
_TypeT = TypeVar("_TypeT", bound=type[Any])

KeyEntry = DictKey | SequenceKey | GetAttrKey | FlattenedIndexKey | Any
"""One step of a key path (custom nodes may use keys of their own)."""
KeyPath = tuple[KeyEntry, ...]

#: fcore's registry of pytree node types (jaxlib's C++ registry; not JAX's instance).
default_registry: Final = _cpp.registry
_LEAF_TREEDEF: Final = default_registry.flatten(0)[1]

# jaxlib's flatteners, each called through a ``staticmethod`` object: CPython 3.11 checks the
# recursion limit around such a call (it has no vectorcall), which holds one level while the
# flattener runs. A flattener that fails at the recursion limit leaks the rest of the budget
# (see ``fcore.backend.pytree``); the held level, given back when the call returns, is what
# lets the ``except`` clause raise the limit (``sys`` builtins, inline) before ``_recover``.
_flatten: Final = staticmethod(default_registry.flatten)
_flatten_with_path: Final = staticmethod(default_registry.flatten_with_path)
_flatten_none_leaf: Final = staticmethod(_cpp.none_leaf_registry.flatten)

#: Recursion levels lent while recovering from a failed C++ flatten.
_ROOM: Final = 1000


def _recover(
    reg: _cpp.PyTreeRegistry, tree: Any, predicate: Any, error: Exception, limit: int, with_path: bool = False
) -> tuple[list[Any], PyTreeDef]:
    """Finish a flatten that jaxlib gave up on with ``error``: re-raise a user's error; after the
    recursion limit, give back the leaked levels and flatten iteratively. The caller raised the
    recursion limit from ``limit``; it is restored here."""
    try:
        if not _cpp.is_recursion_error(error):
            raise error
        _cpp.release_leaked_recursion()
        return _cpp.flatten_deep(reg, tree, predicate, with_path)
    finally:
        sys.setrecursionlimit(limit)


# ---------------------------------------------------------------------------
# Flattening and rebuilding
# ---------------------------------------------------------------------------


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], PyTreeDef]:
    """Flatten ``tree`` into its leaves (left to right) and its structure.

    ``is_leaf`` is tried on every subtree before anything else; when it returns ``True`` the
    subtree is a leaf, even if it is ``None`` or a node.
    """
    try:
        return _flatten(tree, is_leaf)
    except Exception as e:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _ROOM)  # builtins only: see _flatten
        return _recover(default_registry, tree, is_leaf, e, limit)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in flatten order."""
    try:
        return _flatten(tree, is_leaf)[0]
    except Exception as e:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _ROOM)  # builtins only: see _flatten
        return _recover(default_registry, tree, is_leaf, e, limit)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``."""
    try:
        return _flatten(tree, is_leaf)[1]
    except Exception as e:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _ROOM)  # builtins only: see _flatten
        return _recover(default_registry, tree, is_leaf, e, limit)[1]


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from its structure and leaves (inverse of tree_flatten)."""
    try:
        return treedef.unflatten(leaves)
    except ValueError:
        if isinstance(leaves, Sized) and len(leaves) != treedef.num_leaves:
            which = "few" if len(leaves) < treedef.num_leaves else "many"
            raise ValueError(
                f"Too {which} leaves for {treedef}; expected {treedef.num_leaves}, got {len(leaves)}."
            ) from None
        raise


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is a single node (a leaf, ``None`` or an empty container), as JAX."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root's immediate children (``[]`` for a leaf)."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``."""
    return _cpp.treedef_tuple(default_registry, list(treedefs))


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are pytree nodes (built in, registered, or namedtuples)."""
    return default_registry.is_node(typ)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """``(children, node data)`` of the node ``tree``; ``ValueError`` for a leaf."""
    out = default_registry.flatten_one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """``([(key, child)], node data)`` of the node ``tree``; ``ValueError`` for a leaf."""
    out = _cpp.flatten_one_level_with_keys(default_registry, tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element of ``iterable`` is a leaf (``None`` and containers are not)."""
    if is_leaf is None:
        return _cpp.all_leaves(default_registry, iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(leaves, items))


# ---------------------------------------------------------------------------
# Structure mismatches, located by key path
# ---------------------------------------------------------------------------


def _locate_mismatch(treedef: PyTreeDef, tree: Any) -> tuple[KeyPath, str] | None:
    """The first node (pre-order) where ``tree`` departs from ``treedef``, and jaxlib's reason."""
    stack: list[tuple[KeyPath, PyTreeDef, Any]] = [((), treedef, tree)]
    while stack:
        path, node, x = stack.pop()
        data = node.node_data()
        if data is None:  # a leaf of the prefix covers any subtree
            continue
        children = node.children()
        shallow = PyTreeDef.from_node_data_and_children(default_registry, data, [_LEAF_TREEDEF] * len(children))
        try:
            subtrees = shallow.flatten_up_to(x)
        except ValueError as e:
            return path, str(e)
        keyed = _cpp.flatten_one_level_with_keys(default_registry, x)
        keys = [k for k, _ in keyed[0]] if keyed is not None else [FlattenedIndexKey(i) for i in range(len(children))]
        stack.extend(reversed([(path + (k,), c, s) for k, c, s in zip(keys, children, subtrees)]))
    return None


def _mismatch(treedef: PyTreeDef, tree: Any, error: ValueError) -> str:
    """Why ``tree`` does not have the structure ``treedef`` (up to its leaves), naming the key path."""
    found = _locate_mismatch(treedef, tree)
    if found is None:
        return str(error)
    path, reason = found
    where = f"key path {keystr(path)}" if path else "the root"
    return f"Tree structure mismatch at {where}: {reason} The tree must have the structure {treedef} (up to its leaves)."


def _structure_str(tree: Any) -> str:
    """``str(tree_structure(tree))`` for error messages, never raising."""
    try:
        return str(tree_structure(tree))
    except Exception:
        return f"<unflattenable: {type(tree).__name__}>"


def _map_mismatch(name: str, treedef: PyTreeDef, rest: Sequence[Any]) -> NoReturn:
    """Raise ``name``'s error for the first tree of ``rest`` that ``treedef`` is no prefix of."""
    for i, other in enumerate(rest, start=2):
        try:
            treedef.flatten_up_to(other)
        except ValueError as e:
            raise ValueError(
                f"{name}: tree {i} does not match the structure of tree 1 "
                "(tree 1 must be a prefix of every other tree).\n"
                f"  tree 1 structure: {treedef}\n"
                f"  tree {i} structure: {_structure_str(other)}\n"
                f"{_mismatch(treedef, other, e)}"
            ) from None
    raise AssertionError("flatten_up_to failed once but not twice")  # pragma: no cover


# ---------------------------------------------------------------------------
# Mapping and reducing
# ---------------------------------------------------------------------------


@overload  # ``f`` keeps its argument's type (arrays to arrays): the result has the tree's type
def tree_map(f: Callable[[L], L], tree: T, /, *, is_leaf: Callable[[Any], bool] | None = None) -> T: ...


@overload
def tree_map(f: Callable[[L, L], L], tree: T, other: T, /, *, is_leaf: Callable[[Any], bool] | None = None) -> T: ...


@overload
def tree_map(f: Callable[..., Any], tree: Any, /, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any: ...


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; ``tree``'s structure must be a prefix of each of ``rest``.

    As in JAX, a leaf of ``tree`` pairs with the whole corresponding subtree of each tree in ``rest``.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten(list(map(f, leaves)))
    try:
        others = [treedef.flatten_up_to(r) for r in rest]
    except ValueError:
        _map_mismatch("tree_map", treedef, rest)
    return treedef.unflatten(list(map(f, leaves, *others)))


class _Unspecified:
    """The type of the "no initializer" default (``None`` is a valid initializer)."""


_UNSPECIFIED: Final = _Unspecified()


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: T | _Unspecified = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """``functools.reduce`` over the leaves of ``tree`` (as JAX)."""
    leaves = tree_leaves(tree, is_leaf)
    if isinstance(initializer, _Unspecified):
        result: T = functools.reduce(function, leaves)
        return result
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(
    operation: Callable[[T, T], T],
    tree: Any,
    *,
    identity: T | _Unspecified = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Reduce the leaves with an associative ``operation`` as a balanced tree (as JAX)."""
    leaves: list[T] = tree_leaves(tree, is_leaf)
    if not leaves:
        if isinstance(identity, _Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(lo: int, hi: int) -> T:
        if hi - lo == 1:
            return leaves[lo]
        mid = lo + (hi - lo) // 2
        return operation(reduce(lo, mid), reduce(mid, hi))

    return reduce(0, len(leaves))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of ``tree`` is truthy."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any) -> Any:
    """Turn an outer-of-inner pytree into an inner-of-outer one (as JAX)."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"tree_transpose: structure mismatch\n{treedef}\n != \n{expected}")
    columns = [outer_treedef.unflatten(flat[i::inner_size]) for i in range(inner_size)]
    return inner_treedef.unflatten(columns)


# ---------------------------------------------------------------------------
# Prefix trees
# ---------------------------------------------------------------------------


def _broadcast(
    prefix_leaves: list[Any], prefix_def: PyTreeDef, full_tree: Any, name: str
) -> list[Any]:
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(
            f"{name}: the prefix tree is not a tree prefix of the full tree.\n"
            f"  prefix structure: {prefix_def}\n"
            f"  full structure:   {_structure_str(full_tree)}\n"
            f"{_mismatch(prefix_def, full_tree, e)}"
        ) from None
    result: list[Any] = []
    for leaf, subtree in zip(prefix_leaves, subtrees):
        result.extend([leaf] * tree_structure(subtree).num_leaves)
    return result


def broadcast_prefix(prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """For each leaf of ``full_tree``, the leaf of ``prefix_tree`` that covers it.

    ``None`` in ``prefix_tree`` counts as a leaf (so ``in_axes=None`` covers a whole subtree);
    ``is_leaf`` applies to ``prefix_tree`` only, as in JAX. Leaves of ``full_tree`` are counted
    plainly (``None`` there holds none).
    """
    if is_leaf is None:
        try:
            prefix_leaves, prefix_def = _flatten_none_leaf(prefix_tree, None)
        except Exception as e:
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(limit + _ROOM)  # builtins only: see _flatten
            prefix_leaves, prefix_def = _recover(_cpp.none_leaf_registry, prefix_tree, None, e, limit)
    else:
        user_is_leaf = is_leaf
        prefix_leaves, prefix_def = tree_flatten(prefix_tree, lambda x: x is None or user_is_leaf(x))
    return _broadcast(prefix_leaves, prefix_def, full_tree, "broadcast_prefix")


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``full_tree``'s structure with each leaf replaced by the ``prefix_tree`` leaf covering it (as JAX)."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    leaves = _broadcast(prefix_leaves, prefix_def, full_tree, "tree_broadcast")
    return tree_structure(full_tree).unflatten(leaves)


# ---------------------------------------------------------------------------
# Key paths: where a leaf sits in its tree
# ---------------------------------------------------------------------------


def _simple_key(key: KeyEntry) -> str:
    match key:
        case SequenceKey(idx=k) | DictKey(key=k) | GetAttrKey(name=k) | FlattenedIndexKey(key=k):
            return str(k)
        case _:
            return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['a'][0].x`` (``simple=True``: ``a0x``, joined by ``separator``)."""
    return separator.join(map(_simple_key if simple else str, keys))


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``tree_flatten`` that also says where each leaf is: ``([(key path, leaf)], treedef)``.

    ``is_leaf`` is called as ``is_leaf(x)``, or ``is_leaf(path, x)`` with ``is_leaf_takes_path``.
    """
    predicate = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        leaf_only = is_leaf

        def predicate(_: KeyPath, x: Any) -> bool:
            return leaf_only(x)

    try:
        return _flatten_with_path(tree, predicate)
    except Exception as e:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _ROOM)  # builtins only: see _flatten
        return _recover(default_registry, tree, predicate, e, limit, with_path=True)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """``[(key path, leaf)]`` in flatten order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """``tree_map`` whose ``f`` also receives each leaf's key path: ``f(path, x, *xs)``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    try:
        others = [treedef.flatten_up_to(r) for r in rest]
    except ValueError:
        _map_mismatch("tree_map_with_path", treedef, rest)
    return treedef.unflatten([f(path, x, *xs) for (path, x), *xs in zip(pairs, *others)])


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], _AuxT]],
    unflatten_func: Callable[[_AuxT, tuple[Any, ...]], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], _AuxT]] | None = None,
) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x)`` returns ``(children, aux)``; ``aux`` is static data compared with ``==``
    in treedef equality (it should be hashable: treedefs serve as cache keys).
    ``unflatten_func(aux, children)`` rebuilds the node from a tuple of children.
    ``flatten_with_keys_func`` (optional) returns ``([(key, child)], aux)`` for key paths.
    Registering a type twice is a ``ValueError``.
    """
    _cpp.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], _AuxT]],
    unflatten_func: Callable[[_AuxT, tuple[Any, ...]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], _AuxT]] | None = None,
) -> None:
    """``register_pytree_node`` whose children carry keys for key paths (as JAX).

    ``flatten_func`` (children without keys, for speed) is derived from ``flatten_with_keys``
    when not given.
    """
    if flatten_func is None:
        keyed = flatten_with_keys

        def flatten_func(x: T) -> tuple[list[Any], _AuxT]:
            pairs, aux = keyed(x)
            return [c for _, c in pairs], aux

    _cpp.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


class _NodeClass(Protocol):
    """A class usable with :func:`register_pytree_node_class`."""

    def tree_flatten(self) -> tuple[Iterable[Any], Any]: ...

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> Self: ...


class _KeyedNodeClass(Protocol):
    """A class usable with :func:`register_pytree_with_keys_class`."""

    def tree_flatten_with_keys(self) -> tuple[Iterable[tuple[KeyEntry, Any]], Any]: ...

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> Self: ...


_NodeClassT = TypeVar("_NodeClassT", bound=_NodeClass)
_KeyedNodeClassT = TypeVar("_KeyedNodeClassT", bound=_KeyedNodeClass)


def register_pytree_node_class(cls: type[_NodeClassT]) -> type[_NodeClassT]:
    """Class decorator: register ``cls`` via its ``tree_flatten``/``tree_unflatten``."""
    _cpp.register_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type[_KeyedNodeClassT]) -> type[_KeyedNodeClassT]:
    """Class decorator: register ``cls`` via ``tree_flatten_with_keys`` (and ``tree_flatten``
    when it has one) and ``tree_unflatten``."""
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten)
    return cls


def _no_children(x: _AuxT) -> tuple[tuple[()], _AuxT]:
    return (), x


def _itself(x: _AuxT, _: tuple[Any, ...]) -> _AuxT:
    return x


def register_static(cls: type[_AuxT]) -> type[_AuxT]:
    """Register ``cls`` as a node without leaves: an instance is static data of its treedef
    (so ``jit`` keys its cache on it). Instances must be hashable."""
    register_pytree_with_keys(cls, _no_children, _itself)
    return cls


def register_dataclass(
    nodetype: _TypeT,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> _TypeT:
    """Register a dataclass or attrs class as a node, its fields as children.

    ``data_fields`` become children (traced); ``meta_fields`` become the aux data (static, part
    of the treedef). When both are ``None`` they are inferred from the ``dataclasses`` or
    ``attrs`` fields with ``init=True`` (minus ``drop_fields``): fields with
    ``metadata={"static": True}`` are meta, the rest data. Rebuilding calls
    ``nodetype(**fields)``, so frozen classes work. Returns ``nodetype``, so it can be used as a
    decorator.
    """
    if (data_fields is None) != (meta_fields is None):
        raise TypeError(
            "register_dataclass: data_fields and meta_fields must both be specified "
            f"when either is specified. Got {data_fields=} {meta_fields=}."
        )
    # (attribute name, __init__ keyword, init, static) for each declared field.
    declared: list[tuple[str, str, bool, bool]] | None
    if attrs.has(nodetype):
        declared = [
            (a.name, a.alias or a.name, a.init, bool(a.metadata.get("static", False)))
            for a in attrs.fields(nodetype)
        ]
    elif dataclasses.is_dataclass(nodetype):
        declared = [
            (f.name, f.name, f.init, bool(f.metadata.get("static", False))) for f in dataclasses.fields(nodetype)
        ]
    else:
        declared = None

    if data_fields is None or meta_fields is None:
        if declared is None:
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when "
                f"nodetype is not a dataclass or attrs class. Got {nodetype=}."
            )
        dropped = set(drop_fields)
        kept = [d for d in declared if d[2] and d[0] not in dropped]
        data_names = tuple(d[0] for d in kept if not d[3])
        meta_names = tuple(d[0] for d in kept if d[3])
    else:
        data_names = tuple(data_fields)
        meta_names = tuple(meta_fields)

    alias: dict[str, str] = {}
    if declared is not None:
        init_fields = {d[0] for d in declared if d[2]} - set(drop_fields)
        listed = {*data_names, *meta_names}
        if listed != init_fields:
            msg = "data_fields and meta_fields must include all fields with ``init=True`` and only them."
            if missing := init_fields - listed:
                msg += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
            if unexpected := listed - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
        alias = {d[0]: d[1] for d in declared if d[1] != d[0]}
    if overlap := set(data_names) & set(meta_names):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.")

    if not any(n in alias for n in (*data_names, *meta_names)):
        # Keywords are the attribute names: jaxlib flattens and rebuilds in C++.
        _cpp.register_dataclass_node(nodetype, data_names, meta_names)
        return nodetype
    _register_aliased(nodetype, data_names, meta_names, alias)
    return nodetype


def _register_aliased(
    nodetype: type[Any], data_names: tuple[str, ...], meta_names: tuple[str, ...], alias: dict[str, str]
) -> None:
    """An attrs class whose ``__init__`` keywords differ from its attribute names (``_x`` takes ``x``)."""
    data_kw = tuple(alias.get(n, n) for n in data_names)
    meta_kw = tuple(alias.get(n, n) for n in meta_names)
    data_keys = tuple(GetAttrKey(n) for n in data_names)

    def flatten(x: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return tuple([getattr(x, n) for n in data_names]), tuple([getattr(x, n) for n in meta_names])

    def unflatten(meta: tuple[Any, ...], data: tuple[Any, ...]) -> Any:
        kwargs = dict(zip(meta_kw, meta))
        kwargs.update(zip(data_kw, data))
        return nodetype(**kwargs)

    def flatten_with_keys(x: Any) -> tuple[list[tuple[KeyEntry, Any]], tuple[Any, ...]]:
        return (
            [(k, getattr(x, n)) for k, n in zip(data_keys, data_names)],
            tuple([getattr(x, n) for n in meta_names]),
        )

    _cpp.register_node(nodetype, flatten, unflatten, flatten_with_keys)


# ---------------------------------------------------------------------------
# OrderedDict, defaultdict and Partial, registered as JAX registers them
# ---------------------------------------------------------------------------


def _ordereddict_with_keys(d: collections.OrderedDict[Any, Any]) -> tuple[tuple[tuple[DictKey, Any], ...], tuple[Any, ...]]:
    return tuple([(DictKey(k), v) for k, v in d.items()]), tuple(d)


def _ordereddict(d: collections.OrderedDict[Any, Any]) -> tuple[list[Any], tuple[Any, ...]]:
    return list(d.values()), tuple(d)


def _unflatten_ordereddict(keys: tuple[Any, ...], values: tuple[Any, ...]) -> collections.OrderedDict[Any, Any]:
    return collections.OrderedDict(zip(keys, values, strict=True))


_DefaultdictAux = tuple[Callable[[], Any] | None, tuple[Any, ...]]


def _defaultdict_with_keys(d: collections.defaultdict[Any, Any]) -> tuple[tuple[tuple[DictKey, Any], ...], _DefaultdictAux]:
    keys = tuple(sorted(d))
    return tuple([(DictKey(k), d[k]) for k in keys]), (d.default_factory, keys)


def _defaultdict(d: collections.defaultdict[Any, Any]) -> tuple[tuple[Any, ...], _DefaultdictAux]:
    keys = tuple(sorted(d))
    return tuple([d[k] for k in keys]), (d.default_factory, keys)


def _unflatten_defaultdict(aux: _DefaultdictAux, values: tuple[Any, ...]) -> collections.defaultdict[Any, Any]:
    return collections.defaultdict(aux[0], zip(aux[1], values, strict=True))


register_pytree_with_keys(collections.OrderedDict, _ordereddict_with_keys, _unflatten_ordereddict, _ordereddict)
register_pytree_with_keys(collections.defaultdict, _defaultdict_with_keys, _unflatten_defaultdict, _defaultdict)


class _HashableCallableShim:
    """Calls, hashes and compares as the ``functools.partial`` it wraps, without being one:
    ``Partial(p, ...)`` of a partial ``p`` keeps ``p``'s arguments out of the pytree."""

    def __init__(self, fun: functools.partial[Any]) -> None:
        self.fun = fun
        self.func = fun.func
        self.args = fun.args
        self.keywords = fun.keywords

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.fun(*args, **kw)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return bool(self.fun == other.fun)
        return bool(self.fun == other)

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial[Any]):
    """A ``functools.partial`` that is a pytree (as ``jax.tree_util.Partial``): the bound
    arguments are its leaves, the function is static (aux data), so it can be passed through
    ``jit`` and the other transformations."""

    def __new__(cls, func: Callable[..., Any], /, *args: Any, **kw: Any) -> Self:
        # functools.partial merges a partial ``func`` into the new one; the shim keeps exactly
        # this Partial's own arguments as its children.
        if isinstance(func, functools.partial):
            return super().__new__(cls, _HashableCallableShim(func), *args, **kw)
        return super().__new__(cls, func, *args, **kw)


def _flatten_partial(p: Partial) -> tuple[tuple[tuple[Any, ...], dict[str, Any]], Callable[..., Any]]:
    return (p.args, p.keywords), p.func


def _unflatten_partial(func: Callable[..., Any], children: tuple[Any, ...]) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _flatten_partial, _unflatten_partial)
