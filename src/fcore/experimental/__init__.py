"""``fcore.experimental``: JAX's experimental names that fcore provides (``io_callback``)."""

from fcore.lax.callbacks import io_callback as io_callback

__all__ = ["io_callback"]
