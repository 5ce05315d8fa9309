"""Data-dependent control flow in ahead-of-time libraries: loops, selects and tapes.

``myc/lower/planned.py`` turns a ``loop`` node of the typed program (``myc/infer/control.py``:
a typed body run until its first output is false) into a :class:`LoopOp`, an
if-converted branch (``select``) into a :class:`Select`, and the reads of a taped loop's
state that a gradient's backward loop makes (``tape_get``) into :class:`TapeGet`.
:class:`~myc.backends.cpu.aot_codegen.HostGen` emits them with the functions here; the
loop itself is ``loop_emit``'s, the emitter of the JIT's native loops, under AOT's
policies.

How a loop runs in the library (one call of the exported function):

* every loop-carried value has one fixed buffer in the call's arena; the initial state
  is copied in, and after each iteration the next state is copied over it (through a
  staging buffer only where a next state is another state buffer: a swap;
  ``loop_emit.Copied``).  The body's intermediates have their own arena buffers, so no
  kernel reads what it writes;
* the loop runs as Python would, with no iteration limit: the body (kernels, GEMM,
  copies) runs, then its ``go_on`` value decides;
* allocations a body makes on the machine stack (dynamic-size arrays of kernel
  arguments, thread bookkeeping) are released after each iteration
  (``llvm.stacksave``/``llvm.stackrestore``: a scoped ``loop_emit.Loop``), so a long
  loop does not grow the stack;
* a **taped** loop (the forward rerun of a gradient's loop) also stores the state at
  the start of every iteration, in one ``malloc``-ed buffer per state value that grows
  with ``realloc`` (doubling, from 16 iterations: ``loop_emit.GrowingTape``); when
  ``realloc`` fails the call frees what it holds and returns ``MYC_ERR_ALLOC`` with a
  message (``loop_emit.Status``).  The buffers are freed when the call returns.  The
  backward loop reads them with :class:`TapeGet`.

Python's ints are 64-bit machine ints here (the JIT falls back to Python's semantics
where they would overflow; a library cannot), see ``docs/aot.md``.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from myc.backends.cpu import loop_emit
from myc.backends.cpu.emit import I8, I64, PTR
from myc.lower.hostplan import Check, LoopOp, Select, Tape, TapeGet, Value

# the emitter these functions extend (``aot_codegen.HostGen``, which imports this module:
# named here, not imported)
HostGen = Any


def _copy(hg: HostGen, dst, src, v: Value) -> None:
    loop_emit.memcpy(hg.b, dst, src, hg.size(v.nbytes))


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
    hg.fail.unless(hg.b, _truth(hg, op.flag), "MYC_ERR_RAISE",
                   f"myc: {hg.p.name}: " + op.message.replace("%", "%%"))


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


def emit_loop(hg: HostGen, op: LoopOp) -> None:
    """``op`` as ``loop_emit``'s loop (the JIT's native loops' emitter) under AOT's
    policies: states copied over fixed buffers, a growing tape, failures as statuses,
    the stack released after each iteration; around it what only an AOT loop has --
    the state set from ``init`` on entry, the exits copied into ``results``, and the
    untaken side of an if-converted branch (``enabled`` false: zero results)."""
    b = hg.b
    fn = hg.fn
    run = fn.append_basic_block("loop.run")
    skip = fn.append_basic_block("loop.skip")
    done = fn.append_basic_block("loop.done")
    if op.enabled is not None:
        b.cbranch(_truth(hg, op.enabled), run, skip)
    else:
        b.branch(run)
    b.position_at_end(run)
    for s, v in zip(op.state, op.init, strict=True):
        _copy(hg, hg.get(s), hg.get(v), s)
    fail = hg.fail
    tape = rows = None
    if op.tape is not None:
        cells = tape_cells(hg, op.tape)
        b.store(ir.Constant(I64, 0), cells["count"])
        tape = loop_emit.GrowingTape(
            cells["rows"], cells["cap"], cells["count"], hg.realloc, hg.checked, fail,
            f"myc: {hg.p.name}: out of memory growing the tape of the loop at line "
            f"{op.line}")
        rows = [loop_emit.TapeRow(j, hg.size(op.tape.states[j].nbytes),
                                  lambda v=op.tape.states[j]: hg.get(v))
                for j in op.tape.read]
    staged = [op.staged[j] if op.staged else None for j in range(len(op.state))]
    states = loop_emit.Copied([hg.get(s) for s in op.state],
                              [hg.get(v) if v is not None else None for v in staged])
    loop = loop_emit.Loop(b, states, fail, tape, rows, scoped=True)
    loop.start()
    hg.emit_ops(op.body)
    index = {id(s): j for j, s in enumerate(op.state)}
    loop.close(lambda: _truth(hg, op.go_on),
               [loop_emit.Next(None) if index.get(id(nxt)) == j else
                loop_emit.Next(lambda nxt=nxt: hg.get(nxt), hg.size(s.nbytes))
                for j, (s, nxt) in enumerate(zip(op.state, op.next_state, strict=True))])

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
