"""What the sixth corpus (tests/realworld/wild6) found: ``dtype=bool`` handed to a NumPy
function written in the subset (``np.eye(2 * n, dtype=bool)`` in SimCLR's loss) under
``grad``/``jvp``, where the builtin ``bool`` had become its differentiated image and
``astype`` refused it; values against NumPy on every backend, derivatives against finite
differences."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS

try:
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grads

R = np.random.default_rng(0)
M = R.standard_normal((4, 4))


def _mask(n, dt):
    return np.eye(n, dtype=dt)   # a dtype passed on through a user function


def masked(x):
    m = np.eye(4, dtype=bool)
    off = np.where(_mask(4, bool), 0.0, x)
    return np.sum(np.where(m, x ** 2, 0.0)) + np.sum(off * np.identity(4, dtype=int)) + \
        np.sum(off * np.tri(4, dtype=float))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dtype_bool_into_library_functions_under_grad_and_jvp(backend):
    assert myc.jit(masked, backend=backend)(M) == pytest.approx(masked(M), rel=1e-15)
    want = np.where(np.eye(4, dtype=bool), 2 * M, np.tri(4))
    np.testing.assert_allclose(myc.grad(masked, backend=backend)(M), want, rtol=1e-15)
    t = R.standard_normal((4, 4))
    _, dy = myc.jvp(masked, (M,), (t,), backend=backend)
    assert dy == pytest.approx(np.sum(want * t), rel=1e-13)


def pads(x):
    return tuple(np.pad(x, w, mode=m) for m in ("edge", "wrap", "reflect", "symmetric")
                 for w in (1, ((0, 1), (0, 0)), ((2, 0), (1, 3)), ((0, 0), (0, 7))))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pad_edge_wrap_reflect_symmetric(backend):
    x = R.standard_normal((3, 4))
    for got, want in zip(myc.jit(pads, backend=backend)(x), pads(x), strict=True):
        np.testing.assert_array_equal(got, want)
    one = np.ones((1, 2))
    np.testing.assert_array_equal(myc.jit(lambda a: np.pad(a, 2, mode="reflect"),
                                          backend=backend)(one), np.pad(one, 2, "reflect"))
    w = R.standard_normal((5, 11))

    def f(a):
        return sum(np.sum(p * w[:p.shape[0], :p.shape[1]]) for p in pads(a)[::4])

    if backend == "cpu":
        check_grads(f, (x,))


def test_pad_unsupported_mode_is_refused_at_the_call():
    with pytest.raises(myc.MycValueError, match="supported modes are") as info:
        myc.jit(lambda a: np.pad(a, 1, mode="linear_ramp"))(np.ones(3))
    assert "test_np_library_wild6.py" in str(info.value)


def draws_integers(x, rng):
    idx = rng.integers(0, x.shape[0], size=5)   # an RBM's flipped bits, a minibatch
    j = rng.integers(3)
    k = rng.integers(2, 6, size=(2, 2), endpoint=True)
    return np.sum(x[idx] ** 2) + x[j] + np.sum(k)


def draws_randint(x, rs):
    return np.sum(x[rs.randint(0, 4, size=3)] ** 2) + x[np.random.randint(4, size=None)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make", [(draws_integers, np.random.default_rng),
                                      (draws_randint, np.random.RandomState)])
def test_integer_draws_are_numpys(backend, fn, make):
    x = R.standard_normal(6)
    np.random.seed(0)
    want, g_want = fn(x, make(4)), make(4)
    np.random.seed(0)
    got = myc.jit(fn, backend=backend)(x, g_want)
    assert got == want
    np.random.seed(0)
    g = myc.grad(fn, backend=backend)(x, make(4))
    eps = 1e-6
    for i in range(6):
        d = np.zeros(6)
        d[i] = eps
        np.random.seed(0)
        up = fn(x + d, make(4))
        np.random.seed(0)
        dn = fn(x - d, make(4))
        assert g[i] == pytest.approx((up - dn) / (2 * eps), abs=1e-6)


def test_integer_draw_with_float_bounds_is_refused():
    with pytest.raises(myc.MycTypeError, match="must be an int"):
        myc.jit(lambda x, rng: x[rng.integers(0.0, 3.0)])(np.ones(3), np.random.default_rng())


def scans(x, m):
    return (np.logaddexp.accumulate(x), np.logaddexp.accumulate(m, axis=1),
            np.maximum.accumulate(m, axis=0), np.add.accumulate(x),
            np.logaddexp.reduce(m, axis=1), np.maximum.reduce(m, axis=0, keepdims=True),
            np.logaddexp2.accumulate(x), np.minimum.accumulate(x), np.add.reduce(m, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ufunc_accumulate_and_reduce(backend):
    """Cox regression's risk sets ``np.logaddexp.accumulate(eta)``: NumPy's scan order,
    so the same values bit for bit on the CPU (the running log-sum-exp one element at a
    time)."""
    x = R.standard_normal(7) * 30
    m = R.standard_normal((3, 5))
    for got, want in zip(myc.jit(scans, backend=backend)(x, m), scans(x, m), strict=True):
        assert np.shape(got) == want.shape
        if backend == "opencl":  # (its exp/log1p round differently in the last place)
            np.testing.assert_allclose(got, want, rtol=1e-14)
        else:
            np.testing.assert_array_equal(got, want)
    if backend == "cpu":
        w = [R.standard_normal(r.shape) for r in scans(x, m)]
        check_grads(lambda x, m: sum(np.sum(r * c) for r, c in zip(scans(x, m), w)),
                    (x / 10, m))


def test_ufunc_scan_of_an_unsupported_ufunc_is_refused():
    with pytest.raises(myc.MycValueError, match=r"np\.hypot\.accumulate/reduce: not supp"):
        myc.jit(lambda a: np.hypot.accumulate(a))(np.ones(3))


def list_index_writes(A, v):
    A = A.copy()
    A[[0, 1]] = 5.0 * v[0]          # rows 0 and 1 (was: the element A[0, 1])
    A[[0, 2], 1] += v[1]
    B = A.copy()
    B[[0, 2]] = B[[2, 0]]           # a row swap by list indices
    return A, B


@pytest.mark.parametrize("backend", BACKENDS)  # (OpenCL read A[[0, 2], 1]'s list as a
def test_list_index_in_an_item_assignment_is_an_index_array(backend):  # basic index: a crash)
    """``A[[0, 1]] = v`` is NumPy's integer-array index, as ``A[[0, 1]]`` read is; it was
    lowered as the tuple ``A[0, 1]`` (a silent wrong value)."""
    A, v = R.standard_normal((3, 2)), R.standard_normal(2)
    for got, want in zip(myc.jit(list_index_writes, backend=backend)(A, v),
                         list_index_writes(A, v), strict=True):
        np.testing.assert_array_equal(got, want)
    if backend == "cpu":
        w = R.standard_normal((2, 3, 2))
        check_grads(lambda A, v: sum(np.sum(r * c) for r, c in
                                     zip(list_index_writes(A, v), w)), (A, v))
