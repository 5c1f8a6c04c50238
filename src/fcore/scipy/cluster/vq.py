"""``fcore.scipy.cluster.vq``: ``vq``, assigning each observation to its nearest code."""

from __future__ import annotations

import fcore.numpy as fnp
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy import linalg as np_linalg
from fcore.numpy._promotion import asarray, promote_dtypes

__all__ = ["vq"]


def vq(obs: ArrayLike, code_book: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """For each row of ``obs`` (``(M, N)``, or ``(M,)`` for scalars), the index of the nearest
    row of ``code_book`` in Euclidean distance, and that distance (``check_finite`` is unused)."""
    del check_finite
    name = "scipy.cluster.vq.vq"
    obs_arr, cb_arr = promote_dtypes(asarray(obs, name, 0), asarray(code_book, name, 1), name=name, inexact=True)
    if obs_arr.ndim != cb_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, cb_arr = obs_arr[..., None], cb_arr[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: np_linalg.norm(ob[None] - cb_arr, axis=-1))(obs_arr)
    code = fnp.argmin(dist, axis=-1)
    return code, vmap(lambda d, c: d[c])(dist, code)
