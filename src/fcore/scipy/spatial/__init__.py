"""``fcore.scipy.spatial``: ``jax.scipy.spatial``'s ``transform`` module (``Rotation``, ``Slerp``)."""

from fcore.scipy.spatial import transform as transform

__all__ = ["transform"]
