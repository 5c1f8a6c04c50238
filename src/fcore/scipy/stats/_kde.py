"""``gaussian_kde``: kernel density estimation with Gaussian kernels, as JAX's (a frozen
dataclass registered as a pytree, so it passes through ``jit``/``vmap``/``grad``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore.api.jit import jit
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.scipy import special
from fcore.scipy import linalg
from fcore.scipy._util import promote_dtypes_inexact
from fcore.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]

BwMethod = None | str | ArrayLike | Callable[[Any], Array]


def _check_arraylike(name: str, x: object) -> None:
    if not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position 0.")


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of ``dataset`` (``(d, n)``: ``n`` points in ``d``
    dimensions), with Scott's or Silverman's bandwidth, a scalar factor or a callable."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: ArrayLike, bw_method: BwMethod = None, weights: ArrayLike | None = None) -> None:
        _check_arraylike("gaussian_kde", dataset)
        data = fnp.atleast_2d(dataset)
        if dtypes.is_complex(data.dtype):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not data.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = data.shape
        if weights is not None:
            _check_arraylike("gaussian_kde", weights)
            data, w = promote_dtypes_inexact(data, weights)
            w = fnp.atleast_1d(w)
            w = w / fnp.sum(w)
            if w.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(w) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (data,) = promote_dtypes_inexact(data)
            w = fnp.full(n, 1.0 / n, dtype=data.dtype)
        self._setattr("dataset", data)
        self._setattr("weights", w)
        neff = self._setattr("neff", 1 / fnp.sum(w ** 2))
        bw_method = "scott" if bw_method is None else bw_method
        factor: Any
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = fnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = fnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif fnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_covariance = fnp.atleast_2d(fnp.cov(data, rowvar=True, bias=False, aweights=w))
        data_inv_cov = fnp.linalg.inv(data_covariance)
        self._setattr("covariance", data_covariance * factor ** 2)
        self._setattr("inv_cov", data_inv_cov / factor ** 2)

    def _setattr(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)  # a frozen dataclass is built field by field here
        return value

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: tuple[Any, ...]) -> gaussian_kde:
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children):
            kde._setattr(name, value)
        return kde

    @property
    def d(self) -> int:
        return int(self.dataset.shape[0])

    @property
    def n(self) -> int:
        return int(self.dataset.shape[1])

    def evaluate(self, points: ArrayLike) -> Array:
        """The estimated density at ``points`` (``(d, m)``, or ``m`` points when ``d`` is 1)."""
        _check_arraylike("evaluate", points)
        pts = self._reshape_points(points)
        result: Array = _gaussian_kernel_eval(False, self.dataset.T, self.weights[:, None], pts.T, self.inv_cov)
        return result[:, 0]

    def __call__(self, points: ArrayLike) -> Array:
        return self.evaluate(points)

    def integrate_gaussian(self, mean: ArrayLike, cov: ArrayLike) -> Array:
        """The integral of the estimate times a Gaussian of ``mean`` and ``cov``."""
        mean_ = fnp.atleast_1d(fnp.squeeze(mean))
        cov_ = fnp.atleast_2d(cov)
        if mean_.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov_.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov_)
        norm = 1.0 / (fnp.sqrt(2 * np.pi) ** self.d * fnp.prod(fnp.diag(chol[0])))
        return _gaussian_kernel_convolve(chol, norm, self.dataset, self.weights, mean_)

    def integrate_box_1d(self, low: ArrayLike, high: ArrayLike) -> Array:
        """The integral of a 1-D estimate between the scalars ``low`` and ``high``."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if fnp.ndim(low) != 0 or fnp.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        out: Array = _integrate_box_1d(self, low, high)
        return out

    def integrate_kde(self, other: gaussian_kde) -> Array:
        """The integral of the product of two estimates."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (fnp.sqrt(2 * np.pi) ** self.d * fnp.prod(fnp.diag(chol[0])))
        sm, lg = (self, other) if self.n < other.n else (other, self)
        result = vmap(partial(_gaussian_kernel_convolve, chol, norm, lg.dataset, lg.weights), in_axes=1)(sm.dataset)
        return fnp.sum(result * sm.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Array:
        """Random samples from the estimate (needs ``fcore.random``)."""
        from fcore import random

        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, fnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                         shape=shape, dtype=self.dataset.dtype).T
        out: Array = self.dataset[:, ind] + eps
        return out

    def pdf(self, x: ArrayLike) -> Array:
        """The estimated density (``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x: ArrayLike) -> Array:
        """The log of the estimated density, computed in log space."""
        _check_arraylike("logpdf", x)
        pts = self._reshape_points(x)
        result: Array = _gaussian_kernel_eval(True, self.dataset.T, self.weights[:, None], pts.T, self.inv_cov)
        return result[:, 0]

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Array:
        """Not supported (as in JAX): use ``integrate_box_1d``."""
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: BwMethod = None) -> None:
        """Not supported (as in JAX): the estimate is immutable."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: ArrayLike) -> Array:
        pts: Array = fnp.atleast_2d(points)
        if dtypes.is_complex(pts.dtype):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = pts.shape
        if d != self.d:
            if d == 1 and m == self.d:
                pts = fnp.reshape(pts, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return pts


def _integrate_box_1d_impl(kde: gaussian_kde, low: ArrayLike, high: ArrayLike) -> Array:
    sigma = fnp.squeeze(fnp.sqrt(kde.covariance))
    lo = fnp.squeeze((low - kde.dataset) / sigma)
    hi = fnp.squeeze((high - kde.dataset) / sigma)
    return fnp.sum(kde.weights * (special.ndtr(hi) - special.ndtr(lo)))


_integrate_box_1d = jit(_integrate_box_1d_impl)


def _gaussian_kernel_convolve(chol: tuple[Array, bool], norm: Array, target: Array, weights: Array, mean: Array) -> Array:
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * fnp.sum(diff * alpha, axis=0)
    return norm * fnp.sum(fnp.exp(-arg) * weights)


def _gaussian_kernel_eval_impl(in_log: bool, points: Array, values: Array, xi: Array, precision: Array) -> Array:
    points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = fnp.dot(points, whitening)
    xi = fnp.dot(xi, whitening)
    log_norm = fnp.sum(fnp.log(fnp.diag(whitening))) - 0.5 * d * fnp.log(2 * np.pi)

    def kernel(x_test: Array, x_train: Array, y_train: Array) -> Array:
        arg = log_norm - 0.5 * fnp.sum(fnp.square(x_train - x_test))
        return fnp.log(y_train) + arg if in_log else y_train * fnp.exp(arg)

    def reduced_kernel(x: Array) -> Array:
        terms: Array = vmap(kernel, in_axes=(None, 0, 0))(x, points, values)
        return special.logsumexp(terms, axis=0) if in_log else fnp.sum(terms, axis=0)

    out: Array = vmap(reduced_kernel)(xi)
    return out


_gaussian_kernel_eval = jit(_gaussian_kernel_eval_impl, static_argnums=0)
