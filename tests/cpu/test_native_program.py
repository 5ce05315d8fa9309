"""Whole programs as one native function (``HostProgram.native``): big kernels fanned out
over threads, views and gathers copied, their gradients scattered, results written in
place -- checked against the reference evaluator, and against the step-by-step host
runner's errors."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.lower.program import HostProgram


def programs_run(call, *args) -> list[HostProgram]:
    """The host programs that ``call(*args)`` ran, in order."""
    seen = []
    orig = HostProgram.run

    def spy(self, a):
        seen.append(self)
        return orig(self, a)

    HostProgram.run = spy
    try:
        call(*args)
    finally:
        HostProgram.run = orig
    return seen


def _native_of(fn, *args):
    """The native function of ``fn``'s program for ``args`` (None when it has none)."""
    seen = programs_run(myc.jit(fn), *args)
    return seen[-1].native if seen else None


def agree(fn, *args, rtol=1e-5, native=True):
    got = myc.jit(fn)(*args)
    ref = myc.jit(fn, backend="interp")(*args)
    flat_g = got if isinstance(got, tuple) else (got,)
    flat_r = ref if isinstance(ref, tuple) else (ref,)
    for g, r in zip(flat_g, flat_r, strict=True):
        assert np.shape(g) == np.shape(r) and np.asarray(g).dtype == np.asarray(r).dtype
        np.testing.assert_allclose(g, r, rtol=rtol, atol=1e-6 * max(1.0, np.abs(r).max()))
    if native:
        assert _native_of(fn, *args) is not None, "expected one native function"
    return got


def rows_pick(z, labels):
    return z[np.arange(z.shape[0]), labels] * 2.0


def rows_pick_loss(z, labels):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1)) + m[:, 0]
    return np.mean(lse - z[np.arange(z.shape[0]), labels])


def views(x):
    return x[1:, ::2] + 1.0, x[-1], x[:, 0], x[::-1, 3], x[2, 5], x[None, 1:3, ...]


def views_loss(x):
    a, b, c, d, e, f = views(x)
    return np.sum(a * a) + np.sum(b) * 3.0 + np.sum(c * d) + e * e + np.sum(f)


def take_rows(x, idx):
    return x[idx] * 3.0


def take_rows_loss(x, idx):
    return np.sum(np.tanh(x[idx]))


def big_reductions(x):
    return np.sum(x * x), np.max(x, axis=0), np.min(x, axis=1), np.mean(x, axis=0)


def zeros_then(x):
    acc = np.zeros_like(x)
    return acc + x[0] * 2.0


@pytest.mark.parametrize("n", [7, 3000])
def test_gather_rows_and_its_gradient(n):
    rng = np.random.default_rng(0)
    z = rng.standard_normal((n, 10)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    agree(rows_pick, z, labels)
    agree(myc.value_and_grad(rows_pick_loss), z, labels, rtol=1e-4)


def test_gather_with_repeated_and_negative_indices_accumulates():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4))
    idx = np.array([0, 5, -1, 2, 2, 0, -6])
    agree(take_rows, x, idx)
    g = agree(myc.grad(take_rows_loss), x, idx)
    want = np.zeros_like(x)
    np.add.at(want, idx, 1.0 - np.tanh(x[idx]) ** 2)
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_gather_out_of_range_raises_like_numpy():
    x = np.ones((6, 4))
    with pytest.raises(myc.MycError, match="index|bounds|range"):
        myc.jit(take_rows)(x, np.array([0, 6]))
    with pytest.raises(myc.MycError, match="index|bounds|range"):
        myc.jit(take_rows)(x, np.array([-7]))


@pytest.mark.parametrize("shape", [(5, 8), (300, 700)])
def test_basic_views_and_their_gradients(shape):
    x = np.random.default_rng(2).standard_normal(shape)
    agree(views, x)
    agree(myc.grad(views_loss), x)


def test_big_kernels_on_threads_with_shared_reductions():
    x = np.random.default_rng(3).standard_normal((1500, 900)).astype(np.float32)
    agree(big_reductions, x, rtol=2e-4)
    agree(zeros_then, x)


def test_results_are_fresh_arrays_the_caller_owns():
    f = myc.jit(lambda_free_double)
    x = np.random.default_rng(4).standard_normal(1 << 19)
    a = f(x)
    b = f(x + 1.0)
    assert a is not b and not np.shares_memory(a, b)
    np.testing.assert_allclose(a, 2.0 * x)
    np.testing.assert_allclose(b, 2.0 * (x + 1.0))
    keep = a[::2]  # a view keeps its base alive: it must not be reused
    del a
    c = f(x * 0.0)
    assert not np.shares_memory(c, keep)
    np.testing.assert_allclose(keep, 2.0 * x[::2])


def lambda_free_double(x):
    return x * 2.0


def test_matmul_with_transposed_operands():
    rng = np.random.default_rng(5)

    def f(a, b):
        return a.T @ b, (b.T @ a).T, np.tanh(a.T) @ b

    agree(f, rng.standard_normal((40, 30)).astype(np.float32),
          rng.standard_normal((40, 20)).astype(np.float32), rtol=1e-4)


def test_concurrent_calls_from_python_threads():
    """Each Python thread runs the native program in its own frame (scratch buffers)."""
    from concurrent.futures import ThreadPoolExecutor

    f = myc.jit(myc.value_and_grad(rows_pick_loss))
    rng = np.random.default_rng(6)
    cases = [(rng.standard_normal((2000, 10)).astype(np.float32), rng.integers(0, 10, 2000))
             for _ in range(6)]
    want = [f(*c) for c in cases]
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda c: f(*c), cases * 3))
    for g, w in zip(got, want * 3, strict=True):
        assert g[0] == w[0]
        np.testing.assert_array_equal(g[1], w[1])


def reshapes_and_dot(x, w):
    h = np.tanh(np.dot(x.reshape(-1, 6), w))
    return h.reshape(2, -1).sum(axis=1), np.dot(h.T, h).reshape(-1)


def test_reshapes_and_dot_run_natively():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 3, 6))
    w = rng.standard_normal((6, 5))
    agree(reshapes_and_dot, x, w)
    agree(myc.grad(lambda_free_reshape_loss), x, w)


def lambda_free_reshape_loss(x, w):
    a, b = reshapes_and_dot(x, w)
    return np.sum(a * a) + np.sum(b)


def arg_extremes(x):
    return np.argmax(x), np.argmin(x), np.argmax(x > 0.5), np.argmin(x * 2.0)


@pytest.mark.parametrize("x", [np.array([3.0, 1.0, 3.0, -2.0]), np.array([np.nan, 1.0, np.nan]),
                               np.array([1.0, np.nan, -np.inf]),
                               np.arange(12.0, dtype=np.float32).reshape(3, 4)[::-1],
                               np.array([2, 7, 7, -1]), np.array([0.25])])
def test_argmax_argmin_run_natively_like_numpy(x):
    """The flat index of the first extreme; NaN counts as the extreme (NumPy's rule)."""
    assert _native_of(arg_extremes, x) is not None
    got = myc.jit(arg_extremes)(x)
    want = arg_extremes(x)
    assert got == want and all(type(g) is type(w) for g, w in zip(got, want, strict=True))


def arg_extremes_axes(x):
    return np.argmax(x, axis=0), np.argmin(x, axis=-1), np.argmax(x, axis=x.ndim - 1)


@pytest.mark.parametrize("x", [np.random.default_rng(0).normal(size=(5, 7)),
                               np.array([[1.0, np.nan, 3.0], [2.0, 2.0, -1.0]]),
                               np.random.default_rng(1).integers(0, 3, (4, 6)),
                               np.random.default_rng(2).normal(size=(3, 4)) > 0,
                               np.random.default_rng(3).normal(size=(2, 3, 4)).astype(
                                   np.float32)])
def test_argmax_argmin_along_an_axis_run_natively(x):
    assert _native_of(arg_extremes_axes, x) is not None
    for got, want in zip(myc.jit(arg_extremes_axes)(x), arg_extremes_axes(x), strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype and got.shape == want.shape
