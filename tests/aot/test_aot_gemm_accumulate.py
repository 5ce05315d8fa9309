"""Sums of matrix products in libraries: ``matmul_acc`` plans as a GEMM that accumulates
into a copy of the sum so far (the library's own loop nest, no memset), with no kernel
for the sum; values against NumPy and the JIT (float32/float64, transposed, scaled and
subtracted products, a partial sum read elsewhere, an unrolled gradient), and the plan's
NumPy runner (``myc.aot.dynamic``) agrees."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.lower.hostplan import Gemm, KernelOp, walk
from tests.aot.test_aot import CC, check_against_jit, flat  # noqa: F401

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler ('cc')")


def sums(x, a, b, c, d):
    s = x - 0.5 * (a @ b) + c.T @ d  # read twice below: never overwritten
    return s + (a + 1.0) @ b * 2.0, s


def unrolled(w, h):
    acc = 0.0
    for _ in range(3):
        h = np.tanh(h @ w)
        acc = acc + np.sum(h * h)
    return acc


def _plan(fn, sig):
    from myc.aot.build import build_program

    return build_program(fn, sig)


@pytest.mark.parametrize("dtype, sig", [
    (np.float32, "f32[6,5], f32[6,4], f32[4,5], f32[3,6], f32[3,5]"),
    (np.float64, "f64[6,5], f64[6,4], f64[4,5], f64[3,6], f64[3,5]"),
])
def test_sum_of_products_library(tmp_path, dtype, sig):
    plan = _plan(sums, sig)
    gemms = [op for op in walk(plan.ops) if isinstance(op, Gemm)]
    assert sum(op.acc is not None for op in gemms) == 3
    assert any(op.alpha == -0.5 for op in gemms)
    rng = np.random.default_rng(0)
    shapes = [(6, 5), (6, 4), (4, 5), (3, 6), (3, 5)]
    inputs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    tol = 1e-4 if dtype == np.float32 else 1e-12
    _, got = check_against_jit(tmp_path, sums, sig, inputs, rtol=tol, atol=tol)
    for g, r in zip(got, sums(*inputs), strict=True):
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol)


def test_unrolled_gradient_library(tmp_path):
    g = myc.grad(unrolled, argnums=(0, 1))
    sig = "f64[5,5], f64[4,5]"
    plan = _plan(g, sig)
    assert sum(isinstance(op, Gemm) and op.acc is not None for op in walk(plan.ops)) >= 2
    # dW's sum of three products is no kernel: no kernel reads two weight-shaped products
    assert not [op for op in walk(plan.ops) if isinstance(op, KernelOp)
                and sum(v.shape == (5, 5) for v in op.inputs) >= 2]
    rng = np.random.default_rng(1)
    w, h = rng.standard_normal((5, 5)) * 0.4, rng.standard_normal((4, 5))
    _, got = check_against_jit(tmp_path, g, sig, [w, h], rtol=1e-10, atol=1e-12)
    ref = myc.jit(g, backend="interp")(w, h)
    for x, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(x, r, rtol=1e-10, atol=1e-12)


def test_plan_runner_accumulates():
    from myc.aot.dynamic import evaluate

    sig = "f64[6,5], f64[6,4], f64[4,5], f64[3,6], f64[3,5]"
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal(s) for s in [(6, 5), (6, 4), (4, 5), (3, 6), (3, 5)]]
    got = evaluate(_plan(sums, sig), inputs)
    for g, r in zip(got, sums(*inputs), strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
