"""``fcore.scipy.special``: ``jax.scipy.special``'s functions with its formulas, dtypes and
custom derivatives. ``lpmn`` and ``lpmn_values`` are deprecated as in JAX (a
``DeprecationWarning`` on first access); ``sph_harm`` was removed (use ``sph_harm_y``)."""

import warnings as _warnings
from typing import Any as _Any

from fcore.scipy.special._bessel import bessel_jn as bessel_jn, i0 as i0, i0e as i0e, i1 as i1, i1e as i1e
from fcore.scipy.special._entropy import (
    boxcox as boxcox, boxcox1p as boxcox1p, entr as entr, expit as expit, kl_div as kl_div,
    log_softmax as log_softmax, logit as logit, logsumexp as logsumexp, rel_entr as rel_entr, softmax as softmax,
    xlog1py as xlog1py, xlogy as xlogy,
)
from fcore.scipy.special._error import (
    dawsn as dawsn, erf as erf, erfc as erfc, erfcx as erfcx, erfinv as erfinv, log_ndtr as log_ndtr, ndtr as ndtr,
    ndtri as ndtri, wofz as wofz,
)
from fcore.scipy.special._expint import exp1 as exp1, expi as expi, expn as expn, sici as sici, spence as spence
from fcore.scipy.special._fresnel import fresnel as fresnel
from fcore.scipy.special._gamma import (
    bernoulli as bernoulli, beta as beta, betainc as betainc, betaln as betaln, comb as comb, digamma as digamma,
    factorial as factorial, gamma as gamma, gammainc as gammainc, gammaincc as gammaincc, gammaln as gammaln,
    gammasgn as gammasgn, loggamma as loggamma, multigammaln as multigammaln, poch as poch, polygamma as polygamma,
    zeta as zeta,
)
from fcore.scipy.special._hypergeometric import hyp1f1 as hyp1f1, hyp2f1 as hyp2f1
from fcore.scipy.special._legendre import sph_harm_y as sph_harm_y
from fcore.scipy.special._owens_t import owens_t as owens_t

from fcore.scipy.special import _legendre

_deprecations: dict[str, tuple[str, _Any]] = {
    "lpmn": ("jax.scipy.special.lpmn is deprecated; no replacement is planned.", _legendre.lpmn),
    "lpmn_values": ("jax.scipy.special.lpmn_values is deprecated; no replacement is planned.", _legendre.lpmn_values),
    "sph_harm": ("jax.scipy.special.sph_harm was deprecated in v0.7.0 and removed in v0.10.0. "
                 "Use jax.scipy.special.sph_harm_y instead.", None),
}


_warned: set[str] = set()


def __getattr__(name: str) -> _Any:
    """The deprecated names, as JAX's ``deprecation_getattr``: a warning on first access."""
    if name in _deprecations:
        message, fn = _deprecations[name]
        if fn is None:
            raise AttributeError(message)
        if name not in _warned:
            _warned.add(name)
            _warnings.warn(message, DeprecationWarning, stacklevel=2)
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
