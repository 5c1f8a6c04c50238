"""Arrays of ``fcore.numpy`` from outside data: ``frombuffer``, ``fromstring``, ``load`` (NumPy's
``.npy`` files, bfloat16 included), ``from_dlpack``, and ``fromfile``/``fromiter``, which
``jnp`` refuses (reading a file or consuming an iterator is a side effect ``jit`` would hide)."""

from __future__ import annotations

import os
from typing import IO, Any

import ml_dtypes
import numpy as np

from fcore.interpreters.array import Array
from fcore.numpy.creation import asarray


def frombuffer(buffer: bytes | Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Array:
    """The bytes of ``buffer`` read as a 1-D array of ``dtype`` (NumPy's ``frombuffer``)."""
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Array:
    """The numbers in ``string``, separated by ``sep``, as a 1-D array."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(*args: Any, **kwargs: Any) -> Array:
    """Not provided, as in ``jnp``: use ``fnp.asarray(np.fromfile(...))`` outside ``jit``."""
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use with JIT and "
        "other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) instead, although care should "
        "be taken if np.fromfile is used within a jax transformations because of its potential side-effect of "
        "consuming the file object."
    )


def fromiter(*args: Any, **kwargs: Any) -> Array:
    """Not provided, as in ``jnp``: use ``fnp.asarray(np.fromiter(...))`` outside ``jit``."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use with JIT and "
        "other JAX transformations. Consider using jnp.asarray(np.fromiter(...)) instead, although care should "
        "be taken if np.fromiter is used within a jax transformations because of its potential side-effect of "
        "consuming the iterable object."
    )


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An array from an object implementing the DLPack protocol (``__dlpack__``), read through
    NumPy (so from host memory); fcore arrays are immutable, so the data is always copied."""
    if device is not None:
        raise NotImplementedError("fnp.from_dlpack: the device argument is not supported; use fcore.device_put")
    if copy is False:
        raise ValueError("fnp.from_dlpack: copy=False is not possible, fcore arrays own their data")
    return asarray(np.from_dlpack(x))


def load(file: IO[bytes] | str | os.PathLike[Any], *args: Any, **kwargs: Any) -> Any:
    """``np.load``, with arrays returned as fcore arrays; bfloat16 arrays, which NumPy saves as
    two-byte voids, are read back as bfloat16 (``.npz`` archives are returned as NumPy's)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(ml_dtypes.bfloat16)
        try:
            return asarray(out)
        except (TypeError, AssertionError):  # a dtype fcore does not support
            pass
    return out
