"""``fcore.image``: image resampling (``jax.image``): :func:`resize`,
:func:`scale_and_translate` and :class:`ResizeMethod`, built from ``fcore.numpy`` ops as JAX
builds them from ``jnp`` ops, so they trace, differentiate and batch like any other program."""

from fcore.image.scale import (
    ResizeMethod as ResizeMethod,
    resize as resize,
    scale_and_translate as scale_and_translate,
)

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
