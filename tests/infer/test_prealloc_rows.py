"""A loop that writes a preallocated array a row per iteration stays linear.

``H[t] = h`` (a row, a column ``H[:, t]``, an element, ``H[t] += v``, under an ``if``)
is a row store at the run-time index (``index_set``; ``if c: H[t] = h`` merged as one,
``myc.infer.row_merge``): a native loop stores the row into the state's buffer in place
(``NativeLoop.rows_in_place``), forward and in the backward loop (the cotangent's row
read and zeroed; a row read before the write, ``H[t] += v``, gets its cotangent stored
there: ``Adjoint.row_read``), and the taped rerun does not store ``H`` per iteration.
Before, each write was a ``where`` over the whole array and the tape held ``H`` every
iteration: quadratic in the trip count.  Values are checked against NumPy on every
backend, gradients against differences."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.backends.cpu import loopgen
from myc.errors import MycIndexError
from myc.lower import program

try:
    from tests.backends import BACKENDS
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from backends import BACKENDS


def rows(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        H[t] = h
    return np.sum(H ** 2)


def rows_sliced(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        H[t, :] = h
    return np.sum(np.sin(H))


def columns(W, xs):
    T = xs.shape[0]
    H = np.zeros((W.shape[0], T))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        H[:, t] = h
    return np.sum(np.sin(H) * np.arange(T))


def elements(W, xs):
    T = xs.shape[0]
    out = np.zeros(T)
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        out[t] = np.sum(h)
    return np.sum(out ** 2)


def added(W, xs):
    T = xs.shape[0]
    H = np.ones((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        H[t] += h
    return np.sum(H ** 3)


def counted_while(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    t = 0
    while t < T:
        h = np.tanh(W @ h + xs[t])
        H[t] = h
        t += 1
    return np.sum(H ** 2)


def every_third(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        if t % 3 == 0:
            H[t] = h
    return np.sum(H ** 2)


def where_positive(W, xs):
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        if np.sum(h) > 0.0:
            H[t] = h
        else:
            H[t] = -0.5 * h
    return np.sum(H ** 2)


def guarded_by_the_index(W, xs):
    """The ``if`` keeps the write in range: off its side the index is out of range."""
    T = xs.shape[0]
    H = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
        if t + 1 < T:
            H[t + 1] = h
    return np.sum(H ** 2)


PROGRAMS = [rows, rows_sliced, columns, elements, added, counted_while, every_third,
            where_positive, guarded_by_the_index]


def _args(n, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return 0.4 * rng.standard_normal((d, d)), rng.standard_normal((n, d))


@pytest.fixture
def built(monkeypatch):
    """Every NativeLoop compiled during the test."""
    loops: list = []
    orig = loopgen.NativeLoop.__init__

    def init(self, *a, **k):
        orig(self, *a, **k)
        loops.append(self)

    monkeypatch.setattr(loopgen.NativeLoop, "__init__", init)
    return loops


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


def _fd(f, W, xs, v, eps=1e-6):
    return (f(W + eps * v, xs) - f(W - eps * v, xs)) / (2 * eps)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_values_and_gradients(f, backend):
    W, xs = _args(300)
    np.testing.assert_allclose(myc.jit(f, backend=backend)(W, xs), f(W, xs), rtol=1e-10)
    g = myc.grad(f, backend=backend)(W, xs)
    v = np.random.default_rng(1).standard_normal(W.shape)
    np.testing.assert_allclose(np.vdot(g, v), _fd(f, W, xs, v), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_rows_are_stored_in_place_and_not_taped(f, built, tapes):
    n, d = 400, 5
    W, xs = _args(n, d)
    text = myc.ir(f, W, xs, stage="optimized")
    assert "index_set" in text and "where(" not in text and "= loop(" in text, text
    myc.jit(f)(W, xs)
    assert built and all(lp.rows_in_place for lp in built), "a row store copied the array"
    built.clear()
    myc.grad(f)(W, xs)
    # the taped rerun and the backward loop (its cotangent's rows) both in place
    assert len(built) >= 2 and all(lp.rows_in_place for lp in built)
    assert tapes, "no taped loop ran"
    # the tape holds h and the counter per iteration, never the (n, d) array
    taped = sum(np.asarray(leaf).nbytes for tape in tapes for leaf in tape if leaf is not None)
    assert taped < 8 * n * 8 * d, taped


def test_a_write_out_of_range_is_the_users_index_error():
    def overrun(W, xs):
        H = np.zeros((xs.shape[0] - 1, W.shape[0]))
        h = np.zeros(W.shape[0])
        for t in range(xs.shape[0]):
            h = np.tanh(W @ h + xs[t])
            H[t] = h
        return np.sum(H)

    W, xs = _args(300)
    with pytest.raises(IndexError):
        overrun(W, xs)
    with pytest.raises(MycIndexError) as info:
        myc.jit(overrun)(W, xs)
    assert "H[t] = h" in str(info.value) or "line" in str(info.value), str(info.value)


def test_the_array_before_the_loop_is_not_written():
    def keeps(W, xs, H):
        h = np.zeros(W.shape[0])
        for t in range(xs.shape[0]):
            h = np.tanh(W @ h + xs[t])
            H[t] = h
        return H

    W, xs = _args(300)
    H = np.full((300, 5), 2.0)
    before = H.copy()
    got = myc.jit(keeps)(W, xs, H)
    # the native loop stores rows into its own buffer (the initial state copied in
    # once), never into the caller's array (myc's arrays are values, as before)
    np.testing.assert_array_equal(H, before)
    np.testing.assert_allclose(got, keeps(W, xs, before.copy()), rtol=1e-12)


def test_forward_mode():
    W, xs = _args(300)
    v = np.random.default_rng(3).standard_normal(W.shape)
    for f in (rows, added, where_positive):
        value, tangent = myc.jvp(lambda w, f=f: f(w, xs), (W,), (v,))
        np.testing.assert_allclose(value, f(W, xs), rtol=1e-10)
        np.testing.assert_allclose(tangent, _fd(f, W, xs, v), rtol=1e-6, atol=1e-8)
