"""jaxlib's C++ pytree registry, fcore's own instances of it (``fcore.tree_util`` wraps them).

Flattening, unflattening, comparing and hashing pytrees run in jaxlib's ``PyTreeRegistry`` and
``PyTreeDef`` (the machinery behind ``jax.tree_util``), on registries that belong to fcore, not
to JAX: a type registered with fcore is not a node for jax and the other way round.

Two registries hold the same node types: ``registry`` (``None`` is a node without children, as
in JAX) and ``none_leaf_registry`` (``None`` is a leaf), which flattens prefix trees such as
vmap's ``in_axes`` without a Python predicate per node.

The C++ flattener recurses and stops at Python's recursion limit. ``flatten_deep`` is the
iterative fallback for deeper trees: it builds the same treedef through jaxlib's pickle state
(post-order nodes ``(kind, arity, node data, custom type, leaves, nodes)``, format version 3).

jaxlib 0.10.2's flattener does not pair ``Py_EnterRecursiveCall`` with ``Py_LeaveRecursiveCall``
when an exception unwinds through it: a flatten that fails at tree depth ``d`` leaves ``d`` levels
of the thread's recursion budget in use (JAX has the same leak). At the recursion limit that is
the whole budget, and the interpreter can no longer call anything. ``release_leaked_recursion``
gives those levels back (CPython 3.11's single recursion counter; see its docstring).
"""

from __future__ import annotations

import ctypes
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import FrameType
from typing import Any, Final

from jaxlib._jax import pytree as _pytree

PyTreeDef = _pytree.PyTreeDef
PyTreeRegistry = _pytree.PyTreeRegistry
DictKey = _pytree.DictKey
SequenceKey = _pytree.SequenceKey
GetAttrKey = _pytree.GetAttrKey
FlattenedIndexKey = _pytree.FlattenedIndexKey
treedef_tuple = _pytree.treedef_tuple
all_leaves = _pytree.all_leaves

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "PyTreeDef",
    "PyTreeRegistry",
    "SequenceKey",
    "all_leaves",
    "flatten_deep",
    "flatten_one_level_with_keys",
    "is_recursion_error",
    "none_leaf_registry",
    "register_dataclass_node",
    "register_node",
    "registry",
    "release_leaked_recursion",
    "treedef_tuple",
]


def _named(reg: PyTreeRegistry, name: str) -> PyTreeRegistry:
    """Name ``reg`` as this module's attribute ``name``: treedefs pickle their registry by reference."""
    reg.__module__ = __name__
    reg.__name__ = name
    return reg


registry: Final = _named(PyTreeRegistry(), "registry")
none_leaf_registry: Final = _named(PyTreeRegistry(enable_none=False), "none_leaf_registry")
_REGISTRIES: Final = (registry, none_leaf_registry)

# Types registered through the functions below, by how the C++ side stores them.
_custom_types: set[type[Any]] = set()
_dataclass_types: set[type[Any]] = set()


def register_node(
    nodetype: type[Any],
    flatten: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten: Callable[[Any, tuple[Any, ...]], Any],
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None = None,
) -> None:
    """Make ``nodetype`` a node in both registries (``ValueError`` if it already is one)."""
    for reg in _REGISTRIES:
        reg.register_node(nodetype, flatten, unflatten, flatten_with_keys)
    _custom_types.add(nodetype)


def register_dataclass_node(nodetype: type[Any], data_fields: Sequence[str], meta_fields: Sequence[str]) -> None:
    """Make ``nodetype`` a node flattened by attribute names in C++, rebuilt as ``nodetype(**fields)``."""
    for reg in _REGISTRIES:
        reg.register_dataclass_node(nodetype, list(data_fields), list(meta_fields))
    _dataclass_types.add(nodetype)


def is_recursion_error(e: BaseException) -> bool:
    """Whether the C++ flattener gave up at the recursion limit.

    jaxlib reports that as the ``RecursionError`` itself, or as an error caused by it (a
    ``SystemError`` or, from sorting dict keys, a ``ValueError``)."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, RecursionError):
            return True
        seen = seen.__cause__
    return False


def _leave_recursive_call() -> Callable[[], None] | None:
    if sys.version_info[:2] != (3, 11):  # 3.12 counts C recursion apart from Python frames
        return None
    leave = ctypes.pythonapi.Py_LeaveRecursiveCall
    leave.argtypes = []
    leave.restype = None
    return leave


_LEAVE_RECURSIVE_CALL: Final = _leave_recursive_call()
_DEPTH_IN_MESSAGE: Final = re.compile(r"recursion depth (\d+)")


def _recursion_depth() -> int:
    """The calling thread's recursion depth as CPython 3.11 counts it (this frame included).

    CPython has no accessor; ``sys.setrecursionlimit`` names the depth when refusing a limit."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(1)
    except RecursionError as e:
        found = _DEPTH_IN_MESSAGE.search(str(e))
        if found is not None:
            return int(found.group(1))
    sys.setrecursionlimit(limit)
    raise AssertionError("sys.setrecursionlimit(1) did not report the recursion depth")  # pragma: no cover


def release_leaked_recursion() -> int:
    """Give back the recursion levels that a failed C++ flatten left in use; returns how many.

    The thread's depth should be its Python frames plus one (the outermost entry); what is
    above that is the leak. C-level calls that hold a level without a frame (calls of objects
    with ``__call__``, an enclosing C++ flatten) are counted as leaked too, so the budget can
    end up a few levels larger than before the failure, never smaller. Only on CPython 3.11;
    elsewhere nothing is released."""
    if _LEAVE_RECURSIVE_CALL is None:
        return 0
    frames = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        frames += 1
        frame = frame.f_back
    leaked = (_recursion_depth() - 1) - frames - 1
    for _ in range(leaked):
        _LEAVE_RECURSIVE_CALL()
    return max(leaked, 0)


# -- the iterative fallback ---------------------------------------------------------------------

# jaxlib's node kinds (PyTreeKind) in the pickle state.
_LEAF: Final = 0
_NONE: Final = 1
_TUPLE: Final = 2
_NAMEDTUPLE: Final = 3
_LIST: Final = 4
_DICT: Final = 5
_CUSTOM: Final = 6
_DATACLASS: Final = 7

_Node = tuple[int, int, Any, "type[Any] | None", int, int]
_LEAF_NODE: Final[_Node] = (_LEAF, 0, None, None, 1, 1)
_BUILTIN_KINDS: Final[dict[type[Any], int]] = {tuple: _TUPLE, list: _LIST, dict: _DICT, type(None): _NONE}

#: Deeper than this, a tree is taken to contain a reference cycle.
MAX_DEPTH: Final = 100_000


def _node_kind(x: Any) -> tuple[int, type[Any] | None]:
    """``(kind, custom type)`` of ``x``, a node of the registry (custom registrations win, as in C++)."""
    typ = type(x)
    kind = _BUILTIN_KINDS.get(typ)
    if kind is not None:
        return kind, None
    if typ in _dataclass_types:
        return _DATACLASS, typ
    if typ not in _custom_types and isinstance(x, tuple) and hasattr(typ, "_fields"):
        return _NAMEDTUPLE, None
    return _CUSTOM, typ


def flatten_one_level_with_keys(reg: PyTreeRegistry, x: Any) -> tuple[Iterable[tuple[Any, Any]], Any] | None:
    """``([(key, child)], node data)`` of node ``x``, or ``None`` for a leaf.

    jaxlib's, except that namedtuple fields are named here: jaxlib 0.10.2 names every field
    after the first one."""
    out = reg.flatten_one_level_with_keys(x)
    typ = type(x)
    if out is not None and typ not in _custom_types and isinstance(x, tuple) and hasattr(typ, "_fields"):
        return [(GetAttrKey(f), c) for f, c in zip(typ._fields, x)], out[1]
    return out


def flatten_deep(
    reg: PyTreeRegistry, tree: Any, is_leaf: Callable[..., bool] | None, with_path: bool
) -> tuple[list[Any], PyTreeDef]:
    """``reg.flatten`` (``with_path``: ``reg.flatten_with_path``) without recursion.

    ``is_leaf`` takes ``(path, x)`` when ``with_path``, else ``x``. Raises ``RecursionError``
    for trees deeper than ``MAX_DEPTH`` (a reference cycle, most likely)."""
    out: list[Any] = []
    nodes: list[_Node] = []
    root: list[tuple[tuple[Any, ...], Any]] = [((), tree)]
    # Frames: (children iterator, kind, node data, custom type, arity, leaves before, nodes before).
    stack: list[tuple[Iterator[tuple[tuple[Any, ...], Any]], int, Any, type[Any] | None, int, int, int]] = [
        (iter(root), -1, None, None, 1, 0, 0)
    ]
    while stack:
        frame = stack[-1]
        for path, x in frame[0]:
            if is_leaf is not None and (is_leaf(path, x) if with_path else is_leaf(x)):
                out.append((path, x) if with_path else x)
                nodes.append(_LEAF_NODE)
                continue
            one = reg.flatten_one_level(x)
            if one is None:
                out.append((path, x) if with_path else x)
                nodes.append(_LEAF_NODE)
                continue
            kind, custom = _node_kind(x)
            aux = one[1]
            data = list(aux) if kind == _DICT else aux if kind in (_CUSTOM, _DATACLASS) else None
            if kind == _NAMEDTUPLE:
                data = type(x)
            if with_path:
                keyed = flatten_one_level_with_keys(reg, x)
                assert keyed is not None
                children = [(path + (k,), c) for k, c in keyed[0]]
            else:
                children = [(path, c) for c in one[0]]
            if not children:
                nodes.append((kind, 0, data, custom, 0, 1))
                continue
            if len(stack) > MAX_DEPTH:
                raise RecursionError(
                    f"pytree deeper than {MAX_DEPTH} nodes while flattening; it probably contains a reference cycle."
                )
            stack.append((iter(children), kind, data, custom, len(children), len(out), len(nodes)))
            break
        else:
            stack.pop()
            _, kind, data, custom, arity, leaves0, nodes0 = frame
            if kind >= 0:
                nodes.append((kind, arity, data, custom, len(out) - leaves0, len(nodes) - nodes0 + 1))
    treedef: PyTreeDef = PyTreeDef.__new__(PyTreeDef)
    treedef.__setstate__((reg, nodes))
    return out, treedef
