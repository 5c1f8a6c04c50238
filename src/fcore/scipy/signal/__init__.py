"""``fcore.scipy.signal``: ``jax.scipy.signal``'s convolutions and correlations (direct and
FFT), ``detrend``, and the windowed-FFT estimates ``stft``, ``istft``, ``csd`` and ``welch``."""

from fcore.scipy.signal._convolve import (
    convolve as convolve,
    convolve2d as convolve2d,
    correlate as correlate,
    correlate2d as correlate2d,
    detrend as detrend,
    fftconvolve as fftconvolve,
)
from fcore.scipy.signal._spectral import csd as csd, istft as istft, stft as stft, welch as welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft", "welch"]
