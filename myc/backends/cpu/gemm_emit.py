"""One matrix product ``C = alpha * op(A) @ op(B) + beta * C`` in generated host code, for
the JIT's native programs (``host_gemm``, which batches products as ``np.matmul``
broadcasts) and for AOT libraries (``aot_codegen``).  How it is computed is the policy:

* :class:`Blas` (the JIT, float32/float64) -- NumPy's bundled OpenBLAS called from the
  machine code, in row blocks on myc's threads where BLAS can be made single-threaded
  per thread (``blas_threads``);
* :class:`Blocked` (AOT libraries, which call no BLAS; and the JIT's int64 products, which
  no BLAS has) -- our own cache-blocked loop nest, one internal function per dtype and
  variant, emitted the first time a module needs it.  Integer arithmetic wraps around as
  NumPy's integer matmul does; every element of C sums its products in order of the
  depth index, so an integer result is NumPy's bit for bit.

Matrices are row-major and contiguous; a transposed operand (``ta``, ``tb``) is the
matrix stored with its axes swapped (GEMM's transpose flag).  Sizes are Python ints when
known as the code is built, else ``ir.Value``.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu import blas_threads, kernel_calls
from myc.backends.cpu.codegen import counted_loop
from myc.backends.cpu.emit import F64, I32, I64, PTR, Count, Emitter, i64, is_float, note_trips

GEMM_BLOCK = (64, 128, 256)  # rows of A, depth, columns of B per block


class Blocked:
    """The policy of the cache-blocked loop nest (:func:`blocked_function`)."""

    def product(self, b: ir.IRBuilder, ty: ir.Type, pa: ir.Value, pb: ir.Value,
                dst: ir.Value, rows: Count, cols: Count, depth: Count, ta: bool = False,
                tb: bool = False, alpha: float = 1.0, beta: float = 0.0,
                threaded: bool = False) -> None:
        """``dst[rows, cols] = alpha * op(pa) @ op(pb) + beta * dst`` (``beta`` 0 or 1;
        ``alpha`` other than 1 for floats only).  ``threaded`` is BLAS's: ignored."""
        acc = beta != 0.0
        assert beta in (0.0, 1.0) and (alpha == 1.0 or is_float(ty))
        fn = blocked_function(b.module, ty, acc, ta, tb)
        args = [pa, pb, dst, i64(rows), i64(cols), i64(depth)]
        if acc:
            args.append(ir.Constant(ty, alpha))
        if all(isinstance(x, int) for x in (rows, cols, depth)):
            # the nest's iterations, for how hard LLVM works (``emit.loop_work``)
            note_trips(b.function, rows * cols * depth + (0 if acc else rows * cols))
        else:
            note_trips(b.function, None)
        b.call(fn, args)


def blocked_function(module: ir.Module, ty: ir.Type, accumulate: bool = False,
                     ta: bool = False, tb: bool = False) -> ir.Function:
    """``gemm(A, B, C, M, N, K)``: ``C = op(A) @ op(B)`` (``M x K`` times ``K x N``),
    blocked for the cache; the innermost loop runs along a row of B and C, so it
    vectorizes (``B`` not transposed).  With ``accumulate``, ``gemm(A, B, C, M, N, K,
    alpha)``: ``C += alpha * op(A) @ op(B)`` (a sum of products, ``myc.opt.products``;
    ``alpha`` scales each element of A as it is read)."""
    dtype = {"float": "float32", "double": "float64"}.get(str(ty), str(ty))
    name = f"myc.blocked_gemm.{dtype}" + "".join(
        tag for tag, on in ((".acc", accumulate), (".ta", ta), (".tb", tb)) if on)
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    flt = is_float(ty)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [
        PTR, PTR, PTR, I64, I64, I64, *((ty,) if accumulate else ())]), name)
    fn.linkage = "internal"
    for a in fn.args[:3]:
        a.add_attribute("noalias")
    A, B, C, M, N, K = fn.args[:6]
    alpha = fn.args[6] if accumulate else None
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    e = Emitter(b)
    if not accumulate:
        kernel_calls.fill(b, C, ty, 0, b.mul(M, N))
    mb, kb, nb = (ir.Constant(I64, x) for x in GEMM_BLOCK)
    zero = ir.Constant(I64, 0)

    def nblocks(total, blk):
        return b.udiv(b.add(total, b.sub(blk, ir.Constant(I64, 1))), blk)

    def span(blk_i, blk, total):
        lo = b.mul(blk_i, blk)
        hi = b.add(lo, blk)
        return lo, b.select(b.icmp_signed("<", hi, total), hi, total)

    def load(base, off):
        return b.load(b.gep(base, [off], source_etype=ty), typ=ty)

    def i_blocks(ib, _):
        ilo, ihi = span(ib, mb, M)

        def k_blocks(kbi, _):
            klo, khi = span(kbi, kb, K)

            def j_blocks(jb, _):
                jlo, jhi = span(jb, nb, N)

                def rows(i, _):
                    crow = b.gep(C, [b.mul(i, N)], source_etype=ty)

                    def depth(k, _):
                        a = load(A, b.add(b.mul(k, M), i) if ta else b.add(b.mul(i, K), k))
                        if alpha is not None:
                            a = b.fmul(a, alpha)

                        def cols(j, _):
                            cp = b.gep(crow, [j], source_etype=ty)
                            bv = load(B, b.add(b.mul(j, K), k) if tb else b.add(b.mul(k, N), j))
                            c = b.load(cp, typ=ty)
                            b.store(b.fadd(c, b.fmul(a, bv)) if flt else
                                    b.add(c, b.mul(a, bv)), cp)
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


def blas_symbol(dtype: str) -> tuple[str, int] | None:
    """NumPy's own CBLAS GEMM (its bundled OpenBLAS, 64-bit ints): name and address."""
    name = {"float32": "scipy_cblas_sgemm64_", "float64": "scipy_cblas_dgemm64_"}.get(dtype)
    addr = None if name is None else blas_threads.openblas_address(name)
    return None if addr is None else (name, addr)


class Blas:
    """The policy of CBLAS GEMM from NumPy's OpenBLAS (float32/float64, static sizes): the
    symbols a module calls go into ``symbols`` (name -> address, bound when it loads);
    a ``threaded`` product runs in row blocks on up to ``nthreads`` of myc's threads
    (stack arrays in ``entry``)."""

    def __init__(self, symbols: dict, entry: ir.Block | None, nthreads: int):
        self.symbols, self.entry, self.nthreads = symbols, entry, nthreads

    def product(self, b: ir.IRBuilder, ty: ir.Type, pa: ir.Value, pb: ir.Value,
                dst: ir.Value, rows: int, cols: int, depth: int, ta: bool = False,
                tb: bool = False, alpha: float = 1.0, beta: float = 0.0,
                threaded: bool = False) -> None:
        """As :meth:`Blocked.product`; ``threaded``: in row blocks on myc's threads
        when OpenBLAS can be made single-threaded per thread."""
        name, addr = blas_symbol("float64" if ty == F64 else "float32")
        fn = b.module.globals.get(name)
        if fn is None:
            fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), [
                I32, I32, I32, I64, I64, I64, ty, PTR, I64, PTR, I64, ty, PTR, I64]), name)
            self.symbols[name] = addr
        # row-major (101); 111: as stored, 112: transposed
        flags = [ir.Constant(I32, v) for v in (101, 112 if ta else 111, 112 if tb else 111)]
        lda = rows if ta else depth
        ldb = depth if tb else cols
        if threaded and self.entry is not None and blas_threads.set_local_address() is not None:
            blas_threads.threaded_gemm(b, self.entry, self.symbols, fn, flags, ty, ty, rows,
                                       cols, depth, pa, 1 if ta else depth, lda, pb, ldb, dst,
                                       self.nthreads, alpha, beta)
            return
        c = ir.Constant
        b.call(fn, [*flags, c(I64, rows), c(I64, cols), c(I64, depth), c(ty, alpha), pa,
                    c(I64, lda), pb, c(I64, ldb), c(ty, beta), dst, c(I64, cols)])
