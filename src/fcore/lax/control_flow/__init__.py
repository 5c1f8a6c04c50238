"""Structured control flow (docs/guide.md, "Control flow").

``cond``/``switch`` (``conditionals``), ``while_loop``/``fori_loop``/``scan`` (``loops``) and
``map`` (``mapping``), with their primitives; ``common`` holds what they share. This module is the package's one
export point."""

from fcore.lax.control_flow.conditionals import cond as cond, cond_p as cond_p, switch as switch
from fcore.lax.control_flow.mapping import map as map  # noqa: A004 - JAX's name
from fcore.lax.control_flow.loops import (
    fori_loop as fori_loop, scan as scan, scan_p as scan_p, while_loop as while_loop, while_p as while_p,
)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "cond_p", "while_p", "scan_p"]
