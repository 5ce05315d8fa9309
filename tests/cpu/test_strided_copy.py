"""The one strided-copy emitter of the JIT and AOT libraries (``strided_copy``), run
directly against NumPy: permutes with static sizes (where adjacent axes are merged) and
with sizes read at run time, views copied out and back, and byte strides (a caller's
non-contiguous input)."""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest
from llvmlite import ir

from myc.backends.cpu import strided_copy
from myc.backends.cpu.codegen import MEMTYPE
from myc.backends.cpu.emit import I64, PTR
from myc.backends.cpu.jit import JitModule


def _compile(emit, nargs: int):
    """A function ``void f(ptr dst, ptr src, i64 *sizes)`` whose body ``emit`` writes."""
    module = ir.Module(name="copy")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR] * nargs), "f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    emit(b, *fn.args)
    b.ret_void()
    jit = JitModule(module)
    return jit, ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)(jit.address("f"))


def _run_permute(shape: tuple, perm: tuple, dynamic: bool, dtype) -> np.ndarray:
    src = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    dst = np.full([shape[a] for a in perm], -1, dtype=dtype)
    sizes = np.array(shape or [0], np.int64)
    ty = MEMTYPE[str(np.dtype(dtype))]

    def emit(b, d, s, szs):
        dims = [b.load(b.gep(szs, [ir.Constant(I64, a)], source_etype=I64), typ=I64)
                if dynamic else n for a, n in enumerate(shape)]
        strided_copy.permute(b, ty, d, s, dims, perm)

    jit, f = _compile(emit, 3)
    f(dst.ctypes.data, src.ctypes.data, sizes.ctypes.data)
    del jit
    np.testing.assert_array_equal(dst, np.transpose(src, perm))
    return dst


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (2, 1, 3, 5), (4, 0, 3), ()])
def test_every_permutation_as_numpy(shape, dynamic):
    for perm in itertools.permutations(range(len(shape))):
        _run_permute(shape, perm, dynamic, np.float32)


def test_a_batch_of_transposes_is_one_loop_over_the_batch_and_copies_ints_exactly():
    # (2, 3, 4, 5) swapping the last two axes: the two batch axes are one run in memory
    _run_permute((2, 3, 4, 5), (0, 1, 3, 2), False, np.int64)
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR]), "g")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    strided_copy.permute(b, MEMTYPE["int64"], *fn.args, (2, 3, 4, 5), (0, 1, 3, 2))
    b.ret_void()
    loops = {blk.name for blk in fn.blocks if not blk.name.endswith(".done")} - {"entry"}
    assert loops == {"tr0", "tr1", "tr2"}, loops  # loops of 6, 5 and 4, not four loops


@pytest.mark.parametrize("store", [False, True], ids=["out", "back"])
def test_a_basic_view_copied_out_and_back(store):
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    view = x[1:, ::-2, 3]  # offset 23, shape (2, 2), element strides (20, -10)
    shape, strides = view.shape, tuple(s // 8 for s in view.strides)
    offset = (view.__array_interface__["data"][0] - x.ctypes.data) // 8
    flat = np.arange(100, 104, dtype=np.float64).reshape(2, 2)
    out = np.zeros((2, 2))
    target = x.copy()

    def emit(b, contiguous, base):
        strided_copy.copy(b, MEMTYPE["float64"], contiguous, base, shape, strides,
                          offset=offset, store=store)

    jit, f = _compile(emit, 2)
    if store:
        f(flat.ctypes.data, target.ctypes.data)
        expected = x.copy()
        expected[1:, ::-2, 3] = flat
        np.testing.assert_array_equal(target, expected)
    else:
        f(out.ctypes.data, x.ctypes.data)
        np.testing.assert_array_equal(out, view)
    del jit


def test_byte_strides_read_at_run_time():
    # a caller's non-contiguous float32 input: strides in bytes, sizes and strides loaded
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    view = base[::2, 1::3]  # (3, 3), byte strides (64, 12)
    meta = np.array([*view.shape, *view.strides], np.int64)
    out = np.zeros(view.shape, np.float32)

    def emit(b, d, s, m):
        load = [b.load(b.gep(m, [ir.Constant(I64, k)], source_etype=I64), typ=I64)
                for k in range(4)]
        strided_copy.copy(b, ir.IntType(32), d, s, load[:2], load[2:], in_bytes=True)

    jit, f = _compile(emit, 3)
    f(out.ctypes.data, view.ctypes.data, meta.ctypes.data)
    del jit
    np.testing.assert_array_equal(out, view)
