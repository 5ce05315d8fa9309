"""Host operations emitted into native programs (``loopgen.py``): indexing (where a basic
index views an array, gathers) and their gradients (scatters).  Kernel calls, fills and
the combining of partials are ``kernel_calls``', strided copies (a view copied out or
back) ``strided_copy``'s: AOT libraries use them too.

Everything here is static: shapes and strides are known when the program is built, so
they are constants in the code.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from llvmlite import ir

from myc.backends.cpu.emit import I8, I32, I64, PTR, at_entry, counted, is_float, note_trips  # noqa: F401 - callers name native_ops'


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
