"""``fcore.scipy``: the corner of ``jax.scipy`` fcore provides (``special``, ``stats``, ``linalg``)."""

from fcore.scipy import linalg as linalg
from fcore.scipy import optimize as optimize
from fcore.scipy import signal as signal
from fcore.scipy import special as special
from fcore.scipy import stats as stats
