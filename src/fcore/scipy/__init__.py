"""``fcore.scipy``: ``jax.scipy``'s modules (``special``, ``stats``, ``linalg``, ``optimize``,
``signal``, ``fft``, ``integrate``, ``interpolate``, ``ndimage``, ``cluster``, ``spatial``, ``sparse``).

The submodules are imported on first use (``fcore.scipy.optimize`` works without an import
statement of its own): together they cost ~0.1 s, which ``import fcore`` should not pay.
"""

import importlib as _importlib
import typing as _typing
from types import ModuleType as _ModuleType

if _typing.TYPE_CHECKING:
    from fcore.scipy import cluster as cluster
    from fcore.scipy import fft as fft
    from fcore.scipy import integrate as integrate
    from fcore.scipy import interpolate as interpolate
    from fcore.scipy import linalg as linalg
    from fcore.scipy import ndimage as ndimage
    from fcore.scipy import optimize as optimize
    from fcore.scipy import signal as signal
    from fcore.scipy import sparse as sparse
    from fcore.scipy import spatial as spatial
    from fcore.scipy import special as special
    from fcore.scipy import stats as stats

_SUBMODULES = frozenset(
    {"cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse", "spatial",
     "special", "stats"}
)


def __getattr__(name: str) -> _ModuleType:
    if name in _SUBMODULES:
        return _importlib.import_module(f"fcore.scipy.{name}")
    raise AttributeError(f"module 'fcore.scipy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(_SUBMODULES | {name for name in globals() if name.startswith("__")})
