"""Reductions over every axis subset, keepdims, every dtype; multi-output groups;
threading (MYC_NUM_THREADS=1 vs 2 agree); accuracy of long float32 sums."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from myc.backends.cpu import compile_kernel
from myc.backends.cpu.runtime import PARALLEL_MIN
from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Reduce, Store, Unary
from tests.cpu.helpers import assert_same, values

SHAPE = (6, 70, 300)  # 126000 elements: large enough to be split over threads
AXES = [a for r in range(4) for a in itertools.combinations(range(3), r)]


def reduce_group(dtype: str, axes, keepdims: bool, shape=SHAPE) -> Kernel:
    """max, min and (except for bool) sum of one expression, plus its elementwise store."""
    x = Load(0, dtype)
    if dtype == "bool":
        e = Binary("or", x, Load(1, dtype))
    else:
        e = Binary("add", x, Load(1, dtype))
    outs = [Store(0, e), Reduce(1, "max", e, axes, keepdims), Reduce(2, "min", e, axes, keepdims)]
    if dtype != "bool":
        outs.append(Reduce(3, "sum", e, axes, keepdims))
    bufs = (Buffer("x", dtype, shape), Buffer("y", dtype, shape[1:]))
    return Kernel("red", shape, bufs, tuple(outs))


def check_group(kernel, inputs, got):
    want = kernel.reference(inputs)
    for out in kernel.outputs:
        g, w = got[out.out_index], want[out.out_index]
        if isinstance(out, Reduce) and out.op == "sum" and g.dtype.kind == "f":
            terms = np.abs(np.broadcast_to(want[0], kernel.shape).astype(np.float64))
            mag = terms.sum(axis=out.axes, keepdims=out.keepdims)
            assert g.shape == w.shape and g.dtype == w.dtype
            assert (np.abs(g - w) <= 4 * np.finfo(g.dtype).eps * mag).all()
        else:
            assert_same(g, w, f"out{out.out_index}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_every_axis_subset_threads_agree(dtype, keepdims, monkeypatch):
    rng = np.random.default_rng(0)
    inputs = [values(rng, SHAPE, dtype, specials=False), values(rng, SHAPE[1:], dtype, False)]
    for axes in AXES:
        kernel = reduce_group(dtype, axes, keepdims)
        ck = compile_kernel(kernel)
        monkeypatch.setenv("MYC_NUM_THREADS", "1")
        one = ck(inputs)
        monkeypatch.setenv("MYC_NUM_THREADS", "2")
        two = ck(inputs)
        check_group(kernel, inputs, one)
        check_group(kernel, inputs, two)
        for out in kernel.outputs:  # float sums: both checked against the reference above
            if not (isinstance(out, Reduce) and out.op == "sum" and dtype.startswith("float")):
                assert_same(one[out.out_index], two[out.out_index])


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("shape", [(3, 40000), (40000, 3), (200001,), (2, 3, 20000)])
def test_uneven_chunks(shape, threads, monkeypatch):
    """Few long rows, many short rows, odd element counts: chunks split the parallel
    range unevenly and every element is still done exactly once."""
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    e = Unary("exp", Binary("mul", Load(0, "float64"), Const(0.1, "float64")))
    last = len(shape) - 1
    outs = (Store(0, e), Reduce(1, "sum", e, (last,)), Reduce(2, "max", e, (0,)),
            Reduce(3, "min", e, tuple(range(len(shape)))))
    kernel = Kernel("uneven", shape, (Buffer("x", "float64", shape),), outs)
    got, want = compile_kernel(kernel)([x]), kernel.reference([x])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-15)  # exp is within 1 ulp
    np.testing.assert_allclose(got[3], want[3], rtol=1e-15)


def test_long_float32_sum_is_accurate(monkeypatch):
    """Blocked accumulation: 2^22 float32 terms summed to ~1e-7 relative error (a single
    running float32 accumulator would be off by ~1e-4 here)."""
    n = 1 << 22
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    kernel = Kernel("s", (n,), (Buffer("x", "float32", (n,)),),
                    (Reduce(0, "sum", Load(0, "float32"), (0,)),))
    exact = x.astype(np.float64).sum()
    for threads in ("1", "2"):
        monkeypatch.setenv("MYC_NUM_THREADS", threads)
        got = compile_kernel(kernel)([x])[0]
        assert abs(float(got) - exact) / exact < 5e-7, (threads, got, exact)
    # along rows too (inner-axis reductions of a 2-axis plan)
    k2 = Kernel("s2", (4, n // 4), (Buffer("x", "float32", (4, n // 4)),),
                (Reduce(0, "sum", Load(0, "float32"), (1,)),))
    got = compile_kernel(k2)([x.reshape(4, -1)])[0]
    exact = x.reshape(4, -1).astype(np.float64).sum(1)
    assert (np.abs(got - exact) / exact < 5e-7).all()


def test_max_min_propagate_nan_and_handle_infinities():
    x = np.array([[1.0, np.nan, -np.inf], [np.inf, 2.0, 3.0]], np.float32)
    kernel = Kernel("nan", (2, 3), (Buffer("x", "float32", (2, 3)),),
                    tuple(Reduce(i, op, Load(0, "float32"), axes)
                          for i, (op, axes) in enumerate(
                              itertools.product(["max", "min"], [(0,), (1,), (0, 1)]))))
    got = compile_kernel(kernel)([x])
    for g, w in zip(got, kernel.reference([x])):
        assert_same(g, w)


def test_group_of_stores_and_reductions_sharing_work(monkeypatch):
    """A softmax-like group: row max, exp of the shifted values stored, row sums --
    over a domain big enough to run in parallel."""
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    shape = (512, 300)
    assert np.prod(shape) > PARALLEL_MIN
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    m = x.max(axis=1, keepdims=True)
    xv, mv = Load(0, "float32"), Load(1, "float32")
    ex = Unary("exp", Binary("sub", xv, mv))
    kernel = Kernel("softmax", shape, (Buffer("x", "float32", shape),
                                      Buffer("m", "float32", (512, 1))),
                    (Store(0, ex), Reduce(1, "sum", ex, (1,), True),
                     Reduce(2, "max", xv, (1,)), Reduce(3, "sum", ex, (0,))))
    got, want = compile_kernel(kernel)([x, m]), kernel.reference([x, m])
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-6)
