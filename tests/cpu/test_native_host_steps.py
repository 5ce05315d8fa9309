"""Host steps that native programs cover since real programs needed them (the survey of
``benchmarks/native_survey.py``): ``np.concatenate`` (and the stacking functions built
on it), transposes other than a 2-d swap, ``np.maximum``/``np.minimum``/``np.clip``/
``np.floor``/``**`` on numbers, 0-d arrays read as numbers, ``int / int`` and ints
compared with floats, gathers by a constant tuple of index arrays, basic indices with
computed ints (``x[:, k]``, ``x[i, j]``), a number reshaped into an array or indexed by
``()``.

Each program runs as one native function (its gradient too) and agrees with NumPy and
with the same program compiled under ``MYC_NO_NATIVE_LOOPS=1`` (NumPy steps from
Python); where Python's semantics differ from a machine's (a Python float ``**`` that
raises, an int beyond 53 bits), the native code hands the call to the host runner.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.misc.flatten import flatten

RS = np.random.RandomState(3)
A, B, C = RS.randn(3, 4), RS.randn(5), RS.randn(3, 2)
X3 = RS.randn(2, 3, 4)


def flat_norm(a, b, c):  # the L2 penalty of autograd's neural_net: flattened weights
    v = np.concatenate((a.ravel(), b, c.ravel()))
    return np.dot(v, v)


def side_by_side(a, c):
    h = np.concatenate((a, c), axis=1)
    return np.sum(np.tanh(h) * h)


def stacked(a, c):
    s = np.stack([a[:, 0], c[:, 1], a[:, 2] * 2.0])
    v = np.vstack((a, np.ones((1, 4))))
    h = np.hstack((a, c, np.zeros((3, 1))))
    return np.sum(s * s) + np.sum(np.sin(v)) + np.sum(h[:, 1:] * h[:, :-1])


def flat_pieces(a, c):  # myc.misc.flatten's vector of a list of arrays
    v, _ = flatten([a, c])
    return np.sum(v * np.arange(v.shape[0]))


def permuted(x):
    y = np.transpose(x, (2, 0, 1))
    return np.sum(y * np.arange(24.0).reshape(4, 2, 3)) + np.sum(x.T * x.T)


def number_ops(x, y):
    m = np.maximum(np.sum(x), 1e-20)
    lo = np.minimum(m, y[0])
    return np.sum(x * lo) + np.floor(np.sum(y)) + np.clip(np.sum(x), -1.0, 1.0) + \
        np.sum(x * x) ** 2.5


def repeated_row(w, x):  # np.repeat of one row: a gather by a constant index tuple
    h = np.repeat(w, 3, axis=0)
    return np.sum(np.tanh(h + x))


def column_by_symbol(log_emit, log_trans, symbols):  # autograd's hmm_em: x[:, k]
    f = log_emit[:, symbols[0]]
    for k in range(1, symbols.shape[0]):
        m = f[:, None] + log_trans
        f = np.log(np.sum(np.exp(m), axis=0)) + log_emit[:, symbols[k]]
    return np.sum(f) + log_trans[symbols[2], symbols[3]] * log_emit[-1, symbols[0]]


def number_boxed(x):  # np.reshape of a number, a number's x[()]
    s = np.sum(x * x)
    v = np.reshape(s, (1,))
    return np.sum(np.concatenate((v, x)) * 2.0) + (s * 3.0)[()]


CASES = [
    (flat_norm, (A, B, C)),
    (side_by_side, (A, C)),
    (stacked, (A, C)),
    (flat_pieces, (A, C)),
    (permuted, (X3,)),
    (number_ops, (np.abs(B), B)),
    (repeated_row, (RS.randn(1, 6), RS.randn(3, 6))),
    (column_by_symbol, (RS.randn(3, 5), RS.randn(3, 3), np.array([0, 4, 2, 2]))),
    (number_boxed, (B,)),
]


def _tree_close(got, want, rtol=1e-12):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


def _native(fn, args) -> tuple:
    f = myc.jit(fn)
    got = f(*args)
    st = f.stats()
    assert st.native_calls == st.compiled_calls == 1, str(st)
    return got


def _fd_grad(fn, args, k, eps=1e-6):
    x = np.array(args[k], dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        vals = []
        for d in (eps, -eps):
            y = x.copy()
            y[i] += d
            a = list(args)
            a[k] = y
            vals.append(fn(*a))
        g[i] = (vals[0] - vals[1]) / (2 * eps)
    return g


@pytest.mark.parametrize("fn,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_runs_natively_and_agrees(fn, args, monkeypatch):
    got = _native(fn, args)
    np.testing.assert_allclose(got, fn(*args), rtol=1e-12)
    nums = tuple(k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    grad = myc.grad(fn, argnums=nums)
    g = grad(*args)
    st = grad.stats()
    assert st.native_calls == st.compiled_calls == 1, str(st)
    assert "runs natively" in myc.ir(grad, *args, stage="kernels").splitlines()[0]
    for j, k in enumerate(nums):
        np.testing.assert_allclose(g[j], _fd_grad(fn, args, k), rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")  # (part of the compile key)
    stepped = myc.jit(fn)
    _tree_close(stepped(*args), got)
    assert stepped.stats().native_calls == 0
    _tree_close(myc.grad(fn, argnums=nums)(*args), g)


def test_stepped_reason_names_a_missing_operation():
    """A program with an operation native code lacks says which (its small array ops
    then stay NumPy steps, so their names would mislead)."""
    def uses_cholesky(a):
        return np.sum(np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3)))

    line = myc.ir(uses_cholesky, A[:, :3], stage="kernels").splitlines()[0]
    assert "stepped" in line and "cholesky" in line, line


# -- numbers with Python's semantics -------------------------------------------------

def taylor_sine(x):  # a 0-d array in scalar arithmetic, ints divided (the corpus's)
    term = np.array(1.0) * x
    total = term
    for i in range(4):
        term = -term * x * x / ((2 * i + 3) * (2 * i + 2))
        total = total + term
    return total


def test_a_computed_index_out_of_range_raises_as_numpy():
    """The native code leaves; the host runner raises NumPy's IndexError, located."""
    args = (RS.randn(3, 5), RS.randn(3, 3), np.array([0, 4, 2, 2]))
    f = myc.jit(column_by_symbol)
    f(*args)
    bad = (args[0], args[1], np.array([0, 5, 2, 2]))
    with pytest.raises(IndexError):
        column_by_symbol(*bad)
    with pytest.raises(myc.MycError, match="out of bounds|out of range|index"):
        f(*bad)
    neg = (args[0], args[1], np.array([-1, -5, 2, 1]))
    np.testing.assert_allclose(f(*neg), column_by_symbol(*neg), rtol=1e-12)


def test_zero_d_arrays_and_int_division_in_scalar_steps(monkeypatch):
    got = _native(taylor_sine, (0.7,))
    assert got == pytest.approx(taylor_sine(0.7), rel=1e-15)
    d2 = myc.grad(myc.grad(taylor_sine))
    h = d2(0.7)
    assert d2.stats().native_calls == 1
    assert h == pytest.approx(-np.sin(0.7), abs=1e-6)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    assert myc.grad(myc.grad(taylor_sine))(0.7) == pytest.approx(h, rel=1e-13)


def ratio(x, n):
    r = n / 7
    return x * r + (1.0 if n < x else 2.0) + (n + 1) / (n - 3)


@pytest.mark.parametrize("n", [5, -40, 2**60 + 1, 2**60])
def test_int_division_and_compare_match_cpython(n):
    """Within 53 bits in a double (exact: as CPython); beyond, the host runner."""
    f = myc.jit(ratio)
    for x in (3.5, float(n) + 1.0):
        assert f(x, n) == ratio(x, n)
    assert (f.stats().native_calls == 2) == (abs(n) < 2**53)


def test_int_division_by_zero_raises_at_the_users_line():
    f = myc.jit(ratio)
    assert f(1.0, 5) == ratio(1.0, 5)
    with pytest.raises(ZeroDivisionError):
        ratio(1.0, 3)
    with pytest.raises(myc.MycRuntimeError, match="division by zero") as info:
        f(1.0, 3)
    assert "(n + 1) / (n - 3)" in str(info.value)


def divmods(x):
    a, b = int(x[0]), int(x[1])  # Python ints computed at run time
    return a // b, a % b, (a + 1) // -b, (a - 1) % -b


@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (0, -5),
                                 (2**62 + 3, -7), (-2**63 + 1, 2)])
def test_int_floor_division_and_modulo_match_cpython(a, b):
    """Rounded towards -inf, the remainder taking the divisor's sign (the kernel
    generator's int64 floor division, which host steps on numbers share)."""
    x = np.array([a, b])
    f = myc.jit(divmods)
    assert f(x) == divmods(x)
    assert f.stats().native_calls == 1


def test_int_floor_division_by_zero_raises_at_the_users_line():
    f = myc.jit(divmods)
    assert f(np.array([5, 3])) == divmods(np.array([5, 3]))
    with pytest.raises(myc.MycRuntimeError, match="by zero") as info:
        f(np.array([5, 0]))
    assert "a // b" in str(info.value)


def power(x, y):
    return x ** y + np.maximum(x, y) - np.minimum(x, 0.5)


@pytest.mark.parametrize("x,y", [(1.5, 2.5), (2.0, -3.0), (np.nan, 0.0), (0.25, 0.5)])
def test_power_of_numbers_matches_cpython(x, y):
    f = myc.jit(power)
    got = f(x, y)
    assert f.stats().native_calls == 1
    want = power(x, y)
    assert got == want or (np.isnan(got) and np.isnan(want))


@pytest.mark.parametrize("x,y,err,says", [(0.0, -1.0, ZeroDivisionError, "negative power"),
                                          (10.0, 400.0, OverflowError, "out of range")])
def test_power_that_python_refuses_raises(x, y, err, says):
    """C's pow gives inf where Python raises: the call goes to the host runner, which
    raises Python's error at the user's line."""
    with pytest.raises(err):
        power(x, y)
    with pytest.raises(myc.MycError, match=says) as info:
        myc.jit(power)(x, y)
    assert "x ** y" in str(info.value)


def rotate_until(x):  # both steps in a data-dependent loop's body
    while np.sum(x * x) < 100.0:
        x = np.concatenate((x[1:], x[:1])) * 1.5 + np.transpose(x.reshape(2, 3)).reshape(6) * 0.1
    return x


def test_inside_a_native_loop(monkeypatch):
    x = np.arange(6.0) * 0.1 + 0.1
    f = myc.jit(rotate_until)
    np.testing.assert_allclose(f(x), rotate_until(x), rtol=1e-12)
    text = myc.ir(rotate_until, x, stage="kernels")
    assert "runs natively (one native function)" in text, text
    g = myc.grad(lambda x: np.sum(rotate_until(x) * np.arange(6.0)))(x)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    np.testing.assert_allclose(myc.grad(lambda x: np.sum(rotate_until(x) * np.arange(6.0)))(x),
                               g, rtol=1e-12)


def mixed_dtypes(a, b):
    c = np.concatenate((a, b, np.array([7, 8])))
    m = np.concatenate((a.reshape(1, 3) > 1, b.reshape(1, 3) > 0), axis=0)
    t = np.transpose(m.reshape(2, 3, 1), (1, 2, 0))
    return c * 2, t, np.maximum(np.sum(a), np.sum(b)), np.minimum(np.sum(a), 3)


def test_int_and_bool_pieces_and_extremes():
    a, b = np.array([1, 2, 3]), np.array([-1, 0, 5])
    f = myc.jit(mixed_dtypes)
    got, want = f(a, b), mixed_dtypes(a, b)
    assert f.stats().native_calls == 1
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype and type(g) is type(w)
        np.testing.assert_array_equal(g, w)
