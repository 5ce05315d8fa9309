"""The OpenCL backend's kernels against the kernel IR's reference: the random fusion
groups of the CPU tests (every exactly-rounded op, all dtypes, broadcasts, stores and
reductions), row reductions, split reductions, special values and empty domains."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from myc.lower.kernel import (
    Binary,
    Buffer,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Store,
    Unary,
)
from tests.cpu.helpers import ulp_diff, values
from tests.cpu.test_exprs import check_group, fusion_group

pytest.importorskip("pyopencl")
from myc.backends.opencl import runtime  # noqa: E402 - plainly: an ImportError in myc fails


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    ck = runtime.compile_kernel(kernel)
    assert ck is not None, kernel.format()
    return ck(inputs), kernel.reference(inputs)


@settings(max_examples=60, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_match_the_reference(case):
    check_group(case, run)


F = "float32"


def softmax_kernel(n: int, m: int, dtype: str = F) -> Kernel:
    x = Load(0, dtype)
    mx = RowReduce("max", x)
    e = Unary("exp", Binary("sub", x, mx))
    s = RowReduce("sum", e)
    return Kernel("softmax", (n, m), (Buffer("x", dtype, (n, m)),),
                  (Store(0, Binary("div", e, s)), Reduce(1, "sum", Unary("log", s), (0, 1))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((37, 129)) * 30).astype(dtype)
    x[3, 5] = np.nan
    x[7, :] = -np.inf
    x[9, 2] = np.inf
    kernel = softmax_kernel(37, 129, dtype)
    got, want = run(kernel, [x])
    ok = np.isfinite(want[0])
    assert (np.isnan(got[0]) == np.isnan(want[0])).all()
    assert ulp_diff(got[0][ok], want[0][ok]).max() <= 8
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_a_big_reduction_is_split(op, dtype):
    n = 1 << 18
    rng = np.random.default_rng(1)
    x = values(rng, (n,), dtype, specials=False)
    kernel = Kernel("r", (n,), (Buffer("x", dtype, (n,)),),
                    (Reduce(0, op, Load(0, dtype), (0,)),))
    ck = runtime.compile_kernel(kernel)
    assert ck.plan.split  # partials over work-items, combined on the host
    got, want = ck([x])[0], kernel.reference([x])[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    if op == "sum" and dtype != "int64":
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)
    if dtype != "int64":
        x[12345] = np.nan
        assert np.isnan(ck([x])[0])


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4)])
def test_empty_domains(shape):
    kernel = Kernel("e", shape, (Buffer("x", F, shape),),
                    (Store(0, Unary("exp", Load(0, F))), Reduce(1, "max", Load(0, F),
                                                               (len(shape) - 1,))))
    x = np.zeros(shape, np.float32)
    got, want = run(kernel, [x])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.shape == w.shape


@pytest.mark.parametrize("op", ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan",
                                "tanh", "arctan", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transcendentals_within_a_few_ulp(op, dtype):
    rng = np.random.default_rng(2)
    x = np.concatenate([values(rng, (4000,), dtype),
                        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30,
                                  700.0, -700.0, 88.0, -88.0], dtype)])
    n = x.size
    kernel = Kernel("u", (n,), (Buffer("x", dtype, (n,)),), (Store(0, Unary(op, Load(0, dtype))),))
    got, want = run(kernel, [x])
    d = ulp_diff(got[0], want[0])
    assert d.max() <= 4, (op, x[d > 4][:5], got[0][d > 4][:5], want[0][d > 4][:5])


@pytest.mark.parametrize("op", ["pow", "arctan2", "div"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inexact_binary_ops_within_a_few_ulp(op, dtype):
    rng = np.random.default_rng(3)
    n = 5000
    x, y = values(rng, (n,), dtype), values(rng, (n,), dtype)
    if op == "pow":  # moderate exponents, so the results are not all 0 or inf
        y = np.clip(y, -20, 20).astype(dtype)
    kernel = Kernel("b", (n,), (Buffer("x", dtype, (n,)), Buffer("y", dtype, (n,))),
                    (Store(0, Binary(op, Load(0, dtype), Load(1, dtype))),))
    got, want = run(kernel, [x, y])
    d = ulp_diff(got[0], want[0])
    assert d.max() <= (0 if op == "div" else 16), (op, x[d > 16][:5], y[d > 16][:5])


@pytest.mark.parametrize("shape, axes", [((1 << 16,), (0,)), ((64, 300), (1,)),
                                         ((300, 40), (0,)), ((3, 50, 7), (0, 2))])
def test_a_heavy_reduction_operand_is_computed_elementwise_first(shape, axes,
                                                                 monkeypatch):
    """On a CPU device a reduction of an operand that shares a math call with a store
    (or any math call, when the reduction is split) reads it from a temporary the
    elementwise pass (with the stores) wrote: the same values, summed in the same
    order, as the reduction that computes it itself."""
    from myc.backends.opencl import codegen

    x = Load(0, F)
    e = Unary("tanh", Binary("div", x, Binary("add", x, x)))
    kernel = Kernel("heavy", shape, (Buffer("x", F, shape),),
                    (Store(0, Binary("mul", e, x)), Reduce(1, "sum", e, axes),
                     Reduce(2, "max", Unary("exp", x), axes), Reduce(3, "sum", x, axes)))
    plan = codegen.generate(kernel, cpu=True)
    ew = [p for p in plan.passes if p.name == "elementwise"]
    assert len(ew) == 1 and ("out", 0) in ew[0].args  # the store shares the pass
    n_red = int(np.prod([shape[a] for a in axes]))
    split = int(np.prod(shape)) // n_red <= codegen.SPLIT_OUTPUTS and \
        n_red >= codegen.SPLIT_MIN
    for p in plan.passes:
        if p.name == "out1" or p.name == "out2" and split:  # its operand's temporary
            assert p.args[0][0] == "tmp" and ("in", 0) not in p.args
        if p.name == "out2" and not split or p.name == "out3":  # a math call no store
            assert ("in", 0) in p.args  # shares (not split), a plain load: as computed
    assert "elementwise" not in codegen.generate(kernel, cpu=False).source
    rng = np.random.default_rng(5)
    xv = (rng.standard_normal(shape) * 3).astype(np.float32)
    xv.flat[7] = np.nan
    monkeypatch.setattr(runtime, "_cache", {})
    got, want = run(kernel, [xv])
    monkeypatch.setattr(runtime, "_cache", {})
    monkeypatch.setattr(codegen, "MATERIALIZE_MAX", 0)
    plain = runtime.compile_kernel(kernel)
    assert not any(p.name == "elementwise" for p in plain.plan.passes)
    for g, w, p in zip(got, want, plain([xv]), strict=True):
        np.testing.assert_array_equal(g, p)  # bit for bit: order and values kept
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-4)  # (tanh: a few ulp)
