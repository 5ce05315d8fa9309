"""Row reductions (kernel IR ``RowReduce``): a kernel reads the max/sum/min of its row in
the pass that uses it.  Compiled kernels against ``Kernel.reference``, nested levels,
rows longer than a sum block, size-1 and 1-row domains, NaN rows, both thread counts,
and the trig kernels' fast pass."""

from __future__ import annotations

import numpy as np
import pytest

from myc.backends.cpu import compile_kernel, jit
from myc.backends.cpu.codegen import BLOCK, codegen
from myc.backends.cpu.plan import make_plan
from myc.lower.kernel import (
    Binary,
    Buffer,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Store,
    Unary,
    row_reductions,
)


def softmax_kernel(shape, dtype="float32") -> Kernel:
    """exp(x - max) / sum(exp(x - max)) over the last axis: two levels of row reductions,
    plus the row max and the row sum (as the min of a value constant along the row)."""
    x = Load(0, dtype)
    m = RowReduce("max", x)
    e = Unary("exp", Binary("sub", x, m))
    s = RowReduce("sum", e)
    nd = len(shape)
    outs = (Store(0, Binary("div", e, s)), Reduce(1, "max", x, (nd - 1,), True),
            Reduce(2, "min", s, (nd - 1,), True))
    return Kernel("softmax", shape, (Buffer("x", dtype, shape),), outs)


def check(kernel: Kernel, inputs, rtol: float) -> None:
    got = compile_kernel(kernel)(inputs)
    want = kernel.reference(inputs)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-30, equal_nan=True)


def test_levels_follow_nesting():
    k = softmax_kernel((4, 8))
    levels = row_reductions([o.expr for o in k.outputs])
    assert [[n.op for n in lv] for lv in levels] == [["max"], ["sum"]]


@pytest.mark.parametrize("shape", [(3, 5), (64, 1024), (700, 300), (2, 3, 4100), (1, 9),
                                   (5, 1), (0, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_kernel_matches_reference(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    x = (4 * rng.standard_normal(shape)).astype(dtype)
    check(softmax_kernel(shape, dtype), [x], rtol=1e-5 if dtype == "float32" else 1e-13)


def test_rows_with_nan_and_infinities():
    x = np.random.default_rng(1).standard_normal((6, 40)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, :] = -np.inf
    x[3, 7] = np.inf
    check(softmax_kernel(x.shape), [x], rtol=1e-5)


def test_plan_keeps_the_row_whole():
    # (2, 3, 4100): without row reductions the contiguous axes merge into one
    plan = make_plan(softmax_kernel((2, 3, 4100)))
    assert plan.dims[-1] == 4100 and plan.extent == 6
    plan = make_plan(softmax_kernel((1, 9)))
    assert plan.dims == (1, 9)
    plan = make_plan(softmax_kernel((5, 1)))
    assert plan.dims == (5, 1)


def test_long_rows_sum_in_blocks_accurately():
    n = 3 * BLOCK + 17
    x = np.full((2, n), 0.1, np.float32)
    k = Kernel("rowsum", (2, n), (Buffer("x", "float32", (2, n)),),
               (Store(0, Binary("sub", Load(0, "float32"), RowReduce("sum", Load(0, "float32")))),))
    got = compile_kernel(k)([x])[0]
    np.testing.assert_allclose(got, x - np.float32(np.sum(x[0].astype(np.float64))),
                               rtol=1e-6)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_threads_split_rows_not_rows_apart(threads, monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    x = np.random.default_rng(2).standard_normal((4096, 97)).astype(np.float32)
    check(softmax_kernel(x.shape), [x], rtol=1e-5)


def test_trig_inside_a_row_reduction_reruns_for_huge_arguments():
    x = Load(0, "float32")
    k = Kernel("rowsin", (3, 50), (Buffer("x", "float32", (3, 50)),),
               (Store(0, Binary("sub", x, RowReduce("max", Unary("sin", x)))),))
    v = np.random.default_rng(3).standard_normal((3, 50)).astype(np.float32)
    v[1, 4] = 1e30  # needs the full (Payne-Hanek) reduction
    got = compile_kernel(k)([v])[0]
    want = v - np.sin(v.astype(np.float64)).max(axis=1, keepdims=True).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_row_reduction_kernel_vectorizes():
    text = jit.optimized_ir(codegen(softmax_kernel((64, 1024)))[0])
    assert "<8 x float>" in text or "<16 x float>" in text


def test_a_row_reduction_needs_two_axes():
    with pytest.raises(AssertionError, match="two or more axes"):
        Kernel("bad", (8,), (Buffer("x", "float32", (8,)),),
               (Store(0, RowReduce("max", Load(0, "float32"))),))
