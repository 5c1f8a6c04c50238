"""``jax_explain_cache_misses``: why ``jit`` traces a function again, in JAX's words.

A jitted call whose cache key (argument tree, avals, static arguments, trace context) matches
no earlier one is traced anew; with the option on, the trace is preceded by a WARNING that
names the call site and, against the closest earlier key of the same function, what differs:
the tracing context (severity 0), the argument tree including static arguments (1), the
argument types (3), as ``jax._src.interpreters.partial_eval.explain`` reports them. Functions
defined inside fcore (or a registered library) are not reported, as JAX skips its own.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from fcore import tree_util
from fcore.interpreters.trace import is_user_code, user_frame
from fcore.ir.avals import ShapedArray
from fcore.ir.source_info import summarize

_logger = logging.getLogger(__name__)

#: Call sites that already had a miss of a never seen function (JAX's re-definition hint).
_callsites_with_miss: set[str] = set()
#: The names of ``trace_context()``'s values, in order.
_CONTEXT_NAMES = ("jax_enable_x64", "jax_default_matmul_precision", "xla_metadata_context_manager")

#: A jit cache key: (argument tree, avals, static arguments, trace context, float0 inputs).
Key = tuple[tree_util.PyTreeDef, tuple[ShapedArray, ...], tuple[Any, ...], tuple[Any, ...], Hashable]


class Static:
    """A static argument in the explained argument tree (as JAX's ``tree_util.Static``; the
    message names this class where JAX's names ``jax._src.tree_util.Static``)."""

    def __init__(self, val: object) -> None:
        self.val = val

    def __repr__(self) -> str:
        return f"Static(val={self.val!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is Static and type(other.val) is type(self.val) and other.val == self.val

    def __hash__(self) -> int:
        return hash((type(self.val), self.val))


tree_util.register_pytree_node(Static, lambda s: ((), s), lambda s, _: s)


class _LeafMeta(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


class _Leaf(metaclass=_LeafMeta):
    """An argument leaf in the explained tree (its type prints as JAX's ``pytree leaf``)."""


def explain(fun: object, name: str, keys: Sequence[Key], new: Key, arg_names: Sequence[str]) -> None:
    """Log why the call with key ``new`` misses the ``keys`` seen before (``keys`` empty: the
    function is new)."""
    code = getattr(fun, "__code__", None)
    if code is not None and not is_user_code(code):
        return
    frame = user_frame()
    callsite = summarize(frame.f_code, frame.f_lasti) if frame is not None else "unknown"
    defined = f" defined at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    if not keys:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{defined}")
        if callsite in _callsites_with_miss:
            lines.append("  but seen another function defined on the same line; maybe the function is\n"
                         "  being re-defined repeatedly, preventing caching?")
        else:
            _callsites_with_miss.add(callsite)
    else:
        lines.append(f"  for {name}{defined}")
        lines.append("  all previously seen cache keys differ. For the closest previous key:")
        lines.append("  " + min(_diff(new, old, arg_names) for old in keys)[-1])
    _logger.warning("\n".join(lines))


def _diff(new: Key, old: Key, arg_names: Sequence[str]) -> tuple[int, int, str]:
    """(severity, number of differences, explanation): lower is closer."""
    return (_diff_context(new[3], old[3]) or _diff_trees(new, old) or _diff_types(new[1], old[1], arg_names)
            or (4, 0, "cache miss explanation unavailable"))


def _diff_context(new: tuple[Any, ...], old: tuple[Any, ...]) -> tuple[int, int, str] | None:
    if new == old:
        return None
    diffs = [f"  * {n} differs: now {a} and before {b}" for n, a, b in zip(_CONTEXT_NAMES, new, old) if a != b]
    return 0, len(diffs), "Tracing context doesn't match, e.g. due to config or context manager.\n" + "\n".join(diffs)


def _diff_trees(new: Key, old: Key) -> tuple[int, int, str] | None:
    diffs = [f"  * at input path {tree_util.keystr(path)}, now {a} and before {b}, so {why}"
             for path, a, b, why in _equality_errors((), _display(new), _display(old))]
    return (1, len(diffs), "different input pytree:\n" + "\n".join(diffs)) if diffs else None


def _display(key: Key) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's (args, kwargs) as JAX keys it: leaves, and static arguments in place."""
    tree, _, statics = key[0], key[1], key[2]
    dyn_args, dyn_kwargs = tree.unflatten([_Leaf()] * tree.num_leaves)
    positional = {where: val for where, _, val in statics if isinstance(where, int)}
    it = iter(dyn_args)
    args = tuple(Static(positional[i]) if i in positional else next(it)
                 for i in range(len(dyn_args) + len(positional)))
    kwargs = {**dyn_kwargs, **{where: Static(val) for where, _, val in statics if isinstance(where, str)}}
    return args, dict(sorted(kwargs.items()))


def _equality_errors(path: tuple[Any, ...], t1: object, t2: object) -> Iterator[tuple[tuple[Any, ...], str, str, str]]:
    """Where two argument trees differ (``jax.tree_util.equality_errors``' walk)."""
    if type(t1) is _Leaf and type(t2) is _Leaf:
        return
    if type(t1) != type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and isinstance(t2, (list, tuple)) and len(t1) != len(t2):
        yield path, f"{type(t1).__name__} of length {len(t1)}", f"{type(t2).__name__} of length {len(t2)}", \
            "the lengths do not match"
        return
    (c1, meta1), (c2, meta2) = tree_util.flatten_one_level_with_keys(t1), tree_util.flatten_one_level_with_keys(t2)
    k1, k2 = [k for k, _ in c1], [k for k, _ in c2]
    if len(k1) != len(k2):
        diff = " ".join(repr(getattr(k, "key", k)) for k in set(k1).symmetric_difference(k2))

        def children(n: int) -> str:
            return f"{n} child{'ren' if n > 1 else ''}"

        yield (path, f"{type(t1)} with {children(len(k1))}", f"{type(t2)} with {children(len(k2))}",
               "the numbers of children do not match" + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    if meta1 != meta2:
        yield path, f"{type(t1)} with pytree metadata {meta1}", f"{type(t2)} with pytree metadata {meta2}", \
            "the pytree node metadata does not match"
        return
    for (k, a), (_, b) in zip(c1, c2):
        yield from _equality_errors((*path, k), a, b)


def _diff_types(new: Sequence[ShapedArray], old: Sequence[ShapedArray], names: Sequence[str]) -> tuple[int, int, str] | None:
    if tuple(new) == tuple(old):
        return None
    diffs = []
    weak_hint = False
    for name, a, b in zip(names, new, old):
        if a != b:
            now, before = a.str_short(True), b.str_short(True)
            if a.weak_type != b.weak_type:
                weak_hint = True
                now += f"{{weak_type={a.weak_type}}}"
                before += f"{{weak_type={b.weak_type}}}"
            diffs.append(f"  * at {name}, now {now} and before {before}")
    msg = "different input types:\n" + "\n".join(diffs)
    if weak_hint:
        msg += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
    return (3, len(diffs), msg) if diffs else None
