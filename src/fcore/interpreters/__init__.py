"""Interpreters: the trace stack (a ContextVar), ``bind``, eager and staging handlers."""

from fcore.interpreters import stack as stack  # installs bind into fcore.ir.primitive
