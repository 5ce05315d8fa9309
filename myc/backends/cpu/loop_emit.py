"""Data-dependent loops in host programs, for the JIT's native loops and AOT libraries'
``LoopOp`` alike: the loop's blocks, its test, how the next state replaces the state,
and the tape a gradient's backward loop reads.

A :class:`Loop` is emitted in two calls around its body: :meth:`Loop.start` branches to
the loop's head, where each iteration begins (an interrupt poll where the program can
return to Python, the stack mark of a scoped loop, the tape's row for this iteration),
and :meth:`Loop.close` ends the body with the test: where ``go`` holds the next state
replaces the state and the next iteration starts, else the builder is left at the
loop's exit.  What the two generators do differently is a policy object:

* **the state** -- :class:`Swapped` (the JIT: two buffers per loop-carried array and a
  bit saying which one the next state goes into, so a kernel may write the next state
  straight into it; scalars live in the program's slots) or :class:`Copied` (AOT: one
  fixed buffer per state value, the next state copied over it, through a staging buffer
  where the next state is another state's buffer: a swap);
* **the tape** -- :class:`BoundedTape` (the JIT: buffers the caller sized for ``cap``
  iterations; a full tape returns a status, and the runner grows them and runs again)
  or :class:`GrowingTape` (AOT: ``malloc``-ed rows grown by ``realloc``, doubling from
  :data:`TAPE_START`; an allocation that fails or overflows is a failure of the call);
  both store one row per iteration, at ``count * row bytes``, and count the iterations;
* **failure** -- :class:`BailOut` (the JIT: branch to the block that returns to
  Python, which raises or reruns the step by step; Ctrl-C polled once per iteration) or
  :class:`Status` (AOT: a status code and message through the library's error path; a
  library does not poll).

Sizes (a row's bytes, a state's bytes) are Python ints when static and ``ir.Value``s
when computed from an AOT library's dynamic sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llvmlite import ir

from myc.backends.cpu import interrupt
from myc.backends.cpu.emit import I1, I8, I32, I64, PTR, Count, declare, i64

TAPE_START = 16  # iterations a growing tape holds before its first realloc


def memcpy(b: ir.IRBuilder, dst: ir.Value, src: ir.Value, nbytes: Count) -> None:
    """``nbytes`` bytes from ``src`` to ``dst`` (``llvm.memcpy``); nothing when that is
    statically 0."""
    if isinstance(nbytes, int) and not nbytes:
        return
    fn = declare(b.module, "llvm.memcpy.p0.p0.i64", ir.VoidType(), [PTR, PTR, I64, I1])
    b.call(fn, [dst, src, i64(nbytes), ir.Constant(I1, 0)])


# -- failure ----------------------------------------------------------------------------
class BailOut:
    """The JIT's failure path: ``bail_if(bad)`` branches to the block returning status 1
    (the runner reruns the step by step, which gives CPython's answer or error); with
    ``polls`` every iteration first checks the SIGINT flag (:meth:`interrupted`: Python
    raises the KeyboardInterrupt)."""

    def __init__(self, bail_if: Callable[[ir.Value], None], polls: bool = True):
        self.bail_if = bail_if
        self.polls = polls

    def unless(self, b: ir.IRBuilder, ok: ir.Value, status: str, message: str,
               *args: ir.Value) -> None:
        self.bail_if(b.not_(ok))

    def interrupted(self, b: ir.IRBuilder) -> None:
        """Bail out when SIGINT's flag is set (``interrupt``): one relaxed load and a
        branch (atomic, so LLVM neither hoists it out of the loop nor merges it)."""
        flag = b.module.globals.get(interrupt.SYMBOL)
        if flag is None:
            flag = ir.GlobalVariable(b.module, I32, interrupt.SYMBOL)
        v = b.load_atomic(flag, "monotonic", 4, typ=I32)
        self.bail_if(b.icmp_signed("!=", v, ir.Constant(I32, 0)))

    def iteration(self, b: ir.IRBuilder) -> None:
        if self.polls:
            self.interrupted(b)


class Status:
    """AOT's failure path: ``status`` (a ``MYC_ERR_*`` name) returned with ``message``
    (a printf format over ``args``) through the library's error path, which frees what
    the call holds (``aot_abi.check``)."""

    def __init__(self, check: Callable[..., None]):
        self.check = check

    def unless(self, b: ir.IRBuilder, ok: ir.Value, status: str, message: str,
               *args: ir.Value) -> None:
        self.check(ok, status, message, *args, free_arena=True)

    def iteration(self, b: ir.IRBuilder) -> None:
        pass  # a library is not interrupted from inside


# -- the tape ---------------------------------------------------------------------------
@dataclass
class TapeRow:
    """What one state value stores per iteration: ``nbytes`` bytes, copied from the
    pointer ``src()`` returns, or stored as the number it returns (``scalar``)."""

    index: int  # which of the tape's row buffers
    nbytes: Count
    src: Callable[[], ir.Value]
    scalar: bool = False


class _Tape:
    count_cell: ir.Value

    def base(self, b: ir.IRBuilder, j: int) -> ir.Value:
        raise NotImplementedError

    def make_room(self, b: ir.IRBuilder, count: ir.Value, rows: list[TapeRow]) -> None:
        raise NotImplementedError

    def record(self, b: ir.IRBuilder, rows: list[TapeRow]) -> None:
        """This iteration's row of each of ``rows`` at ``count``, then ``count + 1``."""
        count = b.load(self.count_cell, typ=I64)
        self.make_room(b, count, rows)
        for row in rows:
            dst = b.gep(self.base(b, row.index), [b.mul(count, i64(row.nbytes))],
                        source_etype=I8)
            if row.scalar:
                b.store(row.src(), dst)
            else:
                memcpy(b, dst, row.src(), row.nbytes)
        b.store(b.add(count, ir.Constant(I64, 1)), self.count_cell)


class BoundedTape(_Tape):
    """Row buffers of ``cap`` iterations the caller made (``rows``, pointers); one more
    iteration returns ``full_status`` from ``fn`` (the JIT's runner grows the tape and
    runs the loop again)."""

    def __init__(self, fn: ir.Function, rows: list[ir.Value], cap_cell: ir.Value,
                 count_cell: ir.Value, full_status: int):
        self.rows = rows
        self.cap_cell = cap_cell
        self.count_cell = count_cell
        self.full = fn.append_basic_block("tape_full")
        ir.IRBuilder(self.full).ret(ir.Constant(I32, full_status))

    def base(self, b: ir.IRBuilder, j: int) -> ir.Value:
        return self.rows[j]

    def make_room(self, b: ir.IRBuilder, count: ir.Value, rows: list[TapeRow]) -> None:
        more = b.function.append_basic_block("tape_room")
        b.cbranch(b.icmp_signed(">=", count, b.load(self.cap_cell, typ=I64)), self.full, more)
        b.position_at_end(more)


@dataclass
class GrowingTape(_Tape):
    """Row buffers on the heap (``cells``: stack cells holding their pointers, NULL at
    first, freed on every exit by the caller), grown by ``realloc`` when full: doubling,
    from :data:`TAPE_START` iterations.  An overflowing size or a failed ``realloc`` is
    ``fail``'s ``MYC_ERR_ALLOC`` (``what`` names the loop in the message);
    ``checked(op, x, y)`` is ``x op y`` with its overflow bit."""

    cells: list[ir.Value]
    cap_cell: ir.Value
    count_cell: ir.Value
    realloc: ir.Function
    checked: Callable[..., tuple[ir.Value, ir.Value]]
    fail: Status | BailOut
    what: str

    def base(self, b: ir.IRBuilder, j: int) -> ir.Value:
        return b.load(self.cells[j], typ=PTR)

    def make_room(self, b: ir.IRBuilder, count: ir.Value, rows: list[TapeRow]) -> None:
        cap = b.load(self.cap_cell, typ=I64)
        with b.if_then(b.icmp_signed(">=", count, cap), likely=False):
            doubled, over = self.checked("smul", cap, ir.Constant(I64, 2))
            new_cap = b.select(b.icmp_signed("==", cap, ir.Constant(I64, 0)),
                               ir.Constant(I64, TAPE_START), doubled)
            for row in rows:
                cell = self.cells[row.index]
                nbytes, o = self.checked("smul", new_cap, i64(row.nbytes))
                self.fail.unless(b, b.not_(b.or_(over, o)), "MYC_ERR_ALLOC",
                                 f"{self.what}: %lld iterations of %lld bytes overflow "
                                 "64 bits", new_cap, i64(row.nbytes))
                nbytes = b.select(b.icmp_signed(">", nbytes, ir.Constant(I64, 0)), nbytes,
                                  ir.Constant(I64, 1))
                grown = b.call(self.realloc, [b.load(cell, typ=PTR), nbytes])
                self.fail.unless(b, b.icmp_unsigned("!=", grown, ir.Constant(PTR, None)),
                                 "MYC_ERR_ALLOC", f"{self.what} to %lld iterations "
                                 "(%lld bytes)", new_cap, nbytes)
                b.store(grown, cell)
            b.store(new_cap, self.cap_cell)


# -- the state --------------------------------------------------------------------------
@dataclass
class Next:
    """A state value's next value: ``src()`` (a pointer to ``nbytes`` bytes, or the number
    itself where ``nbytes`` is None); ``src`` None: the state already holds it (the
    value unchanged, or written in place by the kernel computing it) -- or ``update``
    makes it so: ``update(buffer)`` writes into the state's own buffer (a row stored into
    a stacked list's buffer: ``index_set`` in place), once every other next value is
    taken and before the slots change, so every step of the iteration read the buffer
    before, and the run that finds the loop done never writes it."""

    src: Callable[[], ir.Value] | None
    nbytes: Count | None = None
    update: Callable[[ir.Value], None] | None = None


class Swapped:
    """The JIT's loop-carried state: two buffers per array (``bufs[j]``), a bit saying
    which one the next state goes into (:meth:`next_buffer`: a kernel may write the next
    state there directly), and ``set_state(j, value)`` pointing the state's slot at the
    buffer (or storing the number) once every next value is computed."""

    def __init__(self, b: ir.IRBuilder, bufs: dict[int, tuple[ir.Value, ir.Value]],
                 set_state: Callable[[int, ir.Value], None]):
        self.bufs = bufs
        self.set_state = set_state
        self.cur = b.alloca(I1)
        b.store(ir.Constant(I1, 0), self.cur)

    def next_buffer(self, b: ir.IRBuilder, j: int) -> ir.Value:
        return b.select(b.load(self.cur, typ=I1), *self.bufs[j])

    def advance(self, b: ir.IRBuilder, nexts: list[Next]) -> None:
        c = b.load(self.cur, typ=I1)
        values = []
        for j, nx in enumerate(nexts):
            if j in self.bufs:
                dst = b.select(c, *self.bufs[j])  # (an updated state: one buffer twice)
                if nx.src is not None:
                    memcpy(b, dst, nx.src(), nx.nbytes)
                values.append(dst)
            else:
                values.append(nx.src())
        for j, nx in enumerate(nexts):
            if nx.update is not None:
                nx.update(values[j])
        for j, v in enumerate(values):
            self.set_state(j, v)
        b.store(b.not_(c), self.cur)


class Copied:
    """AOT's loop-carried state: one buffer per state value (``bufs``), the next state
    copied over it; ``staged[j]``, where not None, a buffer the next value passes
    through first (it is another state's buffer, overwritten in the same update)."""

    def __init__(self, bufs: list[ir.Value], staged: list[ir.Value | None]):
        self.bufs = bufs
        self.staged = staged

    def advance(self, b: ir.IRBuilder, nexts: list[Next]) -> None:
        for j, nx in enumerate(nexts):
            if self.staged[j] is not None and nx.src is not None:
                memcpy(b, self.staged[j], nx.src(), nx.nbytes)
        for j, nx in enumerate(nexts):
            if nx.src is None:
                continue
            src = self.staged[j] if self.staged[j] is not None else nx.src()
            memcpy(b, self.bufs[j], src, nx.nbytes)
        for j, nx in enumerate(nexts):
            if nx.update is not None:
                nx.update(self.bufs[j])


# -- the loop ---------------------------------------------------------------------------
def _stack_intrinsics(module: ir.Module) -> tuple[ir.Function, ir.Function]:
    return (declare(module, "llvm.stacksave.p0", PTR, []),
            declare(module, "llvm.stackrestore.p0", ir.VoidType(), [PTR]))


class Loop:
    """One loop's blocks: ``head`` (an iteration starts), ``update`` (the next state
    replaces the state) and ``exit``.  ``scoped``: what the body allocates on the stack
    is released after each iteration (a long loop does not grow the stack: AOT's
    dynamic-size kernel arguments); ``tape``/``rows``: the state stored per iteration."""

    def __init__(self, b: ir.IRBuilder, states: Swapped | Copied, fail: BailOut | Status,
                 tape: _Tape | None = None, rows: list[TapeRow] | None = None,
                 scoped: bool = False):
        self.b = b
        self.states = states
        self.fail = fail
        self.tape = tape
        self.rows = rows or []
        self.scoped = scoped
        fn = b.function
        self.head = fn.append_basic_block("loop")
        self.update = fn.append_basic_block("update")
        self.exit = fn.append_basic_block("exit")
        self.mark: Any = None

    def start(self) -> None:
        """Enter the loop: the builder is left in its head, where the body goes."""
        b = self.b
        b.branch(self.head)
        b.position_at_end(self.head)
        self.fail.iteration(b)
        if self.scoped:
            self.mark = b.call(_stack_intrinsics(b.module)[0], [])
        if self.tape is not None:
            self.tape.record(b, self.rows)

    def close(self, go: Callable[[], ir.Value], nexts: list[Next]) -> None:
        """End the body: ``go()`` (an ``i1``) decides between another iteration, after
        the state takes ``nexts``, and the exit, where the builder is left."""
        b = self.b
        g = go()
        if self.scoped:
            b.call(_stack_intrinsics(b.module)[1], [self.mark])
        b.cbranch(g, self.update, self.exit)
        b.position_at_end(self.update)
        self.states.advance(b, nexts)
        b.branch(self.head)
        b.position_at_end(self.exit)
