"""Data-dependent control flow in ahead-of-time libraries: loops, selects and tapes.

``myc/lower/planned.py`` turns a ``loop`` node of the typed program (``myc/infer/control.py``:
a typed body run until its first output is false) into a :class:`LoopOp`, an
if-converted branch (``select``) into a :class:`Select`, and the reads of a taped loop's
state that a gradient's backward loop makes (``tape_get``) into :class:`TapeGet`.
:class:`~myc.backends.cpu.aot_codegen.HostGen` emits them with the functions here.

How a loop runs in the library (one call of the exported function):

* every loop-carried value has one fixed buffer in the call's arena; the initial state
  is copied in, and after each iteration the next state is copied over it (through a
  staging buffer only where a next state is another state buffer: a swap).  The body's
  intermediates have their own arena buffers, so no kernel reads what it writes;
* the loop runs as Python would, with no iteration limit: the body (kernels, GEMM,
  copies) runs, then its ``go_on`` value decides;
* allocations a body makes on the machine stack (dynamic-size arrays of kernel
  arguments, thread bookkeeping) are released after each iteration
  (``llvm.stacksave``/``llvm.stackrestore``), so a long loop does not grow the stack;
* a **taped** loop (the forward rerun of a gradient's loop) also stores the state at
  the start of every iteration, in one ``malloc``-ed buffer per state value that grows
  with ``realloc`` (doubling, from 16 iterations); when ``realloc`` fails the call
  frees what it holds and returns ``MYC_ERR_ALLOC`` with a message.  The buffers are
  freed when the call returns.  The backward loop reads them with :class:`TapeGet`.

Python's ints are 64-bit machine ints here (the JIT falls back to Python's semantics
where they would overflow; a library cannot), see ``docs/aot.md``.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from myc.backends.cpu.emit import I8, I64, PTR
from myc.lower.hostplan import Check, LoopOp, Select, Tape, TapeGet, Value

# the emitter these functions extend (``aot_codegen.HostGen``, which imports this module:
# named here, not imported)
HostGen = Any

TAPE_START = 16  # iterations a tape holds before its first realloc


def _intrinsics(hg: HostGen) -> tuple[ir.Function, ir.Function]:
    m = hg.m
    save = m.globals.get("llvm.stacksave.p0")
    if save is None:
        save = ir.Function(m, ir.FunctionType(PTR, []), "llvm.stacksave.p0")
        ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR]), "llvm.stackrestore.p0")
    return save, m.globals["llvm.stackrestore.p0"]


def _copy(hg: HostGen, dst, src, v: Value) -> None:
    nbytes = hg.i64(v.nbytes)
    if isinstance(v.nbytes, int) and not v.nbytes:
        return
    hg.b.call(hg.memcpy, [dst, src, nbytes])


def _truth(hg: HostGen, v: Value) -> ir.Value:
    """A 0-d value as an ``i1`` (any nonzero byte pattern of its dtype is true)."""
    from myc.backends.cpu.codegen import MEMTYPE

    b = hg.b
    ty = MEMTYPE[v.dtype]
    x = b.load(hg.get(v), typ=ty)
    if isinstance(ty, (ir.FloatType, ir.DoubleType)):
        return b.fcmp_unordered("!=", x, ir.Constant(ty, 0.0))
    return b.icmp_unsigned("!=", x, ir.Constant(ty, 0))


def emit_select(hg: HostGen, op: Select) -> None:
    b = hg.b
    src = b.select(_truth(hg, op.cond), hg.get(op.a), hg.get(op.b))
    _copy(hg, hg.get(op.out), src, op.out)


def emit_check(hg: HostGen, op: Check) -> None:
    hg.check(_truth(hg, op.flag), "MYC_ERR_RAISE",
             f"myc: {hg.p.name}: " + op.message.replace("%", "%%"), free_arena=True)


def emit_tape_get(hg: HostGen, op: TapeGet) -> None:
    b = hg.b
    cells = hg.tapes[id(op.tape)]
    v = op.tape.states[op.index]
    k = b.load(hg.get(op.step), typ=I64)
    base = b.load(cells["rows"][op.index], typ=PTR)
    src = b.gep(base, [b.mul(k, hg.i64(v.nbytes))], source_etype=I8)
    _copy(hg, hg.get(op.out), src, op.out)


def tape_cells(hg: HostGen, tape: Tape) -> dict[str, Any]:
    """The stack cells of ``tape`` (made in the prologue, so every path can free them):
    one row-buffer pointer per state value (NULL until the first iteration), its
    capacity and its count."""
    got = hg.tapes.get(id(tape))
    if got is None:
        rows = [hg.heap_cell() for _ in tape.states]
        got = hg.tapes[id(tape)] = {"rows": rows, "cap": hg.prologue_i64(0),
                                    "count": hg.prologue_i64(0)}
    return got


def _record(hg: HostGen, op: LoopOp) -> None:
    """Append the current state to the tape, growing it first when it is full; only
    the states the backward loop reads are stored (not, e.g., a value that is carried
    only to be returned)."""
    b = hg.b
    cells = tape_cells(hg, op.tape)
    count = b.load(cells["count"], typ=I64)
    cap = b.load(cells["cap"], typ=I64)
    with b.if_then(b.icmp_signed(">=", count, cap), likely=False):
        doubled, over = hg.checked("smul", cap, ir.Constant(I64, 2))
        new_cap = b.select(b.icmp_signed("==", cap, ir.Constant(I64, 0)),
                           ir.Constant(I64, TAPE_START), doubled)
        for j in op.tape.read:
            cell, v = cells["rows"][j], op.tape.states[j]
            nbytes, o = hg.checked("smul", new_cap, hg.i64(v.nbytes))
            too_big = b.or_(over, o)
            hg.check(b.not_(too_big), "MYC_ERR_ALLOC",
                     f"myc: {hg.p.name}: out of memory growing the tape of the loop at "
                     f"line {op.line}: %lld iterations of %lld bytes overflow 64 bits",
                     new_cap, hg.i64(v.nbytes), free_arena=True)
            nbytes = b.select(b.icmp_signed(">", nbytes, ir.Constant(I64, 0)), nbytes,
                              ir.Constant(I64, 1))
            grown = b.call(hg.realloc, [b.load(cell, typ=PTR), nbytes])
            hg.check(b.icmp_unsigned("!=", grown, ir.Constant(PTR, None)), "MYC_ERR_ALLOC",
                     f"myc: {hg.p.name}: out of memory growing the tape of the loop at "
                     f"line {op.line} to %lld iterations (%lld bytes)", new_cap, nbytes,
                     free_arena=True)
            b.store(grown, cell)
        b.store(new_cap, cells["cap"])
    for j in op.tape.read:
        cell, v = cells["rows"][j], op.tape.states[j]
        row = b.gep(b.load(cell, typ=PTR), [b.mul(count, hg.i64(v.nbytes))], source_etype=I8)
        _copy(hg, row, hg.get(v), v)
    b.store(b.add(count, ir.Constant(I64, 1)), cells["count"])


def emit_loop(hg: HostGen, op: LoopOp) -> None:
    b = hg.b
    fn = hg.fn
    run = fn.append_basic_block("loop.run")
    head = fn.append_basic_block("loop.head")
    step = fn.append_basic_block("loop.next")
    leave = fn.append_basic_block("loop.exit")
    skip = fn.append_basic_block("loop.skip")
    done = fn.append_basic_block("loop.done")
    if op.enabled is not None:
        b.cbranch(_truth(hg, op.enabled), run, skip)
    else:
        b.branch(run)
    b.position_at_end(run)
    for s, v in zip(op.state, op.init, strict=True):
        _copy(hg, hg.get(s), hg.get(v), s)
    if op.tape is not None:
        b.store(ir.Constant(I64, 0), tape_cells(hg, op.tape)["count"])
    b.branch(head)

    b.position_at_end(head)
    save, restore = _intrinsics(hg)
    mark = b.call(save, [])
    if op.tape is not None:
        _record(hg, op)
    hg.emit_ops(op.body)
    go = _truth(hg, op.go_on)
    b.call(restore, [mark])
    b.cbranch(go, step, leave)

    b.position_at_end(step)
    states = {id(s): j for j, s in enumerate(op.state)}
    for j, (s, nxt) in enumerate(zip(op.state, op.next_state, strict=True)):
        if op.staged and op.staged[j] is not None:  # another state buffer: stage it
            _copy(hg, hg.get(op.staged[j]), hg.get(nxt), s)
    for j, (s, nxt) in enumerate(zip(op.state, op.next_state, strict=True)):
        if states.get(id(nxt)) == j:
            continue  # unchanged
        src = op.staged[j] if op.staged and op.staged[j] is not None else nxt
        _copy(hg, hg.get(s), hg.get(src), s)
    b.branch(head)

    b.position_at_end(leave)
    for r, x in zip(op.results, op.exits, strict=True):
        if r is not None:
            _copy(hg, hg.get(r), hg.get(x), r)
    if op.count is not None:
        n = b.load(tape_cells(hg, op.tape)["count"], typ=I64)
        b.store(n, hg.get(op.count))
    b.branch(done)

    b.position_at_end(skip)
    for r in op.results:
        if r is not None and not (isinstance(r.nbytes, int) and not r.nbytes):
            b.call(hg.memset, [hg.get(r), ir.Constant(ir.IntType(32), 0), hg.i64(r.nbytes)])
    if op.count is not None:
        b.store(ir.Constant(I64, 0), hg.get(op.count))
        b.store(ir.Constant(I64, 0), tape_cells(hg, op.tape)["count"])
    b.branch(done)
    b.position_at_end(done)
