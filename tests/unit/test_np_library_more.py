"""The NumPy functions written in the subset (``myc/frontend/np_library.py``) that real
programs reached for and myc refused: hyperbolic and inverse trig functions, log2/log10/
exp2, hypot, cbrt, round, the value tests (isnan...), logical ops, all/any, scans,
products, splitting and padding, ``x.dtype``.  Values against NumPy -- special values
included, bit for bit where NumPy is exact (cbrt(27), round half to even) -- on every
backend; derivatives against finite differences."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS

try:
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grads

SPECIAL = np.array([0.0, -0.0, 1e-300, 0.5, -0.5, 1.5, 2.5, -2.5, 3.49999, 1e200, -1e200,
                    np.inf, -np.inf, np.nan, 0.999, -0.999, 1.0, -1.0, 7.0, 27.0, -8.0])


def unary(x):
    return (np.sinh(x), np.cosh(x), np.arcsinh(x), np.arccosh(x), np.arctanh(x),
            np.arcsin(x), np.arccos(x), np.log2(x), np.log10(x), np.exp2(x), np.cbrt(x),
            np.deg2rad(x), np.rad2deg(x), np.sinc(x), np.isnan(x), np.isinf(x),
            np.isfinite(x), np.nan_to_num(x), np.round(x), np.round(x, 2),
            np.logical_not(x), np.reciprocal(x))


def binary(a, b):
    return (np.hypot(a, b), np.fmax(a, b), np.fmin(a, b), np.heaviside(a, 0.5),
            np.logical_and(a, b), np.logical_or(a, b), np.logical_xor(a, b))


def _same(got, want, rtol):
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_match_numpy_on_special_values(backend, dtype):
    rtol = 4e-15 if dtype == np.float64 else 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x = SPECIAL.astype(dtype)  # (1e200 overflows float32 to inf, on purpose)
        want_u, want_b = unary(x), binary(x, x[::-1])
    _same(myc.jit(unary, backend=backend)(x), want_u, rtol)
    _same(myc.jit(binary, backend=backend)(x, x[::-1]), want_b, rtol)


def exact(x):
    return np.cbrt(x), np.round(x), np.round(x * 0.1, 1)


def test_exact_where_numpy_is():
    x = np.array([27.0, -8.0, 64.0, 1e-300, 0.5, 1.5, 2.5, -0.5, -1.5, 12.25, 0.49999999999999994])
    (c, r, r1), (wc, wr, wr1) = myc.jit(exact)(x), exact(x)
    # perfect cubes exactly (NumPy's own cbrt(27) is an ulp off); the rest within an ulp
    assert np.array_equal(c[:3], [3.0, -2.0, 4.0]) and c[3] == 1e-100
    np.testing.assert_allclose(c, wc, rtol=2.3e-16)
    assert np.array_equal(r, wr) and np.array_equal(r1, wr1)


def reductions(a):
    return (np.all(a > 0), np.any(a > 3.0), np.all(a > 0, axis=0), a.any(), (a > 0).all(),
            np.cumprod(a), np.cumprod(a, axis=1), a.cumprod(axis=0), np.diff(a),
            np.diff(a, n=2, axis=0), np.median(a), np.median(a, axis=1), np.nansum(a),
            np.nanmean(a, axis=0), np.average(a), np.average(a, axis=1, weights=[1.0, 2.0, 3.0, 4.0]),
            np.full_like(a, 2.5), np.full_like(a, 7, dtype=np.int64), np.empty_like(a).shape,
            np.copy(a), np.logspace(0.0, 2.0, 5), np.tri(3, 4, 1), np.zeros(3, a.dtype),
            a.astype(a.dtype), np.round(a, 1), a.round())


def products(a, b):
    return (np.tensordot(a, b, 1), np.tensordot(a, b, axes=([0, 1], [1, 0])),
            np.inner(a, a), np.vdot(a, a), np.kron(a[:2, :2], b[:2, :2]), np.kron(a[0], b[0]),
            np.dstack([a, a]), np.split(a, 2, axis=1), np.array_split(a, 3),
            np.split(a[0], [1, 3]), np.pad(a, 1), np.pad(a, ((0, 1), (2, 0)), constant_values=9.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_products_pieces_match_numpy(backend):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (3, 4))
    a[1, 2] = -1.0
    b = rng.uniform(-1.0, 1.0, (4, 3))
    for got, want in [(myc.jit(reductions, backend=backend)(a), reductions(a)),
                      (myc.jit(products, backend=backend)(a, b), products(a, b))]:
        for g, w in zip(got, want, strict=True):
            if isinstance(w, list):
                assert isinstance(g, list) and len(g) == len(w)
                for gi, wi in zip(g, w, strict=True):
                    np.testing.assert_allclose(gi, wi, rtol=1e-13)
                continue
            assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
            np.testing.assert_allclose(g, w, rtol=1e-13)


def smooth(x):
    y = 0.3 * x
    return (np.sum(np.sinh(x) * np.cosh(y) + np.arcsinh(x) + np.arctanh(y) + np.arcsin(y)
                   + np.arccos(y) + np.log2(x * x + 1.0) + np.log10(x * x + 2.0)
                   + np.exp2(y) + np.hypot(x, y + 1.0) + np.cbrt(x + 3.0) + np.sinc(x))
            + np.sum(np.cumprod(x)) + np.sum(np.diff(x) ** 2) + np.median(x)
            + np.sum(np.tensordot(np.reshape(x, (2, 3)), np.reshape(x, (3, 2)), 1))
            + np.sum(np.kron(x[:2], x[2:4])) + np.sum(np.pad(x, 2) ** 2)
            + np.sum(np.split(x, 3)[1] ** 3) + np.average(x, weights=np.arange(1.0, 7.0)))


def few(x):
    return np.sum(np.sinh(x) + np.arcsinh(x) + np.hypot(x, 1.0) + np.cbrt(x + 3.0))


def test_gradients_against_finite_differences():
    x = np.array([0.3, -0.7, 1.2, 0.9, -1.6, 2.1])
    check_grads(smooth, (x,), order=1)
    check_grads(few, (x,), order=2)


def test_cumprod_gradient_is_exact_at_a_zero():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    g = myc.grad(lambda v: np.sum(np.cumprod(v)))(x)
    np.testing.assert_allclose(g, [1.0, 2.0 + 6.0 + 24.0, 0.0, 0.0])


def test_static_arguments_are_checked():
    def bad_split(x):
        return np.split(x, 4)

    with pytest.raises(myc.MycError, match="equal division"):
        myc.jit(bad_split)(np.ones(6))

    def bad_pad(x):
        return np.pad(x, 1, mode="linear_ramp")

    with pytest.raises(myc.MycError, match="the supported modes are 'constant'"):
        myc.jit(bad_pad)(np.ones(6))


def zero_diagonal(x, v):
    k = np.exp(-((x[:, None] - x[None, :]) ** 2))
    np.fill_diagonal(k, v)
    wide = np.outer(x[:2], x)  # 2 x n: the first two diagonal entries
    np.fill_diagonal(wide, np.array([1.5, -2.0]))
    counts = np.outer(x, x).astype(np.int64)
    np.fill_diagonal(counts, 2.7)  # cast into the array's dtype, as NumPy does
    return k, wide, counts


@pytest.mark.parametrize("backend", BACKENDS)
def test_fill_diagonal_rebinds_the_array_as_numpy_writes_it(backend):
    x = np.array([0.3, -0.7, 1.2, 4.0])
    got, want = myc.jit(zero_diagonal, backend=backend)(x, 0.25), zero_diagonal(x, 0.25)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13)


def test_fill_diagonal_differentiates_in_the_array_and_the_value():
    def f(x, v):
        k, wide, _ = zero_diagonal(x, v)
        return np.sum(k**2) + np.sum(wide * np.sin(wide))

    check_grads(f, (np.array([0.3, -0.7, 1.2, 0.4]), 0.6), order=1)


def test_fill_diagonal_of_an_alias_read_afterwards_is_refused():
    def f(x):
        k = np.outer(x, x)
        alias = k
        view = k.T
        np.fill_diagonal(view, 0.0)
        return k + alias

    with pytest.raises(myc.MycError, match="updated in place"):
        myc.jit(f)(np.ones(3))


def on_lists(x):
    vals = [np.sum(v * x) for v in x]
    return (np.mean(vals), np.std([v for v in x]), np.max([x[0], 2.0]),
            np.exp([x[1], 0.5]), np.dot([1.0, 2.0, 3.0], x), np.outer([x[0], 1.0], x),
            np.where([True, False, True], x, [0.5, 0.25, 0.125]), np.sum((x[0], x[2])))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_functions_read_lists_and_tuples_as_arrays(backend):
    x = np.array([0.3, -0.7, 1.2])
    for g, w in zip(myc.jit(on_lists, backend=backend)(x), on_lists(x), strict=True):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-13)


def test_numpy_functions_on_lists_differentiate():
    def f(x):
        return sum(np.sum(np.asarray(v) ** 2) for v in on_lists(x))

    check_grads(f, (np.array([0.3, -0.7, 1.2]),), order=1)


def convolutions(a, v):
    return (np.convolve(a, v), np.convolve(a, v, mode="valid"), np.convolve(v, a, "same"),
            np.convolve(a, v[:1]), np.correlate(a, v), np.correlate(a, v, "full"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_convolve_and_correlate_match_numpy(backend):
    a, v = np.array([0.3, -0.7, 1.2, 0.4, 2.0, -1.1]), np.array([0.5, -0.25, 2.0])
    for g, w in zip(myc.jit(convolutions, backend=backend)(a, v), convolutions(a, v),
                    strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    ints = myc.jit(lambda a, v: np.convolve(a, v, "same"))(np.arange(5), np.arange(3))
    np.testing.assert_array_equal(ints, np.convolve(np.arange(5), np.arange(3), "same"))


def test_convolve_differentiates_in_both_inputs():
    def f(a, v):
        return sum(np.sum(np.sin(c)) for c in convolutions(a, v))

    check_grads(f, (np.array([0.3, -0.7, 1.2, 0.4]), np.array([0.5, -0.25, 2.0])), order=1)


def test_one_argument_where_is_refused_with_what_to_do():
    def f(x):
        return np.sum(x[np.where(x > 0)])

    with pytest.raises(myc.MycTypeError, match="np.where\\(condition\\) with one argument") \
            as info:
        myc.jit(f)(np.array([1.0, -2.0]))
    assert "np.where(condition, x, y)" in str(info.value)


def dot_nd(a, b, c, v):
    # np.dot beyond 2-d: a's last axis against b's second-to-last (its last when 1-d)
    return np.sum(np.sin(np.dot(a, b))) + np.sum(np.cos(np.dot(a, v))) \
        + np.sum(np.dot(c, b) ** 2) + np.sum(a.dot(v) * 0.5) + np.sum(np.dot(v, b))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dot_of_more_than_two_dimensions_matches_numpy(backend):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4, 6))
    c, v = rng.standard_normal((3, 4)), rng.standard_normal(4)
    np.testing.assert_allclose(myc.jit(dot_nd, backend=backend)(a, b, c, v),
                               dot_nd(a, b, c, v), rtol=1e-10)


def test_dot_of_more_than_two_dimensions_gradients():
    rng = np.random.default_rng(8)
    args = (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 3)),
            rng.standard_normal((3, 4)), rng.standard_normal(4))
    check_grads(dot_nd, args, order=2)


def nan_extremes(a, i):
    return (np.nanmax(a), np.nanmin(a, axis=0), np.nanmax(a, axis=1, keepdims=True),
            np.nanmin(a[2]), np.nanmax(i), np.nanmin(i, axis=1))


def nan_extremes_loss(a):
    return np.sum(np.nanmax(a, axis=1) ** 2) + np.nanmin(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nanmax_nanmin_match_numpy(backend):
    """nan ignored, an all-nan slice nan, an int array's dtype kept, NumPy scalars where
    NumPy gives them; the gradient reaches the extreme element only."""
    a = np.array([[3.0, np.nan, -1.0], [np.nan, np.nan, np.nan], [0.5, 2.0, 7.0]])
    i = np.array([[3, 1], [-2, 5]])
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        want = nan_extremes(a, i)
    got = myc.jit(nan_extremes, backend=backend)(a, i)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_array_equal(g, w)
    b = np.array([[3.0, np.nan, -1.0], [0.5, 2.0, 7.0]])
    np.testing.assert_array_equal(myc.grad(nan_extremes_loss, backend=backend)(b),
                                  [[6.0, 0.0, 1.0], [0.0, 0.0, 14.0]])
