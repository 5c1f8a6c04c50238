"""``fcore.scipy.sparse``: ``jax.scipy.sparse``'s ``linalg`` module (``cg``, ``bicgstab``, ``gmres``)."""

from fcore.scipy.sparse import linalg as linalg

__all__ = ["linalg"]
