"""The subnormal policy (myc/backends/cpu/fpmode.py): kernels flush subnormals to zero by
default, keep them with MYC_SUBNORMALS=keep, and never change the caller's MXCSR."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import myc
from myc.backends.cpu import fpmode
from myc.errors import MycValueError

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="FTZ is an x86-64 MXCSR setting")

TINY = np.float32(1e-30)


def scaled(x):
    y = x * TINY  # 1e-10 * 1e-30 = 1e-40: a float32 subnormal
    return y * 2.0, np.sum(y)


def reread(x):
    return x * 3.0 - x * 2.0  # each product of a subnormal input is subnormal: flushed


def log_of(x):
    return np.log(x) * 1.0  # a subnormal input is read exactly (no DAZ)


def test_default_flushes_subnormal_results_and_inputs(monkeypatch):
    monkeypatch.delenv("MYC_SUBNORMALS", raising=False)
    x = np.full(1000, 1e-10, np.float32)
    y, s = myc.jit(scaled)(x)
    assert np.all(y == 0) and s == 0
    tiny = np.full(1000, 1e-40, np.float32)
    assert np.all(myc.jit(reread)(tiny) == 0)
    np.testing.assert_allclose(myc.jit(log_of)(tiny), np.log(tiny), rtol=1e-6)
    # the caller's MXCSR is back: NumPy still computes the subnormal
    assert (x * TINY)[0] != 0
    assert np.float32(1e-38) / np.float32(10) != 0


def test_keep_gives_ieee_gradual_underflow(monkeypatch):
    monkeypatch.setenv("MYC_SUBNORMALS", "keep")
    x = np.full(1000, 1e-10, np.float32)
    y, s = myc.jit(scaled)(x)
    np.testing.assert_array_equal(y, (x * TINY) * np.float32(2.0))
    assert s != 0
    tiny = np.full(1000, 1e-40, np.float32)
    np.testing.assert_array_equal(myc.jit(reread)(tiny), tiny)


def test_worker_threads_flush_too(monkeypatch):
    """A kernel big enough to run on several threads flushes on each of them."""
    monkeypatch.delenv("MYC_SUBNORMALS", raising=False)
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    x = np.full(1 << 20, 1e-10, np.float32)
    y, _ = myc.jit(scaled)(x)
    assert np.count_nonzero(y) == 0


def test_policy_is_part_of_the_kernel_key(monkeypatch):
    from myc.backends.cpu.runtime import cache_key
    from tests.cpu.helpers import unary_kernel

    k = unary_kernel("exp", "float32", 64)
    monkeypatch.setenv("MYC_SUBNORMALS", "keep")
    keep = cache_key(k)
    monkeypatch.setenv("MYC_SUBNORMALS", "flush")
    assert cache_key(k) != keep


def test_a_bad_setting_is_a_myc_error(monkeypatch):
    monkeypatch.setenv("MYC_SUBNORMALS", "sometimes")
    with pytest.raises(MycValueError, match="MYC_SUBNORMALS"):
        fpmode.mode()
