"""Where the buffers of a JIT host program go: a plan keyed by ``hostplan.Value``.

A native generator of the JIT's host programs (``myc.backends.cpu.loopgen``) gives
each step result that is not a view a buffer.  Which buffer is decided here, from the
program's steps and values alone -- nothing here names a target -- so the generator
reads a placement as AOT's emitter reads its plan's buffers
(``hostplan.stored_buffers``):

* a transpose of the last two axes read only by matrix products is never made: the
  products read its source with a transpose flag (``Placement.flags``); read by
  anything else too, it is copied as well (``Placement.copied``);
* a program run once writes each array result into the array handed back
  (``Exit``), so nothing is copied at its end;
* a loop's kernel computing a carried array's next value writes it into that state's
  free buffer (``State``), so nothing is copied per iteration;
* a product accumulated into a sum that nothing else reads adds into the sum's buffer
  (``Shared``);
* an element update of a carried array that nothing else reads updates the state's
  own buffer (``Placement.rows``: no buffer of its own);
* anything else: a scratch buffer of its own (``SCRATCH``).

What the generator decides itself is which steps' results are views of other data (a
row by a computed int, a contiguous window: ``views``) and which guarded row updates
it runs everywhere (``guarded_rows``): those depend on what its code covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from myc.lower.hostplan import Permute, Value
from myc.prims.abstract import AArray

# matrix products (``gemm_acc``: ``a @ b + c``, into c's buffer when nothing else reads c)
GEMM_KINDS = ("gemm", "gemm_acc")
# the op kinds whose array result has a buffer of its own, unless a view
ARRAY_KINDS = frozenset({"index", "scatter_add", "index_set", "fill", "arg_extreme", "pack",
                         "window", "window_add", "concatenate", "transpose", "alias"})


@dataclass(frozen=True)
class Exit:
    """The array handed back as exit value ``index``."""

    index: int


@dataclass(frozen=True)
class State:
    """The free buffer of loop state ``index`` (the next state, written in place)."""

    index: int


@dataclass(frozen=True)
class Shared:
    """The buffer of another value (a sum accumulated in place)."""

    value: Value


SCRATCH = "scratch"  # a buffer of its own


def is_matrix_transpose(st: Any) -> bool:
    """A swap of the last two axes of an array of 2 or more dimensions (an ``mT``) read
    from a slot: ``mT(x)``, ``transpose(x, None)`` / ``(1, 0)`` of a 2-d array, or
    ``transpose`` with axes ``(0, ..., n-3, n-1, n-2)`` (the step's ``Permute``).  A
    matrix product reads such a value as a transpose flag."""
    if st.guarded or not isinstance(st.host, Permute) or not st.inputs[0][0]:
        return False
    n = len(st.host.perm)
    return n >= 2 and st.host.perm == (*range(n - 2), n - 1, n - 2)


@dataclass
class Placement:
    """The buffers of one program or loop body (``body``: its steps, specs, values,
    outputs; ``nstate`` carried values).  Made in two parts: the reads and transpose
    flags (``Placement(body, nstate)``), which the generator's checks consult, then the
    buffers (``place``), once the checks have said which steps are views."""

    body: Any
    nstate: int
    readers: dict[int, int] = field(init=False)  # slot -> how many reads
    flags: dict[int, tuple[bool, Any]] = field(init=False)  # mT slot -> its source operand
    copied: set[int] = field(init=False)  # mT slots also read by other than products
    direct: dict[int, int] = field(default_factory=dict)  # slot -> its exit (``Exit``)
    swapped: dict[int, int] = field(default_factory=dict)  # kernel output slot -> state
    rows: dict[int, int] = field(default_factory=dict)  # step -> the state it updates
    buffers: dict[Value, Any] = field(default_factory=dict)  # step result -> placement

    def __post_init__(self) -> None:
        body = self.body
        reads: dict[int, list[bool]] = {}  # slot -> per read: is it a product's factor?
        self.flags = {}
        for st in body.steps:
            if is_matrix_transpose(st):
                self.flags[st.output] = st.inputs[0]
            gemm = st.op in GEMM_KINDS and not st.guarded
            for k, (is_slot, x) in enumerate(st.inputs):
                if is_slot:  # (a product's factors are GEMM operands; its addend is not)
                    reads.setdefault(x, []).append(gemm and (st.op == "gemm" or k < 2))
        for is_slot, x in body.outputs:
            if is_slot:
                reads.setdefault(x, []).append(False)
        self.copied = {x for x in self.flags if not all(reads.get(x, []))}
        self.readers = {x: len(r) for x, r in reads.items()}

    @property
    def once(self) -> bool:
        return bool(getattr(self.body, "once", False))

    def owns(self, st: Any, views: set[int], si: int) -> bool:
        """Does op step ``si`` (``st``) write an array (or a product's number) into a
        buffer of its own?"""
        if st.output in self.flags:
            return st.output in self.copied
        return st.op in GEMM_KINDS or st.op == "matrix_transpose" or (
            st.op in ARRAY_KINDS and isinstance(self.body.specs[st.output], AArray)
            and si not in views)

    def place(self, views: set[int], guarded_rows: set[int], nested: bool) -> Placement:
        """Every step result's buffer (``buffers``, by its value: a kernel's outputs are
        its ``KernelOp``'s), given the steps whose results are views (``views``), the
        guarded row updates the generator runs everywhere (``guarded_rows``), and whether
        this is a loop nested in another (its exits are handed back as values)."""
        body, specs, values = self.body, self.body.specs, self.body.values
        steps = body.steps
        self.direct, self.swapped, self.rows, self.buffers = {}, {}, {}, {}
        if self.once:
            written = set()  # slots a step writes into a buffer of its own
            for si, st in enumerate(steps):
                if st.kind == "kernel":
                    written.update(st.outputs)
                elif st.kind == "op" and self.owns(st, views, si):
                    written.add(st.output)
            for e, (is_slot, x) in enumerate(body.outputs[1 + self.nstate:]):
                if is_slot and x in written and isinstance(specs[x], AArray) \
                        and x not in self.direct:
                    self.direct[x] = e
        else:
            self.swapped = self._swapped()
            self.rows = self._rows_in_place(guarded_rows, nested)
        state = [values[p] for p in body.params[:self.nstate]]
        made: dict[int, Value] = {}  # slot -> the value whose buffer it is
        for si, st in enumerate(steps):
            if st.kind == "kernel":
                for slot, v in zip(st.outputs, st.host.outputs, strict=True):
                    made[slot] = v
                    j = self.swapped.get(slot)
                    if slot in self.direct:
                        self.buffers[v] = Exit(self.direct[slot])
                    elif j is not None and (tuple(v.shape), np.dtype(v.dtype)) == (
                            state[j].shape, np.dtype(state[j].dtype)):
                        self.buffers[v] = State(j)
                    else:
                        self.buffers[v] = SCRATCH
            elif st.kind == "op" and si not in self.rows and self.owns(st, views, si):
                v = made[st.output] = values[st.output]
                addend = st.inputs[2][1] if st.op == "gemm_acc" else None
                under = self.buffers.get(made.get(addend))  # (the sum so far's buffer)
                if (under == SCRATCH or isinstance(under, Shared)) and \
                        st.output not in self.direct and self.readers.get(addend) == 1:
                    # the sum so far is read by this product only: accumulate in place
                    self.buffers[v] = under if isinstance(under, Shared) else \
                        Shared(made[addend])
                elif st.output in self.direct:
                    self.buffers[v] = Exit(self.direct[st.output])
                else:
                    self.buffers[v] = SCRATCH
        return self

    def _swapped(self) -> dict[int, int]:
        """Loop-carried arrays whose next value a kernel of the body computes, by that
        kernel output's slot: ``slot -> state index``.  The kernel writes into the
        state's buffer not being read this iteration -- the one the iteration's end
        copied its result into -- so the copy goes (a 10^6-step loop over 1000 floats
        copied 8 KB per step).  Nothing else reads that buffer during the iteration: it
        held the state of the iteration before last."""
        body, specs, n = self.body, self.body.specs, self.nstate
        written = {o for st in body.steps if st.kind == "kernel" for o in st.outputs}
        outs = [x for is_slot, x in body.outputs[1:1 + n] if is_slot]
        found = {}
        for j in range(n):
            is_slot, x = body.outputs[1 + j]
            a = specs[body.params[j]]
            if is_slot and x in written and outs.count(x) == 1 and isinstance(a, AArray) \
                    and specs[x] == a and a.dtype.kind != "b":
                found[x] = j
        return found

    def _rows_in_place(self, guarded_rows: set[int], nested: bool) -> dict[int, int]:
        """``index_set`` steps that update a loop-carried array in place, by step: state
        ``j``'s next value is its own buffer with a view stored (an append to a stacked
        list: a row at the count; a backward loop's cotangent of it, the row zeroed), and
        nothing else reads that result but exit values (then the state itself is none:
        the row is stored in the last run too, before the exits are copied).  The
        generator stores it as the state advances (after every step of the iteration
        has read the buffer, and never in the run that finds the loop done, whose exit
        values may be the buffer) -- so the buffer is neither copied nor swapped per
        iteration (a copy of ``trips`` rows per append made an appending loop
        quadratic); the initial state is copied into the buffer once.  The next value
        may be a chain of row stores into the state, each read only by the next (a
        backward loop zeroing the cotangent of the row its primal wrote and adding that
        of a row it read, ``myc.infer.row_merge.row_of_stores``): stored in step order,
        their values computed from the state before any is stored.  A guarded one
        (``H[t] = h`` on the loop's own ``t < n``, or under an ``if``) only where the
        generator runs it everywhere (``guarded_rows``): elsewhere its value is
        discarded by a select, so the state left as it was serves as well.  A nested
        loop's exits are handed back as values: a state that is one is stored by
        copies."""
        body, specs, n = self.body, self.body.specs, self.nstate
        state_of = {p: j for j, p in enumerate(body.params[:n])}
        exits = [x for is_slot, x in body.outputs[1 + n:] if is_slot]
        chains: dict[int, tuple[int, list[int]]] = {}  # last store's slot -> (j, steps)
        for si, st in enumerate(body.steps):
            ins_ = st.inputs[3:] if st.guarded else st.inputs
            if st.op != "index_set" or (st.guarded and si not in guarded_rows) or \
                    not ins_[0][0] or not isinstance(specs[st.output], AArray):
                continue
            base = ins_[0][1]
            if base in state_of:
                chains[st.output] = (state_of[base], [si])
            elif base in chains and self.readers.get(base) == 1 and base not in exits and \
                    specs[base] == specs[st.output]:
                j, sis = chains.pop(base)
                chains[st.output] = (j, [*sis, si])
        found: dict[int, int] = {}
        for out, (j, sis) in chains.items():
            if j in found.values() or tuple(body.outputs[1 + j]) != (True, out) or \
                    self.readers.get(out) != 1 + exits.count(out) or \
                    (out in exits and (nested or body.params[j] in exits)) or \
                    specs[out] != specs[body.params[j]]:
                continue
            found.update((si, j) for si in sis)
        return found
