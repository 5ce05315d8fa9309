"""Host operations emitted into native programs (``loopgen.py``): kernels fanned out over
threads, indexing (views copied out, gathers) and their gradients (scatters), fills.

Everything here is static: shapes, strides and the chunks of a parallel range are known
when the program is built, so they are constants in the code.

Threads: a kernel whose parallel range is big enough is split into the chunks the
Python runtime uses (``threads.chunks``), and the program hands them to myc's one pool of
worker threads (``threads.py``: a call of ``myc_pool_run``, which returns once every
chunk is done); so do GEMM row blocks (``blas_threads.py``).  Outputs that several
chunks reduce into (``OutPlan.shared``) get one partial buffer per chunk, combined
after the call, as the Python runtime does with NumPy.
"""

from __future__ import annotations

import hashlib
from math import prod
from typing import Any

import numpy as np
from llvmlite import ir

from myc.backends.cpu import threads as threads_mod
from myc.backends.cpu.emit import I8, I32, I64, PTR, at_entry, counted, is_float, note_trips  # noqa: F401 - callers name native_ops'


def declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    """The function ``name`` of ``module``, declared on first use."""
    fn = module.globals.get(name)
    return fn if fn is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def field_ptr(b: ir.IRBuilder, struct: ir.Value, ty: ir.Type, k: int) -> ir.Value:
    """A pointer to field ``k`` of the ``ty`` struct at ``struct``."""
    f = b.gep(struct, [ir.Constant(I64, 0), ir.Constant(I32, k)], source_etype=ty)
    f.type = PTR  # opaque, like every pointer here
    return f


def parallel_call(b: ir.IRBuilder, entry: ir.Block, kernel: ir.Function,
                  chunks: list[tuple[int, int]], bufs: list[ir.Value],
                  threads: int | None = None) -> None:
    """Run ``kernel(bufs[c], begin_c, end_c)`` for every chunk ``c`` on up to ``threads``
    threads (default one per chunk) of myc's pool, which claim chunks as they free up:
    when another process holds a core, the thread sharing it runs fewer chunks and the
    call slows in proportion.  Returns once all are done."""
    module = b.module
    n = len(chunks)
    if n == 1:
        b.call(kernel, [bufs[0], ir.Constant(I64, chunks[0][0]), ir.Constant(I64, chunks[0][1])])
        return
    table = ir.ArrayType(I64, 2 * n)
    name = "myc.chunks." + hashlib.sha256(repr(chunks).encode()).hexdigest()[:16]
    bounds = module.globals.get(name)
    if bounds is None:  # the chunk table: a constant (the same chunks share it)
        bounds = ir.GlobalVariable(module, table, name)
        bounds.initializer = ir.Constant(table, [x for c in chunks for x in c])
        bounds.global_constant = True
        bounds.linkage = "private"
    with at_entry(b, entry):
        bufp = b.alloca(PTR, size=ir.Constant(I64, n))
    for c in range(n):
        b.store(bufs[c], b.gep(bufp, [ir.Constant(I64, c)], source_etype=PTR))
    threads_mod.pool_call(b, entry, kernel, bufp, bounds, n,
                          n if threads is None else min(threads, n))


def combine(b: ir.IRBuilder, out: ir.Value, partials: ir.Value, n: int, count: int,
            op: str, ty: ir.Type) -> None:
    """``out[j] = op(partials[0][j], ..., partials[n-1][j])``."""
    def body(j):
        acc = b.load(b.gep(partials, [j], source_etype=ty), typ=ty)
        for c in range(1, n):
            at = b.add(j, ir.Constant(I64, c * count))
            v = b.load(b.gep(partials, [at], source_etype=ty), typ=ty)
            acc = reduce_op(b, op, acc, v, ty)
        b.store(acc, b.gep(out, [j], source_etype=ty))

    counted(b, count, body, "combine")


def reduce_op(b: ir.IRBuilder, op: str, x, y, ty: ir.Type):
    if ty == I8:  # bools, one byte each
        return b.or_(x, y) if op == "max" else b.and_(x, y) if op == "min" else b.add(x, y)
    if op == "sum":
        return b.fadd(x, y) if is_float(ty) else b.add(x, y)
    name = {("max", True): "llvm.maximum", ("min", True): "llvm.minimum",
            ("max", False): "llvm.smax", ("min", False): "llvm.smin"}[op, is_float(ty)]
    suffix = {"float": "f32", "double": "f64"}.get(str(ty), "i64")
    fn = declare(b.module, f"{name}.{suffix}", ty, [ty, ty])
    return b.call(fn, [x, y])


def scale(b: ir.IRBuilder, ptr: ir.Value, ty: ir.Type, count: int, div: float) -> None:
    """``ptr[:count] /= div`` (a mean over an array result)."""
    def body(j):
        q = b.gep(ptr, [j], source_etype=ty)
        b.store(b.fdiv(b.load(q, typ=ty), ir.Constant(ty, float(div))), q)

    counted(b, count, body, "mean")


def fill(b: ir.IRBuilder, ptr: ir.Value, ty: ir.Type, value: Any, count: int) -> None:
    """``count`` elements of type ``ty`` at ``ptr`` set to ``value``.  Zeros are one
    ``llvm.memset`` (as fast at every optimization level, and no element loop counted
    against compiling a program light: ``machine_code.compiled_light``)."""
    v = ir.Constant(ty, float(value) if is_float(ty) else int(value))
    if count == 1:
        b.store(v, ptr)
        return
    bits = getattr(ty, "width", None) or {"float": 32, "double": 64, "half": 16}.get(str(ty))
    if count > 1 and bits and bits % 8 == 0 and value == 0 and not np.signbit(value):
        name = "llvm.memset.p0.i64"
        fn = b.module.globals.get(name)
        if fn is None:
            args = [PTR, I8, I64, ir.IntType(1)]
            fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), args), name)
        b.call(fn, [ptr, ir.Constant(I8, 0), ir.Constant(I64, count * bits // 8),
                    ir.Constant(ir.IntType(1), 0)])
        return

    def body(j):
        b.store(v, b.gep(ptr, [j], source_etype=ty))

    counted(b, count, body, "fill")


def wrapped_index(b: ir.IRBuilder, i: ir.Value, size: int, bail_if) -> ir.Value:
    """Index ``i`` into a dimension of ``size``, counted from the end when negative; out
    of range (``bail_if`` the condition) the host runner raises Python's IndexError.  A
    constant index is wrapped and checked here, at compile time: no code (an unrolled
    loop's ``coeffs[k]`` makes hundreds)."""
    if isinstance(i, ir.Constant) and isinstance(i.constant, int):
        k = i.constant + size if i.constant < 0 else i.constant
        if 0 <= k < size:
            return ir.Constant(I64, k)
        bail_if(ir.Constant(ir.IntType(1), 1))
        return ir.Constant(I64, 0)
    n = ir.Constant(I64, size)
    i = b.select(b.icmp_signed("<", i, ir.Constant(I64, 0)), b.add(i, n), i)
    bail_if(b.icmp_unsigned(">=", i, n))  # negative ones too, after the wrap
    return i


# -- indexing ---------------------------------------------------------------------------
def basic_view(shape: tuple[int, ...], index: Any) -> tuple[int, tuple, tuple] | None:
    """``(offset, shape, strides)`` in elements of ``x[index]`` for a C-contiguous ``x``
    of ``shape`` and a basic (view) index, or ``None`` when the index is not basic."""
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if not (p is None or p is Ellipsis or isinstance(p, slice) or
                (isinstance(p, (int, np.integer)) and not isinstance(p, bool))):
            return None
    c_strides, acc = [], 1
    for d in reversed(shape):
        c_strides.append(acc)
        acc *= max(d, 1)
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=shape,
                                            strides=tuple(reversed(c_strides)))
    if not any(p is Ellipsis for p in parts):
        parts = (*parts, Ellipsis)  # a full integer index then gives a 0-d view, not a scalar
    try:
        view = dummy[parts]
    except (IndexError, TypeError, ValueError):
        return None
    if not isinstance(view, np.ndarray) or (view.size and not (
            0 <= view.__array_interface__["data"][0] - dummy.__array_interface__["data"][0]
            < max(prod(shape), 1))):
        return None
    offset = view.__array_interface__["data"][0] - dummy.__array_interface__["data"][0]
    return offset, view.shape, view.strides


def strided(b: ir.IRBuilder, ty: ir.Type, contiguous: ir.Value, base: ir.Value,
            offset: int, shape: tuple, strides: tuple, store: bool) -> None:
    """Copy between a contiguous array and the strided view ``base[offset + i.strides]``
    (``store``: contiguous -> view; else view -> contiguous)."""
    def nest(d: int, src_off: ir.Value, flat: ir.Value) -> None:
        if d == len(shape):
            view_ptr = b.gep(base, [src_off], source_etype=ty)
            flat_ptr = b.gep(contiguous, [flat], source_etype=ty)
            if store:
                b.store(b.load(flat_ptr, typ=ty), view_ptr)
            else:
                b.store(b.load(view_ptr, typ=ty), flat_ptr)
            return
        inner = prod(shape[d + 1:])

        def body(i):
            nest(d + 1, b.add(src_off, b.mul(i, ir.Constant(I64, strides[d]))),
                 b.add(flat, b.mul(i, ir.Constant(I64, inner))))

        counted(b, shape[d], body, f"ix{d}")

    nest(0, ir.Constant(I64, offset), ir.Constant(I64, 0))


def gather(b: ir.IRBuilder, ty: ir.Type, out: ir.Value, x: ir.Value, xshape: tuple,
           idx: list[ir.Value], length: int, bail_if, scatter: bool) -> None:
    """``out[i, ...] = x[idx0[i], idx1[i], ..., ...]`` for 1-d int64 index arrays over the
    first ``len(idx)`` axes (``scatter``: ``x[...] += out[i, ...]`` instead, in order, so
    repeated indices accumulate like ``np.add.at``).  An index out of range leaves
    (``bail_if``): Python raises the IndexError."""
    k = len(idx)
    row = prod(xshape[k:])
    c_strides, acc = [], 1
    for d in reversed(xshape):
        c_strides.append(acc)
        acc *= d
    c_strides.reverse()

    def body(i):
        off = ir.Constant(I64, 0)
        for j in range(k):
            v = wrapped_index(b, b.load(b.gep(idx[j], [i], source_etype=I64), typ=I64),
                              xshape[j], bail_if)
            off = b.add(off, b.mul(v, ir.Constant(I64, c_strides[j])))
        base_out = b.mul(i, ir.Constant(I64, row))

        def copy(r):
            xp = b.gep(x, [b.add(off, r)], source_etype=ty)
            op_ = b.gep(out, [b.add(base_out, r)], source_etype=ty)
            if scatter:
                b.store(b.fadd(b.load(xp, typ=ty), b.load(op_, typ=ty)), xp)
            else:
                b.store(b.load(xp, typ=ty), op_)

        if row == 1:
            copy(ir.Constant(I64, 0))
        else:
            counted(b, row, copy, "row")

    counted(b, length, body, "gather")



# -- integer matrix products ------------------------------------------------------------
def int_matmul(b: ir.IRBuilder, dst: ir.Value, oo: ir.Value, pa: ir.Value, ao: ir.Value,
               ra: int, ca: int, pb: ir.Value, bo: ir.Value, rb: int, cb: int,
               n: int, k: int, m: int) -> None:
    """``dst[oo + i*m + j] = sum_p a[ao + i*ra + p*ca] * b[bo + p*rb + j*cb]`` in int64,
    wrapping around on overflow as NumPy's integer matmul does (no BLAS has integer
    GEMM).  Each output row is accumulated over ``p`` then ``j`` (the inner loop walks a
    row of ``b`` and of the result, which vectorizes); integer addition wraps the same in
    any order, so the result is NumPy's bit for bit."""
    c = ir.Constant

    def at(base, off):
        return b.gep(base, [off], source_etype=I64)

    def row(i):
        orow = b.add(oo, b.mul(i, c(I64, m)))
        counted(b, m, lambda j: b.store(c(I64, 0), at(dst, b.add(orow, j))), "imm.zero")
        arow = b.add(ao, b.mul(i, c(I64, ra)))

        def inner(p):
            av = b.load(at(pa, b.add(arow, b.mul(p, c(I64, ca)))), typ=I64)
            brow = b.add(bo, b.mul(p, c(I64, rb)))

            def col(j):
                q = at(dst, b.add(orow, j))
                bv = b.load(at(pb, b.add(brow, b.mul(j, c(I64, cb)))), typ=I64)
                b.store(b.add(b.load(q, typ=I64), b.mul(av, bv)), q)

            counted(b, m, col, "imm.j")

        counted(b, k, inner, "imm.p")

    counted(b, n, row, "imm.i")
