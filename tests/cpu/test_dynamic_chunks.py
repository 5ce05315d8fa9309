"""Big kernels in native programs run as several chunks a thread, claimed as threads
free up (``native_ops.dynamic_call``): every chunk runs exactly once, reductions whose
chunks write partials combine them, results equal the serial ones."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.backends.cpu.plan import make_plan
from myc.backends.cpu.runtime import PARALLEL_MIN, chunks
from tests.cpu.helpers import unary_kernel
from tests.cpu.test_native_program import _native_of


def step(x, w):
    y = np.tanh(x * 1.5 + 0.25)
    return np.sum(y * y), np.max(y, axis=0), y @ w


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_chunked_native_kernels_match_one_thread(monkeypatch, threads):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3001, 257))  # ~770k elements: many chunks
    w = rng.standard_normal((257, 7))
    monkeypatch.setenv("MYC_NUM_THREADS", "1")
    one = myc.jit(step)(x, w)
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    got = myc.jit(step)(x, w)
    assert _native_of(step, x, w) is not None
    y = np.tanh(x * 1.5 + 0.25)
    np.testing.assert_allclose(got[0], np.sum(y * y), rtol=1e-12)
    np.testing.assert_allclose(got[0], one[0], rtol=1e-13)
    np.testing.assert_array_equal(got[1], one[1])  # a max does not depend on the order
    np.testing.assert_allclose(got[1], np.max(y, axis=0), rtol=1e-15)
    np.testing.assert_allclose(got[2], y @ w, rtol=1e-10, atol=1e-10)


def test_chunks_cover_the_range_once():
    plan = make_plan(unary_kernel("exp", "float32", 1 << 22))
    for threads, per in [(2, 4), (3, 4), (16, 4), (1, 4), (2, 1)]:
        pieces = chunks(plan, threads, per)
        assert pieces[0][0] == 0 and pieces[-1][1] == plan.extent
        assert all(e == b2 for (_, e), (b2, _) in zip(pieces, pieces[1:]))
        assert len(pieces) <= max(1, threads * per)
        if threads > 1:
            assert len(pieces) > threads if per > 1 else len(pieces) == threads
    small = make_plan(unary_kernel("exp", "float32", PARALLEL_MIN + 64))
    assert len(chunks(small, 2, 4)) == 2  # chunks stay big enough to pay for a thread
