"""The GEMM of ahead-of-time libraries: ``C = A @ B`` as our own cache-blocked loop nest.

A library calls no BLAS, so every :class:`~myc.lower.hostplan.Gemm` runs
this loop nest: one internal function per dtype, emitted the first time a program
needs it.  It is kept apart from the entry point because it is self-contained numeric
code whose blocking is tuned on its own.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu.codegen import ITEMSIZE, counted_loop
from myc.backends.cpu.emit import F32, F64, I32, I64, PTR, Emitter

GEMM_BLOCK = (64, 128, 256)  # rows of A, depth, columns of B per block


class GemmMixin:
    """:class:`~myc.backends.cpu.aot_codegen.HostGen`'s GEMM; uses its module ``m``,
    ``memset`` and the per-dtype cache ``gemm_fns``."""

    def gemm_fn(self, dtype: str, accumulate: bool = False) -> ir.Function:
        """``gemm(A, B, C, M, N, K)``: ``C = A @ B``, row-major, blocked for the cache;
        the innermost loop runs along a row of B and C, so it vectorizes.  With
        ``accumulate``, ``gemm(A, B, C, M, N, K, alpha)``: ``C += alpha * A @ B`` (a sum of
        products, ``myc.opt.products``; ``alpha`` scales each element of A as it is read)."""
        fn = self.gemm_fns.get((dtype, accumulate))
        if fn is not None:
            return fn
        ty = {"float32": F32, "float64": F64}[dtype]
        size = ITEMSIZE[dtype]
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [
            PTR, PTR, PTR, I64, I64, I64, *((ty,) if accumulate else ())]),
            f"myc.gemm{'_acc' if accumulate else ''}.{dtype}")
        fn.linkage = "internal"
        for a in fn.args[:3]:
            a.add_attribute("noalias")
        self.gemm_fns[(dtype, accumulate)] = fn
        A, B, C, M, N, K = fn.args[:6]
        alpha = fn.args[6] if accumulate else None
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        e = Emitter(b)
        if not accumulate:
            b.call(self.memset, [C, ir.Constant(I32, 0),
                                 b.mul(b.mul(M, N), ir.Constant(I64, size))])
        mb, kb, nb = (ir.Constant(I64, x) for x in GEMM_BLOCK)
        zero = ir.Constant(I64, 0)

        def nblocks(total, blk):
            return b.udiv(b.add(total, b.sub(blk, ir.Constant(I64, 1))), blk)

        def span(blk_i, blk, total):
            lo = b.mul(blk_i, blk)
            hi = b.add(lo, blk)
            return lo, b.select(b.icmp_signed("<", hi, total), hi, total)

        def i_blocks(ib, _):
            ilo, ihi = span(ib, mb, M)

            def k_blocks(kbi, _):
                klo, khi = span(kbi, kb, K)

                def j_blocks(jb, _):
                    jlo, jhi = span(jb, nb, N)

                    def rows(i, _):
                        arow = b.mul(i, K)
                        crow = b.gep(C, [b.mul(i, N)], source_etype=ty)

                        def depth(k, _):
                            a = b.load(b.gep(A, [b.add(arow, k)], source_etype=ty), typ=ty)
                            if alpha is not None:
                                a = b.fmul(a, alpha)
                            brow = b.gep(B, [b.mul(k, N)], source_etype=ty)

                            def cols(j, _):
                                cp = b.gep(crow, [j], source_etype=ty)
                                bv = b.load(b.gep(brow, [j], source_etype=ty), typ=ty)
                                c = b.load(cp, typ=ty)
                                b.store(b.fadd(c, b.fmul(a, bv)), cp)
                                return []

                            counted_loop(e, jlo, jhi, [], cols, "j")
                            return []

                        counted_loop(e, klo, khi, [], depth, "k")
                        return []

                    counted_loop(e, ilo, ihi, [], rows, "i")
                    return []

                counted_loop(e, zero, nblocks(N, nb), [], j_blocks, "jb")
                return []

            counted_loop(e, zero, nblocks(K, kb), [], k_blocks, "kb")
            return []

        counted_loop(e, zero, nblocks(M, mb), [], i_blocks, "ib")
        b.ret_void()
        return fn
