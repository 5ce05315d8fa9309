"""Repeat calls with NumPy arguments skip the full dispatch (``myc.runtime.fastcall``):
the same values, errors, statistics and protections as the full path."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycIndexError
from myc.runtime import fastcall


def _served_fast(f, *args) -> bool:
    run = f._executable
    table = getattr(run, fastcall._ATTR, None) or {}
    return fastcall._key(list(args)) in table


def test_repeat_call_is_served_fast_and_sees_new_data():
    @myc.jit
    def f(x, y, s):
        return np.tanh(x) * y + s

    x, y = np.linspace(-1, 1, 8), np.ones(8)
    np.testing.assert_allclose(f(x, y, 2.0), np.tanh(x) * y + 2.0)
    assert _served_fast(f, x, y, 2.0)
    x[:] = 0.5  # the caller mutates an argument between calls: the new data is read
    np.testing.assert_allclose(f(x, y, 3.0), np.tanh(x) * y + 3.0)
    st = f.stats()
    assert st.compiled_calls == 2 and st.evaluator_calls == 0
    assert st.native_calls + st.stepped_calls == 2


def test_other_shapes_and_dtypes_take_the_full_path():
    @myc.jit
    def f(x):
        return x * 2

    a = np.ones(4)
    f(a)
    f(a)
    b = np.ones(5, np.float32)
    np.testing.assert_array_equal(f(b), b * 2)
    assert f(b).dtype == np.float32
    assert f.stats().compiles == 2 and f.stats().compiled_calls == 4


def test_result_never_aliases_an_argument():
    @myc.jit
    def ident(x):
        return x

    a = np.arange(6.0)
    for _ in range(3):
        r = ident(a)
        assert r is not a and not np.shares_memory(r, a)
        r[0] = 99.0  # the caller owns the result
        assert a[0] == 0.0


def test_errors_are_the_full_paths():
    @myc.jit
    def pick(x, i):
        return x[i.astype(np.int64)]

    x = np.arange(4.0)
    assert pick(x, np.array([1.0, 2.0]))[1] == 2.0
    pick(x, np.array([0.0, 3.0]))
    with pytest.raises(MycIndexError, match="out of range|out of bounds"):
        pick(x, np.array([0.0, 7.0]))


def test_arguments_stay_unmutated_and_checked():
    @myc.jit
    def f(x):
        return x + 1.0

    a = np.ones(3)
    f(a)
    f(a)
    masked = np.ma.masked_array(np.ones(3), mask=[0, 1, 0])
    with pytest.raises(myc.MycTypeError):
        f(masked)  # a subclass is never served by the fast path
    assert not _served_fast(f, masked)


def test_opt_out(monkeypatch):
    monkeypatch.setenv("MYC_NO_FAST_CALLS", "1")

    @myc.jit
    def f(x):
        return x - 1.0

    a = np.ones(3)
    f(a)
    f(a)
    assert not _served_fast(f, a)


def test_grad_repeat_calls():
    g = myc.grad(lambda w, x: np.sum(np.tanh(x @ w) ** 2))
    w, x = np.full((3, 2), 0.1), np.linspace(0, 1, 12).reshape(4, 3)
    first = g(w, x)
    np.testing.assert_allclose(g(w, x), first)
    np.testing.assert_allclose(g(w * 2, x), g.__call__(w * 2, x))
