"""The C ABI of an ahead-of-time library's entry point, as emitted code.

Everything the exported function does at its boundary with the caller lives here:
``NAME_last_error``/``NAME_free``, the checks of the ``myc_array`` arguments (counts,
dtypes, ranks, shapes -- binding the dynamic sizes -- and NULL pointers), the copy of
a strided input into the arena, the hand-over of each output in a ``malloc``-ed buffer
the caller owns, and the error path: no aborts, a status code plus a message in
``NAME_last_error()``.  ``docs/aot.md`` documents the ABI and
:mod:`myc.backends.cpu.aot_header` writes its C declaration; the two must match.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu import strided_copy
from myc.backends.cpu.aot_codes import DTYPE_CODE, STATUS
from myc.backends.cpu.aot_names import helper_names
from myc.backends.cpu.emit import I8, I32, I64, PTR
from myc.lower.dims import Dim
from myc.lower.hostplan import ITEMSIZE, Value, c_strides, is_dynamic

# myc_array: data, ndim, shape, strides (bytes), dtype code
MYC_ARRAY = ir.LiteralStructType([PTR, I64, PTR, PTR, I32])


class AbiMixin:
    """:class:`~myc.backends.cpu.aot_codegen.HostGen`'s entry and exit; uses its program
    ``p``, module ``m``, builder ``b``, the C library functions it declares and its
    arena (``at``, ``get``, ``ptr_of``)."""

    def build_support(self) -> None:
        """``NAME_last_error`` and ``NAME_free``: prefixed with the entry point's name, so
        each library linked into a program keeps its own message (``aot_names.py``)."""
        names = helper_names(self.p.name)
        fn = ir.Function(self.m, ir.FunctionType(PTR, []), names["last_error"])
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(self.errbuf)
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [PTR]), names["free"])
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.call(self.free, [fn.args[0]])
        b.ret_void()

    def arg_field(self, arrays, i: int, f: int, ty) -> ir.Value:
        """Field ``f`` of ``arrays[i]``, a ``myc_array``."""
        b = self.b
        ptr = b.gep(arrays, [ir.Constant(I64, i), ir.Constant(I32, f)], source_etype=MYC_ARRAY)
        return b.load(ptr, typ=ty)

    def check_args(self, ins, nin, outs, nout) -> tuple[list, list]:
        """The argument checks, before anything is allocated; binds the dynamic sizes
        (``self.dims``).  Returns each input's data pointer and whether it is strided."""
        p, b = self.p, self.b
        field = self.arg_field
        b.store(ir.Constant(I8, 0), self.errbuf)
        ok = b.and_(b.icmp_signed("==", nin, ir.Constant(I32, len(p.inputs))),
                    b.icmp_signed("==", nout, ir.Constant(I32, len(p.outputs))))
        self.check(ok, "MYC_ERR_ARGC",
                   f"myc: {p.name}: expected n_inputs = {len(p.inputs)} and n_outputs = "
                   f"{len(p.outputs)}, got n_inputs = %d and n_outputs = %d", nin, nout)
        for arrays, what, values in ((ins, "inputs", p.inputs), (outs, "outputs", p.outputs)):
            if values:
                self.check(b.icmp_unsigned("!=", arrays, ir.Constant(PTR, None)),
                           "MYC_ERR_ARGC", f"myc: {p.name}: the {what} pointer is NULL; "
                           f"expected an array of {len(values)} myc_array")

        self.dims: dict[str, ir.Value] = {}
        data, strided = [], []
        for i, v in enumerate(p.inputs):
            where = f"myc: {p.name}: input {i} ({v.name}, expected {v.describe()})"
            dt = field(ins, i, 4, I32)
            self.check(b.icmp_signed("==", dt, ir.Constant(I32, DTYPE_CODE[v.dtype])),
                       "MYC_ERR_DTYPE", f"{where}: dtype code is %d, expected "
                       f"{DTYPE_CODE[v.dtype]}", dt)
            nd = field(ins, i, 1, I64)
            self.check(b.icmp_signed("==", nd, ir.Constant(I64, len(v.shape))),
                       "MYC_ERR_NDIM", f"{where}: ndim is %lld", nd)
            shp = field(ins, i, 2, PTR)
            if v.shape:
                self.check(b.icmp_unsigned("!=", shp, ir.Constant(PTR, None)), "MYC_ERR_NULL",
                           f"{where}: shape is NULL")
            for a, size in enumerate(v.shape):
                got = b.load(b.gep(shp, [ir.Constant(I64, a)], source_etype=I64), typ=I64)
                if isinstance(size, Dim) and str(size) not in self.dims:
                    sym = str(size)  # the first input with this size binds it
                    lo, hi = p.symbols[sym], p.max_size
                    self.check(b.and_(b.icmp_signed(">=", got, ir.Constant(I64, lo)),
                                      b.icmp_signed("<=", got, ir.Constant(I64, hi))),
                               "MYC_ERR_SHAPE", f"{where}: shape[{a}] is %lld, but {sym} must "
                               f"be between {lo} and {hi}", got)
                    self.dims[sym] = got
                    continue
                want = self.i64(size)
                self.check(b.icmp_signed("==", got, want), "MYC_ERR_SHAPE",
                           f"{where}: shape[{a}] is %lld, expected "
                           + (f"{size}" if isinstance(size, int) else f"{size} = %lld"),
                           got, *([] if isinstance(size, int) else [want]))
            ptr = field(ins, i, 0, PTR)
            if not isinstance(v.nbytes, int) or v.nbytes:
                self.check(b.icmp_unsigned("!=", ptr, ir.Constant(PTR, None)), "MYC_ERR_NULL",
                           f"{where}: data is NULL")
            data.append(ptr)
        # every size product fits (MYC_ERR_SHAPE otherwise) before any stride is read
        self.check_sizes()
        for i, v in enumerate(p.inputs):
            flag, span_bad = self.is_strided(field(ins, i, 3, PTR), v)
            self.check(b.not_(span_bad), "MYC_ERR_SHAPE",
                       f"myc: {p.name}: input {i} ({v.name}, expected {v.describe()}): its "
                       "strides reach more than 2^63 bytes from its data")
            strided.append(flag)
        return data, strided

    def take_inputs(self, ins, data: list, strided: list) -> None:
        """Each input's address (``self.ptr_of``): the caller's data, or where it is
        strided, its contiguous copy in the arena."""
        p, b = self.p, self.b
        field = self.arg_field
        ptr_of = self.ptr_of
        for i, v in enumerate(p.inputs):
            if not v.shape or (isinstance(v.nbytes, int) and not v.nbytes):
                ptr_of[id(v)] = data[i]
                continue
            # a strided input is copied into its place in the arena
            strides = field(ins, i, 3, PTR)
            then = b.append_basic_block(f"copy{i}")
            join = b.append_basic_block(f"copied{i}")
            pre = b.block
            b.cbranch(strided[i], then, join)
            b.position_at_end(then)
            dst = self.at(v)
            shape = field(ins, i, 2, PTR)
            strided_copy.copy(
                b, ir.IntType(8 * ITEMSIZE[v.dtype]), dst, data[i],
                [b.load(b.gep(shape, [ir.Constant(I64, a)], source_etype=I64), typ=I64)
                 for a in range(len(v.shape))],
                [b.load(b.gep(strides, [ir.Constant(I64, a)], source_etype=I64), typ=I64)
                 for a in range(len(v.shape))], in_bytes=True, name=f"in{i}.")
            copied = b.block  # (the copy's loops end in a block of their own)
            b.branch(join)
            b.position_at_end(join)
            phi = b.phi(PTR)
            phi.add_incoming(data[i], pre)
            phi.add_incoming(dst, copied)
            ptr_of[id(v)] = phi

    def give_outputs(self, outs) -> None:
        """The outputs: one malloc each, handed to the caller; a dynamically shaped output
        carries its shape and strides after its data, in the same allocation."""
        p, b = self.p, self.b
        given = []
        for i, v in enumerate(p.outputs):
            nbytes = self.i64(v.nbytes)
            if is_dynamic(v):
                size = b.add(self.data_end(v), ir.Constant(I64, 16 * len(v.shape)))
            else:
                size = ir.Constant(I64, max(v.nbytes, 1))
            buf = b.call(self.malloc, [size])
            self.check(b.icmp_unsigned("!=", buf, ir.Constant(PTR, None)), "MYC_ERR_ALLOC",
                       f"myc: {p.name}: out of memory (allocating output {i}, %lld bytes)",
                       size, cleanup=given, free_arena=True)
            given.append(buf)
            if not isinstance(v.nbytes, int) or v.nbytes:
                b.call(self.memcpy, [buf, self.get(v), nbytes])
        for i, (v, buf) in enumerate(zip(p.outputs, given, strict=True)):
            def put(f, val, i=i):
                ptr = b.gep(outs, [ir.Constant(I64, i), ir.Constant(I32, f)],
                            source_etype=MYC_ARRAY)
                b.store(val, ptr)
            put(0, buf)
            put(1, ir.Constant(I64, len(v.shape)))
            strides = c_strides(v.shape, ITEMSIZE[v.dtype])
            if is_dynamic(v):
                trailer = b.gep(buf, [self.data_end(v)], source_etype=I8)
                nd = len(v.shape)
                for a, (d, st) in enumerate(zip(v.shape, strides, strict=True)):
                    b.store(self.i64(d), b.gep(trailer, [ir.Constant(I64, a)], source_etype=I64))
                    b.store(self.i64(st), b.gep(trailer, [ir.Constant(I64, nd + a)],
                                                source_etype=I64))
                put(2, trailer)
                put(3, b.gep(trailer, [ir.Constant(I64, nd)], source_etype=I64))
            else:
                put(2, self.i64_array(list(v.shape)))
                put(3, self.i64_array(strides))
            put(4, ir.Constant(I32, DTYPE_CODE[v.dtype]))

    def data_end(self, v: Value) -> ir.Value:
        """Where a dynamically shaped output's shape and strides start: after its data,
        rounded up to 8 bytes."""
        b = self.b
        return b.and_(b.add(self.i64(v.nbytes), ir.Constant(I64, 7)), ir.Constant(I64, -8))

    def is_strided(self, strides, v: Value) -> tuple[ir.Value, ir.Value]:
        """Whether ``strides`` (bytes; NULL means C-contiguous) is not C order, and
        whether the bytes they reach (``sum |stride| * (size - 1)``) overflow 64 bits:
        no array in memory has such strides, and the copy would compute wrapped
        addresses from them."""
        b = self.b
        false = ir.Constant(ir.IntType(1), 0)
        if not v.shape:
            return false, false
        nonnull = b.icmp_unsigned("!=", strides, ir.Constant(PTR, None))
        pre = b.block
        look = b.append_basic_block("strides")
        done = b.append_basic_block("strides.done")
        b.cbranch(nonnull, look, done)
        b.position_at_end(look)
        bad = false
        span, over = ir.Constant(I64, ITEMSIZE[v.dtype]), false
        for a, (size, want) in enumerate(zip(v.shape, c_strides(v.shape, ITEMSIZE[v.dtype]),
                                            strict=True)):
            if isinstance(size, int) and size <= 1:
                continue  # any stride walks a length-1 axis the same
            got = b.load(b.gep(strides, [ir.Constant(I64, a)], source_etype=I64), typ=I64)
            differs = b.icmp_signed("!=", got, self.i64(want))
            if isinstance(size, Dim):  # a dynamic size that is 1 this time
                differs = b.and_(differs, b.icmp_signed("!=", self.i64(size),
                                                        ir.Constant(I64, 1)))
            bad = b.or_(bad, differs)
            # |stride| * (size - 1), added up; INT64_MIN has no absolute value (harmless
            # only on an axis of length 1, which it never walks)
            steps = b.sub(self.i64(size), ir.Constant(I64, 1))
            over = b.or_(over, b.and_(b.icmp_signed("==", got, ir.Constant(I64, -(1 << 63))),
                                      b.icmp_signed("!=", steps, ir.Constant(I64, 0))))
            mag = b.select(b.icmp_signed("<", got, ir.Constant(I64, 0)), b.neg(got), got)
            reach, o1 = self.checked("smul", mag, steps)
            span, o2 = self.checked("sadd", span, reach)
            over = b.or_(over, b.or_(o1, o2))
        look_end = b.block
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(ir.IntType(1))
        phi.add_incoming(false, pre)
        phi.add_incoming(bad, look_end)
        reach_bad = b.phi(ir.IntType(1))
        reach_bad.add_incoming(false, pre)
        reach_bad.add_incoming(over, look_end)
        return phi, reach_bad

    def check(self, cond, status: str, message: str, *args, cleanup=(),
              free_arena: bool = False) -> None:
        """Go on when ``cond`` holds; else write the message and return ``status``."""
        b = self.b
        fail = b.append_basic_block(f"fail.{status}")
        ok = b.append_basic_block("ok")
        b.cbranch(cond, ok, fail)
        b.position_at_end(fail)
        fmt = self.cstring(message)
        b.call(self.snprintf, [self.errbuf, ir.Constant(I64, 512), fmt, *args])
        for ptr in cleanup:
            b.call(self.free, [ptr])
        if free_arena and self.arena is not None and not isinstance(self.arena, ir.Constant):
            b.call(self.free, [self.arena])
        if free_arena:
            self.free_heap()
        b.ret(ir.Constant(I32, STATUS[status]))
        b.position_at_end(ok)
