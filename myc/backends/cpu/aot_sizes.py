"""Sizes in an ahead-of-time library's entry point: constants, or computed at run time.

With dynamic sizes (``myc/aot/dynamic.py``) a shape, a byte count or a scalar such as
the count a ``mean`` divides by is a polynomial (:class:`~myc.lower.dims.Dim`,
:class:`~myc.lower.dims.SymFloat`) in the sizes the inputs' shapes bound
(``HostGen.dims``); these helpers turn one into an LLVM value, and a static size into
a constant, so the rest of the emitter treats both alike.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu.codegen import MEMTYPE, emit_dim, emit_symfloat
from myc.backends.cpu.emit import I64, PTR, const
from myc.lower.dims import Dim, SymFloat


class SizesMixin:
    """:class:`~myc.backends.cpu.aot_codegen.HostGen`'s sizes; uses its builder ``b``,
    the bound sizes ``dims`` and ``i64_array``."""

    def i64(self, x) -> ir.Value:
        """A size: a constant, or computed from the dynamic sizes the inputs bound."""
        if isinstance(x, Dim):
            return emit_dim(self.b, x, self.dims)
        return ir.Constant(I64, int(x))

    def size(self, x) -> int | ir.Value:
        """A size as the shared emitters take one (``emit.Count``): an int when static,
        else computed."""
        return self.i64(x) if isinstance(x, Dim) else int(x)

    def size_value(self, x, dtype: str) -> ir.Value:
        """``x`` (a Dim or SymFloat) computed as a ``dtype`` scalar."""
        b = self.b
        ty = MEMTYPE[dtype]
        if isinstance(x, SymFloat):
            val = emit_symfloat(b, x, self.dims)
            return val if dtype == "float64" else b.fptrunc(val, ty)
        if isinstance(x, Dim):
            val = self.i64(x)
            return b.sitofp(val, ty) if dtype in ("float32", "float64") else val
        return const(ty, x)

    def size_scalar(self, x, dtype: str) -> ir.Value:
        """A 0-d array on the stack holding ``x`` (a Dim or SymFloat) as ``dtype``."""
        b = self.b
        slot = b.alloca(MEMTYPE[dtype])
        slot.type = PTR
        b.store(self.size_value(x, dtype), slot)
        return slot

    def sizes(self, values: list) -> ir.Value:
        """An ``i64`` array of sizes: static storage, or filled in on the stack."""
        if not any(isinstance(x, Dim) for x in values):
            return self.i64_array([int(x) for x in values])
        b = self.b
        aty = ir.ArrayType(I64, len(values))
        arr = b.alloca(aty)
        arr.type = PTR
        for i, x in enumerate(values):
            b.store(self.i64(x), b.gep(arr, [ir.Constant(I64, 0), ir.Constant(I64, i)],
                                       source_etype=aty))
        return arr
