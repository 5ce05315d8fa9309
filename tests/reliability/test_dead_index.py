"""An out-of-range index raises ``MycIndexError`` even when its result is never used.

Python evaluates ``y = x[i]`` and raises ``IndexError`` whether or not ``y`` is read
(NumPy raises for an integer-array index too).  A graph is evaluated from its output,
so a dead ``x[i]`` was computed nowhere -- the evaluator included -- and optimizers drop
dead code anyway; the frontend now makes each graph's output depend on its indexing
results that nothing uses, and the tracer keeps them as outputs computed only for their
bounds check (``myc.frontend.lower.keep_index_checks``).
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def dead_int(x, i):
    y = x[i]  # noqa: F841 - the point of the test
    return np.sum(x)


def dead_array(x, idx):
    y = x[idx]  # noqa: F841
    return np.sum(x * 2.0)


def dead_constant(x):
    y = x[5]  # noqa: F841
    return np.sum(x)


def dead_2d(x, i):
    y = x[0, i]  # noqa: F841
    return np.sum(x)


def dead_statement(x, i):
    x[i]  # an expression statement
    return np.sum(x)


def dead_in_loop(x, i):
    s = 0.0
    for k in range(3):
        y = x[i + k]  # noqa: F841 - out of range at k == 2 for i == 1 on 3 elements
        s = s + np.sum(x)
    return s


def dead_in_while(x, i):
    s = 0.0
    while s < 2.0:  # data-dependent: a loop node
        y = x[i]  # noqa: F841
        s = s + np.sum(x * x) + 1.0
    return s


def dead_in_branch(x, i):
    if np.sum(x) > 0.0:  # data-dependent
        y = x[i]  # noqa: F841
        return np.sum(x)
    return np.sum(x) * 2.0


def used_in_untaken_branch(x, i):
    y = x[i]
    if x.shape[0] > 100:  # decided when compiling: the traced program has no use of y
        return np.sum(y)
    return np.sum(x)


def dead_in_nested(x, i):
    def inner(z):
        y = z[i]  # noqa: F841
        return np.sum(z)

    return inner(x) + 1.0


X = np.array([0.5, -1.0, 2.0])
X2 = np.ones((2, 3))
CASES = [  # (function, arguments out of range, arguments in range)
    (dead_int, (X, 5), (X, -3)),
    (dead_int, (X, -4), (X, 2)),
    (dead_array, (X, np.array([0, 7])), (X, np.array([0, -1]))),
    (dead_constant, (np.ones(4),), (np.ones(6),)),
    (dead_2d, (X2, 3), (X2, 2)),
    (dead_statement, (X, 3), (X, 0)),
    (dead_in_loop, (X, 1), (X, 0)),
    (dead_in_while, (X, 3), (X, 1)),
    (dead_in_branch, (X, 3), (X, 1)),
    (dead_in_nested, (X, 3), (X, 1)),
    (used_in_untaken_branch, (X, 3), (X, 1)),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]

PATHS = {
    "value": lambda f, args: f(*args),
    "grad": lambda f, args: myc.grad(f)(*args),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dead_out_of_range_index_raises(backend, path, case):
    fn, bad, _ = case
    with pytest.raises(IndexError):  # what Python raises
        fn(*bad)
    with pytest.raises(myc.MycIndexError):
        PATHS[path](myc.jit(fn, backend=backend), bad)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dead_in_range_index_changes_nothing(backend, case):
    """The kept check neither changes the answer nor sends the call to the evaluator."""
    fn, _, good = case
    f = myc.jit(fn, backend=backend)
    assert f(*good) == pytest.approx(fn(*good), rel=1e-12)
    want = myc.grad(myc.jit(fn, backend="interp"))(*good)
    np.testing.assert_allclose(myc.grad(f)(*good), want, rtol=1e-12)
    if backend != "interp":
        assert f.stats().evaluator_calls == 0, f.stats()
        assert f.stats().compiled_calls == 1, f.stats()
