"""An out-of-range integer-array index raises ``MycIndexError`` on every path.

A gradient needs the gather's index but not the picked values: the forward gather is
dead code there, and the scatter (or the one-hot compare the optimizer makes of it)
drops an out-of-range label silently unless the bounds check is kept.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def pick(x, labels):
    n = x.shape[0]
    return np.sum(x[np.arange(n), labels])


def pick_scaled(x, labels):
    return np.sum(x[np.arange(x.shape[0]), labels] * 2.0) + np.sum(x)


def pick_rows(x, rows):
    return np.sum(x[rows] ** 2)


def pick_in_loop(x, labels):
    s = 0.0
    while s < 1.0:  # data-dependent: a loop node
        s = s + np.sum(x[np.arange(x.shape[0]), labels]) + 1.0
    return s


X = np.arange(12.0).reshape(4, 3) / 10.0
BAD = np.array([0, 1, 5, 2])
GOOD = np.array([0, 1, -1, 2])

PATHS = {
    "grad": lambda f, x, i: myc.grad(f)(x, i),
    "value_and_grad": lambda f, x, i: myc.value_and_grad(f)(x, i),
    "vjp": lambda f, x, i: myc.vjp(f, x, i)[1](1.0),
    "jvp": lambda f, x, i: myc.jvp(f, (x, i), (np.ones_like(x), None)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("fn", [pick, pick_scaled, pick_rows, pick_in_loop],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("stepped", [False, True], ids=["native", "stepped"])
def test_out_of_range_index_raises(backend, path, fn, stepped, monkeypatch):
    if stepped:
        monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    f = myc.jit(fn, backend=backend)
    bad = np.array([0, 1, 7, 2]) if fn is pick_rows else BAD
    with pytest.raises(myc.MycIndexError):
        PATHS[path](f, X, bad)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [pick, pick_scaled, pick_in_loop], ids=lambda f: f.__name__)
def test_in_range_gradient_unchanged(backend, fn):
    """The kept check changes nothing for a good index (a negative one included)."""
    want = myc.grad(myc.jit(fn, backend="interp"))(X, GOOD)
    got = myc.grad(myc.jit(fn, backend=backend))(X, GOOD)
    np.testing.assert_allclose(got, want, rtol=1e-12)
