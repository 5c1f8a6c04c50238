"""``fcore.scipy``: ``jax.scipy``'s modules (``special``, ``stats``, ``linalg``, ``optimize``,
``signal``, ``fft``, ``integrate``, ``interpolate``, ``ndimage``, ``cluster``, ``spatial``, ``sparse``)."""

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
