"""NumPy functions the fifth corpus (tests/realworld/wild5) reached for and myc refused on
data: ``np.cross`` (n-body angular momentum), ``np.take_along_axis`` (ranking losses),
``np.vander`` (polynomial design matrices), ``np.hsplit``/``vsplit``/``dsplit`` (a GRU's
readout), ``np.clip`` with a ``None`` bound (DP-SGD's clip factor) and its ``out=``
refusal.  Values against NumPy on every backend, bit for bit (the same products in the
same order); derivatives against finite differences."""

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

R = np.random.default_rng(0)
A3, B3 = R.standard_normal((4, 3)), R.standard_normal((4, 3))
B2 = R.standard_normal((4, 2))
S = R.standard_normal((3, 5))
X = R.uniform(-1.5, 1.5, 6)


def crosses(a, b, b2):
    return (np.cross(a, b), np.cross(a, b2), np.cross(b2, a), np.cross(b2, b2),
            np.cross(a.T, b.T, axis=0), np.cross(a, b[0]), np.cross(a.T, b, axisa=0, axisc=0))


def gathers(s, order):
    return (np.take_along_axis(s, order, axis=1), np.take_along_axis(s, order[:, :2], 1),
            np.take_along_axis(s.T, order.T, axis=0), np.take_along_axis(s, order, axis=-1),
            np.take_along_axis(s[0], order[0], axis=None))


def vanders(x):
    return (np.vander(x), np.vander(x, 3), np.vander(x, 4, increasing=True),
            np.vander(np.arange(1, 5), 3))


def splits(a):
    return (np.hsplit(a, 3) + np.vsplit(a, 2) + np.hsplit(a[0], 3) + np.hsplit(a, [1]) +
            np.dsplit(a.reshape(2, 2, 3), 3))


def clips(a):
    return (np.clip(a, None, 0.5), np.clip(a, -0.2, None), a.clip(min=-0.2),
            a.clip(max=0.3), np.clip(a, -0.5, 0.5), a.clip(-0.1, 0.1),
            np.clip(a, None, np.full(a.shape[1], 0.1)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_match_numpy(backend):
    order = np.argsort(-S, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2's 2-vector cross
        cases = [(crosses, (A3, B3, B2)), (gathers, (S, order)), (vanders, (X,)),
                 (splits, (A3.reshape(2, 6),)), (clips, (A3,))]
        for f, args in cases:
            want = f(*args)
            got = myc.jit(f, backend=backend)(*args)
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                assert np.asarray(g).dtype == np.asarray(w).dtype, f.__name__
                np.testing.assert_array_equal(g, w, err_msg=f.__name__)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_derivatives_match_finite_differences():
    order = np.argsort(-S, axis=1)
    check_grads(lambda a, b: np.sum(np.cross(a, b) ** 2), (A3, B3), order=2)
    check_grads(lambda a, b: np.cross(a, b), (A3, B2), order=1)
    check_grads(lambda s: np.take_along_axis(s, order, axis=1) * np.arange(5.0), (S,))
    check_grads(lambda x: np.vander(x, 4), (X,), order=2)
    check_grads(lambda a: np.hsplit(a, 3)[1] * np.vsplit(a, 2)[0][:, 2:4], (A3.reshape(2, 6),))
    check_grads(lambda a: np.clip(a, None, 0.5) * np.clip(a, -0.2, None), (A3,))


def test_ranking_loss_by_take_along_axis_gradient():
    """ListMLE's scores put in label order, differentiated through the gather."""
    labels = np.round(S * 2)

    def listmle(s):
        z = np.take_along_axis(s, np.argsort(-labels, axis=1), axis=1)
        return np.sum(np.log(np.cumsum(np.exp(z[:, ::-1]), axis=1))[:, ::-1] - z)

    check_grads(listmle, (S,), modes=("rev",))


def test_refusals_name_the_call():
    # (np.clip's out= writes into the array since session 16: tests/unit/test_ufunc_out.py)
    with pytest.raises(myc.MycError, match=r"np\.cross: incompatible dimensions"):
        myc.jit(lambda a: np.cross(a, a))(S)
    with pytest.raises(myc.MycError, match=r"np\.vander: x must be"):
        myc.jit(lambda a: np.vander(a))(S)
    with pytest.raises(myc.MycError, match="equal division"):
        myc.jit(lambda a: np.hsplit(a, 4))(A3)
    with pytest.raises(myc.MycError, match="take_along_axis"):
        myc.jit(lambda s: np.take_along_axis(s, np.argsort(s[0]), axis=1))(S)


METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski", "cosine")


@pytest.mark.parametrize("backend", BACKENDS)
def test_scipy_cdist_pdist_match_scipy(backend):
    distance = pytest.importorskip("scipy.spatial.distance")
    A, B = A3, R.standard_normal((5, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", myc.MycFallbackWarning)
        for m in METRICS:
            got = myc.jit(lambda a, b, m: distance.cdist(a, b, m), backend=backend)(A, B, m)
            np.testing.assert_allclose(got, distance.cdist(A, B, m), rtol=1e-14, atol=1e-15)
            got = myc.jit(lambda a, m: distance.pdist(a, metric=m), backend=backend)(A, m)
            np.testing.assert_allclose(got, distance.pdist(A, m), rtol=1e-14, atol=1e-15)


def test_scipy_cdist_derivatives():
    distance = pytest.importorskip("scipy.spatial.distance")
    B = R.standard_normal((5, 3))
    for m in ("euclidean", "sqeuclidean", "minkowski", "cosine"):
        check_grads(lambda a, b, m=m: distance.cdist(a, b, m), (A3, B), order=1)
        check_grads(lambda a, m=m: distance.pdist(a, m), (A3,), order=1)
    # the distance of a point to itself: derivative 0, not nan (as np.linalg.norm's)
    g = myc.grad(lambda a: np.sum(np.exp(-distance.cdist(a, a) ** 2)))(A3)
    assert np.all(np.isfinite(g))
    with pytest.raises(myc.MycError, match="only the metrics"):
        myc.jit(lambda a: distance.cdist(a, a, "hamming"))(A3)
