"""Programs whose reductions over the last axis are read in the same kernel (fusion of
row reductions): softmax, layer norm, logsumexp and their gradients as one pass each,
checked against NumPy and the reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest

import myc


def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def softmax_loss(x, w):
    return np.sum(softmax(x) * w)


def layer_norm_loss(x, g, b, w):
    return np.sum(layer_norm(x, g, b) * w)


def column_softmax(x):
    m = np.max(x, axis=0, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=0, keepdims=True)


def _full_kernels(fn, *args) -> int:
    text = myc.ir(fn, *args, stage="kernels")
    shape = str(tuple(np.shape(args[0])))
    return sum(1 for line in text.splitlines() if line.strip().startswith("kernel ")
               and f"shape={shape}" in line)


def _flat(v) -> list:
    return [x for item in v for x in _flat(item)] if isinstance(v, tuple) else [v]


def _finite_max(r) -> float:
    a = np.abs(np.asarray(r, dtype=np.float64))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else 0.0


def agree(fn, *args, rtol=1e-5):
    got = myc.jit(fn)(*args)
    ref = myc.jit(fn, backend="interp")(*args)
    for g, r in zip(_flat(got), _flat(ref), strict=True):
        assert np.shape(g) == np.shape(r) and np.asarray(g).dtype == np.asarray(r).dtype
        np.testing.assert_allclose(g, r, rtol=rtol, atol=rtol * max(1.0, _finite_max(r)),
                                   equal_nan=True)
    return got


@pytest.mark.parametrize("shape", [(64, 100), (3, 17, 40), (1, 300), (300, 2)])
def test_softmax_is_one_kernel_and_right(shape):
    x = (3 * np.random.default_rng(0).standard_normal(shape)).astype(np.float32)
    assert _full_kernels(softmax, x) == 1
    got = agree(softmax, x)
    np.testing.assert_allclose(got, softmax(x), rtol=1e-5, atol=1e-7)


def test_layer_norm_is_one_kernel_and_right():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 64)).astype(np.float32)
    g, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    assert _full_kernels(layer_norm, x, g, b) == 1
    np.testing.assert_allclose(agree(layer_norm, x, g, b), layer_norm(x, g, b), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_through_row_reductions(dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 30)).astype(dtype)
    w = rng.standard_normal((40, 30)).astype(dtype)
    g, b = rng.standard_normal(30).astype(dtype), rng.standard_normal(30).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    agree(myc.value_and_grad(softmax_loss), x, w, rtol=tol)
    agree(myc.value_and_grad(layer_norm_loss, argnums=(0, 1, 2)), x, g, b, w, rtol=tol)


def test_nan_and_infinite_rows():
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    x[1, 2] = np.nan
    x[2, :] = -np.inf
    x[3, 5] = np.inf
    agree(softmax, x)
    agree(myc.value_and_grad(softmax_loss), x, np.ones_like(x))


def test_other_axes_are_not_row_reductions():
    x = np.random.default_rng(4).standard_normal((64, 100)).astype(np.float32)
    assert _full_kernels(column_softmax, x) >= 2
    np.testing.assert_allclose(agree(column_softmax, x), column_softmax(x), rtol=1e-5,
                               atol=1e-7)


def test_rows_of_one_element():
    x = np.random.default_rng(5).standard_normal((500, 1)).astype(np.float32)
    np.testing.assert_allclose(agree(softmax, x), np.ones_like(x))


@pytest.mark.parametrize("threads", ["1", "2"])
def test_thread_counts_agree(threads, monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    x = np.random.default_rng(6).standard_normal((4096, 33)).astype(np.float32)
    np.testing.assert_allclose(myc.jit(softmax)(x), softmax(x), rtol=1e-5, atol=1e-7)
