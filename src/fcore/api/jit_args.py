"""How ``jit`` tells static from dynamic (and donated) arguments: JAX's rules and errors.

At ``jit`` time the argument numbers and names are completed from each other through
the function's signature and validated against it (``resolve_argnums``). At call time
the static arguments are split off and become part of the cache key, compared by type
and value as JAX does (so ``1``, ``1.0`` and ``True`` are three specializations).
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from fcore import tree_util

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def signature_of(fun: Callable[..., Any]) -> inspect.Signature | None:
    """The signature, or None where Python has none (some builtins)."""
    try:
        return inspect.signature(fun)
    except (ValueError, TypeError):
        return None


def index_tuple(x: int | Iterable[int]) -> tuple[int, ...]:
    if isinstance(x, Iterable):
        return tuple(operator.index(i) for i in x)
    return (operator.index(x),)


def str_tuple(x: str | Iterable[str]) -> tuple[str, ...]:
    if isinstance(x, str):
        return (x,)
    names = tuple(x)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"argument is not a string: {n}")
    return names


@attrs.frozen(slots=True)
class ArgSpec:
    """The resolved ``static_*`` and ``donate_*`` options of a jitted function."""

    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    donate_argnames: tuple[str, ...] = ()


def resolve_argnums(
    sig: inspect.Signature | None,
    static_argnums: int | Sequence[int] | None,
    static_argnames: str | Iterable[str] | None,
    donate_argnums: int | Sequence[int] | None,
    donate_argnames: str | Iterable[str] | None,
) -> ArgSpec:
    """Fill in numbers from names and vice versa, then validate (``ValueError``), as jax."""
    if sig is None:
        if donate_argnames is not None:
            raise ValueError("Getting the signature of the function failed. Pass donate_argnums instead of donate_argnames.")
        spec = ArgSpec(
            () if static_argnums is None else index_tuple(static_argnums),
            () if static_argnames is None else str_tuple(static_argnames),
            () if donate_argnums is None else index_tuple(donate_argnums),
            (),
        )
    else:
        s_nums, s_names = _infer(sig, static_argnums, static_argnames)
        d_nums, d_names = _infer(sig, donate_argnums, donate_argnames)
        _validate_argnums(sig, s_nums, "static_argnums")
        _validate_argnames(sig, s_names, "static_argnames")
        _validate_argnums(sig, d_nums, "donate_argnums")
        _validate_argnames(sig, d_names, "donate_argnames")
        spec = ArgSpec(s_nums, s_names, d_nums, d_names)
    both = set(spec.static_argnames) & set(spec.donate_argnames)
    if both:
        raise ValueError(
            "static_argnames and donate_argnames cannot intersect. Argument names "
            f"{both} appear in both static_argnames and donate_argnames"
        )
    return spec


def _infer(
    sig: inspect.Signature, nums: int | Sequence[int] | None, names: str | Iterable[str] | None
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    if nums is None and names is None:
        return (), ()
    if nums is not None and names is not None:
        return index_tuple(nums), str_tuple(names)
    params = list(sig.parameters.items())
    if nums is None:
        assert names is not None
        name_t = str_tuple(names)
        return tuple(i for i, (k, p) in enumerate(params) if p.kind == p.POSITIONAL_OR_KEYWORD and k in name_t), name_t
    num_t = index_tuple(nums)
    return num_t, tuple(k for i, (k, p) in enumerate(params) if p.kind == p.POSITIONAL_OR_KEYWORD and i in num_t)


def _validate_argnums(sig: inspect.Signature, argnums: tuple[int, ...], what: str) -> None:
    n_pos = 0
    for p in sig.parameters.values():
        if p.kind in _POSITIONAL:
            n_pos += 1
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            return  # any number of positional arguments
    if argnums and (-min(argnums) > n_pos or max(argnums) >= n_pos):
        raise ValueError(f"Jitted function has {what}={argnums}, but only accepts {n_pos} positional arguments.")


def _validate_argnames(sig: inspect.Signature, argnames: tuple[str, ...], what: str) -> None:
    valid: set[str] = set()
    positional_only: set[str] = set()
    var_kwargs = False
    for name, p in sig.parameters.items():
        if p.kind in _KEYWORD:
            valid.add(name)
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            var_kwargs = True
        else:
            positional_only.add(name)
    if bad := positional_only & set(argnames):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. These are positional-only")
    if not var_kwargs and (bad := set(argnames) - valid):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. Function does not take these args.")


@attrs.frozen(slots=True)
class CallArgs:
    """One call's arguments, split: the dynamic ones (traced) and the static ones (keyed on)."""

    dyn_args: tuple[Any, ...]
    dyn_kwargs: dict[str, Any]
    static_pos: dict[int, Any]  # position in the call -> value
    static_kw: dict[str, Any]
    static_key: tuple[Any, ...]  # hashable; compares statics by type and value

    def merge(self, dyn_args: Sequence[Any], dyn_kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """The full call with (traced) dynamic arguments put back between the static ones."""
        it = iter(dyn_args)
        n = len(dyn_args) + len(self.static_pos)
        args = [self.static_pos[i] if i in self.static_pos else next(it) for i in range(n)]
        return args, {**dyn_kwargs, **self.static_kw}


def split_call(spec: ArgSpec, fun_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CallArgs:
    """Separate static from dynamic arguments; an unhashable static value is a ``ValueError``."""
    n = len(args)
    static_pos = {}
    for i in spec.static_argnums:
        j = i + n if i < 0 else i
        if 0 <= j < n:  # a static argument left out of the call (a default) is no argument
            static_pos[j] = args[j]
    static_kw = {k: v for k, v in kwargs.items() if k in spec.static_argnames}
    key: list[Any] = []
    for where, v in [*sorted(static_pos.items()), *sorted(static_kw.items())]:
        try:
            hash(v)
        except TypeError as e:
            raise ValueError(
                "Non-hashable static arguments are not supported. An error occurred while trying to hash an "
                f"object of type {type(v)}, {v} (static argument {where!r} of {fun_name}). The error was:\n"
                f"TypeError: {e}\n"
            ) from None
        key.append((where, type(v), v))
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_kw}
    return CallArgs(dyn_args, dyn_kwargs, static_pos, static_kw, tuple(key))


def dynamic_leaf_info(
    spec: ArgSpec, sig: inspect.Signature | None, call: CallArgs
) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """Per flat dynamic argument (in ``tree_flatten((dyn_args, dyn_kwargs))`` order): its
    parameter name and key path (``params['w'][0]``), for messages, and whether it is donated."""
    pos_names = [k for k, p in sig.parameters.items() if p.kind in _POSITIONAL] if sig is not None else []
    n = len(call.dyn_args) + len(call.static_pos)
    donate = {i + n if i < 0 else i for i in spec.donate_argnums}
    names: list[str] = []
    donated: list[bool] = []
    positions = [i for i in range(n) if i not in call.static_pos]
    for i, arg in zip(positions, call.dyn_args):
        name = pos_names[i] if i < len(pos_names) else f"args[{i}]"
        paths = [tree_util.keystr(path) for path, _ in tree_util.tree_leaves_with_path(arg)]
        names += [name + path for path in paths]
        donated += [i in donate] * len(paths)
    for k in sorted(call.dyn_kwargs):
        paths = [tree_util.keystr(path) for path, _ in tree_util.tree_leaves_with_path(call.dyn_kwargs[k])]
        names += [k + path for path in paths]
        donated += [k in spec.donate_argnames] * len(paths)
    return tuple(names), tuple(donated)
