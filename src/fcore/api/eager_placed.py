"""Eager operations on placed arrays run where the arrays live, as JAX's do.

An array committed to another device than the default one, or sharded over several, keeps no
host copy for eager operations (``ArrayImpl.runs_on_device``): ``EvalTrace`` hands such an
operation here, and it runs as a jitted call of the one primitive (JAX's ``apply_primitive``).
jit follows committed arguments and partitions over shardings, so the results stay on those
devices, with the sharding XLA's propagation gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from fcore.api.jit import jit
from fcore.interpreters.eval import placed_runner
from fcore.ir.params import Params, ParamValue
from fcore.ir.primitive import Primitive

#: One jitted application per (primitive, parameters), as JAX caches ``apply_primitive``;
#: cleared when full (a program applying ever new parameters does not grow it without bound).
_applications: dict[Hashable, Callable[..., Any]] = {}
_MAX_APPLICATIONS = 4096


def _application(prim: Primitive, params: dict[str, ParamValue]) -> Callable[..., Any]:
    def apply(*args: Any) -> Any:
        return prim.bind(*args, **params)

    apply.__name__ = apply.__qualname__ = prim.name
    return jit(apply)


def run_placed(prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
    """``prim`` applied to ``args`` on their devices (``placed_runner``)."""
    try:
        key: Hashable = (prim, Params(params))
        hash(key)
    except TypeError:  # a parameter that is not hashable: a jitted application of its own
        return _application(prim, params)(*args)
    applied = _applications.get(key)
    if applied is None:
        if len(_applications) >= _MAX_APPLICATIONS:
            _applications.clear()
        applied = _applications[key] = _application(prim, params)
    return applied(*args)


placed_runner[:] = [run_placed]
