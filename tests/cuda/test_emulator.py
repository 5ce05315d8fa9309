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
from myc.backends.cuda.emulate import EmulatedKernel
from myc.backends.cuda.fmod import fmod_function
from myc.lower.kernel import (
    Buffer,
    Kernel,
    Load,
    Reduce,
)
from tests.cpu.helpers import assert_same
from tests.cpu.test_exprs import check_group, fusion_group
from tests.cuda import checks


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    return EmulatedKernel(kernel)(inputs), kernel.reference(inputs)


@settings(max_examples=60, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_match_the_reference(case):
    check_group(case, run)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_special_values(dtype):
    checks.check_softmax_rows(run, dtype)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_long_reductions_split_into_pieces(op, dtype):
    assert EmulatedKernel(checks.long_kernel(op, dtype)).plan.partials, "not split"
    checks.check_long_reduction(run, op, dtype)


def test_column_reductions_and_int_wrapping():
    checks.check_columns_and_int_wrapping(run)


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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transcendentals_within_the_cpu_backends_bounds(dtype):
    checks.check_transcendentals(run, dtype)


def test_empty_domain_gives_identities():
    kernel = Kernel("empty", (0, 4), (Buffer("x", "float32", (0, 4)),),
                    (Reduce(0, "max", Load(0, "float32"), (0,)),))
    got, want = run(kernel, [np.zeros((0, 4), np.float32)])
    assert_same(got[0], want[0], "empty max")
