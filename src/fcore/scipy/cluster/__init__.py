"""``fcore.scipy.cluster``: ``jax.scipy.cluster``'s ``vq`` module."""

from fcore.scipy.cluster import vq as vq

__all__ = ["vq"]
