"""Special functions for the LLVM math library: erf, gammaln, digamma, trigamma.

The renderers of the scalar ops ``myc/prims/special.py`` declares, in the style of
``mathlib.py``: straight-line code (selects, no branches, no calls), so kernel loops
calling them vectorize, and no libm.  float32 arguments are computed in float64 and
rounded once.  Accuracy against the references (``tests/cpu/test_special.py``): a few
ulp of ``max(|f(x)|, 1)`` -- relative near 0, absolute where the function crosses zero
away from the origin (gammaln's negative-axis zeros).

* erf: ``x P(x^2)`` below 0.75; above, ``1 - exp(-x^2) g(x)`` with ``g = erfc(x) e^{x^2}``
  a polynomial per piece (selected coefficients) and ``x^2`` as a double-double, so
  ``exp(-x^2)`` keeps full accuracy; 1 from 6 up.
* gammaln: ``log|Gamma|`` from ``lgamma(2 + t) = t S(t)``, ``|t| <= 1/2``, reached by
  the recurrence (``lgamma(a) = lgamma(a + 1) - log a`` below 1.5, products of the
  shifted arguments from 2.5 to 10), Stirling's series from 10, and the reflection
  ``log(pi / |x sin(pi x)|) - lgamma(|x|)`` below 0; ``+inf`` at the poles.
* digamma: ``(x - x0) h(x - x0)`` on [1, 2) around its root ``x0`` (relative accuracy
  there), the recurrence elsewhere below 10, the asymptotic series from 10, and the
  reflection ``psi(|x|) + 1/|x| - pi cot(pi x)`` below 0.
* trigamma: the recurrence up to 10 and the asymptotic series; reflection below 0.

Coefficients: ``python -m myc.backends.cpu.specfun`` prints them (mpmath's Chebyshev
fits; digamma's root expansion lives with its declaration in ``myc.prims.special``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from myc.backends.cpu.emit import F32, F64, Emitter, V
from myc.backends.cpu.mathlib import _PI, exp_core, log_core, sincos_poly, split, two_prod
from myc.backends.cpu.mathlib import IMPLS as MATH_IMPLS
from myc.prims.special import DIGAMMA1, DIGAMMA_ROOT

ERF_SMALL = (
    7.272605667746851e-11, -1.1958368091524506e-09, 1.4776618764400006e-08,
    -1.636401288305236e-07, 1.6462039947573494e-06, -1.4925648277963885e-05,
    0.00012055332941926721, -0.0008548327022938597, 0.00522397762543796,
    -0.026866170645131044, 0.11283791670955125, -0.37612638903183754,
    1.1283791670955126,
)
ERFC_PIECES = (  # (lower end, centre, coefficients of erfc(x) exp(x^2) in x - centre)
    (0.75, 1.125, (
        7.242850078976811e-08, -2.539084284367431e-07, 8.250986724003128e-07,
        -2.7416523685915335e-06, 8.869073005564282e-06, -2.7817826539487062e-05,
        8.450842093015987e-05, -0.000248067879271965, 0.0007016185406499731,
        -0.0019056264451145504, 0.004950303910657083, -0.012238784453121944,
        0.02861954424178632, -0.06279394840488262, 0.12788228043906513,
        -0.23805848810127178, 0.3956980795529959,
    )),
    (1.5, 2.0, (
        1.5400336014072522e-09, -6.260244834540432e-09, 2.3298903586765155e-08,
        -9.05696037945163e-08, 3.448648004649786e-07, -1.279561360915426e-06,
        4.628174096446473e-06, -1.629371397929793e-05, 5.572831534470746e-05,
        -0.00018477836756104039, 0.0005924699953279592, -0.0018316642757227877,
        0.005440738537472337, -0.015460637764291286, 0.04180275260352655,
        -0.1067964618534896, 0.25539567631050575,
    )),
    (2.5, 3.25, (
        -2.993498680330138e-12, 1.5063100534287674e-11, -6.711386363724971e-11,
        3.266306933539362e-10, -1.5722810673856577e-09, 7.407388954768393e-09,
        -3.428981968034029e-08, 1.5588086019884214e-07, -6.952080790781988e-07,
        3.0388320447180313e-06, -1.3004640264128073e-05, 5.442040880596722e-05,
        -0.00022238256956854283, 0.0008860045775346159, -0.0034354713009075726,
        0.01293729088301815, -0.047199402321170376, 0.16633534842682188,
    )),
    (4, 5.0, (
        -1.2459867609778513e-14, 7.983531583885362e-14, -4.503657546309585e-13,
        2.8204188396422475e-12, -1.757990804038389e-11, 1.0775737192811558e-10,
        -6.529576337919216e-10, 3.911232915259841e-09, -2.3147488178706504e-08,
        1.3529365427065687e-07, -7.806319490791525e-07, 4.444334348981595e-06,
        -2.4953883570293807e-05, 0.0001381024209003791, -0.0007528968134272884,
        0.004040688908937073, -0.02133278976482631, 0.11070463773306863,
    )),
)
LGAMMA2 = (
    -3.085985478390577e-08, 6.472569840064724e-08, -9.558178101635195e-08,
    2.0193835401136915e-07, -4.508168225446838e-07, 9.584207048594987e-07,
    -2.0389077825677104e-06, 4.374223481082048e-06, -9.439526202058818e-06,
    2.0507291996563825e-05, -4.4926233820610826e-05, 9.94575066878814e-05,
    -0.00022315475858818615, 0.0005096695250241955, -0.0011927539116998527,
    0.0028905103307344045, -0.007385551028674025, 0.02058080842778463,
    -0.06735230105319809, 0.3224670334241132, 0.42278433509846713,
)

_PI_DD = split(_PI, 53, 2)
_LOG_PI = 1.1447298858494002
_HALF_LOG_2PI = 0.9189385332046728


def _in_f64(fn: Callable[[Emitter, V], V]) -> Callable[[Emitter, V], V]:
    """``fn`` (float64) for float32 arguments too: computed in float64, rounded once."""
    def impl(e: Emitter, x: V) -> V:
        if x.ty == F32:
            return e.fptrunc(fn(e, e.fpext(x, F64)), F32)
        return fn(e, x)
    return impl


def sincospi(e: Emitter, v: V) -> tuple[V, V]:
    """``(sin(pi v), cos(pi v))`` for ``v`` in ``[0, 1/2]`` (``pi v`` as a double-double)."""
    swap = v.gt(0.25)
    w = e.select(swap, 0.5 - v, v)
    r, r_e = two_prod(e, w, e.c(F64, _PI_DD[0]))
    s, c = sincos_poly(e, r, r_e + w * _PI_DD[1])
    return e.select(swap, c, s), e.select(swap, s, c)


def _frac_abs(e: Emitter, x: V) -> V:
    """``|x - rint(x)|``, exact: where ``sin(pi x)`` is ``+-sin(pi`` of it``)``."""
    return (x - x.rint()).abs()


def erf(e: Emitter, x: V) -> V:
    a = x.abs()
    s = x * x
    small = x * e.poly(s, ERF_SMALL)
    width = max(len(p[2]) for p in ERFC_PIECES)
    pieces = [(lo, ctr, (0.0,) * (width - len(cs)) + tuple(cs)) for lo, ctr, cs in ERFC_PIECES]
    centre = e.c(F64, pieces[0][1])
    coeffs = [e.c(F64, c) for c in pieces[0][2]]
    for lo, ctr, cs in pieces[1:]:
        at = a.ge(lo)
        centre = e.select(at, ctr, centre)
        coeffs = [e.select(at, c, old) for c, old in zip(cs, coeffs, strict=True)]
    u = a - centre
    g = coeffs[0]
    for c in coeffs[1:]:
        g = e.muladd(g, u, c)
    hi, lo_ = two_prod(e, a, a)
    erfc = exp_core(e, -hi, -lo_) * g
    big = e.select(a.ge(6.0), 1.0, 1.0 - erfc).copysign(x)
    res = e.select(a.lt(0.75), small, big)
    return e.select(x.isnan(), x, res)


def _lgamma_pos(e: Emitter, a: V) -> V:
    """``lgamma(a)`` for finite ``a > 0``."""
    u = a
    prod = e.c(F64, 1.0)
    for _ in range(8):  # lgamma(u) = lgamma(u - 1) + log(u - 1) down into [1.5, 2.5)
        step = u.ge(2.5)
        prod = e.select(step, prod * (u - 1.0), prod)
        u = e.select(step, u - 1.0, u)
    below_half, below_1h = a.lt(0.5), a.lt(1.5)
    t = e.select(below_half, a, e.select(below_1h, a - 1.0, u - 2.0))
    w = e.select(below_half, a * (a + 1.0), e.select(below_1h, a, e.select(a.lt(10.0), prod, a)))
    lw = log_core(e, w)
    near = t * e.poly(t, LGAMMA2) + e.select(below_1h, -lw, lw)
    r = 1.0 / a
    r2 = r * r
    series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 * (
        1 / 1188 - r2 * (691 / 360360 - r2 * (1 / 156 - r2 * (3617 / 122400))))))))
    stirling = (a - 0.5) * (lw - 1.0) + ((_HALF_LOG_2PI - 0.5) + series)
    return e.select(a.lt(10.0), near, stirling)


def gammaln(e: Emitter, x: V) -> V:
    a = x.abs()
    fin = e.select(a.lt(math.inf) & a.gt(0.0), a, 1.0)
    pos = _lgamma_pos(e, fin)
    sp, _ = sincospi(e, _frac_abs(e, fin))
    refl = (_LOG_PI - log_core(e, fin * sp)) - pos
    res = e.select(x.lt(0.0) & a.ge(1e-20), refl, pos)
    pole = (x.le(0.0) & x.floor().eq(x)) | a.eq(math.inf)
    res = e.select(pole, math.inf, res)
    return e.select(x.isnan(), x, res)


def _digamma_pos(e: Emitter, a: V) -> V:
    """``psi(a)`` for finite ``a > 0``."""
    below = a.lt(1.0)
    u = e.select(below, a + 1.0, a)
    acc = e.select(below, -1.0 / a, 0.0)
    for _ in range(8):  # psi(u) = psi(u - 1) + 1/(u - 1) down into [1, 2)
        step = u.ge(2.0) & u.lt(10.0)
        acc = e.select(step, acc + 1.0 / (u - 1.0), acc)
        u = e.select(step, u - 1.0, u)
    t = (u - DIGAMMA_ROOT[0]) - DIGAMMA_ROOT[1]
    near = acc + t * e.poly(t, DIGAMMA1)
    z = 1.0 / (a * a)
    s = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * (
        1 / 132 - z * (691 / 32760 - z * (1 / 12 - z * (3617 / 8160))))))))
    asym = (log_core(e, a) - 0.5 / a) - s
    return e.select(a.ge(10.0), asym, near)


def digamma(e: Emitter, x: V) -> V:
    a = x.abs()
    fin = e.select(a.lt(math.inf) & a.gt(0.0), a, 1.0)
    pos = _digamma_pos(e, fin)
    r = x - x.rint()
    sp, cp = sincospi(e, r.abs())
    refl = (pos + 1.0 / fin) - ((cp / sp) * math.pi).copysign(r)
    res = e.select(x.lt(0.0), refl, pos)
    res = e.select(x.lt(0.0) & x.floor().eq(x), math.nan, res)
    res = e.select(x.eq(0.0), -1.0 / x, res)
    res = e.select(x.eq(math.inf), math.inf, res)
    return e.select(x.isnan(), x, res)


def trigamma(e: Emitter, x: V) -> V:
    a = x.abs()
    fin = e.select(a.lt(math.inf) & a.gt(0.0), a, 1.0)
    z = fin
    acc = e.c(F64, 0.0)
    for _ in range(10):  # psi1(z) = psi1(z + 1) + 1/z^2 up to z >= 10
        step = z.lt(10.0)
        acc = e.select(step, acc + (1.0 / z) / z, acc)
        z = e.select(step, z + 1.0, z)
    u = 1.0 / z
    t = u * u
    series = u * t * (1 / 6 - t * (1 / 30 - t * (1 / 42 - t * (1 / 30 - t * (
        5 / 66 - t * (691 / 2730 - t * (7 / 6 - t * (3617 / 510))))))))
    pos = acc + (u + (t * 0.5 + series))
    sp, _ = sincospi(e, _frac_abs(e, fin))
    refl = (math.pi ** 2) / (sp * sp) - pos + 1.0 / (x * x)
    res = e.select(x.lt(0.0), refl, pos)
    res = e.select(x.le(0.0) & x.floor().eq(x), math.inf, res)
    res = e.select(x.eq(math.inf), 0.0, res)
    return e.select(x.isnan(), x, res)


IMPLS: dict[str, Callable[[Emitter, V], V]] = {
    "erf": _in_f64(erf), "gammaln": _in_f64(gammaln), "digamma": _in_f64(digamma),
    "trigamma": _in_f64(trigamma),
}
# joined to the math library's table (the code generators import this module, so the
# library needs no import of its own of these functions)
MATH_IMPLS.update(IMPLS)


def _generate() -> str:  # pragma: no cover - run by hand, needs mpmath
    """The coefficient tables above (and digamma's, in ``myc.prims.special``)."""
    import mpmath as mp

    mp.mp.dps = 50

    def fit(f, a, b, n):
        return [float(c) for c in mp.chebyfit(f, [a, b], n)]

    def tiny(v):
        return abs(v) < mp.mpf(10) ** -40

    out = ["ERF_SMALL = " + repr(tuple(fit(
        lambda s: 2 / mp.sqrt(mp.pi) if tiny(s) else mp.erf(mp.sqrt(s)) / mp.sqrt(s),
        0, 0.5625, 13)))]
    pieces = []
    for a, b, n in [(0.75, 1.5, 17), (1.5, 2.5, 17), (2.5, 4, 18), (4, 6, 18)]:
        m, h = (a + b) / 2, (b - a) / 2
        pieces.append((a, m, tuple(fit(lambda u, m=m: mp.erfc(m + u) * mp.exp((m + u) ** 2),
                                       -h, h, n))))
    out.append("ERFC_PIECES = " + repr(tuple(pieces)))
    out.append("LGAMMA2 = " + repr(tuple(fit(
        lambda t: 1 - mp.euler if tiny(t) else mp.loggamma(2 + t) / t, -0.5, 0.5, 21))))
    x0 = mp.findroot(mp.digamma, 1.46)
    out.append(f"DIGAMMA_ROOT = ({float(x0)!r}, {float(x0 - float(x0))!r})")
    out.append("DIGAMMA1 = " + repr(tuple(fit(
        lambda u: mp.psi(1, x0) if tiny(u) else mp.digamma(x0 + u) / u, 1 - x0, 2 - x0, 24))))
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print(_generate())
