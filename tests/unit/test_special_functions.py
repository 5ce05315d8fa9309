"""erf, gammaln, digamma and trigamma as users reach them: ``math.erf``/``math.lgamma``
and (with SciPy installed) ``scipy.special.erf/gammaln/digamma``, on every backend,
against SciPy/``math``; their gradients against finite differences, to third order."""

from __future__ import annotations

import math

import numpy as np
import pytest

import myc
from myc.prims import P
from tests.backends import BACKENDS

try:
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grads

X = np.array([-2.7, -0.4, 0.05, 0.5, 1.0, 1.46, 2.0, 3.3, 9.5, 12.0, 150.0])
erf_m = np.vectorize(math.erf)
lgamma_m = np.vectorize(math.lgamma)


def prims(x):
    return P.erf(x), P.gammaln(x), P.digamma(x), P.trigamma(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_primitives_match_math_without_scipy(backend):
    e, g, d, t = myc.jit(prims, backend=backend)(X)
    np.testing.assert_allclose(e, erf_m(X), rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(g, lgamma_m(X), rtol=1e-13, atol=1e-14)
    # digamma and trigamma: the recurrence checks them without a reference
    d1, t1 = myc.jit(prims, backend=backend)(X + 1.0)[2:]
    np.testing.assert_allclose(d1 - d, 1.0 / X, rtol=1e-12)
    np.testing.assert_allclose(t - t1, 1.0 / X ** 2, rtol=1e-11)


def math_names(x):
    return math.erf(x) + 2.0 * math.lgamma(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_math_erf_and_lgamma_by_name(backend):
    for v in (0.3, 2.5, -1.5):
        assert myc.jit(math_names, backend=backend)(v) == pytest.approx(
            math_names(v), rel=1e-14)
    assert myc.jit(erf_as_value, backend=backend)(0.7) == pytest.approx(math.erf(0.7),
                                                                         rel=1e-15)
    assert myc.jit(lgamma_call, backend=backend)(4.0) == pytest.approx(math.log(6.0),
                                                                       rel=1e-15)


def lgamma_call(x):
    return math.lgamma(x)


def erf_as_value(x):
    g = math.erf
    return g(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scipy_special_names(backend):
    sp = pytest.importorskip("scipy.special")
    import scipy
    from scipy import special
    from scipy.special import digamma, gammaln

    def f(x):
        return (scipy.special.erf(x), gammaln(x), digamma(x), special.psi(x),
                special.gammaln(x * 0.5))

    got = myc.jit(f, backend=backend)(X)
    want = (sp.erf(X), sp.gammaln(X), sp.digamma(X), sp.digamma(X), sp.gammaln(X * 0.5))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    x32 = X.astype(np.float32)
    got32 = myc.jit(f, backend=backend)(x32)
    for g, w in zip(got32, f(x32), strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def test_scipy_poles():
    sp = pytest.importorskip("scipy.special")
    x = np.array([0.0, -0.0, -1.0, -4.0, np.inf, np.nan])
    for backend in BACKENDS:
        e, g, d, _ = myc.jit(prims, backend=backend)(x)
        np.testing.assert_array_max_ulp(e, sp.erf(x), maxulp=1)
        np.testing.assert_array_equal(g, sp.gammaln(x))
        np.testing.assert_array_equal(d, sp.digamma(x))


def loss(x):
    return np.sum(P.gammaln(x) * P.erf(0.3 * x) + P.digamma(x) ** 2)


GRAD_X = np.array([-2.6, -0.35, 0.4, 1.3, 2.2, 7.5])


def sum_erf(x):
    return np.sum(P.erf(x))


def sum_gammaln(x):
    return np.sum(P.gammaln(x))


def sum_digamma(x):
    return np.sum(P.digamma(x))


def sum_trigamma(x):
    return np.sum(P.trigamma(x))


def test_gradients_by_finite_differences():
    check_grads(loss, (GRAD_X,))
    for f in (sum_erf, sum_gammaln, sum_digamma, sum_trigamma):
        check_grads(f, (GRAD_X,), order=2)


def test_derivatives_are_the_next_function():
    d = myc.grad(lambda x: np.sum(P.gammaln(x)))(GRAD_X)
    np.testing.assert_allclose(d, P.digamma(GRAD_X), rtol=1e-14)
    d2 = myc.grad(lambda x: np.sum(myc.grad(lambda y: np.sum(P.gammaln(y)))(x)))(GRAD_X)
    np.testing.assert_allclose(d2, P.trigamma(GRAD_X), rtol=1e-13)
    de = myc.grad(lambda x: np.sum(P.erf(x)))(GRAD_X)
    np.testing.assert_allclose(de, 2 / np.sqrt(np.pi) * np.exp(-GRAD_X ** 2), rtol=1e-14)


@pytest.mark.parametrize("backend", ["cpu"] + (["opencl"] if "opencl" in BACKENDS else []))
def test_value_and_grad_on_the_compiled_backends(backend):
    x = np.linspace(0.2, 6.0, 1000)
    v, g = myc.jit(myc.value_and_grad(loss), backend=backend)(x)
    v0, g0 = myc.jit(myc.value_and_grad(loss), backend="interp")(x)
    assert v == pytest.approx(v0, rel=1e-12)
    np.testing.assert_allclose(g, g0, rtol=1e-11, atol=1e-12)
