"""Special functions: ``erf``, ``gammaln`` (log|Γ|), ``digamma`` and ``trigamma``.

Each is one declaration: the Python names that are it, its NumPy reference, its kernel-IR
scalar op (which backends render: myc's LLVM math library for CPU and CUDA, OpenCL C's
built-ins and prelude), and its reverse and forward rules.  docs/adding-a-primitive.md
uses this module as its example.

The references compute in float64 and round to the argument's float dtype (float32 stays
float32, as SciPy's ufuncs do; integers and bools give float64).  ``gammaln`` is
``math.lgamma`` with ``+inf`` at its poles (0 and the negative integers) and at
``-inf``; ``digamma`` gives ``-inf`` at ``+0``, ``+inf`` at ``-0`` and NaN at the
negative integers, ``trigamma`` ``+inf`` at 0 and the negative integers -- SciPy's
answers.  The derivative of ``trigamma`` is a composition of primitives (below), so every
order of derivative of ``gammaln`` exists.
"""

# ruff: noqa: ARG001
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from myc.prims.registry import register
from myc.prims.scalar import scalar_op

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _float_unary(f64: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any], Any]:
    """A float64 NumPy function as a ufunc-like reference: float32 (and float16) give
    float32, everything else float64; a scalar argument gives a NumPy scalar."""
    def impl(x: Any) -> Any:
        a = np.asarray(x)
        if a.dtype.kind not in "biuf":
            raise TypeError(f"ufunc not supported for the input type {a.dtype}")
        dt = np.float32 if a.dtype in (np.float16, np.float32) else np.float64
        r = np.asarray(f64(a.astype(np.float64)), np.float64).astype(dt)
        return r if a.ndim else r[()]
    return impl


def _map(f: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    vf = np.frompyfunc(f, 1, 1)
    return lambda a: np.asarray(vf(a), np.float64) if a.size else a.copy()


def _lgamma(v: float) -> float:
    if math.isnan(v):
        return v
    if v == -math.inf or (v <= 0 and v == math.floor(v)):
        return math.inf  # the poles (math.lgamma raises there)
    try:
        return math.lgamma(v)
    except OverflowError:
        return math.inf


def _asym_digamma(z: np.ndarray) -> np.ndarray:
    """``psi(z)`` for ``z >= 10`` (Bernoulli series)."""
    t = 1.0 / (z * z)
    s = t * (1 / 12 - t * (1 / 120 - t * (1 / 252 - t * (1 / 240 - t * (
        1 / 132 - t * (691 / 32760 - t * (1 / 12 - t * 3617 / 8160)))))))
    return np.log(z) - 0.5 / z - s


# digamma on [1, 2) as (x - x0) h(x - x0) around its root x0 (hi + lo): a fit of h
# (``myc.backends.cpu.specfun``'s generator), for relative accuracy near the root
DIGAMMA_ROOT = (1.4616321449683622, 9.549995429965697e-17)
DIGAMMA1 = (
    -8.153978973309418e-05, 0.00019426548768522768, -0.00019476490125987326,
    0.00019075640343160688, -0.0003193696671207108, 0.0005180490833340102,
    -0.000747499595599249, 0.0010766128230576774, -0.0015749355480831084,
    0.0023053483271584774, -0.0033700709071922902, 0.004926769418388227,
    -0.0072045109574719185, 0.010538791788919843, -0.015424767205798105,
    0.022597648248248545, -0.033161126430834756, 0.04880428816323914,
    -0.07219956125728176, 0.10782405069127954, -0.16394270544239933,
    0.2584997609556509, -0.44276316898359214, 0.9676722454476212,
)


def _digamma_pos(a: np.ndarray) -> np.ndarray:
    """``psi(a)`` for ``a >= 0``: ``[1, 2)`` by the root expansion, below by
    ``psi(a) = psi(a + 1) - 1/a``, ``[2, 10)`` shifted down into ``[1, 2)``, above by
    the asymptotic series."""
    below = a < 1
    u = np.where(below, a + 1.0, a)
    acc = np.where(below, -1.0 / np.where(a == 0, 1.0, a), 0.0)
    acc = np.where(a == 0, -np.inf, acc)
    for _ in range(8):  # psi(u) = psi(u - 1) + 1/(u - 1) down into [1, 2)
        big = (u >= 2) & (u < 10)
        acc = np.where(big, acc + 1.0 / (u - 1.0), acc)
        u = np.where(big, u - 1.0, u)
    t = (u - DIGAMMA_ROOT[0]) - DIGAMMA_ROOT[1]
    near = t * np.polyval(DIGAMMA1, t)
    return np.where(u >= 10, _asym_digamma(np.maximum(u, 10.0)), acc + near)


def _digamma(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        neg = x < 0
        a = np.where(neg, -x, x)
        r = _digamma_pos(a)
        # reflection: psi(x) = psi(|x|) + 1/|x| - pi cot(pi x)
        refl = r + 1.0 / a - math.pi / np.tan(math.pi * (x - np.round(x)))
        r = np.where(neg, refl, r)
        r = np.where(neg & (x == np.floor(x)), np.nan, r)
        r = np.where(x == 0, -1.0 / np.where(x == 0, x, 1.0), r)
        r = np.where(x == np.inf, np.inf, r)
        return np.where(np.isnan(x), x, r)


def _trigamma(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        neg = x < 0
        a = np.where(neg, -x, x)
        acc = np.zeros_like(a)
        z = a.copy()
        for _ in range(10):  # psi1(z) = psi1(z + 1) + 1/z^2 up to z >= 10
            small = z < 10
            acc = np.where(small, acc + (1.0 / z) / z, acc)
            z = np.where(small, z + 1.0, z)
        u = 1.0 / z
        t = u * u
        r = acc + u + 0.5 * t + u * t * (1 / 6 - t * (1 / 30 - t * (1 / 42 - t * (
            1 / 30 - t * (5 / 66 - t * (691 / 2730 - t * (7 / 6 - t * 3617 / 510)))))))
        # reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(|x|) + 1/x^2
        s = np.sin(math.pi * (x - np.round(x)))
        refl = math.pi ** 2 / (s * s) - r + 1.0 / (x * x)
        r = np.where(neg, refl, r)
        r = np.where((x <= 0) & (x == np.floor(x)), np.inf, r)
        r = np.where(x == np.inf, 0.0, r)
        return np.where(np.isnan(x), x, r)


erf_ref = _float_unary(_map(math.erf))
gammaln_ref = _float_unary(_map(_lgamma))
digamma_ref = _float_unary(_digamma)
trigamma_ref = _float_unary(_trigamma)


# ---------------------------------------------------------------- derivative rules
# In the myc subset, parsed by myc's frontend (so they differentiate again); the
# primitives they call are this module's globals below.

def _bprop_erf(x, out, dout):
    return (dout * (_TWO_OVER_SQRT_PI * np.exp(-(x * x))),)


def _jvp_erf(x, tx, out):
    return tx * (_TWO_OVER_SQRT_PI * np.exp(-(x * x)))


def _bprop_gammaln(x, out, dout):
    return (dout * digamma(x),)


def _jvp_gammaln(x, tx, out):
    return tx * digamma(x)


def _bprop_digamma(x, out, dout):
    return (dout * trigamma(x),)


def _jvp_digamma(x, tx, out):
    return tx * trigamma(x)


def _shift3(z, acc):
    small = z < 10.0
    return np.where(small, z + 1.0, z), np.where(small, acc - 2.0 / (z * z * z), acc)


def _tetragamma(x):
    """``psi''(x)``, the derivative of trigamma, as a composition of primitives (so it
    differentiates again): shifted up to ``z >= 10``, then its asymptotic series; by
    reflection below 0.  Its accuracy is that of the composition (~1e-13 relative)."""
    a = np.abs(x)
    z, acc = a, 0.0 * a
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    z, acc = _shift3(z, acc)
    u = 1.0 / z
    t = u * u
    r = acc - t - t * u - t * t * (0.5 - t * (1 / 6 - t * (1 / 6 - t * (0.3 - t * (
        5 / 6 - t * (691 / 210 - t * 17.5))))))
    # reflection: psi''(x) = psi''(|x|) + 2/|x|^3 - 2 pi^3 cos(pi x) / sin(pi x)^3
    s = np.sin(math.pi * x)
    refl = r + 2.0 / (a * a * a) - 2.0 * math.pi ** 3 * np.cos(math.pi * x) / (s * s * s)
    return np.where(x < 0, refl, r)


def _bprop_trigamma(x, out, dout):
    return (dout * _tetragamma(x),)


def _jvp_trigamma(x, tx, out):
    return tx * _tetragamma(x)


# ---------------------------------------------------------------- declarations
scalar_op("erf", 1, "f", erf_ref, math=True, doc="the error function")
scalar_op("gammaln", 1, "f", gammaln_ref, math=True, doc="log|Gamma(x)|; +inf at the poles")
scalar_op("digamma", 1, "f", digamma_ref, math=True, doc="Gamma'(x)/Gamma(x)")
scalar_op("trigamma", 1, "f", trigamma_ref, math=True, doc="digamma'(x)")

erf = register("erf", "x", erf_ref, names=("scipy.special.erf", "math.erf"),
               elementwise=True, scalar="erf", bprop=_bprop_erf, jvp=_jvp_erf)
gammaln = register("gammaln", "x", gammaln_ref, names=("scipy.special.gammaln", "math.lgamma"),
                   elementwise=True, scalar="gammaln", bprop=_bprop_gammaln,
                   jvp=_jvp_gammaln)
digamma = register("digamma", "x", digamma_ref,
                   names=("scipy.special.digamma", "scipy.special.psi"), elementwise=True,
                   scalar="digamma", bprop=_bprop_digamma, jvp=_jvp_digamma)
trigamma = register("trigamma", "x", trigamma_ref, elementwise=True, scalar="trigamma",
                    bprop=_bprop_trigamma, jvp=_jvp_trigamma)
