"""``np.linalg`` (``cholesky``, ``solve``, ``inv``, ``det``, ``slogdet``) and
``scipy.linalg`` (``solve_triangular``, ``cholesky``, ``cho_factor``, ``cho_solve``,
``solve``, ``inv``, ``det``): primitives run as host steps calling NumPy's LAPACK
routines (``myc/prims/linalg.py``), with reverse and forward rules composed of
primitives (``myc/prims/linalg_rules.py``).

Forward: CPython vs every backend (``check_calls``), 2-d and stacks, float32/float64.
Derivatives: ``tests/gradcheck.py`` (reverse and forward mode against central
differences, and against each other), second order too, and a hypothesis sweep over
random symmetric positive definite matrices.  Errors: shapes at compile time, singular
and non-positive-definite matrices at run time, each a ``MycError`` at the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import myc
from myc.errors import MycError
from tests.adversarial.test_numpy_subset import check_calls, check_raises
from tests.backends import BACKENDS
from tests.gradcheck import check_grads

try:
    import scipy.linalg as scipy_linalg
except ImportError:  # SciPy is optional: its names are tested where it is installed
    scipy_linalg = None

_SCIPY = pytest.mark.skipif(scipy_linalg is None, reason="SciPy is not installed")


def _params(cases):
    """pytest params, the programs calling SciPy skipped without it."""
    return [pytest.param(f, a, id=f"{f.__name__}-{i}",
                         marks=[_SCIPY] if "scipy_linalg" in f.__code__.co_names or
                         f.__name__ in ("d_gauss", "p_gauss_logpdf") else [])
            for i, (f, a) in enumerate(cases)]

R = np.random.default_rng(5)


def _spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


S3 = _spd(3)
S4 = _spd(4)
SB = _spd(3, (2,))  # a stack of two
SBB = _spd(2, (2, 3))
B3 = R.standard_normal(3)
B32 = R.standard_normal((3, 2))
BB32 = R.standard_normal((2, 3, 2))
G3 = R.standard_normal((3, 3)) + 3 * np.eye(3)  # general, well conditioned
L3 = np.linalg.cholesky(S3)


def _f32(*arrays):
    return tuple(a.astype(np.float32) for a in arrays)


# ---------------------------------------------------------------- programs
def p_cholesky(a):
    return np.linalg.cholesky(a)


def p_cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


def p_solve(a, b):
    return np.linalg.solve(a, b)


def p_inv(a):
    return np.linalg.inv(a)


def p_det(a):
    return np.linalg.det(a)


def p_slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


def p_slogdet_index(a):
    return np.linalg.slogdet(a)[1]


def p_solve_tri_lower(a, b):
    return scipy_linalg.solve_triangular(a, b, lower=True)


def p_solve_tri_upper_trans(a, b):
    return scipy_linalg.solve_triangular(a, b, trans="T")


def p_solve_tri_lower_trans(a, b):
    return scipy_linalg.solve_triangular(a, b, trans=1, lower=True)


def p_cho(a, b):
    return scipy_linalg.cho_solve(scipy_linalg.cho_factor(a, lower=True), b)


def p_cho_upper(a, b):
    return scipy_linalg.cho_solve(scipy_linalg.cho_factor(a), b)


def p_sp_chol(a):
    return scipy_linalg.cholesky(a), scipy_linalg.cholesky(a, lower=True)


def p_sp_misc(a, b):
    return scipy_linalg.solve(a, b), scipy_linalg.inv(a), scipy_linalg.det(a)


def p_gauss_logpdf(x, mu, s):
    """A multivariate normal's log density written the way model code writes it."""
    low = np.linalg.cholesky(s)
    z = scipy_linalg.solve_triangular(low, x - mu, lower=True)
    return -0.5 * np.sum(z * z) - np.sum(np.log(np.diag(low))) \
        - 0.5 * x.shape[0] * np.log(2 * np.pi)


FORWARD = [
    (p_cholesky, [(S3,), (SB,), (SBB,), _f32(S4)]),
    (p_cholesky_upper, [(S3,), (SB,)]),
    (p_solve, [(G3, B3), (G3, B32), (SB, B3), (SB, BB32), (G3, BB32), _f32(G3, B32),
               (G3.astype(np.float32), B3)]),
    (p_inv, [(G3,), (SB,), _f32(G3)]),
    (p_det, [(G3,), (SB,), (SBB,), _f32(G3)]),
    (p_slogdet, [(G3,), (-G3,), (SB,), _f32(G3)]),
    (p_slogdet_index, [(G3,), (SBB,)]),
    (p_solve_tri_lower, [(G3, B3), (G3, B32), _f32(G3, B32)]),
    (p_solve_tri_upper_trans, [(G3, B3), (G3, B32)]),
    (p_solve_tri_lower_trans, [(G3, B32)]),
    (p_cho, [(S3, B3), (S3, B32)]),
    (p_cho_upper, [(S3, B3), (S3, B32)]),
    (p_sp_chol, [(S3,)]),
    (p_sp_misc, [(G3, B3), (G3, B32)]),
    (p_gauss_logpdf, [(B3, B3[::-1].copy(), S3)]),
]


@pytest.mark.parametrize("fn,argsets", _params(FORWARD))
def test_forward(fn, argsets):
    check_calls(fn, argsets)


# ---------------------------------------------------------------- derivatives
def d_cholesky(a):
    """Cholesky of an SPD matrix built from a general one: finite differences in any
    direction stay on symmetric matrices."""
    n = a.shape[-1]
    return np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


def d_solve(a, b):
    return np.linalg.solve(a, b)


def d_inv(a):
    return np.linalg.inv(a)


def d_det(a):
    return np.linalg.det(a)


def d_slogdet(a):
    return np.linalg.slogdet(a)[1]


def d_tri(a, b):
    return scipy_linalg.solve_triangular(a, b, lower=True)


def d_tri_trans(a, b):
    return scipy_linalg.solve_triangular(a, b, trans=1)


def d_cho(a, b):
    n = a.shape[-1]
    s = a @ a.T + n * np.eye(n)
    return scipy_linalg.cho_solve(scipy_linalg.cho_factor(s), b)


def d_gauss(x, mu, a):
    return p_gauss_logpdf(x, mu, a @ a.T + 3.0 * np.eye(3))


GRADS = [
    (d_cholesky, (G3,)),
    (d_cholesky, (R.standard_normal((2, 3, 3)),)),
    (d_solve, (G3, B3)),
    (d_solve, (G3, B32)),
    (d_solve, (SB, B3)),  # a stack against one right-hand side: its sensitivity summed
    (d_solve, (SB, BB32)),
    (d_inv, (G3,)),
    (d_inv, (SB,)),
    (d_det, (G3,)),
    (d_det, (SB,)),
    (d_slogdet, (-G3,)),
    (d_slogdet, (SBB,)),
    (d_tri, (G3, B32)),
    (d_tri_trans, (G3, B3)),
    (d_cho, (G3, B32)),
    (d_gauss, (B3, B3 * 0.5, G3)),
]


@pytest.mark.parametrize("fn,args", _params(GRADS))
def test_grads(fn, args):
    check_grads(fn, args)


@pytest.mark.parametrize("fn,args", _params([
    (d_cholesky, (G3,)), (d_solve, (G3, B32)), (d_inv, (G3,)), (d_slogdet, (G3,)),
    (d_det, (G3,)), (d_tri, (G3, B3))]))
def test_second_order(fn, args):
    check_grads(fn, args, order=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_gradients_on_every_backend(backend):
    def loss(a, b):
        return np.sum(np.linalg.solve(d_cholesky(a), b)) + np.linalg.slogdet(
            a @ a.T + 3 * np.eye(3))[1]

    want = myc.grad(myc.jit(loss, backend="interp"), argnums=(0, 1))(G3, B32)
    got = myc.grad(myc.jit(loss, backend=backend), argnums=(0, 1))(*_f32(G3, B32))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=1e-4)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_random_spd_cholesky_gradient(n, seed):
    """The symmetric Cholesky adjoint against finite differences along symmetric
    directions, for random SPD matrices of random sizes."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    s = a @ a.T + n * np.eye(n)
    c = rng.standard_normal((n, n))

    def f(s):
        return np.sum(np.linalg.cholesky(s) * c)

    g = myc.grad(f)(s)
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)
    d = rng.standard_normal((n, n))
    d = d + d.T
    eps = 1e-6
    fd = (f(s + eps * d) - f(s - eps * d)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- errors
def test_non_square_is_a_compile_time_error():
    for b in BACKENDS:
        with pytest.raises(MycError, match="square") as e:
            myc.jit(p_cholesky, backend=b)(np.ones((2, 3)))
        assert "np.linalg.cholesky(a)" in str(e.value)


def test_solve_shape_mismatch():
    check_raises(p_solve, [(G3, np.ones(4)), (G3, np.ones((2, 2)))])


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_and_not_positive_definite_at_the_users_line(backend):
    with pytest.raises(MycError, match="[Ss]ingular") as e:
        myc.jit(p_inv, backend=backend)(np.ones((3, 3)))
    assert "np.linalg.inv(a)" in str(e.value)
    with pytest.raises(MycError, match="positive definite") as e:
        myc.jit(p_cholesky, backend=backend)(-S3)
    assert "np.linalg.cholesky(a)" in str(e.value)
    with pytest.raises(MycError, match="[Ss]ingular"):
        myc.jit(p_solve, backend=backend)(np.zeros((3, 3)), B3)


@_SCIPY
def test_trans_must_be_static_and_known():
    def bad(a, b):
        return scipy_linalg.solve_triangular(a, b, trans="X")

    check_raises(bad, [(G3, B3)])


def test_aot_refuses_linalg(tmp_path):
    with pytest.raises(MycError, match="cholesky"):
        myc.aot(p_cholesky, "f64[3,3]", str(tmp_path / "libc.so"))


# ---------------------------------------------------------------- eigh


def e_spectrum(b):
    a = b @ np.swapaxes(b, -1, -2) + np.eye(np.shape(b)[-1])
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2) + np.sum(np.abs(v[..., -1]) * 2.0) + np.sum(np.linalg.eigvalsh(a))


def e_upper(b):
    a = b @ np.swapaxes(b, -1, -2)
    w, v = np.linalg.eigh(np.triu(a) + 0.5, UPLO="U")
    return w, np.abs(v)


B4 = np.random.default_rng(3).standard_normal((4, 4))
B234 = np.random.default_rng(4).standard_normal((2, 3, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_eigh_forward(backend):
    for fn, arg in [(e_spectrum, B4), (e_spectrum, B234), (e_upper, B4),
                    (e_upper, B4.astype(np.float32))]:
        got, want = myc.jit(fn, backend=backend)(arg), fn(arg)
        for g, w in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=2e-5 if arg.dtype == np.float32 else 1e-12)


def test_eigh_gradients_both_modes_second_order():
    check_grads(e_spectrum, (B4,), order=2)
    check_grads(e_spectrum, (B234,), order=1)


# ---------------------------------------------------------------- svd, pinv


def s_mix(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    w = np.arange(1.0, 1.0 + np.shape(s)[-1])
    low_rank = np.matmul(u * np.expand_dims(s * w, -2), vt)  # sign-invariant products
    return (np.sum(s ** 2) + np.sum(low_rank ** 2) + np.sum(np.abs(u))
            + np.sum(np.linalg.svd(a, compute_uv=False)) + np.sum(np.linalg.pinv(a) ** 2))


def s_square_default(a):
    u, s, vt = np.linalg.svd(a)
    return np.abs(u), s, np.abs(vt)


def s_wide_default(a):
    return np.linalg.svd(a)


SVD_ARGS = [np.random.default_rng(5).standard_normal(s) for s in [(4, 4), (5, 3), (3, 5),
                                                                   (2, 4, 3)]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_svd_forward(backend):
    for a in SVD_ARGS:
        np.testing.assert_allclose(myc.jit(s_mix, backend=backend)(a), s_mix(a), rtol=1e-12)
    for g, w in zip(myc.jit(s_square_default, backend=backend)(SVD_ARGS[0]),
                    s_square_default(SVD_ARGS[0]), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("a", SVD_ARGS, ids=lambda a: "x".join(map(str, a.shape)))
def test_svd_gradients_both_modes(a):
    check_grads(s_mix, (a,), order=2 if a.ndim == 2 and a.shape[0] == a.shape[1] else 1)


def test_svd_full_matrices_of_a_non_square_matrix_is_refused_clearly():
    with pytest.raises(MycError, match="full_matrices=False"):
        myc.jit(s_wide_default)(SVD_ARGS[1])
