"""Codegen without running anything: the module verifies, the loop plan, and the
optimized IR is vectorized with no calls left in it."""

import re

import llvmlite.binding as llvm
import pytest

from myc.backends.cpu import assembly, jit, llvm_ir
from myc.backends.cpu.codegen import codegen
from myc.backends.cpu.plan import make_plan
from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Reduce, Store, Unary

F32 = "float32"
X = Load(0, F32)
TRANSCENDENTAL = ["exp", "log", "log1p", "expm1", "tanh", "sigmoid", "sin", "cos", "tan",
                  "arctan"]


def vector_types(text: str) -> set[str]:
    return set(re.findall(r"<(\d+) x (float|double|i64|i1|i8|i32)>", text))


def calls(text: str) -> set[str]:
    """Functions the optimized IR still calls, intrinsics aside (and a trig kernel's
    rerun of its own full pass, ``@<entry>.body``, kept out of line)."""
    return {f for f in re.findall(r"call [^@]*@([\w.]+)", text)
            if not f.startswith("llvm.") and not f.endswith(".body")}


def kernel_of(*outs, n=4096, dtype=F32):
    return Kernel("k", (n,), (Buffer("x", dtype, (n,)), Buffer("y", dtype, (n,))), outs)


def test_module_verifies_and_has_the_entry_point():
    k = kernel_of(Store(0, Binary("add", X, Load(1, F32))))
    module, _ = codegen(k)
    text = str(module)
    assert re.search(r"define void @\"?myc_kernel_k\"?\(ptr", text) and "noalias" in text
    mod = llvm.parse_assembly(text)
    mod.verify()


def test_trig_kernels_get_a_fast_pass_and_a_rerun():
    """Only kernels with sin/cos/tan get ``.fast`` (and ``.reset`` where an output is
    read before written); the entry keeps its signature and calls the full body only
    when the fast pass asks."""
    def functions(*outs, shape=(4096,)):
        k = Kernel("k", shape, (Buffer("x", F32, shape),), outs)
        text = str(codegen(k)[0])
        assert re.search(r'define void @"?myc_kernel_k"?\(ptr [^,]+, i64 [^,]+, i64 [^,)]+\)',
                         text)
        return set(re.findall(r"define [^@]*@\"?myc_kernel_k\.(\w+)", text))

    assert functions(Store(0, Unary("exp", X))) == {"body"}
    assert functions(Store(0, Unary("cos", X))) == {"body", "fast"}
    assert functions(Reduce(0, "sum", Unary("tan", X), (0,))) == {"body", "fast"}
    assert functions(Reduce(0, "max", Unary("sin", X), (0,)), shape=(8, 512)) == \
        {"body", "fast", "reset"}


def test_bad_module_raises_instead_of_aborting():
    with pytest.raises(RuntimeError):
        jit.parse("define void @f() {\n  ret i32 0\n}", jit.target_machine())


def test_elementwise_kernel_vectorizes_with_no_calls():
    val = Binary("mul", Unary("tanh", X), Unary("sigmoid", Load(1, F32)))
    for op in TRANSCENDENTAL:
        val = Binary("add", val, Unary(op, X))
    val = Binary("add", val, Binary("pow", X, Load(1, F32)))
    val = Binary("add", val, Binary("arctan2", X, Load(1, F32)))
    text = jit.optimized_ir(codegen(kernel_of(Store(0, val)))[0])
    widths = {int(w) for w, t in vector_types(text) if t == "float"}
    assert max(widths) >= 4, widths
    assert calls(text) == set(), calls(text)  # no libm: transcendentals are inline IR


@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_reduction_vectorizes(op):
    val = Binary("mul", Unary("exp", X), Load(1, F32))
    text = jit.optimized_ir(codegen(kernel_of(Reduce(0, op, val, (0,))))[0])
    assert any(int(w) >= 4 for w, t in vector_types(text) if t == "float"), text[:2000]
    assert calls(text) == set()


def test_float64_and_int_kernels_vectorize():
    x = Load(0, "float64")
    text = jit.optimized_ir(codegen(kernel_of(
        Store(0, Unary("log", x)), Reduce(1, "sum", Unary("exp", x), (0,)),
        dtype="float64"))[0])
    assert any(t == "double" for _, t in vector_types(text))
    i = Load(0, "int64")
    text = jit.optimized_ir(codegen(kernel_of(
        Reduce(0, "sum", Binary("mul", i, i), (0,)), dtype="int64"))[0])
    assert any(t == "i64" for _, t in vector_types(text))


def test_host_vectors_are_wide():
    """On this host (AVX-512 or AVX2) float32 vectors are at least 8 lanes."""
    cpu, features = jit.host()
    if "+avx2" not in features:
        pytest.skip(f"{cpu} has no AVX2")
    k = kernel_of(Store(0, Unary("exp", X)))
    assert any(int(w) >= 8 for w, t in vector_types(llvm_ir(k)) if t == "float")
    asm = assembly(k)
    assert "ymm" in asm or "zmm" in asm


def test_plan_collapses_contiguous_axes():
    def plan(shape, bufs, outs):
        return make_plan(Kernel("p", shape, tuple(Buffer(f"b{i}", F32, s)
                                                   for i, s in enumerate(bufs)), outs))

    # elementwise over a contiguous 3-d domain: one flat axis
    p = plan((4, 5, 6), [(4, 5, 6)], (Store(0, X),))
    assert p.dims == (120,) and p.loads[0][1] == (1,)
    # a row vector broadcast over rows keeps two axes; size-1 axes vanish
    p = plan((4, 1, 6), [(6,)], (Store(0, X),))
    assert p.dims == (4, 6) and p.loads[0][1] == (0, 1)
    # reducing the last two axes: they merge, reduced in registers, rows disjoint
    p = plan((4, 5, 6), [(4, 5, 6)], (Reduce(0, "sum", X, (1, 2)),))
    assert p.dims == (4, 30)
    assert (p.outs[0].mode, p.outs[0].init, p.outs[0].shared) == ("inner", False, False)
    # reducing the first axis: updated in memory, chunks need partials
    p = plan((4, 5, 6), [(4, 5, 6)], (Reduce(0, "max", X, (0,), True),))
    assert p.dims == (4, 30) and p.outs[0].strides == (0, 1)
    assert (p.outs[0].mode, p.outs[0].init, p.outs[0].shared) == ("outer", True, True)
    # a full reduction of a 1-axis plan: one partial per chunk
    p = plan((8,), [(8,)], (Reduce(0, "sum", X, (0,)),))
    assert (p.outs[0].mode, p.outs[0].init, p.outs[0].shared) == ("inner", False, True)
    # reducing only size-1 axes is a store; a 0-d domain is one element
    p = plan((3, 1), [(3, 1)], (Reduce(0, "sum", X, (1,)),))
    assert p.dims == (3,) and p.outs[0].mode == "store"
    p = plan((), [()], (Store(0, Binary("add", X, Const(1.0, F32))),))
    assert p.dims == (1,) and p.extent == 1
