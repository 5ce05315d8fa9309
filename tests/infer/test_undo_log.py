"""A loop that reads rows it wrote keeps a linear gradient: an undo log.

``H[t + 1] = np.tanh(W @ H[t] + x[t])`` (an RNN's, an ODE's states in a preallocated
array), ``H[t] = f(H[t - 1])``, an appended list read by ``ys[-1]``: the body reads its
state ``H``, so the backward loop recomputing iteration ``k`` needs ``H`` as it was.
The taped rerun used to store ``H`` whole every iteration (quadratic in the trip
count); now it stores the row each iteration overwrites and its index, and the backward
loop carries ``H``, restoring one row per iteration (``myc.infer.undo_log``); a row
read's cotangent is added into its row (``row_merge.row_of_stores``), a native loop
storing both rows in place (``NativeLoop._rows_in_place``).  Values are checked against
NumPy on every backend, gradients against differences and forward mode."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.lower import program

try:
    from tests.backends import BACKENDS
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from backends import BACKENDS


def next_row(W, xs):
    T = xs.shape[0]
    H = np.zeros((T + 1, W.shape[0]))
    H[0] = np.tanh(xs[0])
    for t in range(T):
        H[t + 1] = np.tanh(W @ H[t] + xs[t])
    return np.sum(H ** 2)


def previous_row(W, xs):
    H = np.zeros((xs.shape[0], W.shape[0]))
    H[0] = np.tanh(xs[0])
    for t in range(1, xs.shape[0]):
        H[t] = np.tanh(W @ H[t - 1] + xs[t])
    return np.sum(H ** 2)


def from_the_end(W, xs):
    """``Y[t - 1]`` at ``t = 0`` is the last row (still zero): Python's index."""
    Y = np.zeros((xs.shape[0], W.shape[0]))
    for t in range(xs.shape[0]):
        y = Y[t - 1]
        Y[t] = np.sin(W @ y + xs[t])
    return np.sum(Y * np.cos(Y))


def counted_while(W, xs):
    H = np.zeros((xs.shape[0] + 1, W.shape[0]))
    t = 0
    while t < xs.shape[0]:
        H[t + 1] = np.tanh(W @ H[t] + xs[t])
        t += 1
    return np.sum(H ** 2)


def two_rows_back(W, xs):
    """A second-order recurrence: two rows read, one written."""
    H = np.zeros((xs.shape[0] + 2, W.shape[0]))
    H[1] = 0.5 * np.tanh(xs[0])
    for t in range(xs.shape[0]):
        H[t + 2] = np.tanh(W @ H[t + 1] - 0.3 * H[t] + xs[t])
    return np.sum(H ** 2)


def read_and_added(W, xs):
    """The row written is read first (``H[t] += ...``) besides the row before."""
    H = np.ones((xs.shape[0], W.shape[0]))
    for t in range(1, xs.shape[0]):
        H[t] += np.tanh(W @ H[t - 1] + xs[t])
    return np.sum(H ** 2)


def on_one_side(W, xs):
    """The row written only where the previous row's sum is positive."""
    H = np.zeros((xs.shape[0] + 1, W.shape[0]))
    H[0] = xs[0]
    for t in range(xs.shape[0]):
        if np.sum(H[t]) > 0.0:
            H[t + 1] = np.tanh(W @ H[t] + xs[t])
        else:
            H[t + 1] = 0.5 * H[t] + xs[t]
    return np.sum(H ** 2)


def appended(W, xs):
    """An appended list read by ``ys[-1]`` (a stacked list's buffer)."""
    ys = [np.tanh(xs[0])]
    for t in range(1, xs.shape[0]):
        ys.append(np.tanh(W @ ys[-1] + xs[t]))
    return np.sum(np.stack(ys) ** 2)


PROGRAMS = [next_row, previous_row, from_the_end, counted_while, two_rows_back,
            read_and_added, on_one_side, appended]


def _args(n, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return 0.4 * rng.standard_normal((d, d)), rng.standard_normal((n, d))


def _fd(f, W, xs, v, eps=1e-6):
    return (f(W + eps * v, xs) - f(W - eps * v, xs)) / (2 * eps)


@pytest.fixture
def tapes(monkeypatch):
    """The leaves of every tape a taped loop hands back (native or stepped)."""
    seen: list[list] = []
    init = program.Tape.__init__

    def record(self, leaves, count, specs):
        seen.append(list(leaves))
        init(self, leaves, count, specs)

    monkeypatch.setattr(program.Tape, "__init__", record)
    return seen


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_values_and_gradients(f, backend):
    W, xs = _args(300)
    np.testing.assert_allclose(myc.jit(f, backend=backend)(W, xs), f(W, xs), rtol=1e-10)
    g = myc.grad(f, backend=backend)(W, xs)
    v = np.random.default_rng(1).standard_normal(W.shape)
    np.testing.assert_allclose(np.vdot(g, v), _fd(f, W, xs, v), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_the_tape_holds_rows_not_the_array(f, tapes):
    n, d = 300, 5
    W, xs = _args(n, d)
    g, v = myc.grad(f)(W, xs), np.random.default_rng(2).standard_normal(W.shape)
    np.testing.assert_allclose(np.vdot(g, v), _fd(f, W, xs, v), rtol=1e-6, atol=1e-8)
    assert tapes
    # per iteration a few rows and ints; the whole (n, d) array every iteration was
    # n * n * d floats (before the undo log, for every program here)
    taped = sum(np.asarray(leaf).nbytes for tape in tapes for leaf in tape if leaf is not None)
    assert taped < 8 * n * 8 * d, taped
    assert not any(np.ndim(leaf) >= 3 for tape in tapes for leaf in tape if leaf is not None)


def test_forward_mode():
    W, xs = _args(300)
    v = np.random.default_rng(3).standard_normal(W.shape)
    for f in (next_row, from_the_end, two_rows_back, appended):
        value, tangent = myc.jvp(lambda w, f=f: f(w, xs), (W,), (v,))
        np.testing.assert_allclose(value, f(W, xs), rtol=1e-10)
        np.testing.assert_allclose(tangent, _fd(f, W, xs, v), rtol=1e-6, atol=1e-8)


def test_a_body_reading_the_whole_array_is_restored_exactly():
    """The log restores ``H`` whole: a body reading all of it (its sum) sees, in the
    backward loop, the array of that iteration."""
    def whole(W, xs):
        H = np.zeros((xs.shape[0] + 1, W.shape[0]))
        for t in range(xs.shape[0]):
            H[t + 1] = np.tanh(W @ H[t] + 0.01 * np.sum(H) + xs[t])
        return np.sum(H ** 2)

    W, xs = _args(120)
    v = np.random.default_rng(4).standard_normal(W.shape)
    for backend in BACKENDS:
        g = myc.grad(whole, backend=backend)(W, xs)
        np.testing.assert_allclose(np.vdot(g, v), _fd(whole, W, xs, v), rtol=1e-6)


def test_gradient_with_respect_to_the_initial_rows():
    def rollout(H0, W, xs):
        H = H0 * 1.0
        for t in range(xs.shape[0]):
            H[t + 1] = np.tanh(W @ H[t] + xs[t])
        return np.sum(H ** 2)

    W, xs = _args(200)
    H0 = np.random.default_rng(5).standard_normal((201, 5))
    v = np.random.default_rng(6).standard_normal(H0.shape)
    for backend in BACKENDS:
        g = myc.grad(rollout, backend=backend)(H0, W, xs)
        fd = (rollout(H0 + 1e-6 * v, W, xs) - rollout(H0 - 1e-6 * v, W, xs)) / 2e-6
        np.testing.assert_allclose(np.vdot(g, v), fd, rtol=1e-6)
