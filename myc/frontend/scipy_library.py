"""SciPy functions written in the myc subset itself.

Each function here stands for the SciPy function named in ``SCIPY_LIBRARY``
(``myc/frontend/libraries.py``): a call ``logsumexp(a)`` or ``norm.logpdf(x)`` in a
program that imported SciPy is a call of this Python function, parsed like user code, so
reverse and forward mode, fusion and every backend handle it as the composition of
primitives it is.  This module is imported only when a program uses SciPy (it imports
SciPy itself: ``scipy.special.erf``/``gammaln`` below are the primitives of those names).

The forms are the numerically stable ones: ``logsumexp`` shifts by the maximum, ``expit``
never exponentiates a positive number, the normal distribution's tails use a continued
fraction for ``log(erfc)`` rather than ``log`` of an underflowed ``erf``.  Values follow
SciPy's conventions: ``scipy.stats`` computes in float64 and returns ``nan`` for invalid
parameters and ``-inf`` (log-density) outside the support; a 0-d result is a NumPy scalar.
"""

# ruff: noqa: A001, ARG001 - SciPy's names and signatures
import numpy as np
import scipy.special

from myc.frontend.integrate_library import odeint  # noqa: F401 - scipy.integrate.odeint
from myc.prims import P

_LOG_SQRT_2PI = 0.9189385332046727  # log(sqrt(2 pi))
_LOG_SQRT_PI = 0.5723649429247001  # log(sqrt(pi))
_LOG_PI = 1.1447298858494002
_SQRT1_2 = 0.7071067811865476  # 1 / sqrt(2)
_LOG_2PI = 1.8378770664093453


def _scalar_if_0d(r):
    """A 0-d result is a NumPy scalar, as SciPy's ufuncs and distributions return."""
    if np.ndim(r) == 0:
        return r[()]
    return r


def _f64(x):
    """``scipy.stats`` computes in float64 whatever the input's dtype."""
    return np.asarray(x, dtype=np.float64)


# ---------------------------------------------------------------- scipy.special


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    if not P.is_none(b):
        a = np.broadcast_to(a, np.shape(a * b))  # a and b broadcast together, as SciPy
    m = np.max(a, axis=axis, keepdims=True)
    # an infinite or nan maximum shifts by nothing (so -inf everywhere stays -inf)
    m = np.where(np.abs(m) < np.inf, m, 0.0)
    e = np.exp(a - m)
    if not P.is_none(b):
        e = b * e
    s = np.sum(e, axis=axis, keepdims=keepdims)
    shift = np.reshape(m, np.shape(s))
    if return_sign:
        return (_scalar_if_0d(np.log(np.abs(s)) + shift), _scalar_if_0d(np.sign(s)))
    return _scalar_if_0d(np.log(s) + shift)


def _neg_abs(x):
    """``-|x|`` with the derivative of the side taken (``-1`` at ``0``), so ``expit``'s
    derivative at ``0`` is exact."""
    return np.where(x >= 0, -x, x)


def expit(x):
    # exp of a non-positive number only: no overflow for any x
    e = np.exp(_neg_abs(x))
    return _scalar_if_0d(np.where(x >= 0, 1 / (1 + e), e / (1 + e)))


def log_expit(x):
    # log(1 / (1 + exp(-x))) = min(x, 0) - log1p(exp(-|x|)), the min a where (not
    # np.minimum, whose derivative splits a tie at 0)
    nx = _neg_abs(x)
    return _scalar_if_0d(np.where(x >= 0, np.zeros_like(nx), x) - np.log1p(np.exp(nx)))


def logit(x):
    return _scalar_if_0d(np.log(x) - np.log1p(-x))


def xlogy(x, y):
    # SciPy's 0 where x == 0 (unless y is nan) is x * log(y) already where log(y) is
    # finite (so the derivative in x there is log(y)); elsewhere y is replaced so that
    # neither side of the where (nor its derivative) is nan
    zero = (x == 0) & (y == y) & ((y <= 0) | (y == np.inf))
    safe = np.where(zero, np.ones_like(y), y)
    return _scalar_if_0d(np.where(zero, np.zeros_like(x * safe), x * np.log(safe)))


def xlog1py(x, y):
    zero = (x == 0) & (y == y) & ((y <= -1) | (y == np.inf))
    safe = np.where(zero, np.zeros_like(y), y)
    return _scalar_if_0d(np.where(zero, np.zeros_like(x * safe), x * np.log1p(safe)))


def _shifted(x, axis):
    """``x`` minus its maximum along ``axis`` (an infinite maximum shifts by nothing)."""
    m = np.max(x, axis=axis, keepdims=True)
    return x - np.where(np.abs(m) < np.inf, m, 0.0)


def softmax(x, axis=None):
    e = np.exp(_shifted(x, axis))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=None):
    t = _shifted(x, axis)
    return _scalar_if_0d(t - np.log(np.sum(np.exp(t), axis=axis, keepdims=True)))


# ---------------------------------------------------------------- the normal distribution


def _log_erfc_tail(x):
    """``log(erfc(x))`` for ``x >= 2`` by the Laplace continued fraction (40 terms: a
    relative error below 2e-15 there), which never underflows; ``x`` below 2 is replaced
    by 2 (the caller selects another form there)."""
    x = np.where(x >= 2.0, x, np.zeros_like(x) + 2.0)
    t = x
    for k in range(40, 0, -1):
        t = x + (0.5 * k) / t
    return -x * x - _LOG_SQRT_PI - np.log(t)


def _log_ndtr(z):
    """``log`` of the standard normal CDF: the continued fraction in both tails, ``erf``
    in the middle."""
    # one continued fraction, at |x|: each tail reads it where it is selected (two, at x
    # and -x, doubled the operations of every cdf and its gradient)
    tail = _log_erfc_tail(np.abs(z) * _SQRT1_2)
    lower = np.log(0.5) + tail
    upper = np.log1p(-0.5 * np.exp(tail))
    mid = np.clip(z, -3.0, 3.0)  # erf where it is accurate (|z| <= 3)
    middle = np.log(0.5 + 0.5 * scipy.special.erf(mid * _SQRT1_2))
    return np.where(z < -3.0, lower, np.where(z > 3.0, upper, middle))


def _ndtr(z):
    lower = 0.5 * np.exp(_log_erfc_tail(np.abs(z) * _SQRT1_2))  # (one fraction, at |x|)
    upper = 1.0 - lower
    mid = np.clip(z, -3.0, 3.0)
    middle = 0.5 + 0.5 * scipy.special.erf(mid * _SQRT1_2)
    return np.where(z < -3.0, lower, np.where(z > 3.0, upper, middle))


def _standardized(x, loc, scale):
    return (_f64(x) - loc) / scale


def _valid_scale(r, scale):
    """``r`` where the scale is positive, ``nan`` elsewhere (SciPy's convention)."""
    return _scalar_if_0d(np.where(scale > 0, r, np.zeros_like(r) + np.nan))


def norm_logpdf(x, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    return _valid_scale(-0.5 * z * z - _LOG_SQRT_2PI - np.log(scale), scale)


def norm_pdf(x, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    return _valid_scale(np.exp(-0.5 * z * z - _LOG_SQRT_2PI) / scale, scale)


def norm_cdf(x, loc=0, scale=1):
    return _valid_scale(_ndtr(_standardized(x, loc, scale)), scale)


def norm_logcdf(x, loc=0, scale=1):
    return _valid_scale(_log_ndtr(_standardized(x, loc, scale)), scale)


def norm_sf(x, loc=0, scale=1):
    return _valid_scale(_ndtr(-_standardized(x, loc, scale)), scale)


def norm_logsf(x, loc=0, scale=1):
    return _valid_scale(_log_ndtr(-_standardized(x, loc, scale)), scale)


# ---------------------------------------------------------------- other continuous


def _in_support(r, inside):
    """``r`` inside the support, ``-inf`` (a log-density) outside."""
    return np.where(inside, r, np.zeros_like(r) - np.inf)


def t_logpdf(x, df, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    half = 0.5 * (df + 1.0)
    r = (scipy.special.gammaln(half) - scipy.special.gammaln(0.5 * df)
         - 0.5 * (np.log(df) + _LOG_PI) - half * np.log1p(z * z / df) - np.log(scale))
    return _valid_scale(np.where(df > 0, r, np.zeros_like(r) + np.nan), scale)


def t_pdf(x, df, loc=0, scale=1):
    return np.exp(t_logpdf(x, df, loc, scale))


def gamma_logpdf(x, a, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    safe = np.where(z >= 0, z, np.zeros_like(z))
    r = xlogy(a - 1.0, safe) - safe - scipy.special.gammaln(a) - np.log(scale)
    r = _in_support(r, z >= 0)
    return _valid_scale(np.where(a > 0, r, np.zeros_like(r) + np.nan), scale)


def gamma_pdf(x, a, loc=0, scale=1):
    return np.exp(gamma_logpdf(x, a, loc, scale))


def beta_logpdf(x, a, b, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    inside = (z >= 0) & (z <= 1)
    safe = np.where(inside, z, np.zeros_like(z) + 0.5)
    lbeta = (scipy.special.gammaln(a) + scipy.special.gammaln(b)
             - scipy.special.gammaln(a + b))
    r = xlog1py(b - 1.0, -safe) + xlogy(a - 1.0, safe) - lbeta - np.log(scale)
    r = _in_support(r, inside)
    return _valid_scale(np.where((a > 0) & (b > 0), r, np.zeros_like(r) + np.nan), scale)


def beta_pdf(x, a, b, loc=0, scale=1):
    return np.exp(beta_logpdf(x, a, b, loc, scale))


def expon_logpdf(x, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    return _valid_scale(_in_support(-z - np.log(scale), z >= 0), scale)


def expon_pdf(x, loc=0, scale=1):
    return np.exp(expon_logpdf(x, loc, scale))


def expon_cdf(x, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    safe = np.where(z >= 0, z, np.zeros_like(z))
    return _valid_scale(-np.expm1(-safe), scale)


def expon_logcdf(x, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    safe = np.where(z > 0, z, np.ones_like(z))
    return _valid_scale(_in_support(np.log(-np.expm1(-safe)), z > 0), scale)


def uniform_logpdf(x, loc=0, scale=1):
    z = _standardized(x, loc, scale)
    r = np.zeros_like(z) - np.log(scale)
    return _valid_scale(_in_support(r, (z >= 0) & (z <= 1)), scale)


def uniform_pdf(x, loc=0, scale=1):
    return np.exp(uniform_logpdf(x, loc, scale))


def uniform_cdf(x, loc=0, scale=1):
    return _valid_scale(np.clip(_standardized(x, loc, scale), 0.0, 1.0), scale)


# ---------------------------------------------------------------- discrete


def bernoulli_logpmf(k, p, loc=0):
    j = _f64(k) - loc
    r = xlogy(j, p) + xlog1py(1.0 - j, -p)
    r = _in_support(r, (j == 0) | (j == 1))
    return _scalar_if_0d(np.where((p >= 0) & (p <= 1), r, np.zeros_like(r) + np.nan))


def bernoulli_pmf(k, p, loc=0):
    return np.exp(bernoulli_logpmf(k, p, loc))


def poisson_logpmf(k, mu, loc=0):
    j = _f64(k) - loc
    inside = (j >= 0) & (j == np.floor(j))
    safe = np.where(inside, j, np.zeros_like(j))
    r = xlogy(safe, mu) - scipy.special.gammaln(safe + 1.0) - mu
    r = _in_support(r, inside)
    return _scalar_if_0d(np.where(mu >= 0, r, np.zeros_like(r) + np.nan))


def poisson_pmf(k, mu, loc=0):
    return np.exp(poisson_logpmf(k, mu, loc))


# ---------------------------------------------------------------- multivariate normal


def mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    if allow_singular:
        return P.lib_error("scipy.stats.multivariate_normal: allow_singular=True is not "
                           "supported")
    if np.ndim(cov) != 2:
        return P.lib_error("scipy.stats.multivariate_normal: only a 2-d covariance matrix "
                           "is supported")
    d = np.shape(cov)[0]
    x = _f64(x)
    if np.ndim(x) == 0 or np.shape(x)[-1] != d:
        return P.lib_error("scipy.stats.multivariate_normal: x must have the covariance's "
                           "dimension as its last axis")
    dev = x
    if not P.is_none(mean):
        dev = x - mean
    rows = np.reshape(dev, (-1, d))
    chol = np.linalg.cholesky(cov)
    # the Mahalanobis distance by one triangular solve: |L^-1 (x - mean)|^2
    w = np.linalg.solve(chol, np.transpose(rows))
    maha = np.sum(w * w, axis=0)
    logdet = 2.0 * np.sum(np.log(np.diag(chol)))
    r = -0.5 * (d * _LOG_2PI + logdet + maha)
    return _scalar_if_0d(np.reshape(r, np.shape(x)[:-1]))


def mvn_pdf(x, mean=None, cov=1, allow_singular=False):
    return np.exp(mvn_logpdf(x, mean, cov, allow_singular))

# scipy.linalg: myc/frontend/linalg_library.py (its own primitives)


# ---------------------------------------------------------------- scipy.spatial.distance


def _safe_sqrt(s):
    # sqrt whose derivative at 0 is 0, not inf (a point's distance to itself, the
    # diagonal of cdist(X, X)): np.linalg.norm's convention
    pos = s > 0
    return np.where(pos, np.sqrt(np.where(pos, s, 1.0)), s)


def _pair_distances(diff, metric, p, name):
    # diff: (..., d) differences u - v; SciPy's definitions of each metric
    if metric == "sqeuclidean":
        return np.sum(diff * diff, axis=-1)
    if metric == "euclidean":
        return _safe_sqrt(np.sum(diff * diff, axis=-1))
    if metric == "cityblock":
        return np.sum(np.abs(diff), axis=-1)
    if metric == "chebyshev":
        return np.max(np.abs(diff), axis=-1)
    if metric == "minkowski":
        return np.sum(np.abs(diff) ** p, axis=-1) ** (1.0 / p)
    return P.lib_error(f"scipy.spatial.distance.{name}: only the metrics 'euclidean', "
                       "'sqeuclidean', 'cityblock', 'chebyshev', 'minkowski' and 'cosine' "
                       "(given by name) are supported")


def _cosine(XA, XB):
    na = _safe_sqrt(np.sum(XA * XA, axis=-1))
    nb = _safe_sqrt(np.sum(XB * XB, axis=-1))
    return 1.0 - np.sum(XA * XB, axis=-1) / (na * nb)


def cdist(XA, XB, metric="euclidean", p=2):
    A = _f64(XA)
    B = _f64(XB)
    if np.ndim(A) != 2 or np.ndim(B) != 2:
        return P.lib_error("scipy.spatial.distance.cdist: XA and XB must be 2-dimensional")
    if np.shape(A)[1] != np.shape(B)[1]:
        return P.lib_error("scipy.spatial.distance.cdist: XA and XB must have the same "
                           "number of columns")
    if metric == "cosine":
        return _cosine(A[:, None, :], B[None, :, :])
    return _pair_distances(A[:, None, :] - B[None, :, :], metric, p, "cdist")


def pdist(X, metric="euclidean", p=2):
    A = _f64(X)
    if np.ndim(A) != 2:
        return P.lib_error("scipy.spatial.distance.pdist: X must be 2-dimensional")
    n = np.shape(A)[0]
    if n < 2:
        return np.zeros(0)
    # the condensed order: the upper triangle's pairs row by row, as SciPy's
    i = np.array([a for a in range(n) for b in range(a + 1, n)])
    j = np.array([b for a in range(n) for b in range(a + 1, n)])
    if metric == "cosine":
        return _cosine(A[i], A[j])
    return _pair_distances(A[i] - A[j], metric, p, "pdist")
