"""A warning when a compiled function changes its own arguments in place: the caller
keeps its values (a compiled function never writes into its caller's arrays or
objects), which CPython would have changed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from myc.runtime.argument_writes import MycArgumentWriteWarning


def step(x, v):
    x += 0.1 * v


def write_item(a):
    a[0] = 5.0
    return a * 1.0


def bump(n):
    n += 1
    return n


def pure(a):
    return a * 2.0


class Net:
    def __init__(self):
        self.w = np.ones(2)

    def update(self, g):
        self.w = self.w - g


@pytest.mark.parametrize("fn,args,word", [
    (step, (np.ones(2), np.ones(2)), "'x' in place (x += 0.1 * v"),
    (write_item, (np.ones(2),), "'a' in place (a[0] = ..."),
])
def test_changed_arguments_are_named_once(fn, args, word):
    f = myc.jit(fn)
    before = [a.copy() for a in args]
    with pytest.warns(MycArgumentWriteWarning, match="caller keeps its values") as rec:
        f(*args)
    assert word in str(rec[0].message)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)  # the documented rule: never written
    with warnings.catch_warnings():
        warnings.simplefilter("error", MycArgumentWriteWarning)
        f(*args)  # (once per function)


def test_a_bound_methods_self_is_named():
    net = Net()
    with pytest.warns(MycArgumentWriteWarning, match="'self' in place"):
        myc.jit(net.update)(np.ones(2))
    np.testing.assert_array_equal(net.w, np.ones(2))


def test_no_warning_for_numbers_bumped_or_pure_functions():
    with warnings.catch_warnings():
        warnings.simplefilter("error", MycArgumentWriteWarning)
        assert myc.jit(bump)(3.0) == 4.0
        myc.jit(pure)(np.ones(2))
