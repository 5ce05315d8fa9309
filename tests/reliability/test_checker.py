"""The fuzz checker's own judgement (``tests/reliability/fuzz.py``): what it lets through
must be a property of the point or of floating point, never a wrong gradient.

Each case is a program from the GPU machine's gradient campaign of 2026-11-26, reduced,
that the checker reported although the gradient was right, next to the same program with
a wrong gradient, which it must still report."""

from __future__ import annotations

import math

import numpy as np
import pytest

import myc
from tests.reliability import fuzz


class Prog:
    source = "(test program)"


def _fd(loss, args, grads, grad_at=None, seed=0):
    fuzz.check_finite_differences(loss, args, (1.0,), grads, np.random.default_rng(seed),
                                  Prog(), grad_at)


def tie(a, b, x, w):
    return min(np.max(x), a / 2) * w[0]  # at 0: both 0, the first is taken


def tie_grad(a, b, x):
    """The gradient of ``tie``, taking the first at a tie, as AD does."""
    if np.max(x) <= a / 2:
        g = np.zeros_like(x)
        g[np.argmax(x)] = 1.0
        return 0.0, 0.0, g
    return 0.5, 0.0, np.zeros_like(x)


def test_a_tie_is_checked_at_its_neighbours():
    """run5 (and run6, run7, run9, run13): all-zero arguments, a comparison that holds
    with equality at the point only; the differences see the other branch on both sides."""
    args = (0.0, 0.0, np.zeros(4))
    ties = fuzz.TALLY.fd_ties
    _fd(tie, args, tie_grad(*args), tie_grad, seed=2)
    assert fuzz.TALLY.fd_ties == ties + 1
    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        _fd(tie, args, tie_grad(*args))  # no neighbours to look at: reported

    def wrong(a, b, x):  # the neighbours' gradient is wrong too: reported
        ga, gb, gx = tie_grad(a, b, x)
        return ga * 1.01, gb, gx

    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        _fd(tie, args, tie_grad(*args), wrong, seed=2)


def smooth(a, b, x, w):
    return (np.sin(a) + np.sum(np.tanh(x)) * b) * w[0]


def smooth_grad(a, b, x):
    return math.cos(a), float(np.sum(np.tanh(x))), b / np.cosh(x) ** 2


def test_a_wrong_gradient_at_a_smooth_point_is_reported():
    args = (0.3, -1.2, np.array([0.5, -0.1, 2.0]))
    _fd(smooth, args, smooth_grad(*args), smooth_grad)
    for k, scale in ((0, 1.0001), (1, 0.999), (2, 1.0002)):
        g = list(smooth_grad(*args))
        g[k] = g[k] * scale
        with pytest.raises(AssertionError, match="disagrees with finite differences"):
            _fd(smooth, args, tuple(g), lambda a, b, x, k=k, s=scale: tuple(
                gi * (s if i == k else 1) for i, gi in enumerate(smooth_grad(a, b, x))))


def small_kink(a, b, x, w):
    # slopes 1 and 1 + 1e-4 on the two sides of a = 0.25: a kink too small for the
    # 1e-4 test on the one-sided slopes, large enough to move the central difference
    return (a + 1e-4 * max(a - 0.25, 0.0) + np.sum(x)) * w[0]


def test_a_small_kink_is_skipped_not_failed():
    """run10 failure 1 and run9 failure 5: one-sided slopes 6e-5 apart."""
    args = (0.25, 0.0, np.zeros(2))
    skipped = fuzz.TALLY.fd_skipped
    _fd(small_kink, args, (1.0, 0.0, np.ones(2)))
    assert fuzz.TALLY.fd_skipped == skipped + 1


def log_of_one_plus(a, b, x, w):
    return np.sqrt(np.abs(np.log(1.0 + a * a))) * w[0] + np.sum(x * b)


@pytest.mark.parametrize("backend", ["cpu"])
def test_a_gradient_the_stability_rewrites_made_more_accurate(backend):
    """run10 failures 2-3: ``log(1 + a*a)`` at a = 1.6e-7 is ``log1p(a*a)`` in the
    compiled program; NumPy's is 0.2 % off, and so is the evaluator's gradient.  The
    same program without the rewrites agrees; a wrong reference still fails."""
    args = (1.5588086019884214e-07, 1.3, np.array([2.96655272, 0.7890838, 0.0]), (1.0,))
    want = myc.grad(myc.jit(log_of_one_plus, backend="interp"), argnums=(0, 1, 2))(*args)
    got = myc.grad(myc.jit(log_of_one_plus, backend=backend), argnums=(0, 1, 2))(*args)
    assert abs(got[0] / want[0] - 1) > 1e-4  # the rewrite matters here
    assert abs(got[0] - 1.0) < 1e-8  # d/da sqrt(log1p(a^2)) = 1 to 1e-14
    assert fuzz.rewrites_explain(log_of_one_plus, backend, args, want, Prog(), "float64")
    wrong = (want[0], want[1] * 1.01, want[2])
    assert not fuzz.rewrites_explain(log_of_one_plus, backend, args, wrong, Prog(),
                                     "float64")
