"""``fcore.scipy.spatial.transform``: ``Rotation`` (unit quaternions, scalar last) and
``Slerp``, JAX's port of SciPy's classes: named tuples, hence pytrees, whose conversions are
mapped over leading axes with ``fnp.vectorize`` (a stack of rotations is a ``(N, 4)`` quaternion)."""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore.config import numpy_rank_promotion
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy import linalg as np_linalg

__all__ = ["Rotation", "Slerp"]


def _vectorized(signature: str) -> Callable[[Callable[..., Array]], Callable[..., Array]]:
    def wrap(f: Callable[..., Array]) -> Callable[..., Array]:
        vectorized: Callable[..., Array] = fnp.vectorize(f, signature=signature)
        return vectorized
    return wrap


def _check_seq(seq: str) -> bool:
    """Whether ``seq`` names extrinsic (lower-case) axes; errors as SciPy words them."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return extrinsic


class Rotation(typing.NamedTuple):
    """Rotation in 3 dimensions, held as a unit quaternion ``quat`` (``(4,)``, or ``(N, 4)``
    for a stack of rotations), scalar last. Build one with the ``from_*`` class methods."""

    quat: Array

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """The rotations stacked into one."""
        return cls(fnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: ArrayLike, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes ``seq`` (``"xyz"`` extrinsic, ``"XYZ"`` intrinsic)."""
        num_axes = len(seq)
        if num_axes < 1 or num_axes > 3:
            raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
        extrinsic = _check_seq(seq)
        axes = fnp.array([_elementary_basis_index(x) for x in seq.lower()])
        return cls(_elementary_quat_compose(fnp.atleast_1d(angles), axes, not extrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: ArrayLike) -> Rotation:
        """From rotation matrices ``(..., 3, 3)``."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: ArrayLike) -> Rotation:
        """From modified Rodrigues parameters."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: ArrayLike) -> Rotation:
        """From quaternions (scalar last), normalized."""
        return cls(_normalize_quaternion(quat))

    @classmethod
    def from_rotvec(cls, rotvec: ArrayLike, degrees: bool = False) -> Rotation:
        """From rotation vectors (axis times angle)."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (``num`` must be ``None``, as in JAX)."""
        assert num is None
        return cls(fnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Array, num: int | None = None) -> Rotation:
        """Not implemented, as in JAX."""
        raise NotImplementedError()

    def __getitem__(self, indexer: Any) -> Rotation:  # type: ignore[override]
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]
        """The composition: ``self`` applied after ``other``."""
        return Rotation.from_quat(_compose_quat(self.quat, other.quat))

    def apply(self, vectors: ArrayLike, inverse: bool = False) -> Array:
        """The rotated vectors (rotated by the inverse with ``inverse``)."""
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Array:
        """Euler angles about the three axes ``seq``."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        extrinsic = _check_seq(seq)
        axes = fnp.array([_elementary_basis_index(x) for x in seq.lower()])
        with numpy_rank_promotion("allow"):  # as JAX: the core function mixes ranks
            return _compute_euler_from_quat(self.quat, axes, extrinsic, degrees)

    def as_matrix(self) -> Array:
        """Rotation matrices ``(..., 3, 3)``."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Array:
        """Modified Rodrigues parameters."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Array:
        """Rotation vectors (angle in ``[0, pi]`` times the unit axis)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """Quaternions, scalar last (first with ``scalar_first``); ``canonical`` picks the
        sign with a non-negative scalar part."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        return fnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation."""
        return Rotation(_inv(self.quat))

    def magnitude(self) -> Array:
        """The rotation angle, in radians."""
        return _magnitude(self.quat)

    def mean(self, weights: ArrayLike | None = None) -> Rotation:
        """The (weighted) mean of a stack of rotations (Markley's quaternion average)."""
        w = (fnp.ones(self.quat.shape[0], dtype=self.quat.dtype) if weights is None
             else fnp.asarray(weights, dtype=self.quat.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of rotations, got "
                             f"{w.shape[0]} values and {len(self)} rotations.")
        k = fnp.dot(w[None, :] * self.quat.T, self.quat)
        _, v = np_linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation rather than a stack."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of rotations between key ``times``; build it with
    :meth:`Slerp.init` and call it at the times to interpolate."""

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: ArrayLike, rotations: Rotation) -> Slerp:
        """The interpolator of the stacked ``rotations`` at the increasing ``times``."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times_arr = fnp.asarray(times, dtype=rotations.quat.dtype)
        if times_arr.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got {times_arr.ndim} dimensions.")
        if times_arr.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of timestamps given, got "
                             f"{len(rotations)} rotations and {times_arr.shape[0]} timestamps.")
        new_rotations = Rotation(rotations.as_quat()[:-1])
        return cls(times=times_arr, timedelta=fnp.diff(times_arr), rotations=new_rotations,
                   rotvecs=(new_rotations.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec())

    def __call__(self, times: ArrayLike) -> Rotation:
        """The interpolated rotations at ``times`` (a scalar gives one rotation)."""
        compute_times = fnp.asarray(times, dtype=self.times.dtype)
        if compute_times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single_time = compute_times.ndim == 0
        compute_times = fnp.atleast_1d(compute_times)
        ind = fnp.maximum(fnp.searchsorted(self.times, compute_times) - 1, 0)
        alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
        result = Rotation(self.rotations.quat[ind]) * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return Rotation(result.quat[0]) if single_time else result


@_vectorized("(m,m),(m),()->(m)")
def _apply(matrix: Array, vector: Array, inverse: Array) -> Array:
    return fnp.where(inverse, matrix.T, matrix) @ vector


@_vectorized("(m)->(n,n)")
def _as_matrix(quat: Array) -> Array:
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return fnp.array([[+x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                      [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
                      [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]])


@_vectorized("(m)->(n)")
def _as_mrp(quat: Array) -> Array:
    sign = fnp.where(quat[3] < 0, -1.0, 1.0)
    return sign * quat[:3] / (1.0 + sign * quat[3])


@_vectorized("(m),()->(n)")
def _as_rotvec(quat: Array, degrees: Array) -> Array:
    quat = fnp.where(quat[3] < 0, -quat, quat)  # w > 0, so 0 <= angle <= pi
    angle = 2.0 * fnp.arctan2(_vector_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large_scale = angle / fnp.sin(angle / 2)
    scale = fnp.where(angle <= 1e-3, small_scale, large_scale)
    scale = fnp.where(degrees, fnp.rad2deg(scale), scale)
    return scale * fnp.array(quat[:3])


@_vectorized("(n),(n)->(n)")
def _compose_quat(p: Array, q: Array) -> Array:
    cross = fnp.cross(p[:3], q[:3])
    return fnp.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                      p[3] * q[1] + q[3] * p[1] + cross[1],
                      p[3] * q[2] + q[3] * p[2] + cross[2],
                      p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@_vectorized("(m),(l),(),()->(n)")
def _compute_euler_from_quat(quat: Array, axes: Array, extrinsic: Array, degrees: Array) -> Array:
    angle_first = fnp.where(extrinsic, 0, 2)
    angle_third = fnp.where(extrinsic, 2, 0)
    axes = fnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = fnp.where(symmetric, 3 - i - j, k)
    sign = fnp.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    eps = 1e-7
    a = fnp.where(symmetric, quat[3], quat[3] - quat[j])
    b = fnp.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = fnp.where(symmetric, quat[j], quat[j] + quat[3])
    d = fnp.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = fnp.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b)))
    case = fnp.where(fnp.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = fnp.where(fnp.abs(angles[1]) <= eps, 1, case)
    half_sum = fnp.arctan2(b, a)
    half_diff = fnp.arctan2(d, c)
    angles = angles.at[0].set(fnp.where(case == 1, 2 * half_sum, 2 * half_diff * fnp.where(extrinsic, -1, 1)))
    angles = angles.at[angle_first].set(fnp.where(case == 0, half_sum - half_diff, angles[angle_first]))
    angles = angles.at[angle_third].set(fnp.where(case == 0, half_sum + half_diff, angles[angle_third]))
    angles = angles.at[angle_third].set(fnp.where(symmetric, angles[angle_third], angles[angle_third] * sign))
    angles = angles.at[1].set(fnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return fnp.where(degrees, fnp.rad2deg(angles), angles)


def _elementary_basis_index(axis: str) -> int:
    if axis in ("x", "y", "z"):
        return "xyz".index(axis)
    raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}")


@_vectorized("(m),(m),(),()->(n)")
def _elementary_quat_compose(angles: Array, axes: Array, intrinsic: Array, degrees: Array) -> Array:
    angles = fnp.where(degrees, fnp.deg2rad(angles), angles)
    result = _make_elementary_quat(axes[0], angles[0])
    for idx in range(1, len(axes)):
        quat = _make_elementary_quat(axes[idx], angles[idx])
        result = fnp.where(intrinsic, _compose_quat(result, quat), _compose_quat(quat, result))
    return result


@_vectorized("(m),()->(n)")
def _from_rotvec(rotvec: Array, degrees: Array) -> Array:
    rotvec = fnp.where(degrees, fnp.deg2rad(rotvec), rotvec)
    angle = _vector_norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large_scale = fnp.sin(angle / 2) / angle
    scale = fnp.where(angle <= 1e-3, small_scale, large_scale)
    return fnp.hstack([scale * rotvec, fnp.cos(angle / 2)])


@_vectorized("(m,m)->(n)")
def _from_matrix(matrix: Array) -> Array:
    trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    decision = fnp.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], trace], dtype=matrix.dtype)
    i = fnp.argmax(decision)
    j = (i + 1) % 3
    k = (j + 1) % 3
    quat_012 = fnp.empty(4, dtype=matrix.dtype)
    quat_012 = quat_012.at[i].set(1 - decision[3] + 2 * matrix[i, i])
    quat_012 = quat_012.at[j].set(matrix[j, i] + matrix[i, j])
    quat_012 = quat_012.at[k].set(matrix[k, i] + matrix[i, k])
    quat_012 = quat_012.at[3].set(matrix[k, j] - matrix[j, k])
    quat_3 = fnp.empty(4, dtype=matrix.dtype)
    quat_3 = quat_3.at[0].set(matrix[2, 1] - matrix[1, 2])
    quat_3 = quat_3.at[1].set(matrix[0, 2] - matrix[2, 0])
    quat_3 = quat_3.at[2].set(matrix[1, 0] - matrix[0, 1])
    quat_3 = quat_3.at[3].set(1 + decision[3])
    return _normalize_quaternion(fnp.where(i != 3, quat_012, quat_3))


@_vectorized("(m)->(n)")
def _from_mrp(mrp: Array) -> Array:
    mrp_squared_plus_1 = fnp.dot(mrp, mrp) + 1
    return fnp.hstack([2 * mrp[:3], (2 - mrp_squared_plus_1)]) / mrp_squared_plus_1


@_vectorized("(n)->(n)")
def _inv(quat: Array) -> Array:
    return quat * fnp.array([-1, -1, -1, 1], dtype=quat.dtype)


@_vectorized("(n)->()")
def _magnitude(quat: Array) -> Array:
    return 2.0 * fnp.arctan2(_vector_norm(quat[:3]), fnp.abs(quat[3]))


@_vectorized("(),()->(n)")
def _make_elementary_quat(axis: Array, angle: Array) -> Array:
    quat = fnp.zeros(4, dtype=angle.dtype)
    quat = quat.at[3].set(fnp.cos(angle / 2.0))
    elementary: Array = quat.at[axis].set(fnp.sin(angle / 2.0))
    return elementary


@_vectorized("(n)->(n)")
def _normalize_quaternion(quat: Array) -> Array:
    return quat / _vector_norm(quat)


@_vectorized("(n)->()")
def _vector_norm(vector: Array) -> Array:
    return fnp.sqrt(fnp.dot(vector, vector))


@_vectorized("(n)->(n)")
def _make_canonical(quat: Array) -> Array:
    is_neg = quat < 0
    is_zero = quat == 0
    neg = (is_neg[3] | (is_zero[3] & is_neg[0]) | (is_zero[3] & is_zero[0] & is_neg[1])
           | (is_zero[3] & is_zero[0] & is_zero[1] & is_neg[2]))
    return fnp.where(neg, -quat, quat)
