"""``fcore.scipy``: the corner of ``jax.scipy`` fcore provides."""

from fcore.scipy import special as special
