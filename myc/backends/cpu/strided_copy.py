"""Strided copies in host programs, for the JIT's native programs and AOT libraries
alike: every copy between a contiguous buffer and a strided view of another.

The JIT copies transposes (``x.T``, ``np.transpose``, an ``mT`` not folded into a GEMM's
transpose flag), basic-index views and dynamic windows out of their source (and a
window's gradient back into it); an AOT library copies its ``Permute`` steps and the
inputs a caller passes with strides.  All of them are :func:`copy`: one nest of counted
loops over the view's shape, reading (or writing) ``view[offset + i . strides]`` and the
contiguous buffer in order.

What differs between the two is only what is known when the code is made, so it is no
policy object: a size, a stride or the offset is a Python int when static (every JIT
size, an AOT library's static sizes) and an ``ir.Value`` when read at run time (a
library's dynamic sizes, a caller's strides).  Strides count elements of the copied
type, or bytes (``in_bytes``: a caller's strides need not be multiples of the item size,
so those loads and stores assume no alignment).  Where the sizes are static, adjacent
axes that are one run in memory are merged first (a batch of matrices transposed is one
loop over the batch, then the rows and the columns).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from myc.backends.cpu.emit import I8, Count, counted, i64


def _mul(b: ir.IRBuilder, x: Count, y: Count) -> Count:
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    if isinstance(x, int) and x == 1:
        return y
    if isinstance(y, int) and y == 1:
        return x
    return b.mul(i64(x), i64(y))


def _add(b: ir.IRBuilder, x: Count, y: Count) -> Count:
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if isinstance(y, int) and y == 0:
        return x
    if isinstance(x, int) and x == 0:
        return y
    return b.add(i64(x), i64(y))


def _merged(shape: list[Count], strides: list[Count]) -> tuple[list[Count], list[Count]]:
    """``shape``/``strides`` with each static axis folded into the static axis before it
    where the two are one run in memory (``stride[d] == stride[d + 1] * shape[d + 1]``):
    the contiguous side is in order anyway, so the copy is the same with fewer loops."""
    out_shape: list[Count] = []
    out_strides: list[Count] = []
    for n, s in zip(shape, strides, strict=True):
        if out_shape and all(isinstance(x, int) for x in (n, s, out_shape[-1],
                                                           out_strides[-1])) \
                and out_strides[-1] == s * n:
            out_shape[-1] *= n
            out_strides[-1] = s
            continue
        out_shape.append(n)
        out_strides.append(s)
    return out_shape, out_strides


def copy(b: ir.IRBuilder, ty: ir.Type, contiguous: ir.Value, view: ir.Value,
         shape: list[Count] | tuple, strides: list[Count] | tuple, *, offset: Count = 0,
         store: bool = False, in_bytes: bool = False, name: str = "ix",
         broadcast: bool = False) -> None:
    """Copy between the contiguous array ``contiguous`` (``ty`` elements, C order) and the
    strided view ``view[offset + i . strides]`` of ``shape`` (``store``: contiguous ->
    view; else view -> contiguous).  ``strides`` and ``offset`` count ``ty`` elements,
    or bytes with ``in_bytes`` (then nothing is assumed aligned).  Nothing is copied
    where a size is 0; a 0-d view is one element.  ``broadcast`` (with ``store``): the
    contiguous side is one element, stored into every element of the view (a row of an
    adjoint zeroed: ``index_set(dout, t, 0.0)``)."""
    shape, strides = list(shape), list(strides)
    if not in_bytes:
        shape, strides = _merged(shape, strides)
    unit = I8 if in_bytes else ty
    align = 1 if in_bytes else None
    inner: list[Count] = [1] * len(shape)  # elements of the contiguous side per index
    for d in range(len(shape) - 2, -1, -1):
        inner[d] = _mul(b, inner[d + 1], shape[d + 1])
    if broadcast:
        inner = [0] * len(shape)

    def nest(d: int, view_off: Count, flat: Count) -> None:
        if d == len(shape):
            view_ptr = b.gep(view, [i64(view_off)], source_etype=unit)
            flat_ptr = b.gep(contiguous, [i64(flat)], source_etype=ty)
            src, dst = (flat_ptr, view_ptr) if store else (view_ptr, flat_ptr)
            b.store(b.load(src, typ=ty, align=align), dst, align=align)
            return

        def body(i: ir.Value) -> None:
            nest(d + 1, _add(b, view_off, _mul(b, i, strides[d])),
                 _add(b, flat, _mul(b, i, inner[d])))

        counted(b, shape[d], body, f"{name}{d}")

    nest(0, offset, 0)


def c_strides(b: ir.IRBuilder, shape: list[Count] | tuple) -> list[Count]:
    """The element strides of a C-contiguous array of ``shape``."""
    out: list[Count] = []
    acc: Count = 1
    for d in reversed(list(shape)):
        out.append(acc)
        acc = _mul(b, acc, d)
    return out[::-1]


def permute(b: ir.IRBuilder, ty: ir.Type, dst: ir.Value, src: ir.Value,
            src_shape: list[Count] | tuple, perm: Any, name: str = "tr") -> None:
    """``dst = np.transpose(src, perm)`` for a C-contiguous ``src`` of ``src_shape``
    (``dst`` C-contiguous): a copy reading ``src`` along its permuted strides (a
    ``hostplan.Permute`` step, the JIT's and AOT's; ``name``: its blocks')."""
    st = c_strides(b, src_shape)
    copy(b, ty, dst, src, [src_shape[a] for a in perm], [st[a] for a in perm], name=name)
