"""The CUDA kernels' numerics on the host: the same LLVM phase functions the PTX is made
from, run by the emulator's serial grid loop (``myc.backends.cuda.emulate``), against
the kernel IR's reference -- the CPU tests' random fusion groups (bit for bit, float
sums within rounding), row reductions, block and split reductions, the exact fmod,
special values and the transcendentals within the CPU backend's ulp bounds."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from llvmlite import ir

from myc.backends.cpu.emit import F32, F64, I64, PTR
from myc.backends.cpu.jit import JitModule
from myc.backends.cpu.mathlib import ACCURACY
from myc.backends.cuda import codegen
from myc.backends.cuda.emulate import EmulatedKernel
from myc.backends.cuda.fmod import fmod_function
from myc.lower.kernel import (
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
from tests.cpu.test_exprs import assert_matches, check_group, fusion_group


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    return EmulatedKernel(kernel)(inputs), kernel.reference(inputs)


@settings(max_examples=60, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_match_the_reference(case):
    check_group(case, run)


def softmax_kernel(n: int, m: int, dtype: str) -> Kernel:
    x = Load(0, dtype)
    mx = RowReduce("max", x)
    e = Unary("exp", Binary("sub", x, mx))
    s = RowReduce("sum", e)
    return Kernel("softmax", (n, m), (Buffer("x", dtype, (n, m)),),
                  (Store(0, Binary("div", e, s)), Reduce(1, "sum", Unary("log", s), (0, 1)),
                   Reduce(2, "max", x, (1,)), Reduce(3, "min", x, (0,), True)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_special_values(dtype):
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


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_long_reductions_split_into_pieces(op, dtype):
    n = codegen.SPLIT_MIN * 2 + 17  # few outputs, long rows: partials, then a finish
    rng = np.random.default_rng(1)
    x = values(rng, (3, n), dtype, specials=False)
    kernel = Kernel("long", (3, n), (Buffer("x", dtype, (3, n)),),
                    (Reduce(0, op, Load(0, dtype), (1,)), Reduce(1, op, Load(0, dtype), (0, 1))))
    ek = EmulatedKernel(kernel)
    assert ek.plan.partials, "the reduction was not split"
    got = ek([x])
    want = kernel.reference([x])
    assert_matches(kernel, [x], got, want)


def test_column_reductions_and_int_wrapping():
    rng = np.random.default_rng(2)
    big = np.iinfo(np.int64).max
    x = rng.integers(-big, big, (300, 7))
    kernel = Kernel("cols", (300, 7), (Buffer("x", "int64", (300, 7)),),
                    (Reduce(0, "sum", Load(0, "int64"), (0,)),
                     Store(1, Binary("mul", Load(0, "int64"), Const(3, "int64")))))
    got, want = run(kernel, [x])
    assert_same(got[0], want[0], "wrapping int64 sum")
    assert_same(got[1], want[1], "wrapping int64 product")


@pytest.mark.parametrize("ty", ["float32", "float64"])
def test_fmod_is_exact(ty):
    """NVPTX's frem is ``x - trunc(x/y)*y``: ours must be C's exact fmod."""
    lt = F32 if ty == "float32" else F64
    m = ir.Module()
    f = fmod_function(m, lt)
    w = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64]), "run")
    b = ir.IRBuilder(w.append_basic_block())
    x, y, o, n = w.args
    pre = b.block
    loop, done = w.append_basic_block("l"), w.append_basic_block("d")
    b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), pre)
    xv = b.load(b.gep(x, [i], source_etype=lt), typ=lt)
    yv = b.load(b.gep(y, [i], source_etype=lt), typ=lt)
    b.store(b.call(f, [xv, yv]), b.gep(o, [i], source_etype=lt))
    i1 = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(i1, loop)
    b.cbranch(b.icmp_signed("<", i1, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    jm = JitModule(m)
    dt = np.dtype(ty)
    fi = np.finfo(dt)
    rng = np.random.default_rng(3)
    specials = np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, fi.tiny, fi.tiny / 4,
                         fi.max, -fi.max, fi.smallest_subnormal, 3, 7.5, 1e-30, 1e30], dt)
    k = 50000
    with np.errstate(over="ignore"):
        xs = (rng.standard_normal(k) * 2.0 ** rng.integers(fi.minexp, fi.maxexp, k)).astype(dt)
        ys = (rng.standard_normal(k) * 2.0 ** rng.integers(fi.minexp, fi.maxexp, k)).astype(dt)
    xs = np.concatenate([xs, np.repeat(specials, len(specials))])
    ys = np.concatenate([ys, np.tile(specials, len(specials))])
    out = np.empty_like(xs)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_int64)(jm.address("run"))
    fn(xs.ctypes.data, ys.ctypes.data, out.ctypes.data, len(xs))
    with np.errstate(all="ignore"):
        want = np.fmod(xs, ys)
    assert_same(out, want, "fmod")


INEXACT = ["exp", "log", "log1p", "expm1", "tanh", "sigmoid", "sin", "cos", "tan", "arctan"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transcendentals_within_the_cpu_backends_bounds(dtype):
    rng = np.random.default_rng(4)
    x = values(rng, (4000,), dtype)
    y = values(rng, (4000,), dtype)
    ops = [(op, Unary(op, Load(0, dtype))) for op in INEXACT] + \
        [(op, Binary(op, Load(0, dtype), Load(1, dtype))) for op in ("pow", "arctan2")]
    kernel = Kernel("math", (4000,), (Buffer("x", dtype, (4000,)), Buffer("y", dtype, (4000,))),
                    tuple(Store(i, e) for i, (_, e) in enumerate(ops)))
    got, want = run(kernel, [x, y])
    for (op, _), g, w in zip(ops, got, want, strict=True):
        # NumPy's float32 SIMD functions have their own few-ulp error (as tests/cpu)
        bound = ACCURACY[dtype][op] + (8 if dtype == "float32" else 1)
        assert ulp_diff(g, w).max() <= bound, op


def test_empty_domain_gives_identities():
    kernel = Kernel("empty", (0, 4), (Buffer("x", "float32", (0, 4)),),
                    (Reduce(0, "max", Load(0, "float32"), (0,)),))
    got, want = run(kernel, [np.zeros((0, 4), np.float32)])
    assert_same(got[0], want[0], "empty max")
