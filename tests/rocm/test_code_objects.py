"""AMDGPU code objects without a GPU: random fusion groups and every op (the
transcendentals included) in float32/float64/int64/bool lower for gfx90a, gfx942 and
gfx1100, link with ``--no-undefined`` and carry their kernels, descriptors and target
(``elfcheck``); no intrinsic AMDGPU cannot lower is ever emitted; ``myc.ir`` shows the
AMDGCN assembly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from llvmlite import ir

import myc
from myc.backends.gpu import codegen
from myc.backends.rocm.amdgpu import AMDGPU
from myc.backends.rocm.runtime import kernel_asm
from myc.lower.kernel import (
    BINARY_OPS,
    UNARY_OPS,
    Binary,
    Buffer,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Store,
    Unary,
    kind,
)
from tests.cpu.test_exprs import fusion_group
from tests.rocm.elfcheck import link_and_check


@settings(max_examples=15, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_link(case):
    kernel, _ = case
    link_and_check(kernel, archs=("gfx90a",))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_every_op_links_for_every_arch(dtype):
    x, y = Load(0, dtype), Load(1, dtype)
    exprs = [Unary(op, x) for op, kinds in UNARY_OPS.items() if kind(dtype) in kinds]
    exprs += [Binary(op, x, y) for op, kinds in BINARY_OPS.items() if kind(dtype) in kinds]
    outs = [Store(i, e) for i, e in enumerate(exprs)]
    red = [op for op in ("sum", "max", "min") if not (op == "sum" and dtype == "bool")]
    outs += [Reduce(len(outs) + i, op, x, (1,)) for i, op in enumerate(red)]
    outs.append(Store(len(outs), RowReduce(red[0], x)))
    kernel = Kernel("ops", (8, 300), (Buffer("x", dtype, (8, 300)),
                                      Buffer("y", dtype, (8, 300))), tuple(outs))
    link_and_check(kernel)
    asm = kernel_asm(kernel)
    assert ".amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"" in asm
    assert "s_barrier" in asm  # the block reductions synchronize
    assert ".amdhsa_code_object_version 5" in asm


def test_split_reduction_links():
    n = codegen.SPLIT_MIN * 2
    kernel = Kernel("long", (2, n), (Buffer("x", "float32", (2, n)),),
                    (Reduce(0, "sum", Load(0, "float32"), (1,)),))
    link_and_check(kernel)


def test_unsafe_intrinsics_are_refused_before_llvm_sees_them():
    m = AMDGPU.new_module("bad")
    f = ir.Function(m, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "llvm.exp.f64")
    g = ir.Function(m, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "g")
    b = ir.IRBuilder(g.append_basic_block())
    b.ret(b.call(f, [g.args[0]]))
    with pytest.raises(RuntimeError, match="llvm.exp.f64"):
        AMDGPU.object(m)


def test_an_unresolved_call_fails_the_link():
    """``--no-undefined``: a libm call (no device libraries here) is a link error."""
    from tests.rocm.elfcheck import lld_or_skip

    lld_or_skip()
    m = AMDGPU.new_module("libm")
    f = ir.Function(m, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "expf")
    k = AMDGPU.entry(m, "k", 1, 256)
    b = ir.IRBuilder(k.append_basic_block())
    p = k.args[0]
    b.store(b.call(f, [b.load(p, typ=ir.FloatType())]), p)
    b.ret_void()
    with pytest.raises(RuntimeError, match="expf"):
        AMDGPU.code_object(m)


def row_softmax_sum(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * x)


def test_ir_target_stage_gives_amdgcn_without_a_gpu():
    x = np.ones((8, 300), np.float32)
    text = myc.ir(row_softmax_sum, x, stage="target", backend="rocm")
    assert "host program" in text and "amdgcn-amd-amdhsa--gfx90a" in text
    assert "s_barrier" in text and ".amdhsa_kernel" in text
    assert "(rocm)" in text


def test_ir_target_stage_honours_the_arch(monkeypatch):
    monkeypatch.setenv("MYC_ROCM_ARCH", "gfx1100")
    text = myc.ir(row_softmax_sum, np.ones((4, 64), np.float32), stage="target",
                  backend="rocm")
    assert "amdgcn-amd-amdhsa--gfx1100" in text and ".wavefront_size: 32" in text


def test_an_arch_llvm_does_not_know_is_a_clear_error_not_an_abort(monkeypatch):
    """LLVM aborts the process on an unknown processor: it is probed in a subprocess."""
    from myc.backends.rocm import amdgpu

    assert amdgpu.probe("gfx90a") and not amdgpu.probe("gfx9999")
    monkeypatch.setenv("MYC_ROCM_ARCH", "gfx9999:xnack+")
    with pytest.raises(myc.MycError, match="architecture 'gfx9999'.*MYC_ROCM_ARCH"):
        myc.ir(row_softmax_sum, np.ones((4, 64), np.float32), stage="target",
               backend="rocm")
