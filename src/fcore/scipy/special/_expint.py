"""Exponential, sine and cosine integrals and the dilogarithm of ``fcore.scipy.special``:
``expi``, ``exp1``, ``expn``, ``sici``, ``spence``, ported from Cephes (``ei.c``, ``expn.c``,
``sici.c``, ``spence.c``) as JAX does, with JAX's custom derivatives."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.scipy.special._gamma import gammaln
from fcore.scipy._util import check_f32_f64, const, finfo_eps, piecewise, promote_args_inexact, vectorize

__all__ = ["expi", "exp1", "expn", "sici", "spence"]


# -- Ei(x) on the intervals of Cephes' ei.c ---------------------------------------------------------
def _expint1(x: Array) -> Array:
    # 0 < x <= 2
    A = np.array([
        -5.350447357812542947283e0,
        2.185049168816613393830e2,
        -4.176572384826693777058e3,
        5.541176756393557601232e4,
        -3.313381331178144034309e5,
        1.592627163384945414220e6,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        -5.250547959112862969197e1,
        1.259616186786790571525e3,
        -1.756549581973534652631e4,
        1.493062117002725991967e5,
        -7.294949239640527645655e5,
        1.592627163384945429726e6,
    ], dtype=x.dtype)
    f = fnp.polyval(A, x) / fnp.polyval(B, x)
    return x * f + np.euler_gamma + fnp.log(x)


def _eval_expint_k(A: ArrayLike, B: ArrayLike, x: Array) -> Array:
    # helper function for all subsequent intervals
    one = const(x, 1.0)
    w = one / x
    f = fnp.polyval(A, w) / fnp.polyval(B, w)
    f = w * f + one
    return fnp.exp(x) * w * f


def _expint2(x: Array) -> Array:
    # 2 <= x < 4
    A = np.array([
        1.981808503259689673238e-2,
        -1.271645625984917501326e0,
        -2.088160335681228318920e0,
        2.755544509187936721172e0,
        -4.409507048701600257171e-1,
        4.665623805935891391017e-2,
        -1.545042679673485262580e-3,
        7.059980605299617478514e-5,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        1.476498670914921440652e0,
        5.629177174822436244827e-1,
        1.699017897879307263248e-1,
        2.291647179034212017463e-2,
        4.450150439728752875043e-3,
        1.727439612206521482874e-4,
        3.953167195549672482304e-5,
    ], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint3(x: Array) -> Array:
    # 4 <= x <= 8
    A = np.array([
        -1.373215375871208729803e0,
        -7.084559133740838761406e-1,
        1.580806855547941010501e0,
        -2.601500427425622944234e-1,
        2.994674694113713763365e-2,
        -1.038086040188744005513e-3,
        4.371064420753005429514e-5,
        2.141783679522602903795e-6,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        8.585231423622028380768e-1,
        4.483285822873995129957e-1,
        7.687932158124475434091e-2,
        2.449868241021887685904e-2,
        8.832165941927796567926e-4,
        4.590952299511353531215e-4,
        -4.729848351866523044863e-6,
        2.665195537390710170105e-6,
    ], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint4(x: Array) -> Array:
    # 8 <= x <= 16
    A = np.array([
        -2.106934601691916512584e0,
        1.732733869664688041885e0,
        -2.423619178935841904839e-1,
        2.322724180937565842585e-2,
        2.372880440493179832059e-4,
        -8.343219561192552752335e-5,
        1.363408795605250394881e-5,
        -3.655412321999253963714e-7,
        1.464941733975961318456e-8,
        6.176407863710360207074e-10,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        -2.298062239901678075778e-1,
        1.105077041474037862347e-1,
        -1.566542966630792353556e-2,
        2.761106850817352773874e-3,
        -2.089148012284048449115e-4,
        1.708528938807675304186e-5,
        -4.459311796356686423199e-7,
        1.394634930353847498145e-8,
        6.150865933977338354138e-10,
    ], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint5(x: Array) -> Array:
    # 16 <= x <= 32
    A = np.array([
        -2.458119367674020323359e-1,
        -1.483382253322077687183e-1,
        7.248291795735551591813e-2,
        -1.348315687380940523823e-2,
        1.342775069788636972294e-3,
        -7.942465637159712264564e-5,
        2.644179518984235952241e-6,
        -4.239473659313765177195e-8,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        -1.044225908443871106315e-1,
        -2.676453128101402655055e-1,
        9.695000254621984627876e-2,
        -1.601745692712991078208e-2,
        1.496414899205908021882e-3,
        -8.462452563778485013756e-5,
        2.728938403476726394024e-6,
        -4.239462431819542051337e-8,
    ], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint6(x: Array) -> Array:
    # 32 <= x <= 64
    A = np.array([
        1.212561118105456670844e-1,
        -5.823133179043894485122e-1,
        2.348887314557016779211e-1,
        -3.040034318113248237280e-2,
        1.510082146865190661777e-3,
        -2.523137095499571377122e-5,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        -1.002252150365854016662e0,
        2.928709694872224144953e-1,
        -3.337004338674007801307e-2,
        1.560544881127388842819e-3,
        -2.523137093603234562648e-5,
    ], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint7(x: Array) -> Array:
    # x > 64
    A = np.array([
        -7.657847078286127362028e-1,
        6.886192415566705051750e-1,
        -2.132598113545206124553e-1,
        3.346107552384193813594e-2,
        -3.076541477344756050249e-3,
        1.747119316454907477380e-4,
        -6.103711682274170530369e-6,
        1.218032765428652199087e-7,
        -1.086076102793290233007e-9,
    ], dtype=x.dtype)
    B = np.array([
        1.0,
        -1.888802868662308731041e0,
        1.066691687211408896850e0,
        -2.751915982306380647738e-1,
        3.930852688233823569726e-2,
        -3.414684558602365085394e-3,
        1.866844370703555398195e-4,
        -6.345146083130515357861e-6,
        1.239754287483206878024e-7,
        -1.086076102793126632978e-9,
    ], dtype=x.dtype)
    return _eval_expint_k(A, B, x)



def _expi_pos(x: Array) -> Array:  # x >= 0
    conds = [(const(x, 0) < x) & (x <= const(x, 2))] + [
        (const(x, 2 ** i) < x) & (x <= const(x, 2 ** (i + 1))) for i in range(1, 6)
    ]
    return piecewise(x, conds, [_expint1, _expint2, _expint3, _expint4, _expint5, _expint6, _expint7])


def _expi_neg(x: Array) -> Array:  # x < 0
    return -exp1(-x)


def _expi(x: Array) -> Array:
    (x_,) = promote_args_inexact("expi", x)
    if dtypes.is_complex(x_.dtype):
        raise ValueError("expi does not support complex-valued inputs.")
    return piecewise(x_, [x_ < 0], [_expi_neg, _expi_pos])


expi = custom_jvp(jit(_expi))
expi.__doc__ = """The exponential integral ``Ei(x)``."""


@expi.defjvp
def _expi_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return expi(x), fnp.exp(x) / x * x_dot


# -- Si(x), Ci(x) -------------------------------------------------------------------------------
def _sici_approx(x: Array) -> tuple[Array, Array]:
    # sici approximation valid for x >= 1E9
    si = (np.pi / 2) - fnp.cos(x) / x
    ci = fnp.sin(x) / x

    si = fnp.where(fnp.isposinf(x), np.pi / 2, si)
    ci = fnp.where(fnp.isposinf(x), 0.0, ci)

    return si, ci

def _sici_series(x: Array) -> tuple[Array, Array]:
    # sici series valid for x >= 0 and x <= 4
    def si_series(x: Array) -> Array:
        # Values come from Cephes Implementation used by Scipy https://github.com/jeremybarnes/cephes/blob/60f27df395b8322c2da22c83751a2366b82d50d1/misc/sici.c
        SN = np.array([-8.39167827910303881427E-11,
            4.62591714427012837309E-8,
            -9.75759303843632795789E-6,
            9.76945438170435310816E-4,
            -4.13470316229406538752E-2,
            1.00000000000000000302E0], dtype=x.dtype)
        SD = np.array([ 2.03269266195951942049E-12,
            1.27997891179943299903E-9,
            4.41827842801218905784E-7,
            9.96412122043875552487E-5,
            1.42085239326149893930E-2,
            9.99999999999999996984E-1], dtype=x.dtype)
        t = x * x
        return (x * fnp.polyval(SN, t)) / fnp.polyval(SD, t)

    def ci_series(x: Array) -> Array:
        # Values come from Cephes Implementation used by Scipy https://github.com/jeremybarnes/cephes/blob/60f27df395b8322c2da22c83751a2366b82d50d1/misc/sici.c
        CN = np.array([ 2.02524002389102268789E-11,
            -1.35249504915790756375E-8,
            3.59325051419993077021E-6,
            -4.74007206873407909465E-4,
            2.89159652607555242092E-2,
            -1.00000000000000000080E0], dtype=x.dtype)
        CD = np.array([ 4.07746040061880559506E-12,
            3.06780997581887812692E-9,
            1.23210355685883423679E-6,
            3.17442024775032769882E-4,
            5.10028056236446052392E-2,
            4.00000000000000000080E0], dtype=x.dtype)
        t = x * x
        return np.euler_gamma + fnp.log(x) + t * fnp.polyval(CN, t) / fnp.polyval(CD, t)

    si = fnp.where(
        x == 0,
        0.0,
        si_series(x)
    )

    ci = fnp.where(
        x == 0,
        -np.inf,
        ci_series(x)
    )

    return si, ci

def _sici_asympt(x: Array) -> tuple[Array, Array]:
    # sici asympt valid for x > 4 & x <= 1E9
    s = fnp.sin(x)
    c = fnp.cos(x)
    z = 1.0 / (x * x)

    # Values come from Cephes Implementation used by Scipy https://github.com/jeremybarnes/cephes/blob/60f27df395b8322c2da22c83751a2366b82d50d1/misc/sici.c
    FN4 = np.array([
        4.23612862892216586994E0,
        5.45937717161812843388E0,
        1.62083287701538329132E0,
        1.67006611831323023771E-1,
        6.81020132472518137426E-3,
        1.08936580650328664411E-4,
        5.48900223421373614008E-7,
    ], dtype=x.dtype)
    FD4 = np.array([
        1,
        8.16496634205391016773E0,
        7.30828822505564552187E0,
        1.86792257950184183883E0,
        1.78792052963149907262E-1,
        7.01710668322789753610E-3,
        1.10034357153915731354E-4,
        5.48900252756255700982E-7,
    ], dtype=x.dtype)
    GN4 = np.array([
        8.71001698973114191777E-2,
        6.11379109952219284151E-1,
        3.97180296392337498885E-1,
        7.48527737628469092119E-2,
        5.38868681462177273157E-3,
        1.61999794598934024525E-4,
        1.97963874140963632189E-6,
        7.82579040744090311069E-9,
    ], dtype=x.dtype)
    GD4 = np.array([
        1,
        1.64402202413355338886E0,
        6.66296701268987968381E-1,
        9.88771761277688796203E-2,
        6.22396345441768420760E-3,
        1.73221081474177119497E-4,
        2.02659182086343991969E-6,
        7.82579218933534490868E-9,
    ], dtype=x.dtype)

    FN8 = np.array([
        4.55880873470465315206E-1,
        7.13715274100146711374E-1,
        1.60300158222319456320E-1,
        1.16064229408124407915E-2,
        3.49556442447859055605E-4,
        4.86215430826454749482E-6,
        3.20092790091004902806E-8,
        9.41779576128512936592E-11,
        9.70507110881952024631E-14,
    ], dtype=x.dtype)
    FD8 = np.array([
        1.0,
        9.17463611873684053703E-1,
        1.78685545332074536321E-1,
        1.22253594771971293032E-2,
        3.58696481881851580297E-4,
        4.92435064317881464393E-6,
        3.21956939101046018377E-8,
        9.43720590350276732376E-11,
        9.70507110881952025725E-14,
    ], dtype=x.dtype)
    GN8 = np.array([
        6.97359953443276214934E-1,
        3.30410979305632063225E-1,
        3.84878767649974295920E-2,
        1.71718239052347903558E-3,
        3.48941165502279436777E-5,
        3.47131167084116673800E-7,
        1.70404452782044526189E-9,
        3.85945925430276600453E-12,
        3.14040098946363334640E-15,
    ], dtype=x.dtype)
    GD8 = np.array([
        1.0,
        1.68548898811011640017E0,
        4.87852258695304967486E-1,
        4.67913194259625806320E-2,
        1.90284426674399523638E-3,
        3.68475504442561108162E-5,
        3.57043223443740838771E-7,
        1.72693748966316146736E-9,
        3.87830166023954706752E-12,
        3.14040098946363335242E-15,
    ], dtype=x.dtype)

    f4 = fnp.polyval(FN4, z) / (x * fnp.polyval(FD4, z))
    g4 = z * fnp.polyval(GN4, z) / fnp.polyval(GD4, z)

    f8 = fnp.polyval(FN8, z) / (x * fnp.polyval(FD8, z))
    g8 = z * fnp.polyval(GN8, z) / fnp.polyval(GD8, z)

    mask = x < 8.0
    f = fnp.where(mask, f4, f8)
    g = fnp.where(mask, g4, g8)

    si = (np.pi / 2) - f * c - g * s
    ci = f * s - g * c

    return si, ci


def _sici(x: Array) -> tuple[Array, Array]:
    (x_,) = promote_args_inexact("sici", x)
    if dtypes.is_complex(x_.dtype):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x_.dtype}.")
    x_abs = fnp.abs(x_)
    si_series, ci_series = _sici_series(x_abs)
    si_asymp, ci_asymp = _sici_asympt(x_abs)
    si_approx, ci_approx = _sici_approx(x_abs)
    cond1 = x_abs <= 4
    cond2 = (x_abs > 4) & (x_abs <= 1e9)
    si = fnp.select([cond1, cond2], [si_series, si_asymp], si_approx)
    ci = fnp.select([cond1, cond2], [ci_series, ci_asymp], ci_approx)
    return fnp.sign(x_) * si, fnp.where(fnp.isneginf(x_), np.nan, ci)


sici = custom_jvp(jit(_sici))
sici.__doc__ = """The sine and cosine integrals ``(Si(x), Ci(x))``."""


@sici.defjvp
def _sici_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Any, tuple[Array, Array]]:
    (p,), (t,) = primals, tangents
    return sici(p), (fnp.sinc(p / np.pi) * t, fnp.cos(p) / p * t)


# -- E_n(x) ---------------------------------------------------------------------------------------
def _expn1(x: Array, n: Array) -> Array:
    """The power series (x <= 1)."""
    machep = finfo_eps(x.dtype)
    zero, one = const(x, 0.0), const(x, 1.0)
    psi = -np.euler_gamma - fnp.log(x)
    psi = lax.fori_loop(const(n, 1), n, lambda i, psi: psi + one / i, psi)
    n1 = fnp.where(n == const(n, 1), one + one, n)
    init = dict(x=x, z=-x, xk=zero, yk=one, pk=one - n, ans=fnp.where(n == const(n, 1), zero, one / (one - n1)),
                t=const(x, np.inf))

    def body(d: dict[str, Array]) -> dict[str, Array]:
        d = dict(d)
        d["xk"] = d["xk"] + one
        d["yk"] = d["yk"] * (d["z"] / d["xk"])
        d["pk"] = d["pk"] + one
        d["ans"] = d["ans"] + fnp.where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = fnp.where(d["ans"] != zero, abs(d["yk"] / d["ans"]), one)
        return d

    def cond(d: dict[str, Array]) -> Array:
        return (d["x"] > const(d["x"], 0.0)) & (d["t"] > machep)

    d = lax.while_loop(cond, body, init)
    r = n - const(n, 1)
    out: Array = d["z"] ** r * psi / fnp.exp(gammaln(n)) - d["ans"]
    return out


def _expn2(x: Array, n: Array) -> Array:
    """The continued fraction (x > 1)."""
    big = const(x, 1.44115188075855872e17)
    machep = finfo_eps(x.dtype)
    zero, one = const(x, 0.0), const(x, 1.0)
    init = dict(k=const(n, 1), pkm2=one, qkm2=x, pkm1=one, qkm1=x + n, ans=one / (x + n), t=const(x, np.inf),
                r=zero, x=x)

    def body(d: dict[str, Array]) -> dict[str, Array]:
        d = dict(d)
        x = d["x"]
        d["k"] = k = d["k"] + const(d["k"], 1)
        odd = k % const(k, 2) == const(k, 1)
        yk = fnp.where(odd, one, x)
        xk = fnp.where(odd, n + (k - const(k, 1)) / const(k, 2), k / const(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nz = qk != zero
        d["r"] = r = fnp.where(nz, pk / qk, d["r"])
        d["t"] = fnp.where(nz, abs((d["ans"] - r) / r), one)
        d["ans"] = fnp.where(nz, r, d["ans"])
        d["pkm2"], d["pkm1"], d["qkm2"], d["qkm1"] = d["pkm1"], pk, d["qkm1"], qk
        is_big = abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = fnp.where(is_big, d[key] / big, d[key])
        return d

    def cond(d: dict[str, Array]) -> Array:
        return (d["x"] > const(d["k"], 0)) & (d["t"] > machep)

    d = lax.while_loop(cond, body, init)
    out: Array = d["ans"] * fnp.exp(-x)
    return out


def _expn3(x: Array, n: Array) -> Array:
    """The asymptotic expansion (n >= 5000)."""
    one = const(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    t = n
    ans = yk * t * (const(x, 6) * x * x - const(x, 8) * t * x + t * t)
    ans = yk * (ans + t * (t - const(x, 2) * x))
    ans = yk * (ans + t)
    return (ans + one) * fnp.exp(-x) / xk


def _expn_scalar(n: Array, x: Array) -> Array:
    n, x = promote_args_inexact("expn", n, x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("expn does not support complex-valued inputs.")
    zero, one = const(x, 0), const(x, 1)
    conds = [
        (n < const(n, 0)) | (x < zero),
        (x == zero) & (n < const(n, 2)),
        (x == zero) & (n >= const(n, 2)),
        (n == const(n, 0)) & (x >= zero),
        (n >= const(n, 5000)),
        (x > one),
    ]
    n1 = fnp.where(n == const(n, 1), n + n, n)
    vals = [np.nan, np.inf, one / n1, fnp.exp(-x) / x, _expn3, _expn2, _expn1]
    return piecewise(x, conds, vals, n=n)


_expn_vectorized = vectorize(jit(_expn_scalar))


def _expn(n: ArrayLike, x: ArrayLike) -> Array:
    out: Array = _expn_vectorized(n, x)
    return out


expn = custom_jvp(_expn, nondiff_argnums=(0,))
expn.__doc__ = """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt``."""


@expn.defjvp
def _expn_jvp(n: Array, primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return expn(n, x), lax.mul(lax.neg(x_dot), expn(lax.sub(n, const(n, 1)), x))


def exp1(x: ArrayLike) -> Array:
    """The exponential integral ``E_1(x)``."""
    (x_,) = promote_args_inexact("exp1", x)
    if dtypes.is_complex(x_.dtype):
        raise ValueError("exp1 does not support complex-valued inputs.")
    out: Array = expn(1, x_)
    return out


# -- the dilogarithm ----------------------------------------------------------------------------
def _spence_poly(w: Array) -> Array:
    a = np.array([4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
                  8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
                  3.29771340985225106936E0, 1.00000000000000000126E0], dtype=w.dtype)
    b = np.array([6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
                  1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
                  3.54771340985225096217E0, 9.99999999999999998740E-1], dtype=w.dtype)
    return -w * fnp.polyval(a, w) / fnp.polyval(b, w)


def _spence_calc(x: Array) -> Array:
    x2_bool = x > 2.0
    x = piecewise(x, [x2_bool], [lambda x: 1.0 / x, lambda x: x])
    x1_5_bool = x > 1.5
    x_5_bool = x < 0.5
    x2_bool = x2_bool | x1_5_bool
    w = piecewise(x, [x1_5_bool, x_5_bool], [lambda x: 1.0 / x - 1.0, lambda x: -x, lambda x: x - 1.0])
    y = _spence_poly(w)
    y_flag_one = np.pi ** 2 / 6.0 - fnp.log(x) * fnp.log(1.0 - x) - y
    y = fnp.where(x_5_bool, y_flag_one, y)
    y_flag_two = -0.5 * fnp.log(x) ** 2 - y
    return fnp.where(x2_bool, y_flag_two, y)


def spence(x: Array) -> Array:
    """Spence's function ``int_1^x log(t) / (1 - t) dt`` (float32/float64, NaN for ``x < 0``)."""
    x_ = fnp.asarray(x)
    check_f32_f64(x_)
    return piecewise(x_, [x_ < 0.0, x_ == 1.0, x_ == 0.0], [np.nan, 0, np.pi ** 2 / 6, _spence_calc])

