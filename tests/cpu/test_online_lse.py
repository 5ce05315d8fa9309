"""The one-pass ("online") row max of logsumexp kernels (``myc/backends/cpu/online.py``):
rows of 1 to 4097 elements (one block, several, a partial last one), rows of all
``-inf``, with ``+inf``, with NaN, the max's tie count, float32 and float64, against
NumPy running the same program, SciPy's ``logsumexp`` on finite rows, finite
differences for the gradients, and ``MYC_ONLINE_LSE=1`` (on in this file) against the
default (off)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from myc.backends.cpu import compile_kernel, online
from myc.backends.cpu.codegen import codegen
from myc.backends.cpu.runtime import cache_key
from myc.lower.kernel import (
    Binary,
    Buffer,
    Cast,
    Const,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Select,
    Store,
    Unary,
)

LENGTHS = [1, 7, 64, 1000, 4097]


@pytest.fixture(autouse=True)
def online_on(monkeypatch):
    monkeypatch.setenv("MYC_ONLINE_LSE", "1")


def lse_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]


def lse_loss(x):
    return np.sum(lse_rows(x))


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def softmax_loss(x, w):
    return np.sum(softmax(x) * w)


def softmax_xent(logits, labels):
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1))
    picked = z[np.arange(logits.shape[0]), labels]
    return np.mean(lse - picked)


def lse_kernel(rows: int, n: int, dtype: str) -> Kernel:
    """W7's forward kernel: the row max, the sum of exp(x - max), the max's tie count."""
    x = Load(0, dtype)
    m = RowReduce("max", x)
    ties = Cast(Select(Binary("eq", x, m), Const(1.0, "float64"), Const(0.0, "float64")),
                dtype)
    outs = (Reduce(0, "max", x, (1,), True), Reduce(1, "sum", Unary("exp", Binary("sub", x, m)),
                                                   (1,)),
            Reduce(2, "sum", ties, (1,), True))
    return Kernel("lse", (rows, n), (Buffer("x", dtype, (rows, n)),), outs)


def special_rows(n: int, dtype, rng) -> np.ndarray:
    """Random rows, then: all -inf; one +inf; one NaN; -inf but the last; the max tied
    in the first and last block and exceeded in between; a row of one repeated value;
    and huge values (exp overflows without the shift)."""
    x = (3 * rng.standard_normal((9, n))).astype(dtype)
    x[1] = -np.inf
    x[2, n // 2] = np.inf
    x[3, n // 3] = np.nan
    x[4, : n - 1] = -np.inf
    x[5, 0] = x[5, -1] = 20.0
    x[5, n // 2] = 10.0
    x[6] = 1000.0
    x[7, n // 4:] = -np.inf
    x[8] = np.abs(x[8]) + 80.0
    return x


def numpy_run(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logsumexp_rows_match_numpy(n, dtype):
    x = special_rows(n, dtype, np.random.default_rng(n))
    got = myc.jit(lse_rows)(x)
    want = numpy_run(lse_rows, x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-13,
                               equal_nan=True)
    assert np.isnan(got[1]) and np.isnan(got[2]) and np.isnan(got[3])
    from scipy.special import logsumexp

    finite = [r for r in (0, 5, 6, 7, 8) if np.isfinite(x[r]).any()]
    np.testing.assert_allclose(got[finite], logsumexp(x[finite].astype(np.float64), axis=1),
                               rtol=2e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows_match_numpy(n, dtype):
    """A softmax: the max and the sum of exps in one pass, then the quotient stored."""
    x = special_rows(n, dtype, np.random.default_rng(n + 2))
    got = myc.jit(softmax)(x)
    want = numpy_run(softmax, x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=4e-6 if dtype == np.float32 else 1e-13,
                               atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_totals_and_tie_count(n, dtype):
    k = lse_kernel(9, n, dtype)
    assert "oblocks" in str(codegen(k)[0])  # the online form is what runs
    x = special_rows(n, dtype, np.random.default_rng(n + 1))
    x[0, 3 % n] = x[0, n - 1] = x[0].max()  # ties in different blocks
    got = compile_kernel(k)([x])
    want = numpy_run(k.reference, [x])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-6 if dtype == "float32" else 1e-13,
                                   equal_nan=True)
    np.testing.assert_array_equal(got[2][:, 0], (x == x.max(axis=1, keepdims=True)).sum(1))


def test_only_kernels_of_the_shape_qualify():
    """A max that also feeds an elementwise output, a sum of exp(y - m) for another y,
    or a min keep the two-pass form; the switch turns the online form off."""
    x = Load(0, "float32")
    m = RowReduce("max", x)
    e = Unary("exp", Binary("sub", x, m))
    buf = (Buffer("x", "float32", (4, 300)),)
    stored = Kernel("s", (4, 300), buf, (Store(0, e), Reduce(1, "sum", e, (1,))))
    other = Kernel("o", (4, 300), buf, (Reduce(0, "sum", Unary(
        "exp", Binary("sub", Unary("neg", x), m)), (1,)),))
    mn = RowReduce("min", x)
    by_min = Kernel("m", (4, 300), buf, (Reduce(0, "sum", Unary(
        "exp", Binary("sub", x, mn)), (1,)),))
    for k in (stored, other, by_min):
        assert "oblocks" not in str(codegen(k)[0])
    s = RowReduce("sum", e)
    two_levels = Kernel("t", (4, 300), buf, (Store(0, Binary("div", e, s)),))
    assert "oblocks" in str(codegen(two_levels)[0])  # a softmax: the prepass is online
    k = lse_kernel(4, 300, "float32")
    assert "oblocks" in str(codegen(k)[0])
    key = cache_key(k)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MYC_ONLINE_LSE")
        assert not online.enabled()
        assert "oblocks" not in str(codegen(k)[0])
        assert "oblocks" not in str(codegen(two_levels)[0])
        assert cache_key(k) != key


def finite_difference(f, x: np.ndarray, idx, h: float = 1e-6) -> float:
    xp, xm = x.copy(), x.copy()
    xp[idx] += h
    xm[idx] -= h
    return (f(xp) - f(xm)) / (2 * h)


@pytest.mark.parametrize("n", [7, 300, 1000])
def test_gradients_by_finite_differences(n):
    rng = np.random.default_rng(7 * n)
    x = 3 * rng.standard_normal((5, n))
    x[2, 0] = x[2, n - 1] = x[2].max() + 1.0  # a tie at the max
    labels = rng.integers(0, n, 5)
    w = rng.standard_normal((5, n))
    vs, gs = myc.value_and_grad(softmax_loss)(x, w)
    np.testing.assert_allclose(vs, softmax_loss(x, w), rtol=1e-12)
    val, g = myc.value_and_grad(lse_loss)(x)
    np.testing.assert_allclose(val, lse_loss(x), rtol=1e-13)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(g, e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=1e-15)
    val3, g3 = myc.value_and_grad(softmax_xent)(x, labels)
    np.testing.assert_allclose(val3, softmax_xent(x, labels), rtol=1e-13)
    for idx in [(0, 0), (2, 0), (2, n - 1), (4, n // 2), (1, labels[1])]:
        fd = finite_difference(lse_loss, x, idx)
        assert abs(g[idx] - fd) <= 1e-6 * max(1.0, abs(fd))
        fd3 = finite_difference(lambda v: softmax_xent(v, labels), x, idx)
        assert abs(g3[idx] - fd3) <= 1e-6 * max(1.0, abs(fd3))
        fds = finite_difference(lambda v: softmax_loss(v, w), x, idx)
        assert abs(gs[idx] - fds) <= 1e-6 * max(1.0, abs(fds))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_switch_off_gives_the_same_results(dtype, monkeypatch):
    rng = np.random.default_rng(3)
    x = special_rows(1000, dtype, rng)
    labels = rng.integers(0, 1000, x.shape[0])
    on = [myc.jit(lse_rows)(x), myc.jit(softmax)(x),
          *myc.value_and_grad(lse_loss)(x[[0, 5, 6, 8]]),
          *myc.value_and_grad(softmax_xent)(x[[0, 5, 6, 8]], labels[:4])]
    monkeypatch.delenv("MYC_ONLINE_LSE")
    off = [myc.jit(lse_rows)(x), myc.jit(softmax)(x),
           *myc.value_and_grad(lse_loss)(x[[0, 5, 6, 8]]),
           *myc.value_and_grad(softmax_xent)(x[[0, 5, 6, 8]], labels[:4])]
    tol = 2e-6 if dtype == np.float32 else 1e-13
    for a, b in zip(on, off, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * 1e-3, equal_nan=True)


def test_next_row_prefetch_only_where_a_row_is_walked_twice(monkeypatch):
    """Row-reduction kernels ask for the next row (``prefetch.py``); a plain
    elementwise kernel and rows longer than ``MAX_BYTES`` do not; it is opt-in
    (``MYC_ROW_PREFETCH=1``)."""
    from myc.backends.cpu import prefetch

    monkeypatch.setenv("MYC_ROW_PREFETCH", "1")

    def prefetches(k: Kernel) -> int:
        return str(codegen(k)[0]).count("call void @\"llvm.prefetch.p0\"")

    k = lse_kernel(4, 1024, "float32")
    assert prefetches(k) == 1024 * 4 // prefetch.LINE
    x = Load(0, "float32")
    plain = Kernel("p", (4, 1024), (Buffer("x", "float32", (4, 1024)),),
                   (Store(0, Unary("exp", x)),))
    assert prefetches(plain) == 0
    assert prefetches(lse_kernel(2, prefetch.MAX_BYTES // 4 + 1, "float32")) == 0
    monkeypatch.delenv("MYC_ROW_PREFETCH")
    assert prefetches(k) == 0
    monkeypatch.setenv("MYC_ROW_PREFETCH", "1")
    want = lse_kernel(9, 1000, "float32").reference([special_rows(1000, np.float32,
                                                                  np.random.default_rng(5))])
    got = compile_kernel(lse_kernel(9, 1000, "float32"))(
        [special_rows(1000, np.float32, np.random.default_rng(5))])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-6, equal_nan=True)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_threads_split_rows_of_the_online_kernel(threads, monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    rng = np.random.default_rng(11)
    x = (3 * rng.standard_normal((2048, 600))).astype(np.float32)
    x[::7, 300:] += 50.0  # the max grows in a later block of every seventh row
    got = compile_kernel(lse_kernel(*x.shape, "float32"))([x])
    want = lse_kernel(*x.shape, "float32").reference([x])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-6)
