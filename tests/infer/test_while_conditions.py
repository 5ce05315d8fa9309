"""``while err > tol and it < max_iter`` -- the convergence loop of Sinkhorn, Newton and
fixed-point code -- is one ``loop`` node, not a program specialized on each call's
iterations: in a condition each operand of ``and``/``or`` is made a truth first
(``myc.frontend.lower.condition``), the two sides of the short circuit (a NumPy bool and
a Python bool) rejoin as one Python bool (``myc.infer.control``), and a Python float
``err = np.inf`` that the loop makes a NumPy scalar, read only in that condition, is
carried as the NumPy scalar."""

from __future__ import annotations

import numpy as np
import pytest

import myc

try:
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grads


def halve_until_small(x):
    err = np.inf                       # a Python float, then a NumPy scalar
    it = 0
    while err > 1e-6 and it < 100:     # a NumPy bool and a Python bool
        x = 0.5 * x
        err = np.max(np.abs(x))
        it += 1
    return np.sum(x) + it


def newton_sqrt(x):
    err = 1.0
    it = 0
    y = x
    while err > 1e-12 and it < 50:
        y = 0.5 * (y + x / y)
        err = np.max(np.abs(y * y - x))
        it += 1
    return np.sum(y)


def shrink(x):
    it = 0
    y = x
    while not (np.max(np.abs(y)) < 1e-3 or it >= 40):
        y = 0.7 * y
        it += 1
    return np.sum(y ** 2) + it


def clipped(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (x[i] if x[i] > 0 and i % 2 == 0 else 0.5 * x[i])
    return s


X = np.array([1.0, 2.0, 3.5])


@pytest.mark.parametrize("f", [halve_until_small, newton_sqrt, shrink])
def test_convergence_loops_are_loop_nodes(f):
    text = myc.ir(f, X, stage="typed")
    assert "specialized on" not in text.splitlines()[0], text.splitlines()[0]
    assert "loop(" in text
    assert myc.jit(f)(X) == f(X)
    check_grads(f, (X,), modes=("rev",))


def test_and_in_a_conditional_expression_on_data():
    assert myc.jit(clipped)(np.array([1.0, -2.0, 3.0, 4.0])) == \
        clipped(np.array([1.0, -2.0, 3.0, 4.0]))
    check_grads(clipped, (np.array([1.0, -2.0, 3.0, 4.0]),))
