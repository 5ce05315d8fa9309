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

    def grad_of(self, x):
        return self.w * x

    def update_batch(self, batch, eta):
        """Nielsen's ``update_mini_batch``: the write follows a loop calling a method."""
        total = np.zeros(2)
        for x in batch:
            total = total + self.grad_of(x)
        self.w = self.w - eta * total


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


def test_a_write_after_a_loop_calling_a_method_is_named():
    """``self`` is the loop's state there (its methods may change it); the write after
    the loop is to the object the caller passed (was missed: no warning)."""
    net = Net()
    with pytest.warns(MycArgumentWriteWarning, match=r"'self' in place \(self.w"):
        myc.jit(net.update_batch)([np.ones(2), np.arange(2.0)], 0.5)
    np.testing.assert_array_equal(net.w, np.ones(2))


def after_while(x, n):
    i = 0
    while i < n:
        i += 1
    x[1] = 2.0
    return x.sum()


def test_a_write_after_a_while_loop_is_named():
    x = np.ones(3)
    with pytest.warns(MycArgumentWriteWarning, match="'x' in place"):
        assert myc.jit(after_while)(x, 3) == 4.0
    np.testing.assert_array_equal(x, np.ones(3))


def rebound_in_loop(x):
    for _ in range(2):
        x = x * 2.0
    return x


def test_no_warning_for_numbers_bumped_or_pure_functions():
    with warnings.catch_warnings():
        warnings.simplefilter("error", MycArgumentWriteWarning)
        assert myc.jit(bump)(3.0) == 4.0
        myc.jit(pure)(np.ones(2))
        myc.jit(rebound_in_loop)(np.ones(2))


def bump_element(x):
    s = x[0, -2]
    for _ in range(2):
        s *= 2.0          # x[0, -2] of a 2-d array is a number: CPython rebinds it
    return s


def bump_row(x):
    r = x[0]
    r *= 2.0              # a row: a view, CPython changes x
    return r.sum()


def bump_element_then_row(x):
    s = x[0, 1]
    s *= 2.0
    r = x[1]
    r += 1.0
    return s + r.sum()


def test_an_element_bumped_is_not_a_write_into_the_argument():
    """(was a false warning: the element read was counted as a view)"""
    x = np.ones((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MycArgumentWriteWarning)
        assert myc.jit(bump_element)(x) == 4.0
    for fn in (bump_row, bump_element_then_row):
        with pytest.warns(MycArgumentWriteWarning, match="'x' in place"):
            myc.jit(fn)(np.ones((2, 3)))
    with pytest.warns(MycArgumentWriteWarning, match="'x' in place"):
        myc.jit(bump_element)(np.ones((2, 3, 2)))  # x[0, -2] a row here
