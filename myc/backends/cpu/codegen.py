"""Kernel IR to LLVM IR (llvmlite.ir): pure, no LLVM library calls, no execution.

For a kernel named ``k`` the module defines (``entry_name(kernel)``; the prefix keeps a
kernel from shadowing a C library symbol such as ``fmod``)::

    void @myc_kernel_k(ptr %buffers, i64 %begin, i64 %end)

``buffers`` points to the data pointers of the inputs then the outputs (``out_index``
order); ``[begin, end)`` is the chunk of the plan's parallel range to run (see
``plan.py``).  ``@k`` loads the pointers and calls ``@k.body``, which takes them as
``noalias`` arguments -- once inlined, that tells LLVM that outputs do not overlap inputs,
so the innermost loop vectorizes without runtime alias checks.

Kernels with sin, cos or tan (``mathlib.FAST``) run a chunk twice when they must: the
full functions reduce huge arguments (``|x| >= 2^30``) by Payne-Hanek, which is costly
to compute for every element, so ``@k`` first calls ``@k.fast``, the same loop nest with
the Cody-Waite-only variants, which also ORs into a loop-carried i1 (like a reduction
accumulator, so the loop still vectorizes) whether any argument needed the full
reduction, and returns it.  If it is set, ``@k`` runs the chunk again with ``@k.body``
(the full functions), overwriting every output; outputs that are read before being
written (``OutPlan.init``: the caller filled them with the identity) are first put back
to the identity by ``@k.reset``, over the elements this chunk touches, so nothing is
counted twice.  Below the limit the fast functions give the full ones' results bit for
bit, so a rerun changes only what the huge arguments touch.

The innermost loop is a single basic block: loads, scalar math (transcendentals are
calls to ``alwaysinline`` functions from ``mathlib.py``, branch-free once inlined),
stores, and register accumulators for reductions along it.  Float ``sum`` accumulators
carry the ``reassoc`` flag (only they do), which lets the vectorizer keep several vector
partial sums; to keep float32 sums accurate, the inner loop runs in blocks of
:data:`BLOCK` elements whose partial sums are added in float64.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu import fpmode, online, prefetch
from myc.backends.cpu import specfun as _specfun  # noqa: F401  (erf, gammaln, ...: joins the library)
from myc.backends.cpu.emit import F32, F64, I1, I8, I64, PTR, Emitter, V, const, is_float
from myc.backends.cpu.mathlib import FAST, IMPLS, MathLib
from myc.backends.cpu.plan import Plan, make_plan
from myc.backends.cpu.scalar_llvm import LLTYPE, ScalarLLVM
from myc.lower.dims import Dim, SymFloat
from myc.lower.hostplan import ITEMSIZE
from myc.lower.kernel import (
    FLOATS,
    Binary,
    Cast,
    Const,
    Expr,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Select,
    Unary,
    identity,
    postorder,
    row_reductions,
)

BLOCK = 2048
MEMTYPE = {"float32": F32, "float64": F64, "int64": I64, "bool": I8}
# every op this generator renders: mathlib's functions and the arithmetic inline below
# (tests/cpu/test_ops.py checks this against the declared ops)
INLINE_OPS = frozenset({
    "neg", "square", "sqrt", "abs", "sign", "floor", "ceil", "not", "add", "sub", "mul",
    "div", "maximum", "minimum", "mod", "floordiv", "and", "or", "eq", "ne", "lt", "le",
    "gt", "ge", "pow"})  # pow: mathlib's on floats, by squaring on int64


def rendered_ops() -> frozenset[str]:
    """The kernel-IR scalar ops this backend renders."""
    return INLINE_OPS | frozenset(IMPLS)


def entry_name(kernel: Kernel) -> str:
    return f"myc_kernel_{kernel.name}"


def kernel_symbols(kernel: Kernel) -> list[str]:
    """The symbolic sizes (``myc.aot`` with ``N``) a kernel's code depends on, sorted:
    its function then takes their values as one more buffer pointer (an ``i64`` array)."""
    out: set[str] = set()
    for d in (*kernel.shape, *(d for buf in kernel.inputs for d in buf.shape)):
        if isinstance(d, Dim):
            out |= d.symbols
    for node in postorder([o.expr for o in kernel.outputs]):
        if isinstance(node, Const) and isinstance(node.value, Dim):
            out |= node.value.symbols
        elif isinstance(node, Const) and isinstance(node.value, SymFloat):
            out |= set(node.value.mono)
    return sorted(out)


def emit_dim(b: ir.IRBuilder, d: Dim, values: dict[str, ir.Value]) -> ir.Value:
    """``d`` evaluated in 64-bit integers from the symbols' ``values``."""
    total = None
    for mono, coef in d.terms().items():
        term = ir.Constant(I64, coef)
        for s in mono:
            term = b.mul(term, values[s])
        total = term if total is None else b.add(total, term)
    return total if total is not None else ir.Constant(I64, 0)


def emit_symfloat(b: ir.IRBuilder, x: SymFloat, values: dict[str, ir.Value]) -> ir.Value:
    """``x`` evaluated in double precision, as Python evaluates it at trace time."""
    m = ir.Constant(F64, 1.0)
    for s in x.mono:
        m = b.fmul(m, b.sitofp(values[s], F64))
    coef = ir.Constant(F64, x.coef)
    return b.fdiv(coef, m) if x.inverse else b.fmul(coef, m)


def codegen(kernel: Kernel, scalef: bool = False) -> tuple[ir.Module, Plan]:
    """The LLVM module for ``kernel`` and the loop plan the runtime needs to call it;
    ``scalef``: the target scales by powers of two natively (``MathLib``; the JIT asks
    ``runtime.native_scalef``, AOT libraries keep the portable form)."""
    plan = make_plan(kernel)
    module = ir.Module(name=kernel.name)
    KernelGen(kernel, plan, module, scalef).build()
    return module, plan


def counted_loop(e: Emitter, lo: ir.Value, hi: ir.Value, inits: list[ir.Value], body, name: str):
    """``for i in [lo, hi)`` carrying ``inits`` through ``body(i, carried) -> carried``;
    returns the final carried values (``inits`` when the range is empty).  The loop is
    emitted rotated (guard, then a bottom-tested body), the shape LLVM optimizes best."""
    b = e.b
    pre = b.block
    loop = b.append_basic_block(f"{name}.loop")
    done = b.append_basic_block(f"{name}.done")
    b.cbranch(b.icmp_signed("<", lo, hi), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64, name=f"{name}.i")
    phis = [b.phi(v.type) for v in inits]
    i.add_incoming(lo, pre)
    for p, v in zip(phis, inits, strict=True):
        p.add_incoming(v, pre)
    new = body(i, list(phis))
    i1 = b.add(i, ir.Constant(I64, 1))
    end = b.block
    i.add_incoming(i1, end)
    for p, v in zip(phis, new, strict=True):
        p.add_incoming(v, end)
    b.cbranch(b.icmp_signed("<", i1, hi), loop, done)
    b.position_at_end(done)
    outs = []
    for v, n in zip(inits, new, strict=True):
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        p.add_incoming(n, end)
        outs.append(p)
    return outs


class KernelGen(ScalarLLVM):
    """A kernel's functions; its scalar operations are :class:`ScalarLLVM`'s (shared
    with the steps on numbers of native host programs)."""

    def __init__(self, kernel: Kernel, plan: Plan, module: ir.Module, scalef: bool = False):
        self.k = kernel
        self.plan = plan
        self.module = module
        self.flush = fpmode.flushes()  # subnormals to zero in this kernel (fpmode.py)
        self.math = MathLib(module, scalef=scalef)
        self.outs = sorted(kernel.outputs, key=lambda o: o.out_index)
        self.load_strides = dict(plan.loads)
        self.levels = row_reductions([o.expr for o in self.outs])
        self.row_vals: dict[Expr, V] = {}
        # outputs that reduce the last axis only, as a row reduction does: stored from
        # its total instead of being accumulated again in the row's main loop
        by_key = {(n.op, n.x): n for level in self.levels for n in level}
        last = (len(kernel.shape) - 1,)
        self.precomputed = {i: by_key[o.op, o.expr] for i, o in enumerate(self.outs)
                            if isinstance(o, Reduce) and o.axes == last
                            and plan.outs[i].mode == "inner" and (o.op, o.expr) in by_key}
        trig = any(isinstance(n, Unary) and n.op in FAST
                   for n in postorder([o.expr for o in self.outs]))
        self.online = online.plan_online(self.levels, self.outs, [o.mode for o in plan.outs],
                                         self.precomputed, trig)

    # ------------------------------------------------------------------ functions
    def build(self) -> None:
        nbuf = len(self.k.inputs) + len(self.outs)
        self.symbols = kernel_symbols(self.k)
        extra = [PTR] if self.symbols else []  # the values of symbolic sizes (myc.aot)
        params = [PTR] * nbuf + extra + [I64, I64]
        full = self.body_function("full", params, nbuf)
        has_trig = any(isinstance(n, Unary) and n.op in FAST
                       for n in postorder([o.expr for o in self.outs]))
        if has_trig:
            # the full pass runs only for huge arguments: out of line, cold, optimized for
            # size (inlined into the entry it was optimized twice over: the 100-line
            # benchmark's first call 913 -> 695 ms; the rerun is as fast)
            full.attributes.discard("alwaysinline")
            for attr in ("noinline", "cold", "optsize"):
                full.attributes.add(attr)
            fast = self.body_function("fast", params, nbuf)
            reset = (self.body_function("reset", params, nbuf)
                     if any(op.init for op in self.plan.outs) else None)

        entry = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64]),
                            entry_name(self.k))
        entry.attributes.add("nounwind")
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        bufs, begin, end = entry.args
        ptrs = [b.load(b.gep(bufs, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
                for i in range(nbuf + len(extra))]
        args = ptrs + [begin, end]
        saved = fpmode.enter(b) if self.flush else None
        if has_trig:  # the fast pass; the full one again only if it asks
            again = entry.append_basic_block("rerun")
            done = entry.append_basic_block("done")
            br = b.cbranch(b.call(fast, args), again, done)
            br.set_weights([1, 1 << 20])
            b.position_at_end(again)
            if reset is not None:
                b.call(reset, args)
            b.call(full, args)
            b.branch(done)
            b.position_at_end(done)
        else:
            b.call(full, args)
        if saved is not None:
            fpmode.leave(b, saved)
        b.ret_void()

    def body_function(self, mode: str, params: list, nbuf: int) -> ir.Function:
        """The loop nest over ``[begin, end)`` as ``@k.body`` (``mode`` "full"), ``@k.fast``
        (the fast sin/cos/tan; returns the i1 "run again with the full ones") or
        ``@k.reset`` (only puts the identity back into the ``init`` outputs, everywhere
        the chunk would write them)."""
        self.mode = mode
        ret = I1 if mode == "fast" else ir.VoidType()
        suffix = {"full": "body", "fast": "fast", "reset": "reset"}[mode]
        fn = ir.Function(self.module, ir.FunctionType(ret, params),
                         f"{entry_name(self.k)}.{suffix}")
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        for arg in fn.args[:nbuf]:
            arg.add_attribute("noalias")
        self.e = Emitter(ir.IRBuilder(fn.append_basic_block("entry")))
        self.bases = list(fn.args[:nbuf])
        self.sym_vals = {}
        if self.symbols:
            dims = fn.args[nbuf]
            for j, name in enumerate(self.symbols):
                self.sym_vals[name] = self.e.b.load(
                    self.e.b.gep(dims, [ir.Constant(I64, j)], source_etype=I64), typ=I64)
        begin, end = fn.args[-2:]
        if len(self.plan.dims) == 1:
            flag = self.loop_1d(begin, end)
        else:
            flag = self.loop_rows(begin, end)
        if mode == "fast":
            self.e.b.ret(flag)
        else:
            self.e.b.ret_void()
        return fn

    def i64(self, x) -> ir.Value:
        """A size, stride or count: a constant, or computed from the symbolic sizes."""
        if isinstance(x, Dim):
            return emit_dim(self.e.b, x, self.sym_vals)
        return ir.Constant(I64, x)

    # ------------------------------------------------------------------ loop nests
    # In mode "fast" the rerun flag (i1) is carried through every loop, last after the
    # values a loop carries anyway; loop_1d and loop_rows return it (None otherwise).
    def loop_1d(self, begin, end) -> ir.Value | None:
        self.set_row_pointers(None)
        totals, flag = self.row(begin, end, ir.Constant(I1, 0))
        self.finish_row(totals)
        return flag

    def loop_rows(self, begin, end) -> ir.Value | None:
        b = self.e.b
        dims = self.plan.dims
        outer = dims[:-1]
        fast = self.mode == "fast"
        idx: list[ir.Value] = [None] * len(outer)  # type: ignore[list-item]
        rem = begin
        for a in range(len(outer) - 1, 0, -1):
            size = self.i64(outer[a])
            idx[a] = b.urem(rem, size)
            rem = b.udiv(rem, size)
        idx[0] = rem

        def row_body(r, carried):
            self.set_row_pointers(carried[:len(outer)])
            self.prefetch_next_row()
            flag = self.row_prepass(carried[-1] if fast else None)
            totals, flag = self.row(ir.Constant(I64, 0), self.i64(dims[-1]), flag)
            self.finish_row(totals)
            new: list[ir.Value] = [None] * len(outer)  # type: ignore[list-item]
            carry = None
            for a in range(len(outer) - 1, -1, -1):
                step = ir.Constant(I64, 1) if carry is None else b.zext(carry, I64)
                nxt = b.add(carried[a], step)
                if a == 0:
                    new[a] = nxt
                    break
                carry = b.icmp_signed("==", nxt, self.i64(outer[a]))
                new[a] = b.select(carry, ir.Constant(I64, 0), nxt)
            return new + [flag] if fast else new

        inits = idx + [ir.Constant(I1, 0)] if fast else idx
        outs = counted_loop(self.e, begin, end, inits, row_body, "rows")
        return outs[-1] if fast else None

    def prefetch_next_row(self) -> None:
        """Ask for the next row of the contiguous loads while this one is computed
        (``prefetch.py``); only where the row is walked more than once."""
        n = self.plan.dims[-1]
        if not self.levels or self.mode == "reset" or not prefetch.enabled() or isinstance(n, Dim):
            return
        rows = [(self.load_ptrs[load], st[-2], ITEMSIZE[load.dtype], MEMTYPE[load.dtype])
                for load, st in self.plan.loads
                if st[-1] == 1 and st[-2] != 0 and not isinstance(st[-2], Dim)]
        prefetch.next_row(self.e.b, rows, n)

    def set_row_pointers(self, idx: list | None) -> None:
        """Pointers to the start of the current row for every load and output (the
        buffers' bases in a 1-axis plan)."""
        nin = len(self.k.inputs)
        self.load_ptrs = {load: self.offset(self.bases[load.buffer], load.dtype, idx, st)
                          for load, st in self.plan.loads}
        self.out_ptrs = [self.offset(self.bases[nin + i], out.expr.dtype, idx, op.strides)
                         for i, (out, op) in enumerate(zip(self.outs, self.plan.outs, strict=True))]

    def offset(self, base, dtype: str, idx: list | None, strides) -> ir.Value:
        if idx is None:
            return base
        b = self.e.b
        off = None
        for i, s in zip(idx, strides[:-1], strict=True):
            if s == 0:
                continue
            term = b.mul(i, self.i64(s))
            off = term if off is None else b.add(off, term)
        if off is None:
            return base
        return b.gep(base, [off], source_etype=MEMTYPE[dtype])

    # ------------------------------------------------------------------ one row
    def row(self, lo, hi, flag) -> tuple[list, ir.Value | None]:
        """Run the innermost axis over ``[lo, hi)``; returns the "inner" reductions'
        totals (blocked when a float sum needs it) and, in mode "fast", ``flag`` ORed
        with the rerun flags of the row's elements.  Mode "reset" runs the loop only for
        the "outer" outputs, storing their identity."""
        inner = [i for i, o in enumerate(self.plan.outs) if o.mode == "inner"]
        self.inner_outs = inner
        if self.mode == "reset":
            if any(o.mode == "outer" for o in self.plan.outs):
                counted_loop(self.e, lo, hi, [], self.inner_body, "inner")
            return [], None
        if self.online is not None and not self.online.prepass:
            return self.row_online(lo, hi), flag
        fast = self.mode == "fast"
        acc_types = [self.acc_type(i) for i in inner]
        inits = [self.identity(i) for i in inner]
        blocked = any(self.plan.outs[i].op == "sum" and self.outs[i].expr.dtype in FLOATS
                      for i in inner)
        if not blocked:
            outs = counted_loop(self.e, lo, hi, inits + [flag] if fast else inits,
                                self.inner_body, "inner")
            return (outs[:-1], outs[-1]) if fast else (outs, None)
        b = self.e.b
        nblocks = b.sdiv(b.add(b.sub(hi, lo), ir.Constant(I64, BLOCK - 1)),
                         ir.Constant(I64, BLOCK))
        tot_inits = [const(t, identity(self.outs[i].op, self.outs[i].expr.dtype))
                     for i, t in zip(inner, acc_types, strict=True)]

        def block_body(blk, carried):
            totals = carried[:len(inner)]
            jb = b.add(lo, b.mul(blk, ir.Constant(I64, BLOCK)))
            je = b.add(jb, ir.Constant(I64, BLOCK))
            je = b.select(b.icmp_signed("<", je, hi), je, hi)
            accs = counted_loop(self.e, jb, je, inits + carried[len(inner):],
                                self.inner_body, "inner")
            new = []
            for i, t, acc in zip(inner, totals, accs[:len(inner)], strict=True):
                if self.outs[i].op == "sum" and is_float(acc.type):
                    new.append(b.fadd(t, self.e.fpext(self.e.v(acc), t.type).v))
                else:
                    new.append(self.combine(self.plan.outs[i].op, t, acc, reassoc=False))
            return new + accs[len(inner):]

        outs = counted_loop(self.e, ir.Constant(I64, 0), nblocks,
                            tot_inits + [flag] if fast else tot_inits, block_body, "blocks")
        return (outs[:-1], outs[-1]) if fast else (outs, None)

    def row_online(self, lo, hi) -> list:
        """The row's main loop with the row max read in it (``online.py``): returns the
        "inner" outputs' totals and leaves the row's maximum in ``row_vals``."""
        inner = self.inner_outs
        specs = [(self.outs[i].op, self.online.kinds.get(i, "free"),
                  const(self.acc_type(i), identity(self.outs[i].op, self.outs[i].expr.dtype)))
                 for i in inner]
        inits = [self.identity(i) for i in inner]

        def block(jb, je):
            return counted_loop(self.e, jb, je, inits, self.inner_body, "online")

        m, totals = self.online_blocks(lo, hi, specs, block)
        self.row_vals = {self.online.m: self.e.v(m)}
        return totals

    def online_prepass(self, lo, hi) -> None:
        """The row max and the row reductions that read it (a softmax's sum of exps) in
        one pass (``online.py``), into ``row_vals``."""
        nodes = self.levels[1]
        specs = [(n.op, self.online.kinds[n],
                  const(F64 if n.op == "sum" and n.dtype in FLOATS else LLTYPE[n.dtype],
                        identity(n.op, n.dtype))) for n in nodes]

        def block(jb, je):
            return self.reduce_row(nodes, jb, je, None)[0]

        m, totals = self.online_blocks(lo, hi, specs, block)
        self.row_vals = {self.online.m: self.e.v(m)}
        for n, t in zip(nodes, totals, strict=True):
            self.row_vals[n] = self.e.fptrunc(self.e.v(t), LLTYPE[n.dtype])

    def online_blocks(self, lo, hi, specs, block) -> tuple[ir.Value, list]:
        """``[lo, hi)`` in blocks of ``online.BLOCK``: the block's maximum, the running
        maximum updated (into ``row_vals`` for ``block``), ``block(jb, je)``'s partial
        totals against it, and the totals so far brought to it first; ``specs``: per
        total its op, its kind (``online.py``) and its initial value.  Returns the row
        max and the totals."""
        b = self.e.b
        e = self.e
        m = self.online.m
        step = online.BLOCK
        nblocks = b.sdiv(b.add(b.sub(hi, lo), ir.Constant(I64, step - 1)),
                         ir.Constant(I64, step))

        def block_body(blk, carried):
            m_old, totals = carried[0], carried[1:]
            jb = b.add(lo, b.mul(blk, ir.Constant(I64, step)))
            je = b.add(jb, ir.Constant(I64, step))
            je = b.select(b.icmp_signed("<", je, hi), je, hi)
            (bm,), _ = self.reduce_row([m], jb, je, None)
            m_new = self.combine("max", m_old, bm, reassoc=False)
            self.row_vals = {m: e.v(m_new)}
            accs = block(jb, je)
            lo64, hi64 = e.fpext(e.v(m_old), F64), e.fpext(e.v(m_new), F64)
            scale = self.math.call(e, "exp", lo64 - hi64)
            fresh = e.v(m_old).eq(float("-inf"))
            same = e.v(m_old).eq(e.v(m_new))
            new = []
            for (op, kind_, _), t, acc in zip(specs, totals, accs, strict=True):
                if kind_ == "exp":
                    t = e.fptrunc(e.select(fresh, 0.0, e.fpext(e.v(t), F64) * scale),
                                  t.type).v
                elif kind_ == "count":
                    t = e.select(same, e.v(t), 0.0, t.type).v
                if op == "sum" and is_float(acc.type):
                    new.append(b.fadd(t, e.fpext(e.v(acc), t.type).v))
                else:
                    new.append(self.combine(op, t, acc, reassoc=False))
            return [m_new, *new]

        m_init = const(LLTYPE[m.dtype], identity("max", m.dtype))
        outs = counted_loop(e, ir.Constant(I64, 0), nblocks,
                            [m_init, *(init for _, _, init in specs)], block_body, "oblocks")
        return outs[0], outs[1:]

    def row_prepass(self, flag):
        """The row reductions of the current row, level by level (one loop over the row
        each, the row staying in cache), into ``row_vals``; returns the rerun flag."""
        self.row_vals = {}
        if self.mode == "reset" or (self.online is not None and not self.online.prepass):
            return flag
        lo, hi = ir.Constant(I64, 0), self.i64(self.plan.dims[-1])
        if self.online is not None:
            self.online_prepass(lo, hi)
            return flag
        for level in self.levels:
            totals, flag = self.reduce_row(level, lo, hi, flag)
            for node, t in zip(level, totals, strict=True):
                self.row_vals[node] = self.e.fptrunc(self.e.v(t), LLTYPE[node.dtype])
        return flag

    def reduce_row(self, nodes: list[RowReduce], lo, hi, flag) -> tuple[list, ir.Value]:
        """Totals of ``nodes`` over ``[lo, hi)`` of the row; float sums in blocks of
        :data:`BLOCK` added in float64, as the outputs' reductions are."""
        fast = self.mode == "fast"
        b = self.e.b
        k = len(nodes)

        def body(j, accs):
            self.j = j
            self.vals = {}
            self.rerun = []
            new = [self.combine(n.op, a, self.expr(n.x).v, reassoc=True)
                   for n, a in zip(nodes, accs, strict=False)]
            if fast:
                f = self.e.v(accs[-1])
                for r in self.rerun:
                    f = f | r
                new.append(f.v)
            return new

        inits = [const(LLTYPE[n.dtype], identity(n.op, n.dtype)) for n in nodes]
        if not any(n.op == "sum" and n.dtype in FLOATS for n in nodes):
            outs = counted_loop(self.e, lo, hi, inits + [flag] if fast else inits, body,
                                "rowred")
            return (outs[:k], outs[-1]) if fast else (outs, flag)
        tot_inits = [const(F64 if n.op == "sum" and n.dtype in FLOATS else LLTYPE[n.dtype],
                           identity(n.op, n.dtype)) for n in nodes]
        nblocks = b.sdiv(b.add(b.sub(hi, lo), ir.Constant(I64, BLOCK - 1)),
                         ir.Constant(I64, BLOCK))

        def block_body(blk, carried):
            jb = b.add(lo, b.mul(blk, ir.Constant(I64, BLOCK)))
            je = b.add(jb, ir.Constant(I64, BLOCK))
            je = b.select(b.icmp_signed("<", je, hi), je, hi)
            accs = counted_loop(self.e, jb, je, inits + carried[k:], body, "rowred")
            new = []
            for n, t, acc in zip(nodes, carried[:k], accs[:k], strict=True):
                if n.op == "sum" and is_float(acc.type):
                    new.append(b.fadd(t, self.e.fpext(self.e.v(acc), t.type).v))
                else:
                    new.append(self.combine(n.op, t, acc, reassoc=False))
            return new + accs[k:]

        outs = counted_loop(self.e, ir.Constant(I64, 0), nblocks,
                            tot_inits + [flag] if fast else tot_inits, block_body, "rowblocks")
        return (outs[:k], outs[-1]) if fast else (outs, flag)

    def acc_type(self, i: int) -> ir.Type:
        """Type of the per-row total: float sums are totalled in float64."""
        out = self.outs[i]
        if out.op == "sum" and out.expr.dtype in FLOATS:
            return F64
        return LLTYPE[out.expr.dtype]

    def identity(self, i: int) -> ir.Constant:
        out = self.outs[i]
        return const(LLTYPE[out.expr.dtype], identity(out.op, out.expr.dtype))

    def inner_body(self, j, accs):
        self.j = j
        self.vals: dict[Expr, V] = {}
        self.rerun: list[V] = []  # mode "fast": the rerun flags of this element
        new = list(accs)
        b = self.e.b
        for i, (out, op) in enumerate(zip(self.outs, self.plan.outs, strict=True)):
            if self.mode == "reset":
                if op.mode == "outer":
                    b.store(self.to_mem(self.e.v(self.identity(i)), out.expr.dtype),
                            self.elem_ptr(i, op.strides[-1]), align=ITEMSIZE[out.expr.dtype])
                continue
            if i in self.precomputed and self.mode != "reset":
                continue
            v = self.expr(out.expr)
            if op.mode == "store":
                b.store(self.to_mem(v, out.expr.dtype), self.elem_ptr(i, op.strides[-1]),
                        align=ITEMSIZE[out.expr.dtype])
            elif op.mode == "inner":
                k = self.inner_outs.index(i)
                new[k] = self.combine(op.op, accs[k], v.v, reassoc=True)
            else:
                ptr = self.elem_ptr(i, op.strides[-1])
                ty = MEMTYPE[out.expr.dtype]
                old = self.from_mem(b.load(ptr, typ=ty, align=ITEMSIZE[out.expr.dtype]),
                                    out.expr.dtype)
                res = self.combine(op.op, old, v.v, reassoc=False)
                b.store(self.to_mem(self.e.v(res), out.expr.dtype), ptr,
                        align=ITEMSIZE[out.expr.dtype])
        if self.mode == "fast":
            flag = self.e.v(accs[-1])
            for f in self.rerun:
                flag = flag | f
            new[-1] = flag.v
        return new

    def finish_row(self, totals: list) -> None:
        b = self.e.b
        for k, i in enumerate(self.inner_outs):
            out, op = self.outs[i], self.plan.outs[i]
            dt = out.expr.dtype
            ptr = self.out_ptrs[i]
            if self.mode == "reset":
                if op.init:
                    b.store(self.to_mem(self.e.v(self.identity(i)), dt), ptr,
                            align=ITEMSIZE[dt])
                continue
            total = self.e.fptrunc(self.e.v(totals[k]), LLTYPE[dt]).v
            if i in self.precomputed:
                total = self.row_vals[self.precomputed[i]].v
            if op.init:
                old = self.from_mem(b.load(ptr, typ=MEMTYPE[dt], align=ITEMSIZE[dt]), dt)
                total = self.combine(op.op, old, total, reassoc=False)
            b.store(self.to_mem(self.e.v(total), dt), ptr, align=ITEMSIZE[dt])

    def elem_ptr(self, out_i: int, inner_stride: int) -> ir.Value:
        return self.gep(self.out_ptrs[out_i], self.outs[out_i].expr.dtype, inner_stride)

    def gep(self, row_ptr, dtype: str, inner_stride: int) -> ir.Value:
        """``row_ptr + j * inner_stride`` elements."""
        b = self.e.b
        if inner_stride == 0:
            return row_ptr
        j = self.j if inner_stride == 1 else b.mul(self.j, self.i64(inner_stride))
        return b.gep(row_ptr, [j], source_etype=MEMTYPE[dtype])

    # ------------------------------------------------------------------ expressions
    def expr(self, node: Expr) -> V:
        got = self.vals.get(node)
        if got is not None:
            return got
        # operands first, from an explicit stack: ``scalar`` then finds them computed,
        # so a deep expression (a 20k-step chain) does not recurse 20k levels
        stack: list[tuple[Expr, bool]] = [(node, False)]
        while stack:
            n, expanded = stack.pop()
            if n in self.vals:
                continue
            if expanded:
                self.vals[n] = self.scalar(n)
                continue
            stack.append((n, True))
            if not isinstance(n, RowReduce):
                stack.extend((c, False) for c in reversed(n.children()) if c not in self.vals)
        return self.vals[node]

    def load(self, node: Load) -> V:
        ptr = self.gep(self.load_ptrs[node], node.dtype, self.load_strides[node][-1])
        raw = self.e.b.load(ptr, typ=MEMTYPE[node.dtype], align=ITEMSIZE[node.dtype])
        return self.e.v(self.from_mem(raw, node.dtype))

    def from_mem(self, raw: ir.Value, dtype: str) -> ir.Value:
        if dtype == "bool":
            return self.e.b.icmp_unsigned("!=", raw, ir.Constant(I8, 0))
        return raw

    def to_mem(self, v: V, dtype: str) -> ir.Value:
        if dtype == "bool":
            return self.e.b.zext(v.v, I8)
        return v.v

    def scalar(self, node: Expr) -> V:
        e = self.e
        if isinstance(node, Const):
            if isinstance(node.value, SymFloat):
                f = emit_symfloat(e.b, node.value, self.sym_vals)
                return e.v(f if node.dtype == "float64" else e.b.fptrunc(f, F32))
            if isinstance(node.value, Dim):
                return e.v(self.i64(node.value))
            return e.c(LLTYPE[node.dtype], node.value)
        if isinstance(node, Load):
            return self.load(node)
        if isinstance(node, Unary):
            return self.unary(node.op, self.expr(node.x), node.x.dtype)
        if isinstance(node, Binary):
            return self.binary(node.op, self.expr(node.x), self.expr(node.y), node.x.dtype)
        if isinstance(node, Select):
            c, x, y = (self.expr(n) for n in (node.cond, node.x, node.y))
            return e.select(c, x, y)
        if isinstance(node, RowReduce):
            return self.row_vals[node]
        assert isinstance(node, Cast), node
        return self.cast(self.expr(node.x), node.x.dtype, node.dtype)

    def unary(self, op: str, x: V, dtype: str) -> V:
        """The scalar op, or in a kernel's fast variant the fast one of a function with
        a full argument reduction (``mathlib.FAST``), noting when to rerun."""
        if self.mode == "fast" and op in FAST:
            y, rerun = self.math.call_fast(self.e, op, x)
            self.rerun.append(rerun)
            return y
        return super().unary(op, x, dtype)
