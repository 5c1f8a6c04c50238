"""Pytrees: nested containers of leaves, flattened and rebuilt (SPEC §3.4).

Every transformation in fcore takes and returns *pytrees*: arbitrarily nested
tuples, lists, dicts, ``None``, namedtuples, ``OrderedDict``/``defaultdict``
and user-registered node types whose non-node contents are *leaves*.  A
transformation flattens its inputs to a flat list of leaves plus a
:class:`PyTreeDef` (the structure, a hashable cache key), works on the leaves,
and rebuilds the outputs with :meth:`PyTreeDef.unflatten`.

The behaviour, including ``str(treedef)``, deliberately matches
``jax.tree_util`` so that code, error messages and doctests carry over:

* dicts flatten in sorted key order and unflatten to a dict with sorted keys;
* ``None`` is a node with no children (it holds zero leaves);
* namedtuples and ``OrderedDict`` print as ``CustomNode(...)``, like JAX;
* :meth:`PyTreeDef.flatten_up_to` demands exact node types.

Design: a :class:`PyTreeDef` stores its nodes as one flat tuple in
post-order.  That makes equality a single tuple comparison, and lets
flattening, unflattening, printing and prefix matching all run as loops over
an explicit stack, so very deep trees cannot exhaust Python's recursion limit.

This is a leaf layer: it imports nothing else from fcore.  The only mutable
module state is the registry of custom node types (as in JAX).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Final, NamedTuple, NoReturn, Protocol, Self, TypeVar

import attrs

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
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "tree_all",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_is_leaf",
]

T = TypeVar("T")
_AuxT = TypeVar("_AuxT", bound=Hashable)

IsLeaf = Callable[[Any], bool] | None
"""Optional predicate: ``True`` stops flattening and makes the subtree a leaf."""

# Node kinds.  Plain ints: they are compared in the hot loops.
_LEAF: Final = 0
_NONE: Final = 1
_TUPLE: Final = 2
_LIST: Final = 3
_DICT: Final = 4
_NAMEDTUPLE: Final = 5
_CUSTOM: Final = 6

# One node of a PyTreeDef, in post-order:
#   (kind, node type, node data, arity, leaves in subtree, nodes in subtree)
# node data is the sorted key tuple for dicts and the aux data for custom
# nodes, None otherwise.  A leaf's "type" is ``object`` (a placeholder).
_Node = tuple[int, type[Any], Any, int, int, int]

_LEAF_NODE: Final[_Node] = (_LEAF, object, None, 0, 1, 1)
_NONE_NODE: Final[_Node] = (_NONE, type(None), None, 0, 0, 1)


class _Entry(NamedTuple):
    """A registered custom node type's flatten and unflatten functions.

    ``flatten_with_keys``, when given, returns ``((key, child), ...), aux``: the keys
    that name the children in key paths (``FlattenedIndexKey(i)`` otherwise).
    """

    flatten: Callable[[Any], tuple[Iterable[Any], Hashable]]
    unflatten: Callable[[Any, tuple[Any, ...]], Any]
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]] | None = None


# The registry of custom node types (private; see register_pytree_node).
_registry: dict[type[Any], _Entry] = {}
# Every type whose exact instances are nodes: the builtins plus the registry.
# (Namedtuples are recognised separately, being tuple subclasses.)  Kept in
# step with ``_registry``; one set lookup rejects most leaves quickly.
_node_types: set[type[Any]] = {tuple, list, dict, type(None)}


class PyTreeDef:
    """The structure of a pytree: immutable, hashable, compared structurally.

    Two treedefs are equal when they have the same node types, arities, dict
    keys and custom aux data.  The hash ignores custom aux data (as JAX does),
    so aux data need only support ``==``.
    """

    __slots__ = ("_nodes", "_hash")

    _nodes: tuple[_Node, ...]
    _hash: int

    def __init__(self) -> None:
        raise TypeError(
            "PyTreeDef cannot be constructed directly; use tree_flatten or tree_structure"
        )

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"PyTreeDef is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"PyTreeDef is immutable; cannot delete {name!r}")

    def __reduce__(self) -> tuple[Callable[[tuple[_Node, ...]], PyTreeDef], tuple[Any, ...]]:
        return (_make_treedef, (self._nodes,))

    # -- sizes ---------------------------------------------------------------

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        return self._nodes[-1][4]

    @property
    def num_nodes(self) -> int:
        """Number of nodes (leaves included) in the structure."""
        return self._nodes[-1][5]

    # -- structure queries -----------------------------------------------------

    def children(self) -> list[PyTreeDef]:
        """The treedefs of the root's immediate children (``[]`` for a leaf)."""
        nodes = self._nodes
        arity = nodes[-1][3]
        out: list[PyTreeDef] = []
        end = len(nodes) - 1  # exclusive end of the next child, from the right
        for _ in range(arity):
            size = nodes[end - 1][5]
            out.append(_make_treedef(nodes[end - size : end]))
            end -= size
        out.reverse()
        return out

    def node_data(self) -> tuple[type[Any], Any] | None:
        """``(node type, node data)`` of the root, or ``None`` for a leaf (as JAX)."""
        kind, typ, data, _, _, _ = self._nodes[-1]
        if kind == _LEAF:
            return None
        if kind == _DICT:
            return (typ, list(data))
        return (typ, data)

    # -- rebuilding --------------------------------------------------------------

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Rebuild a pytree of this structure from ``leaves`` (in flatten order)."""
        nodes = self._nodes
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        root = nodes[-1]
        expected = root[4]
        got = len(leaves)
        if got != expected:
            which = "few" if got < expected else "many"
            raise ValueError(
                f"Too {which} leaves for {self}; expected {expected}, got {got}."
            )
        nnodes = len(nodes)
        if nnodes == expected + 1:
            # Fast path: a container whose children are all leaves.
            kind = root[0]
            if kind == _TUPLE:
                return tuple(leaves)
            if kind == _LIST:
                return list(leaves)
            if kind == _DICT:
                return dict(zip(root[2], leaves))
        elif nnodes == 1 and expected == 1:
            return leaves[0]
        agenda: list[Any] = []
        registry = _registry
        i = 0
        for kind, typ, data, arity, _, _ in nodes:
            if kind == _LEAF:
                agenda.append(leaves[i])
                i += 1
            elif kind == _NONE:
                agenda.append(None)
            else:
                if arity:
                    children = agenda[-arity:]
                    del agenda[-arity:]
                else:
                    children = []
                if kind == _TUPLE:
                    agenda.append(tuple(children))
                elif kind == _LIST:
                    agenda.append(children)
                elif kind == _DICT:
                    agenda.append(dict(zip(data, children)))
                elif kind == _NAMEDTUPLE:
                    agenda.append(typ(*children))
                else:
                    agenda.append(registry[typ].unflatten(data, tuple(children)))
        return agenda[0]

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` only as deep as this structure goes.

        Returns one subtree of ``tree`` per leaf of ``self``; this is how a
        tree *prefix* (e.g. vmap's ``in_axes``) is matched against a full
        tree.  Node types must match exactly; a mismatch raises ``ValueError``
        naming the key path, what was expected and what was found.
        """
        nodes = self._nodes
        out: list[Any] = []
        stack: list[Any] = [tree]
        pop = stack.pop
        # Reverse post-order visits a node, then its children last-to-first,
        # which is exactly the order a LIFO stack of children yields.
        for idx in range(len(nodes) - 1, -1, -1):
            kind, typ, data, arity, _, _ = nodes[idx]
            x = pop()
            if kind == _LEAF:
                out.append(x)
            elif kind == _TUPLE:
                if type(x) is not tuple:
                    self._mismatch(idx, f"Expected tuple, got {_short(x)}.")
                if len(x) != arity:
                    self._mismatch(
                        idx, f"Tuple arity mismatch: {len(x)} != {arity}; tuple: {_short(x)}."
                    )
                stack.extend(x)
            elif kind == _LIST:
                if type(x) is not list:
                    self._mismatch(idx, f"Expected list, got {_short(x)}.")
                if len(x) != arity:
                    self._mismatch(
                        idx, f"List arity mismatch: {len(x)} != {arity}; list: {_short(x)}."
                    )
                stack.extend(x)
            elif kind == _DICT:
                if type(x) is not dict:
                    self._mismatch(idx, f"Expected dict, got {_short(x)}.")
                keys = _sorted_keys(x)
                if keys != data:
                    self._mismatch(
                        idx,
                        f"Dict key mismatch; expected keys: {list(data)}; "
                        f"present keys: {list(keys)}.",
                    )
                stack.extend([x[k] for k in keys])
            elif kind == _NONE:
                if x is not None:
                    self._mismatch(idx, f"Expected None, got {_short(x)}.")
            elif kind == _NAMEDTUPLE:
                if type(x) is not typ:
                    self._mismatch(
                        idx, f"Expected named tuple of type {typ.__name__}, got {_short(x)}."
                    )
                stack.extend(x)
            else:
                if type(x) is not typ:
                    self._mismatch(
                        idx,
                        f"Custom node type mismatch: expected type: {typ!r}, value: {_short(x)}.",
                    )
                children, aux = _registry[typ].flatten(x)
                children = tuple(children)
                if aux != data:
                    self._mismatch(
                        idx,
                        f"Mismatch custom node data: {data!r} != {aux!r}; value: {_short(x)}.",
                    )
                if len(children) != arity:
                    self._mismatch(
                        idx,
                        f"Custom node arity mismatch: {len(children)} != {arity}; "
                        f"value: {_short(x)}.",
                    )
                stack.extend(children)
        out.reverse()
        return out

    def _mismatch(self, idx: int, detail: str) -> NoReturn:
        """Raise the flatten_up_to error for node ``idx``, naming its key path."""
        path = _key_path(self._nodes, idx)
        where = f"key path {path}" if path else "the root"
        raise ValueError(
            f"Tree structure mismatch at {where}: {detail} "
            f"The tree must have the structure {self} (up to its leaves)."
        )

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The structure obtained by replacing every leaf of ``self`` with ``inner``."""
        inner_nodes = inner._nodes
        inner_leaves = inner.num_leaves
        inner_size = inner.num_nodes
        out: list[_Node] = []
        for node in self._nodes:
            kind, typ, data, arity, nleaves, nnodes = node
            if kind == _LEAF:
                out.extend(inner_nodes)
            else:
                out.append(
                    (
                        kind,
                        typ,
                        data,
                        arity,
                        nleaves * inner_leaves,
                        nnodes - nleaves + nleaves * inner_size,
                    )
                )
        return _make_treedef(tuple(out))

    # -- comparison and printing -------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or self._nodes == other._nodes

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            pass
        # Custom aux data is left out (it need not be hashable); dict keys are in.
        h = hash(
            tuple(
                (kind, typ, arity, data if kind == _DICT else None)
                for kind, typ, data, arity, _, _ in self._nodes
            )
        )
        object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        parts: list[str] = []
        for kind, typ, data, arity, _, _ in self._nodes:
            if kind == _LEAF:
                parts.append("*")
                continue
            if kind == _NONE:
                parts.append("None")
                continue
            if arity:
                children = parts[-arity:]
                del parts[-arity:]
            else:
                children = []
            if kind == _TUPLE:
                parts.append("(" + ", ".join(children) + ("," if arity == 1 else "") + ")")
            elif kind == _LIST:
                parts.append("[" + ", ".join(children) + "]")
            elif kind == _DICT:
                items = ", ".join(f"{k!r}: {c}" for k, c in zip(data, children))
                parts.append("{" + items + "}")
            elif kind == _NAMEDTUPLE:
                parts.append(
                    f"CustomNode(namedtuple[{typ.__name__}], [{', '.join(children)}])"
                )
            else:
                parts.append(f"CustomNode({typ.__name__}[{data!s}], [{', '.join(children)}])")
        return f"PyTreeDef({parts[0]})"

    __str__ = __repr__


_new_object = object.__new__
# The slot's own descriptor: setting through it skips PyTreeDef.__setattr__.
_set_nodes: Callable[[PyTreeDef, tuple[_Node, ...]], None] = PyTreeDef.__dict__["_nodes"].__set__


def _make_treedef(nodes: tuple[_Node, ...]) -> PyTreeDef:
    """Wrap a post-order node tuple (bypasses the public-construction guard)."""
    td: PyTreeDef = _new_object(PyTreeDef)
    _set_nodes(td, nodes)
    return td


# Treedefs are immutable, so the one for a bare leaf can be shared.
_LEAF_TREEDEF: Final = _make_treedef((_LEAF_NODE,))


def _sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    """Dict keys in sorted order, as JAX flattens them."""
    try:
        return tuple(sorted(d))
    except Exception as e:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys: "
            f"{type(e).__name__}: {e} (keys: {_short(list(d))})"
        ) from e


def _short(x: object, limit: int = 200) -> str:
    """A repr for error messages, truncated so huge arrays stay readable."""
    try:
        r = repr(x)
    except Exception:  # a broken __repr__ must not hide the real error
        r = f"<{type(x).__name__} object>"
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _key_path(nodes: tuple[_Node, ...], target: int) -> str:
    """The key path (``[0]['a'].x``) of post-order node ``target``; for errors."""
    stack: list[str] = [""]
    for idx in range(len(nodes) - 1, -1, -1):
        path = stack.pop()
        if idx == target:
            return path
        kind, typ, data, arity, _, _ = nodes[idx]
        if arity == 0:
            continue
        if kind == _DICT:
            keys = [f"[{k!r}]" for k in data]
        elif kind == _NAMEDTUPLE:
            keys = [f".{name}" for name in typ._fields]
        else:
            keys = [f"[{i}]" for i in range(arity)]
        stack.extend(path + k for k in keys)
    raise AssertionError("node index out of range")  # pragma: no cover


# ---------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------

# The "no initializer" default of tree_reduce.
_MISSING: Final = object()

# Flattening is iterative, so depth is bounded only by memory; a cyclic
# container would otherwise grow the stack forever.
_MAX_DEPTH: Final = 100_000


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    """Flatten ``tree`` into its leaves (left to right) and its structure.

    ``is_leaf`` is tried on every subtree before anything else; when it
    returns ``True`` the subtree is a leaf, even if it is ``None`` or a node.
    """
    node_types = _node_types
    if is_leaf is None:
        t = type(tree)
        if t not in node_types and not isinstance(tree, tuple):
            return [tree], _LEAF_TREEDEF
        if t is tuple or t is list:
            # Fast path: a tuple/list of plain leaves (the overwhelmingly
            # common argument shape).  A tuple subclass may be a namedtuple.
            for x in tree:
                if type(x) in node_types or isinstance(x, tuple):
                    break
            else:
                n = len(tree)
                return list(tree), _make_treedef(
                    (_LEAF_NODE,) * n + ((_TUPLE if t is tuple else _LIST, t, None, n, n, n + 1),)
                )
        elif t is dict:
            keys = _sorted_keys(tree)
            values = [tree[k] for k in keys]
            for x in values:
                if type(x) in node_types or isinstance(x, tuple):
                    break
            else:
                n = len(values)
                return values, _make_treedef((_LEAF_NODE,) * n + ((_DICT, dict, keys, n, n, n + 1),))

    # General case: depth-first with an explicit stack of frames, each frame
    # an iterator over one node's children plus what is needed to emit the
    # node once they are done.  Leaves are handled inline, without a frame.
    leaves: list[Any] = []
    nodes: list[_Node] = []
    add_leaf = leaves.append
    add_node = nodes.append
    registry = _registry
    # The root is the only child of a virtual frame that emits nothing.
    stack: list[tuple[Iterator[Any], int, type[Any], Any, int, int, int]] = [
        (iter((tree,)), -1, object, None, 1, 0, 0)
    ]
    children: Sequence[Any]
    data: Any  # dict keys, custom aux data, or None
    while stack:
        frame = stack[-1]
        for x in frame[0]:
            if is_leaf is not None and is_leaf(x):
                add_leaf(x)
                add_node(_LEAF_NODE)
                continue
            typ = type(x)
            if typ not in node_types and not isinstance(x, tuple):
                add_leaf(x)
                add_node(_LEAF_NODE)
                continue
            if typ is tuple:
                kind, children, data = _TUPLE, x, None
            elif typ is list:
                kind, children, data = _LIST, x, None
            elif typ is dict:
                data = _sorted_keys(x)
                kind, children = _DICT, [x[k] for k in data]
            elif x is None:
                add_node(_NONE_NODE)
                continue
            else:
                entry = registry.get(typ)
                if entry is not None:
                    raw_children, data = entry.flatten(x)
                    kind, children = _CUSTOM, tuple(raw_children)
                elif hasattr(x, "_fields"):
                    kind, children, data = _NAMEDTUPLE, x, None
                else:  # a tuple subclass that is not a namedtuple
                    add_leaf(x)
                    add_node(_LEAF_NODE)
                    continue
            arity = len(children)
            if arity == 0:
                add_node((kind, typ, data, 0, 0, 1))
                continue
            if len(stack) >= _MAX_DEPTH:
                raise RecursionError(
                    f"tree_flatten: pytree deeper than {_MAX_DEPTH} nodes; "
                    "it probably contains a reference cycle."
                )
            stack.append((iter(children), kind, typ, data, arity, len(leaves), len(nodes)))
            break
        else:
            stack.pop()
            _, kind, typ, data, arity, leaves0, nodes0 = frame
            if kind >= 0:
                add_node((kind, typ, data, arity, len(leaves) - leaves0, len(nodes) - nodes0 + 1))
    return leaves, _make_treedef(tuple(nodes))


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """The leaves of ``tree``, in flatten order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from its structure and leaves (inverse of tree_flatten)."""
    return treedef.unflatten(leaves)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is a single node (a leaf, ``None`` or an empty container).

    Matches JAX, which defines this as ``num_nodes == 1``.
    """
    return treedef.num_nodes == 1


def _structure_str(tree: Any, is_leaf: IsLeaf) -> str:
    """``str(tree_structure(tree))`` for error messages, never raising."""
    try:
        return str(tree_structure(tree, is_leaf))
    except Exception:
        return f"<unflattenable: {_short(tree)}>"


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """Apply ``f`` leafwise; ``tree``'s structure must be a prefix of each of ``rest``.

    As in JAX, a leaf of ``tree`` pairs with the whole corresponding subtree
    of each tree in ``rest``.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves]
    for i, other in enumerate(rest, start=2):
        try:
            all_leaves.append(treedef.flatten_up_to(other))
        except ValueError as e:
            raise ValueError(
                f"tree_map: tree {i} does not match the structure of tree 1 "
                "(tree 1 must be a prefix of every other tree).\n"
                f"  tree 1 structure: {treedef}\n"
                f"  tree {i} structure: {_structure_str(other, is_leaf)}\n"
                f"{e}"
            ) from None
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def _is_none(x: Any) -> bool:
    return x is None


def broadcast_prefix(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """For each leaf of ``full_tree``, the leaf of ``prefix_tree`` that covers it.

    ``None`` in ``prefix_tree`` counts as a leaf (so ``in_axes=None`` covers a
    whole subtree); ``is_leaf`` applies to ``prefix_tree`` only, as in JAX.
    Leaves of ``full_tree`` are counted plainly (``None`` there holds none).
    """
    if is_leaf is None:
        prefix_is_leaf: Callable[[Any], bool] = _is_none
    else:
        user_is_leaf = is_leaf

        def prefix_is_leaf(x: Any) -> bool:
            return x is None or user_is_leaf(x)

    prefix_leaves, prefix_def = tree_flatten(prefix_tree, prefix_is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(
            "broadcast_prefix: the prefix tree is not a tree prefix of the full tree.\n"
            f"  prefix structure: {prefix_def}\n"
            f"  full structure:   {_structure_str(full_tree, None)}\n"
            f"{e}"
        ) from None
    result: list[Any] = []
    for leaf, subtree in zip(prefix_leaves, subtrees):
        result.extend([leaf] * tree_structure(subtree).num_leaves)
    return result


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree: Any) -> Any:
    """Turn an outer-of-inner pytree into an inner-of-outer one (as JAX)."""
    flat, treedef = tree_flatten(pytree)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"tree_transpose: structure mismatch\n{treedef}\n != \n{expected}")
    columns = [
        outer_treedef.unflatten([flat[o * inner_size + i] for o in range(outer_size)])
        for i in range(inner_size)
    ]
    return inner_treedef.unflatten(columns)


def tree_reduce(
    function: Callable[[T, Any], T], tree: Any, initializer: Any = _MISSING, is_leaf: IsLeaf = None
) -> T:
    """``functools.reduce`` over the leaves of ``tree`` (as JAX)."""
    leaves = tree_leaves(tree, is_leaf)
    result: T = (
        functools.reduce(function, leaves) if initializer is _MISSING else functools.reduce(function, leaves, initializer)
    )
    return result


def tree_all(tree: Any, *, is_leaf: IsLeaf = None) -> bool:
    """Whether every leaf of ``tree`` is truthy."""
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf = None) -> bool:
    """Whether every element of ``iterable`` is a leaf (``None`` and containers are not)."""
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(leaves, items))


# ---------------------------------------------------------------------------
# Key paths: where a leaf sits in its tree (``tree_flatten_with_path``, ``keystr``)
# ---------------------------------------------------------------------------


@attrs.frozen(slots=True)
class DictKey:
    """A dict (or ``OrderedDict``/``defaultdict``) entry, printed ``['key']``."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@attrs.frozen(slots=True)
class SequenceKey:
    """A tuple or list element, printed ``[0]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@attrs.frozen(slots=True)
class GetAttrKey:
    """A namedtuple or dataclass field, printed ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@attrs.frozen(slots=True)
class FlattenedIndexKey:
    """The i-th child of a custom node registered without keys, printed ``[<flat index i>]``."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = DictKey | SequenceKey | GetAttrKey | FlattenedIndexKey | Any
"""One step of a key path (custom nodes may use keys of their own)."""
KeyPath = tuple[KeyEntry, ...]


def _simple_key(key: KeyEntry) -> str:
    if isinstance(key, DictKey):
        return str(key.key)
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, GetAttrKey):
        return key.name
    if isinstance(key, FlattenedIndexKey):
        return str(key.key)
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['a'][0].x`` (``simple=True``: ``a0x``, joined by ``separator``)."""
    return separator.join(_simple_key(k) if simple else str(k) for k in keys)


def _keyed_children(x: Any, typ: type[Any], path: KeyPath) -> tuple[int, list[tuple[KeyPath, Any]], Any] | None:
    """``(kind, [(child path, child)], node data)`` of node ``x``, or ``None`` if it is a leaf."""
    if typ is tuple or typ is list:
        return (_TUPLE if typ is tuple else _LIST), [(path + (SequenceKey(i),), c) for i, c in enumerate(x)], None
    if typ is dict:
        keys = _sorted_keys(x)
        return _DICT, [(path + (DictKey(k),), x[k]) for k in keys], keys
    entry = _registry.get(typ)
    if entry is not None:
        if entry.flatten_with_keys is not None:
            pairs, data = entry.flatten_with_keys(x)
            return _CUSTOM, [(path + (k,), c) for k, c in pairs], data
        children, data = entry.flatten(x)
        return _CUSTOM, [(path + (FlattenedIndexKey(i),), c) for i, c in enumerate(children)], data
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return _NAMEDTUPLE, [(path + (GetAttrKey(f),), c) for f, c in zip(x._fields, x)], None
    return None


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``tree_flatten`` that also says where each leaf is: ``([(key path, leaf)], treedef)``.

    ``is_leaf`` is called as ``is_leaf(x)``, or ``is_leaf(path, x)`` with ``is_leaf_takes_path``.
    """
    pairs: list[tuple[KeyPath, Any]] = []
    nodes: list[_Node] = []
    node_types = _node_types
    root: list[tuple[KeyPath, Any]] = [((), tree)]
    stack: list[tuple[Iterator[tuple[KeyPath, Any]], int, type[Any], Any, int, int, int]] = [
        (iter(root), -1, object, None, 1, 0, 0)
    ]
    while stack:
        frame = stack[-1]
        for path, x in frame[0]:
            if is_leaf is not None and (is_leaf(path, x) if is_leaf_takes_path else is_leaf(x)):
                pairs.append((path, x))
                nodes.append(_LEAF_NODE)
                continue
            typ = type(x)
            if x is None:
                nodes.append(_NONE_NODE)
                continue
            node = _keyed_children(x, typ, path) if typ in node_types or isinstance(x, tuple) else None
            if node is None:
                pairs.append((path, x))
                nodes.append(_LEAF_NODE)
                continue
            kind, children, data = node
            if not children:
                nodes.append((kind, typ, data, 0, 0, 1))
                continue
            if len(stack) >= _MAX_DEPTH:
                raise RecursionError(
                    f"tree_flatten_with_path: pytree deeper than {_MAX_DEPTH} nodes; "
                    "it probably contains a reference cycle."
                )
            stack.append((iter(children), kind, typ, data, len(children), len(pairs), len(nodes)))
            break
        else:
            stack.pop()
            _, kind, typ, data, arity, leaves0, nodes0 = frame
            if kind >= 0:
                nodes.append((kind, typ, data, arity, len(pairs) - leaves0, len(nodes) - nodes0 + 1))
    return pairs, _make_treedef(tuple(nodes))


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
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(path, x, *xs) for (path, x), *xs in zip(pairs, *others)])


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], _AuxT]],
    unflatten_func: Callable[[_AuxT, tuple[Any, ...]], T],
) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x)`` returns ``(children, aux)``; ``aux`` is static data
    compared with ``==`` in treedef equality (it should be hashable, because
    treedefs serve as cache keys).  ``unflatten_func(aux, children)`` rebuilds
    the node; ``children`` is a tuple.  Registering a type twice is an error,
    since silently changing how existing treedefs rebuild would be a bug.
    """
    _register(nodetype, _Entry(flatten_func, unflatten_func))


def _register(nodetype: type[Any], entry: _Entry) -> None:
    if nodetype in (tuple, list, dict, type(None)) or nodetype in _registry:
        raise ValueError(f"Duplicate pytree node type registration for {nodetype!r}.")
    _registry[nodetype] = entry
    _node_types.add(nodetype)


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], _AuxT]],
    unflatten_func: Callable[[_AuxT, tuple[Any, ...]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], _AuxT]] | None = None,
) -> None:
    """``register_pytree_node`` whose children carry keys for key paths (as JAX).

    ``flatten_with_keys(x)`` returns ``([(key, child), ...], aux)``; ``flatten_func``
    (children without keys, for speed) is derived from it when not given.
    """
    if flatten_func is None:
        keyed = flatten_with_keys

        def flatten_func(x: T) -> tuple[list[Any], _AuxT]:
            pairs, aux = keyed(x)
            return [c for _, c in pairs], aux

    _register(nodetype, _Entry(flatten_func, unflatten_func, flatten_with_keys))


class _NodeClass(Protocol):
    """A class usable with :func:`register_pytree_node_class`."""

    def tree_flatten(self) -> tuple[Iterable[Any], Any]: ...

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> Self: ...


_NodeClassT = TypeVar("_NodeClassT", bound=_NodeClass)


def register_pytree_node_class(cls: type[_NodeClassT]) -> type[_NodeClassT]:
    """Class decorator: register ``cls`` via its ``tree_flatten``/``tree_unflatten``."""

    def flatten(x: _NodeClassT) -> tuple[Iterable[Any], Hashable]:
        children, aux = x.tree_flatten()
        return children, aux  # aux is whatever the class chose; == is all we need

    register_pytree_node(cls, flatten, cls.tree_unflatten)
    return cls


def register_dataclass(
    nodetype: type[T],
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type[T]:
    """Register a dataclass or attrs class as a node, its fields as children.

    ``data_fields`` become children (traced); ``meta_fields`` become the aux
    data (static, part of the treedef).  When both are ``None`` they are
    inferred from the ``dataclasses`` or ``attrs`` fields with ``init=True``
    (minus ``drop_fields``): fields with ``metadata={"static": True}`` are
    meta, the rest data.  Rebuilding calls ``nodetype(**fields)``, so frozen
    classes work.  Returns ``nodetype``, so it can be used as a decorator.
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
            (f.name, f.name, f.init, bool(f.metadata.get("static", False)))
            for f in dataclasses.fields(nodetype)
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

    if overlap := set(data_names) & set(meta_names):
        raise ValueError(
            f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}."
        )
    if declared is not None:
        init_fields = {d[0] for d in declared if d[2]} - set(drop_fields)
        listed = {*data_names, *meta_names}
        if listed != init_fields:
            msg = (
                "data_fields and meta_fields must include all fields with "
                "``init=True`` and only them."
            )
            if missing := init_fields - listed:
                msg += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
            if unexpected := listed - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
        alias = {d[0]: d[1] for d in declared}
    else:
        alias = {}
    data_kw = tuple(alias.get(n, n) for n in data_names)
    meta_kw = tuple(alias.get(n, n) for n in meta_names)

    def flatten(x: T) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return (
            tuple([getattr(x, n) for n in data_names]),
            tuple([getattr(x, n) for n in meta_names]),
        )

    def unflatten(meta: tuple[Any, ...], data: tuple[Any, ...]) -> T:
        kwargs = dict(zip(meta_kw, meta))
        kwargs.update(zip(data_kw, data))
        return nodetype(**kwargs)

    data_keys = tuple(GetAttrKey(n) for n in data_names)

    def flatten_with_keys(x: T) -> tuple[list[tuple[KeyEntry, Any]], tuple[Any, ...]]:
        return (
            [(k, getattr(x, n)) for k, n in zip(data_keys, data_names)],
            tuple([getattr(x, n) for n in meta_names]),
        )

    _register(nodetype, _Entry(flatten, unflatten, flatten_with_keys))
    return nodetype


def _flatten_ordereddict(
    d: collections.OrderedDict[Any, Any],
) -> tuple[list[Any], tuple[Any, ...]]:
    keys = tuple(d)
    return [d[k] for k in keys], keys


def _unflatten_ordereddict(
    keys: tuple[Any, ...], values: tuple[Any, ...]
) -> collections.OrderedDict[Any, Any]:
    return collections.OrderedDict(zip(keys, values))


def _flatten_defaultdict(
    d: collections.defaultdict[Any, Any],
) -> tuple[list[Any], tuple[Callable[[], Any] | None, tuple[Any, ...]]]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _unflatten_defaultdict(
    aux: tuple[Callable[[], Any] | None, tuple[Any, ...]], values: tuple[Any, ...]
) -> collections.defaultdict[Any, Any]:
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, values))


def _dict_keys(flatten: Callable[[Any], tuple[list[Any], Any]], keys_of: Callable[[Any], tuple[Any, ...]]) -> Callable[
    [Any], tuple[list[tuple[KeyEntry, Any]], Any]
]:
    def flatten_with_keys(d: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
        values, aux = flatten(d)
        return [(DictKey(k), v) for k, v in zip(keys_of(aux), values)], aux

    return flatten_with_keys


register_pytree_with_keys(
    collections.OrderedDict,
    _dict_keys(_flatten_ordereddict, lambda keys: keys),
    _unflatten_ordereddict,
    _flatten_ordereddict,
)
register_pytree_with_keys(
    collections.defaultdict,
    _dict_keys(_flatten_defaultdict, lambda aux: aux[1]),
    _unflatten_defaultdict,
    _flatten_defaultdict,
)


class Partial(functools.partial[Any]):
    """A ``functools.partial`` that is a pytree: its arguments are children, the function is
    static (aux data), so it can be passed through transformations (as ``jax.tree_util.Partial``)."""


def _flatten_partial(p: Partial) -> tuple[tuple[tuple[Any, ...], dict[str, Any]], Callable[..., Any]]:
    return (p.args, p.keywords), p.func


def _unflatten_partial(func: Callable[..., Any], children: tuple[Any, ...]) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _flatten_partial, _unflatten_partial)
