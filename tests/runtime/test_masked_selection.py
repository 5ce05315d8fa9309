"""``x[mask]`` with a mask computed from data, reduced: compiled (``myc.infer.masked``).

Each program is NumPy code as users write it; each must give NumPy's value (and dtype),
its gradient must match central differences (zero off the mask), and neither may leave
compiled code on ``cpu``/``opencl`` (``stats().evaluator_calls == 0``).  A selection
the program needs as an array (returned, indexed, a mask over leading axes only) still
runs on the evaluator, with the warning that says why."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS

X = np.array([0.3, -1.2, 2.0, 0.7, -0.1, 1.5, -0.6, 0.9])
Y = np.array([0.1, 0.5, 0.3, 0.0, 0.9, 0.25, 0.6, 0.4])
A = np.linspace(-1.0, 1.0, 12).reshape(3, 4)


def sum_positive(x):
    return np.sum(x[x > 0])


def mean_error_where_valid(x, y):
    valid = y > 0.2
    err = (x - y) ** 2
    return np.mean(err[valid])


def method_sum(x):
    return x[x > 0].sum() + x[x < 0].mean()


def max_and_min(x):
    return np.max(x[x < 1.0]) - np.min(np.exp(x[x > -1.0]))


def counts(x):
    m = x > 0
    return len(x[m]) + x[m].size * 10 + x[m].shape[0] * 100


def sum_of_squares(x):
    return np.sum(x[x > 0] ** 2)


def self_dot(x):
    m = x > 0
    return np.dot(x[m], x[m])


def norm_of_selection(x):
    return np.linalg.norm(x[x > 0])


def any_all(x):
    s = x[x > 0]
    return float(np.any(s > 1.0)) + 2.0 * float(np.all(s > 0.0))


def prod_of_selection(x):
    return np.prod(x[x > 0] + 1.0)


def spread(x):
    return np.std(x[x > -1.0]) + np.var(x[x > -1.0], ddof=1)


def masks_written_twice(x, y):
    return np.sum(x[x > 0] * y[x > 0])  # two `x > 0` nodes: the same mask


def matrix_mask(a):
    return np.sum(a[a > 0.2] ** 2) + np.mean(a[a < 0.0])


def mean_over_count(x):
    return np.sum(x[x > 0]) / len(x[x > 0])


def clip_negatives(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y ** 2)


def in_a_branch(x):  # both sides if-converted: their values must have one type
    if np.sum(x) > 1.0:
        s = np.mean(x[x > 0]) * len(x[x > 0])
    else:
        s = np.max(x[x < 0])
    return s


def replace_selected(x):
    y = x * 2.0
    m = y > 1.0
    y[m] = x[m] ** 2
    return np.sum(y * x)


VALUE_CASES = {
    "sum": (sum_positive, (X,)), "mean": (mean_error_where_valid, (X, Y)),
    "methods": (method_sum, (X,)), "max_min": (max_and_min, (X,)), "counts": (counts, (X,)),
    "squares": (sum_of_squares, (X,)), "dot": (self_dot, (X,)),
    "norm": (norm_of_selection, (X,)), "any_all": (any_all, (X,)),
    "prod": (prod_of_selection, (X,)), "std_var": (spread, (X,)),
    "twice": (masks_written_twice, (X, Y)), "matrix": (matrix_mask, (A,)),
    "mean_count": (mean_over_count, (X,)), "setitem": (clip_negatives, (X,)),
    "setitem_selection": (replace_selected, (X,)),
    "float32": (sum_of_squares, (X.astype(np.float32),)),
    "ints": (sum_positive, (np.array([3, -1, 4, -1, 5]),)),
    "branch": (in_a_branch, (X,)), "branch_else": (in_a_branch, (-X,)),
}
GRAD_CASES = ["sum", "mean", "methods", "max_min", "squares", "dot", "norm", "prod",
              "std_var", "twice", "matrix", "mean_count", "setitem", "setitem_selection",
              "branch", "branch_else"]


def _compiled(f, backend):
    if backend != "interp":
        assert f.stats().evaluator_calls == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_value_matches_numpy_compiled(backend, case):
    fn, args = VALUE_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)
        f = myc.jit(fn, backend=backend)
        got = f(*args)
    want = fn(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype, case
    np.testing.assert_allclose(got, want, rtol=1e-5 if case == "float32" else 1e-12)
    _compiled(f, backend)


def _central_differences(fn, args, eps=1e-6):
    x = args[0]
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (fn(x + e, *args[1:]) - fn(x - e, *args[1:])) / (2 * eps)
    return g


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradient_matches_finite_differences(backend, case):
    fn, args = VALUE_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)
        g = myc.grad(fn, backend=backend)
        got = g(*args)
    np.testing.assert_allclose(got, _central_differences(fn, args), rtol=1e-6, atol=1e-7)
    _compiled(g, backend)


def test_gradient_is_zero_off_the_mask():
    g = myc.grad(sum_of_squares)(X)
    assert np.all(g[X <= 0] == 0) and np.all(g[X > 0] != 0)


def test_higher_order_and_forward_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)
        hess_diag = myc.grad(lambda x: np.sum(myc.grad(prod_of_selection)(x)))(X)
        _, tangent = myc.jvp(sum_of_squares, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(
        hess_diag, _central_differences(
            lambda x: np.sum(myc.grad(prod_of_selection, backend="interp")(x)), (X,)),
        rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tangent, 2 * np.sum(X[X > 0]))


def empty_selection(x):
    s = x[x > 10.0]
    return np.sum(s), np.mean(s), len(s), np.prod(s)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_selection(backend):
    """NumPy: sum 0, mean nan (with its RuntimeWarning), len 0, prod 1; and a gradient
    of zeros."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("error", myc.MycFallbackWarning)
        f = myc.jit(empty_selection, backend=backend)
        total, mean, n, prod = f(X)
        g = myc.grad(sum_of_squares, backend=backend)
        assert np.all(g(-np.abs(X)) == 0)
    assert (total, n, prod) == (0.0, 0, 1.0) and np.isnan(mean)
    _compiled(f, backend)
    _compiled(g, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_of_an_empty_selection(backend):
    """NumPy raises; compiled code, which cannot raise there, gives nan (docs/numpy.md);
    the evaluator raises as NumPy does."""
    f = myc.jit(lambda x: np.max(x[x > 10.0]) + np.min(x[x > 10.0]), backend=backend)
    if backend == "interp":
        with pytest.raises(myc.MycError, match="zero-size array"):
            f(X)
        return
    assert np.isnan(f(X))
    _compiled(f, backend)


def returned(x):
    return x[x > 0]


def indexed(x):
    return x[x > 0][0]


def leading_axes(a):
    return np.sum(a[a[:, 0] > -0.5] ** 2)


def int_max(x):
    return np.max(x[x > 0])


@pytest.mark.parametrize("fn, arg", [(returned, X), (indexed, X), (leading_axes, A),
                                     (int_max, np.array([3, -1, 4]))])
def test_a_selection_used_as_an_array_still_runs_on_the_evaluator(fn, arg):
    f = myc.jit(fn)
    with pytest.warns(myc.MycFallbackWarning, match="boolean-mask"):
        got = f(arg)
    np.testing.assert_array_equal(got, fn(arg))
    assert f.stats().evaluator_calls == 1
