"""The Fresnel integrals ``fresnel(x) = (S(x), C(x))`` of ``fcore.scipy.special``: Cephes'
``fresnl`` (``fresnlf`` in single precision) as JAX ports it from SciPy, with its jvp."""

from __future__ import annotations

from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.scipy._util import promote_args_inexact

__all__ = ["fresnel"]

_SN32 = [1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6, -3.120693124703272e-4,
         7.244727626597022e-3, -9.228055941124598e-2, 5.235987735681432e-1]
_CN32 = [1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5, -1.604381798862293e-3,
         2.818489036795073e-2, -2.467398198317899e-1, 9.999999760004487e-1]
_FN32 = [-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9, 7.343848463587323e7,
         -8.732356681548485e5, 8.560515466275470e3, -1.032877601091159e2, 2.999401847870011e0]
_GN32 = [-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8, 6.492611570598858e6,
         -7.787789623358162e4, 8.602931494734327e2, -1.493439396592284e1, 9.999841934744914e-1]
_SN64 = [-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7, 2.54890880573376359104e9,
         -4.42979518059697779103e10, 3.18016297876567817986e11]
_SD64 = [1.00000000000000000000e0, 2.81376268889994315696e2, 4.55847810806532581675e4, 5.17343888770096400730e6,
         4.19320245898111231129e8, 2.24411795645340920940e10, 6.07366389490084639049e11]
_CN64 = [-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
         1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1]
_CD64 = [3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
         1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2, 1.00000000000000000118e0]
_FN64 = [4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2, 3.45017939782574027900e-4,
         4.63613749287867322088e-6, 3.05568983790257605827e-8, 1.02304514164907233465e-10, 1.72010743268161828879e-13,
         1.34283276233062758925e-16, 3.76329711269987889006e-20]
_FD64 = [1.00000000000000000000e0, 7.51586398353378947175e-1, 1.16888925859191382142e-1, 6.44051526508858611005e-3,
         1.55934409164153020873e-4, 1.84627567348930545870e-6, 1.12699224763999035261e-8, 3.60140029589371370404e-11,
         5.88754533621578410010e-14, 4.52001434074129701496e-17, 1.25443237090011264384e-20]
_GN64 = [5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2, 6.84079380915393090172e-4,
         1.15138826111884280931e-5, 9.82852443688422223854e-8, 4.45344415861750144738e-10, 1.08268041139020870318e-12,
         1.37555460633261799868e-15, 8.36354435630677421531e-19, 1.86958710162783235106e-22]
_GD64 = [1.00000000000000000000e0, 1.47495759925128324529e0, 3.37748989120019970451e-1, 2.53603741420338795122e-2,
         8.14679107184306179049e-4, 1.27545075667729118702e-5, 1.04314589657571990585e-7, 4.60680728146520428211e-10,
         1.10273215066240270757e-12, 1.38796531259578871258e-15, 8.39158816283118707363e-19, 1.86958710162783236342e-22]


def _sincospisquaredhalf_impl(x: Array) -> tuple[Array, Array]:
    """``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)``, accurately: with ``s = x % 2``,
    ``(x^2 / 2) % 2 = (s (x - s/2)) % 2`` (SciPy's ``sinpi``/``cospi``)."""
    x = fnp.abs(x)
    s = fnp.fmod(x, 2.0)
    r = fnp.fmod(s * (x - s / 2), 2.0)
    sinpi = fnp.where(r < 0.5, fnp.sin(np.pi * r),
                      fnp.where(r > 1.5, fnp.sin(np.pi * (r - 2.0)), -fnp.sin(np.pi * (r - 1.0))))
    cospi = fnp.where(r == 0.5, 0.0,
                      fnp.where(r < 1.0, -fnp.sin(np.pi * (r - 0.5)), fnp.sin(np.pi * (r - 1.5))))
    return sinpi, cospi


_sincospisquaredhalf = jit(_sincospisquaredhalf_impl)


def _poly(c: list[float], dt: Any, x: Array) -> Array:
    return fnp.polyval(np.array(c, dtype=dt), x)


@custom_jvp
def fresnel(x: ArrayLike) -> tuple[Array, Array]:
    """The Fresnel integrals ``S(x) = int_0^x sin(pi t^2 / 2) dt`` and ``C(x)`` (with cos);
    16-bit floats are computed in float32; accurate on ``[-10, 10]`` as Cephes'."""
    (xxa,) = promote_args_inexact("fresnel", x)
    original_dtype = xxa.dtype
    if dtypes.is_complex(xxa.dtype):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if xxa.dtype in (dtypes.float32, dtypes.float16, dtypes.bfloat16):
        xxa = xxa.astype(np.float32)
    elif xxa.dtype != dtypes.float64:
        raise NotImplementedError(f"Support for {xxa.dtype} dtype is not implemented yet.")
    single = xxa.dtype == dtypes.float32
    dt = xxa.dtype
    x_ = fnp.abs(xxa)
    x2 = x_ * x_
    s_inf = c_inf = 0.5
    t = x2 * x2
    if single:
        s_small = x_ * x2 * _poly(_SN32, dt, t)
        c_small = x_ * _poly(_CN32, dt, t)
    else:
        s_small = x_ * x2 * _poly(_SN64, dt, t) / _poly(_SD64, dt, t)
        c_small = x_ * _poly(_CN64, dt, t) / _poly(_CD64, dt, t)
    sinpi, cospi = _sincospisquaredhalf(x_)
    c_large: Array | float
    s_large: Array | float
    if single:
        c_large, s_large = c_inf, s_inf
    else:
        c_large = 0.5 + 1 / (np.pi * x_) * sinpi
        s_large = 0.5 - 1 / (np.pi * x_) * cospi
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single:
        f = 1.0 - u * _poly(_FN32, dt, u)
        g = t * _poly(_GN32, dt, u)
    else:
        f = 1.0 - u * _poly(_FN64, dt, u) / _poly(_FD64, dt, u)
        g = t * _poly(_GN64, dt, u) / _poly(_GD64, dt, u)
    t = np.pi * x_
    c_other = 0.5 + (f * sinpi - g * cospi) / t
    s_other = 0.5 - (f * cospi + g * sinpi) / t
    isinf = fnp.isinf(xxa)
    small = x2 < 2.5625
    large = x_ > 36974.0
    s = fnp.where(isinf, s_inf, fnp.where(small, s_small, fnp.where(large, s_large, s_other)))
    c = fnp.where(isinf, c_inf, fnp.where(small, c_small, fnp.where(large, c_large, c_other)))
    neg = xxa < 0.0
    s = fnp.where(neg, -s, s)
    c = fnp.where(neg, -c, c)
    if original_dtype != xxa.dtype:
        s, c = s.astype(original_dtype), c.astype(original_dtype)
    return s, c


@fresnel.defjvp
def _fresnel_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Any, tuple[Array, Array]]:
    (x,), (x_dot,) = primals, tangents
    sinpi, cospi = _sincospisquaredhalf(x)
    return fresnel(x), (sinpi * x_dot, cospi * x_dot)
