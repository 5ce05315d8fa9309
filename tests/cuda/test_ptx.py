"""PTX for the GPU: random fusion groups and every op (transcendentals included) in
float32/float64/int64/bool lower to PTX that ``ptxas`` assembles for sm_75, sm_80 and
sm_90 (skipped where ``ptxas`` is not installed); no intrinsic NVPTX cannot lower is
ever emitted (LLVM would abort the process)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings

from myc.backends.cuda import codegen
from myc.backends.cuda.ptx import new_module, to_ptx
from myc.backends.cuda.runtime import kernel_ptx
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

ARCHS = ("sm_75", "sm_80", "sm_90")


def _ptxas() -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    for cand in sorted(glob.glob("/usr/local/cuda*/bin/ptxas")):
        return cand
    return None


def ptxas_or_skip() -> str:
    path = _ptxas()
    if path is None:
        pytest.skip("ptxas not found (install the CUDA toolkit to assemble PTX)")
    return path


def assemble(kernel: Kernel, archs=ARCHS) -> str:
    """The kernel's PTX, assembled by ptxas for ``archs`` (AssertionError with its log)."""
    ptxas = ptxas_or_skip()
    ptx, plan = kernel_ptx(kernel)
    for p in plan.passes:
        assert f".entry {p.name}(" in ptx, p.name
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        for arch in archs:
            r = subprocess.run([ptxas, f"-arch={arch}", src, "-o", os.path.join(d, "k.cubin")],
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, f"ptxas -arch={arch}: {r.stderr}\n{kernel.format()}"
    return ptx


@settings(max_examples=25, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_assemble(case):
    kernel, _ = case
    assemble(kernel)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_every_op_assembles(dtype):
    x, y = Load(0, dtype), Load(1, dtype)
    exprs = [Unary(op, x) for op, kinds in UNARY_OPS.items() if kind(dtype) in kinds]
    exprs += [Binary(op, x, y) for op, kinds in BINARY_OPS.items() if kind(dtype) in kinds]
    outs = [Store(i, e) for i, e in enumerate(exprs)]
    red = [op for op in ("sum", "max", "min") if not (op == "sum" and dtype == "bool")]
    outs += [Reduce(len(outs) + i, op, x, (1,)) for i, op in enumerate(red)]
    outs.append(Store(len(outs), RowReduce(red[0], x)))
    kernel = Kernel("ops", (8, 300), (Buffer("x", dtype, (8, 300)),
                                      Buffer("y", dtype, (8, 300))), tuple(outs))
    ptx = assemble(kernel)
    assert "bar.sync" in ptx or "barrier" in ptx  # the block reductions synchronize
    assert ".target sm_75" in ptx


def test_split_reduction_assembles():
    n = codegen.SPLIT_MIN * 2
    kernel = Kernel("long", (2, n), (Buffer("x", "float32", (2, n)),),
                    (Reduce(0, "sum", Load(0, "float32"), (1,)),))
    ptx = assemble(kernel)
    assert "long_fin0" in ptx


def test_unsafe_intrinsics_are_refused_before_llvm_sees_them():
    from llvmlite import ir

    m = new_module("bad")
    f = ir.Function(m, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "llvm.sin.f32")
    g = ir.Function(m, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "g")
    b = ir.IRBuilder(g.append_basic_block())
    b.ret(b.call(f, [g.args[0]]))
    with pytest.raises(RuntimeError, match="llvm.sin.f32"):
        to_ptx(m)


def row_softmax_sum(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * x)


def test_ir_target_stage_gives_the_ptx_without_a_gpu():
    import myc

    x = np.ones((8, 300), np.float32)
    text = myc.ir(row_softmax_sum, x, stage="target", backend="cuda")
    assert "host program" in text and ".target sm_75" in text and ".entry" in text
    with pytest.raises(myc.MycError, match="stage='target'"):
        myc.ir(row_softmax_sum, x, stage="target", backend="interp")
