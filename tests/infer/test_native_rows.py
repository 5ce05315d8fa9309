"""Taped loops that read ``xs[t]`` run natively (``loopgen``: a row by a computed int is
a pointer into the array, its gradient a row set in zeros).  A recurrent net kept as a
loop node -- its taped forward loop and its backward loop both read ``xs[t]`` -- must run
natively, agree with NumPy and with the step-by-step host runner, and differentiate
like the unrolled program; an index out of range must still raise Python's error."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycIndexError
from myc.infer import control
from tests.infer.test_loops import _copy_function, _loop_runners, _programs_of


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    # the structure is read from the specialized programs, which a disk-cache hit drops
    monkeypatch.setenv("MYC_CACHE_DIR", "off")


def rnn(w, u, xs, h0):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u)
        loss = loss + np.mean(h * h)
    return loss


def rnn_np(w, u, xs, h0):
    h, loss = h0, 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u)
        loss = loss + np.mean(h * h)
    return loss


def walk(xs, limit):
    """Sums rows until the sum passes ``limit``: past the last row, ``xs[i]`` raises."""
    acc = xs[0] * 0.0
    i = 0
    while np.sum(acc) < limit:
        acc = acc + xs[i]
        i += 1
    return acc, i


def _args(steps: int = 12):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((3, 5)) * 0.4, rng.standard_normal((5, 5)) * 0.3,
            rng.standard_normal((steps, 4, 3)), np.zeros((4, 5)))


def _runners(g):
    return [st.fn for prog in _programs_of(g) for st in prog.steps
            if type(st.fn).__name__ == "LoopRunner"]


def test_a_recurrence_over_rows_is_a_native_taped_loop(monkeypatch):
    monkeypatch.setattr(control, "UNROLL_NODES", 20)
    args = _args()
    g = myc.grad(rnn, argnums=(0, 1))
    gw, gu = g(*args)
    runners = _runners(g)
    # the taped forward loop and the backward loop, both reading xs[t], both native
    assert len(runners) == 2 and all(r.native is not None for r in runners)
    assert myc.jit(rnn)(*args) == pytest.approx(rnn_np(*args), rel=1e-12)
    # the same program stepped from Python, and the unrolled one (graph AD)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    hw, hu = myc.grad(_copy_function(rnn), argnums=(0, 1))(*args)
    monkeypatch.setattr(control, "UNROLL_NODES", 10**9)
    monkeypatch.delenv("MYC_NO_NATIVE_LOOPS")
    unrolled = myc.grad(_copy_function(rnn), argnums=(0, 1))
    uw, uu = unrolled(*args)
    assert not _runners(unrolled)
    for got, *want in ((gw, hw, uw), (gu, hu, uu)):
        for w in want:
            np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-14)


def test_the_gradient_of_the_rows_themselves(monkeypatch):
    """``getitem_grad`` of a row: the cotangent of ``xs`` is built row by row."""
    monkeypatch.setattr(control, "UNROLL_NODES", 20)
    args = _args(8)
    g = myc.grad(rnn, argnums=2)
    gx = g(*args)
    assert all(r.native is not None for r in _runners(g))
    monkeypatch.setattr(control, "UNROLL_NODES", 10**9)
    np.testing.assert_allclose(gx, myc.grad(_copy_function(rnn), argnums=2)(*args),
                               rtol=1e-10, atol=1e-14)


def test_a_row_index_out_of_range_raises_where_python_does():
    xs = np.full((6, 3), 0.5)
    f = myc.jit(walk)
    acc, i = f(xs, 4.0)  # three rows in
    np.testing.assert_allclose(acc, walk(xs, 4.0)[0])
    assert i == 3
    assert all(r.native is not None for r in _loop_runners(f))
    with pytest.raises(IndexError):
        walk(xs, 100.0)
    with pytest.raises(MycIndexError):
        f(xs, 100.0)  # the native loop stops, the host runner raises


def test_negative_rows_count_from_the_end():
    def back(xs, limit):
        acc = xs[0] * 0.0
        i = -1
        while np.sum(acc) < limit:
            acc = acc + xs[i] * (1.0 - i)
            i -= 1
        return acc

    xs = np.arange(15.0).reshape(5, 3) * 0.1
    f = myc.jit(back)
    np.testing.assert_allclose(f(xs, 5.0), back(xs, 5.0), rtol=1e-12)
    assert all(r.native is not None for r in _loop_runners(f))
    with pytest.raises(MycIndexError):
        f(xs, 1e6)
