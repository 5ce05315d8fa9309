"""A native loop's kernel that computes a loop-carried array writes it straight into the
buffer the next iteration reads (``NativeLoop._swapped_states``), instead of into
scratch copied there at the iteration's end.  The results must not change: states that
swap, a state read after the kernel that replaced it, a state also returned, and the
caller's input left alone."""

import numpy as np
import pytest

import myc
from myc.backends.cpu import loopgen


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


def counted(x):
    i = 0
    while i < 1000:
        x = x * 0.999 + 0.001
        i += 1
    return x


def fib_arrays(a, b):
    i = 0
    while i < 50:
        a, b = b, a * 0.5 + b * 0.25
        i += 1
    return a, b


def reads_after(x, y):
    i = 0
    while i < 40:
        x = np.tanh(x) + 0.1
        y = y + x * 0.5  # reads the new x, written in place a step before
        i += 1
    return x, y


def test_the_carried_array_is_written_in_place(built):
    x = np.linspace(-1.0, 1.0, 1000)
    keep = x.copy()
    got = myc.jit(counted)(x)
    ref = keep.copy()
    for _ in range(1000):
        ref = ref * 0.999 + 0.001
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_array_equal(x, keep)  # the input is not a loop buffer
    assert any(lp.in_place for lp in built)


def test_states_that_swap_and_states_read_after_their_kernel():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(300), rng.standard_normal(300)
    got = myc.jit(fib_arrays)(a, b)
    ra, rb = a.copy(), b.copy()
    for _ in range(50):
        ra, rb = rb, ra * 0.5 + rb * 0.25
    np.testing.assert_allclose(got[0], ra, rtol=1e-12)
    np.testing.assert_allclose(got[1], rb, rtol=1e-12)
    x, y = rng.standard_normal(500), rng.standard_normal(500)
    got = myc.jit(reads_after)(x, y)
    rx, ry = x.copy(), y.copy()
    for _ in range(40):
        rx = np.tanh(rx) + 0.1
        ry = ry + rx * 0.5
    np.testing.assert_allclose(got[0], rx, rtol=1e-12)
    np.testing.assert_allclose(got[1], ry, rtol=1e-12)
    # twice: the loop's buffers are reused by the second call
    got = myc.jit(reads_after)(x, y)
    np.testing.assert_allclose(got[1], ry, rtol=1e-12)
