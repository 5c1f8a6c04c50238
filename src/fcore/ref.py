"""``fcore.ref``: mutable array references, as ``jax.ref`` (see docs/refs.md)."""

from fcore.api.refs import (
    AbstractRef as AbstractRef,
    Ref as Ref,
    addupdate as addupdate,
    empty_ref as empty_ref,
    free_ref as free_ref,
    freeze as freeze,
    get as get,
    new_ref as new_ref,
    ref_set as set,
    swap as swap,
)

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set", "swap"]
