"""Checks shared by the emulator tests and the GPU tests, each taking
``run(kernel, inputs) -> (results, reference results)`` (NumPy arrays); no hypothesis
needed, so the GPU tests run where only pytest is installed."""

from __future__ import annotations

import numpy as np

from benchmarks.workloads import WORKLOADS
from myc.backends.cpu.mathlib import ACCURACY
from myc.backends.cuda import codegen
from myc.lower.kernel import (
    FLOATS,
    Binary,
    Buffer,
    Const,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Store,
    Unary,
)
from tests.cpu.helpers import assert_same, ulp_diff, values

W17 = [w for w in WORKLOADS if w.name in ("W1", "W2", "W3", "W4", "W5", "W6", "W7")]
INEXACT = ["exp", "log", "log1p", "expm1", "tanh", "sigmoid", "sin", "cos", "tan", "arctan"]


def leaves(v) -> list:
    return [y for x in v for y in leaves(x)] if isinstance(v, (tuple, list)) else [v]


def close(got, want, rtol: float, atol: float) -> None:
    for g, w in zip(leaves(got), leaves(want), strict=True):
        assert type(g) is type(w) or np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def program(w):
    """What a workload compiles: its function, or its value_and_grad."""
    import myc

    if w.kind == "value_and_grad":
        return myc.value_and_grad(w.myc_fn, argnums=w.argnums)
    return w.myc_fn


def assert_matches(kernel: Kernel, inputs: list, got: list, want: list) -> None:
    """Bit for bit, but float sums within rounding of the sum of their terms' sizes (as
    ``tests/cpu/test_exprs.assert_matches``)."""
    for out in kernel.outputs:
        g, w = got[out.out_index], want[out.out_index]
        if isinstance(out, Reduce) and out.op == "sum" and out.expr.dtype in FLOATS:
            mag = Kernel("mag", kernel.shape, kernel.inputs, (Reduce(
                0, "sum", Unary("abs", out.expr), out.axes, out.keepdims),)).reference(inputs)[0]
            eps = np.finfo(out.expr.dtype).eps
            assert g.shape == w.shape and g.dtype == w.dtype
            with np.errstate(invalid="ignore", over="ignore"):
                ok = (np.abs(g - w) <= 8 * eps * mag) | (g == w) | (np.isnan(g) & np.isnan(w))
            assert ok.all(), (g, w, kernel.format())
        else:
            assert_same(g, w, kernel.format())


def softmax_kernel(n: int, m: int, dtype: str) -> Kernel:
    x = Load(0, dtype)
    mx = RowReduce("max", x)
    e = Unary("exp", Binary("sub", x, mx))
    s = RowReduce("sum", e)
    return Kernel("softmax", (n, m), (Buffer("x", dtype, (n, m)),),
                  (Store(0, Binary("div", e, s)), Reduce(1, "sum", Unary("log", s), (0, 1)),
                   Reduce(2, "max", x, (1,)), Reduce(3, "min", x, (0,), True)))


def check_softmax_rows(run, dtype: str) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((37, 129)) * 30).astype(dtype)
    x[3, 5] = np.nan
    x[7, :] = -np.inf
    x[9, 2] = np.inf
    kernel = softmax_kernel(37, 129, dtype)
    got, want = run(kernel, [x])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5 if dtype == "float32" else 1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5 if dtype == "float32" else 1e-12)
    assert_same(got[2], want[2], "row max (NaN propagates)")
    assert_same(got[3], want[3], "column min")


def long_kernel(op: str, dtype: str) -> Kernel:
    n = codegen.SPLIT_MIN * 2 + 17  # few outputs, long rows: partials, then a finish
    return Kernel("long", (3, n), (Buffer("x", dtype, (3, n)),),
                  (Reduce(0, op, Load(0, dtype), (1,)), Reduce(1, op, Load(0, dtype), (0, 1))))


def check_long_reduction(run, op: str, dtype: str) -> None:
    kernel = long_kernel(op, dtype)
    x = values(np.random.default_rng(1), kernel.inputs[0].shape, dtype, specials=False)
    got, want = run(kernel, [x])
    assert_matches(kernel, [x], got, want)


def check_columns_and_int_wrapping(run) -> None:
    rng = np.random.default_rng(2)
    big = np.iinfo(np.int64).max
    x = rng.integers(-big, big, (300, 7))
    kernel = Kernel("cols", (300, 7), (Buffer("x", "int64", (300, 7)),),
                    (Reduce(0, "sum", Load(0, "int64"), (0,)),
                     Store(1, Binary("mul", Load(0, "int64"), Const(3, "int64")))))
    got, want = run(kernel, [x])
    assert_same(got[0], want[0], "wrapping int64 sum")
    assert_same(got[1], want[1], "wrapping int64 product")


def check_transcendentals(run, dtype: str) -> None:
    rng = np.random.default_rng(4)
    x = values(rng, (4000,), dtype)
    y = values(rng, (4000,), dtype)
    ops = [(op, Unary(op, Load(0, dtype))) for op in INEXACT] + \
        [(op, Binary(op, Load(0, dtype), Load(1, dtype))) for op in ("pow", "arctan2")] + \
        [(op, Binary(op, Load(0, dtype), Load(1, dtype))) for op in ("mod", "floordiv")]
    kernel = Kernel("math", (4000,), (Buffer("x", dtype, (4000,)), Buffer("y", dtype, (4000,))),
                    tuple(Store(i, e) for i, (_, e) in enumerate(ops)))
    got, want = run(kernel, [x, y])
    for (op, _), g, w in zip(ops, got, want, strict=True):
        if op in ("mod", "floordiv"):  # exact, as NumPy's
            assert_same(g, w, op)
            continue
        # NumPy's float32 SIMD functions have their own few-ulp error (as tests/cpu)
        bound = ACCURACY[dtype][op] + (8 if dtype == "float32" else 1)
        assert ulp_diff(g, w).max() <= bound, op


def cupy_and_gpu_mark():
    """CuPy (the calling test module is skipped without it) and the mark that skips a
    module's tests where CuPy sees no NVIDIA GPU: ``cupy, pytestmark = ...``."""
    import pytest

    cupy = pytest.importorskip("cupy")
    try:
        has_gpu = bool(cupy.cuda.is_available())
    except Exception:  # noqa: BLE001 - a CuPy without a usable driver
        has_gpu = False
    return cupy, pytest.mark.skipif(not has_gpu, reason="no NVIDIA GPU visible to CuPy")
