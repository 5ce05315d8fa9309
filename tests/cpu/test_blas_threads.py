"""Float products of native programs on myc's threads (``blas_threads.py``): row blocks,
BLAS single-threaded in each, the caller's OpenBLAS thread count left as it was."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import myc
from myc.backends.cpu import blas_threads
from tests.cpu.test_native_program import _native_of

pytestmark = pytest.mark.skipif(blas_threads.set_local_address() is None,
                                reason="NumPy's OpenBLAS has no openblas_set_num_threads_local")


def mlp(w1, w2, x):
    return np.tanh(x @ w1) @ w2


def mlp_t(w1, w2, x):
    return np.sum(np.tanh(x.T @ w1) * 2.0) + np.sum(w2)


def tall(a, w):
    return np.tanh(a @ w) + 1.0


def _set_local(n: int) -> int:
    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(blas_threads.set_local_address())
    return fn(n)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_products_split_over_threads_agree_with_numpy(monkeypatch, threads):
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    rng = np.random.default_rng(int(threads))
    w1 = rng.standard_normal((97, 131)).astype(np.float32)
    w2 = rng.standard_normal((131, 45)).astype(np.float32)
    x = rng.standard_normal((257, 97)).astype(np.float32)
    got = myc.jit(mlp)(w1, w2, x)
    np.testing.assert_allclose(got, np.tanh(x @ w1) @ w2, rtol=2e-4, atol=2e-4)
    assert _native_of(mlp, w1, w2, x) is not None
    xt = rng.standard_normal((97, 257)).astype(np.float64)
    w1d = w1.astype(np.float64)
    w2d = w2.astype(np.float64)
    np.testing.assert_allclose(myc.jit(mlp_t)(w1d, w2d, xt), mlp_t(w1d, w2d, xt), rtol=1e-10)
    a = rng.standard_normal((3, 129, 64)).astype(np.float32)
    w = rng.standard_normal((64, 80)).astype(np.float32)
    np.testing.assert_allclose(myc.jit(tall)(a, w), np.tanh(a @ w) + 1.0, rtol=2e-4,
                               atol=2e-4)


def test_gradient_through_split_products(monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((64, 96))
    w2 = rng.standard_normal((96, 33))
    x = rng.standard_normal((300, 64))

    def loss(w1, w2, x):
        return np.sum(mlp(w1, w2, x) ** 2)

    g = myc.grad(loss)(w1, w2, x)
    h = np.tanh(x @ w1)
    dout = 2 * (h @ w2)
    np.testing.assert_allclose(g, x.T @ ((dout @ w2.T) * (1 - h * h)), rtol=1e-9)


def test_the_callers_blas_thread_count_is_left_alone(monkeypatch):
    """The product sets this thread's BLAS count to 1 for its call only."""
    monkeypatch.setenv("MYC_NUM_THREADS", "1")
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((128, 128)).astype(np.float32)
    w2 = rng.standard_normal((128, 128)).astype(np.float32)
    x = rng.standard_normal((256, 128)).astype(np.float32)
    before = _set_local(0)  # 0: "use the global count"; returns what was set
    try:
        _set_local(7)
        myc.jit(mlp)(w1, w2, x)
        assert _set_local(0) == 7
    finally:
        _set_local(before)


def test_row_blocks_cover_the_rows_once():
    for rows, threads in [(1, 4), (5, 2), (257, 3), (1000, 16)]:
        blocks = blas_threads.row_blocks(rows, 512, 512, threads)
        assert blocks[0][0] == 0 and blocks[-1][1] == rows
        assert all(e == b2 for (_, e), (b2, _) in zip(blocks, blocks[1:]))
        assert len(blocks) == min(rows, threads)
    assert blas_threads.row_blocks(64, 8, 8, 4) == [(0, 64)]  # small: one block
