"""Linear algebra that can fail at run time (``solve``/``inv`` of a singular matrix,
``cholesky`` of one that is not positive definite) inside a data-dependent branch or a
loop body: an if-converted branch runs both sides, and a loop's body program computes
the step after the last, so such an operation runs only where its path holds (as an
index or a Python division does).  CPython never evaluates it elsewhere, so neither may
myc: a matrix singular only on the path not taken is no error."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def loop_solve(b, n):
    i = 0
    while i < n:
        M = np.eye(2) * (n - i)  # singular at i == n, which CPython never reaches
        b = np.linalg.solve(M, b)
        i += 1
    return b


def branch_solve(A, b, c):
    if c > 0:
        y = np.linalg.solve(A, b)
    else:
        y = b * 2
    return y


def branch_factor(A, c):
    if np.sum(c) > 0:
        L = np.linalg.cholesky(A) + np.linalg.inv(A)
    else:
        L = A
    return L


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_linalg_runs_only_on_its_path(backend):
    b = np.array([1.0, 2.0])
    np.testing.assert_allclose(myc.jit(loop_solve, backend=backend)(b, 3), loop_solve(b, 3))
    np.testing.assert_array_equal(
        myc.jit(branch_solve, backend=backend)(np.zeros((2, 2)), b, -1.0), b * 2)
    np.testing.assert_array_equal(
        myc.jit(branch_factor, backend=backend)(-np.eye(2), np.array([-1.0])), -np.eye(2))


def test_on_its_path_the_error_is_raised_at_the_line():
    with pytest.raises(myc.MycValueError, match="singular") as info:
        myc.jit(branch_solve)(np.zeros((2, 2)), np.ones(2), 1.0)
    assert "np.linalg.solve(A, b)" in str(info.value)


def test_gradients_through_guarded_solves():
    b = np.array([1.0, 2.0])
    np.testing.assert_allclose(myc.grad(lambda v: np.sum(loop_solve(v, 3)))(b),
                               np.ones(2) / 6, rtol=1e-12)
    A = np.array([[2.0, 0.5], [0.1, 3.0]])

    def h(A, c):
        return np.sum(branch_solve(A, b, c))

    eps = 1e-6
    fd = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            E = np.zeros((2, 2))
            E[i, j] = eps
            fd[i, j] = (h(A + E, 1.0) - h(A - E, 1.0)) / (2 * eps)
    np.testing.assert_allclose(myc.grad(h)(A, 1.0), fd, rtol=1e-6)
    np.testing.assert_array_equal(myc.grad(h)(A, -1.0), np.zeros((2, 2)))
