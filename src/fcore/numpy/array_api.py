"""The Array API standard's namespace metadata for ``fcore.numpy``: ``__array_api_version__``
and ``__array_namespace_info__()`` (the default dtypes, the dtypes of each kind, capabilities,
devices), as ``jax.numpy`` reports them."""

from __future__ import annotations

from typing import Any

from fcore.config import x64_enabled
from fcore.ir import dtypes
from fcore.ir.dtypes import DType

__array_api_version__ = "2024.12"

_KINDS: dict[str, Any] = {
    "bool": dtypes.is_bool,
    "signed integer": dtypes.is_signed_int,
    "unsigned integer": dtypes.is_unsigned_int,
    "integral": dtypes.is_integer,
    "real floating": dtypes.is_floating,
    "complex floating": dtypes.is_complex,
    "numeric": lambda d: dtypes.is_integer(d) or dtypes.is_inexact(d),
}


class ArrayNamespaceInfo:
    """What ``__array_namespace_info__()`` returns."""

    _capabilities = {
        "boolean indexing": False,  # within transformations
        "data-dependent shapes": False,  # within transformations
        "max dimensions": 64,  # XLA's limit
    }

    def _array_api_dtypes(self) -> list[DType]:
        names = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"}
        if x64_enabled():
            names |= {"int64", "uint64", "float64", "complex128"}
        return [d for d in dtypes.SUPPORTED_DTYPES if d.name in names]

    def default_device(self) -> None:
        return None

    def devices(self) -> list[Any]:
        """``None`` (uncommitted) and the backend's devices."""
        from fcore.api.jit import devices

        return [None, *devices()]

    def capabilities(self) -> dict[str, Any]:
        return dict(self._capabilities)

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType]:
        return {
            "real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(),
            "indexing": dtypes.default_int_dtype(),
        }

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, DType]:
        """The Array API dtypes of ``kind`` (a kind name, or a tuple of them), by name."""
        available = self._array_api_dtypes()
        kinds = ("numeric", "bool") if kind is None else kind if isinstance(kind, tuple) else (kind,)
        out: dict[str, DType] = {}
        for k in kinds:
            out |= {d.name: d for d in available if _KINDS[k](d)}
        return out


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The Array API's inspection object for this namespace."""
    return ArrayNamespaceInfo()
