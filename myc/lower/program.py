"""The host program: an ordered list of steps over numbered value slots.

Lowering turns the optimized typed graph into steps: each fusion group
(``myc.opt.fusion``, the pipeline's ``fused`` stage) becomes one kernel step compiled by
the backend, each other primitive a step running its NumPy reference on its slots, a
data-dependent loop a step running its body's program.  What the backend provides is
asked through ``myc.lower.target`` (the backend's name is kept, so a program pickles).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from myc.errors import MycError
from myc.ir.evaluator import translate_exception
from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Constant, Graph, Node, Parameter
from myc.lower.hostplan import gemm_op, kernel_op, slot_value, transpose_op
from myc.lower.step_ops import classify, primitives_of
from myc.lower.target import _TARGETS, Bailout, owner, target
from myc.prims import P, Primitive
from myc.prims.abstract import DEVICE_ARRAY_TYPES, AArray, AScalar, abstract_of
from myc.prims.containers import leaves_of, like
from myc.prims.effects import bind as bind_rngs
from myc.prims.effects import is_generator
from myc.prims.effects import unbind as unbind_rngs
from myc.support.stats import lowering_fallback, note_run
from myc.timings import add as add_count
from myc.timings import timed


class GuardFailed(Exception):  # noqa: N818 - a control signal
    """A guarded program's data-dependent decisions differ for this call."""


# what a step is, decided once by the lowering (a backend's generator reads this, not
# the type of ``Step.fn``): a fusion group's kernel, a data-dependent loop running its
# body program, a call of a typed function's program, or one primitive (``name``), what
# it computes told finer by ``Step.op`` (``myc.lower.step_ops.OP_KINDS``)
STEP_KINDS = ("kernel", "loop", "call", "op")


@dataclass
class Step:
    fn: Any  # a Primitive or a compiled kernel: called with the input values
    inputs: list[tuple[bool, Any]]  # (is_slot, slot index or constant value)
    output: int
    loc: Any = None
    name: str = ""
    outputs: list[int] | None = None  # a kernel's several results, in order
    kernel: Any = None  # the kernel IR of a fused step, a loop's runner (for printing)
    when: Any = None  # (slot, value): run only when that condition has that truth value
    kind: str = "op"  # one of STEP_KINDS
    # an ``op`` step: what it computes (``step_ops.OP_KINDS``), and whether it runs only
    # where a path holds (``guarded(path, prim, abstract, *args)``: ``name`` is ``prim``'s)
    op: str = ""
    guarded: bool = False
    # a ``kernel`` step as data (``hostplan.KernelOp``: its kernel IR, buffers -- the
    # slots' ``HostProgram.values`` -- and means): what a native generator emits
    # (``loopgen``), as AOT's libraries emit theirs
    host: Any = None


@dataclass
class HostProgram:
    """What one specialization runs; picklable (without ``graph``) for the disk cache."""

    name: str
    nslots: int
    params: list[int]
    steps: list[Step]
    outputs: list[tuple[bool, Any]]
    template: Any
    leaf_kinds: list[Any] = field(default_factory=list)
    graph: Graph | None = None
    guards: list[tuple[str, Any]] = field(default_factory=list)
    checks: int = 0  # outputs before the guards computed only for their errors
    specs: list[Any] = field(default_factory=list)  # the abstract value of every slot
    # the buffer every slot holding data is (``hostplan.slot_value``: else None), the
    # values its steps' data (``Step.host``) read and write
    values: list[Any] = field(default_factory=list)
    backend: str = "cpu"  # what its kernels were compiled for (``myc.lower.target``)
    # positions of the leaves that are int parameters (``myc.infer.runtime_ints``)
    int_leaves: frozenset[int] = frozenset()
    # its next run steps from Python: its native function, checked, is made at the run
    # after (a function called once never pays for it; ``lower``)
    lazy_native: bool = False
    # called once when the native function is made at a run (the runtime stores the
    # program again, machine code and all); not pickled
    on_native: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["graph"] = None
        state.pop("_flat", None)  # made again on first run
        state.pop("_pending", None)  # checked again when it is made
        state["on_native"] = None  # the runtime's, in this process
        # the native function is made again on first run, from its plan (machine code
        # and buffer sizes) when it was built: no LLVM module to build or print
        native = state.pop("_native", None)
        if native is not None:
            state["_native_plan"] = native.plan
        return state

    @property
    def native(self):
        """The whole program as one native function, when every step allows it (small
        arrays: per-step dispatch from Python is what such a call costs); else None."""
        if "_native" not in self.__dict__:
            pending = self.__dict__.pop("_pending", None)
            self._native = pending.built() if pending is not None else \
                _native_program(self)
        return self._native

    def _native_now(self):
        """``native`` for a run: None at the first run of a ``lazy_native`` program;
        ``on_native`` called when the function is made at a run."""
        if self.lazy_native:
            self.lazy_native = False
            return None
        if "_native" in self.__dict__:
            return self._native
        made = "_native_plan" not in self.__dict__
        native = self.native
        hook, self.on_native = self.on_native, None
        if made and native is not None and hook is not None:
            hook()
        return native

    def describe(self) -> str:
        """The host program as text: one line per step."""
        lines = [f"host program {self.name}: {len(self.params)} inputs, "
                 f"{len(self.steps)} steps"]
        for st in self.steps:
            ins = ", ".join(f"s{x}" if is_slot else _short(x) for is_slot, x in st.inputs)
            where = f"  # {st.loc.line}: {st.loc.source_line.strip()}" if st.loc else ""
            outs = f"s{st.output}" if st.outputs is None else \
                ", ".join(f"s{o}" for o in st.outputs)
            note = getattr(st.fn, "note", None)  # a backend's choice for the step
            note = f"  [{note}]" if isinstance(note, str) and note else ""
            lines.append(f"  {outs} = {st.name}({ins}){note}{where}")
            if st.kernel is not None:
                lines += ["      " + ln for ln in str(st.kernel).splitlines()]
        outs = ", ".join(f"s{x}" if is_slot else _short(x) for is_slot, x in self.outputs)
        lines.append(f"  return ({outs})")
        return "\n".join(lines)

    def run_flat(self, values: list[Any]) -> list[Any]:
        """Run on one value per parameter; the output leaves (a loop body's step)."""
        slots: list[Any] = [None] * self.nslots
        t = _TARGETS[self.backend]
        if t.device_resident:  # each array to the device once, for all its kernels
            values = t.to_device(values)
        for slot, v in zip(self.params, values, strict=True):
            slots[slot] = v
        self._steps(slots)
        out = [slots[x] if is_slot else x for is_slot, x in self.outputs]
        if t.device_resident:  # results stay on the device: loop and call runners
            out = t.body_results(out)  # take device values
        return out

    def flat(self) -> FlatSteps:
        """The steps as a flat list of calls (made once; not pickled)."""
        flat = self.__dict__.get("_flat")
        if flat is None:
            flat = self._flat = FlatSteps(self)
        return flat

    def _steps(self, slots: list[Any]) -> None:
        if _TARGETS[self.backend].device_resident:
            self.flat().run(slots)  # (``slots`` extended by the constants' slots)
            return
        with np.errstate(all="ignore"):
            for st in self.steps:
                w = st.when
                if w is not None:
                    c = slots[w[0]]
                    if c is None or bool(c) != w[1]:
                        continue  # only the side of a branch not taken needs it
                vals = [slots[x] if is_slot else x for is_slot, x in st.inputs]
                try:
                    if st.outputs is not None:
                        for slot, v in zip(st.outputs, st.fn(*vals), strict=True):
                            slots[slot] = v
                        continue
                    slots[st.output] = st.fn(*vals)
                except MycError as exc:
                    raise exc.with_loc(st.loc) from None
                except Exception as exc:  # noqa: BLE001 - located like the evaluator's
                    if _TARGETS[self.backend].from_signal(exc):
                        raise  # a signal handler's exception (Ctrl-C in a native loop)
                    raise translate_exception(exc, st.name, st.loc) from None

    def run(self, args: list[Any]) -> Any:
        slots: list[Any] = [None] * self.nslots
        leaves = leaves_of(args)
        ints = self.int_leaves
        data = [v for i, v in enumerate(leaves) if _is_data(v) or i in ints]
        if len(data) != len(leaves) and any(is_generator(v) for v in leaves):
            saved = bind_rngs(leaves)  # the draws use this call's generators
            try:
                return self._run(leaves, data, slots)
            finally:
                unbind_rngs(saved)
        return self._run(leaves, data, slots)

    def _run(self, leaves: list[Any], data: list[Any], slots: list[Any]) -> Any:
        device_in = False
        t = _TARGETS[self.backend]
        if t.device_resident:  # each array to the device once, for all its kernels
            device_in = t.any_on_device(data)
            data = t.to_device(data)
        native = self._native_now()
        values = None
        if native is not None:
            try:
                values = list(native(data))
                note_run(True)
            except Bailout:
                values = None  # Python's semantics decide this call: run the steps
            except MemoryError:
                values = None  # the steps say which line's array cannot be allocated
        if values is None:
            for slot, v in zip(self.params, data, strict=True):
                slots[slot] = v
            self._steps(slots)
            values = [slots[x] if is_slot else x for is_slot, x in self.outputs]
        if t.device_resident:  # NumPy in, NumPy out; scalars read back once, at the end
            values = t.results(values, self, device_in)
        if self.guards:
            n = len(values) - len(self.guards)
            for (kind, expected), got in zip(self.guards, values[n:], strict=True):
                ok = bool(got) == expected if kind == "truth" else \
                    bool(np.array_equal(got, expected))
                if not ok:
                    raise GuardFailed(self.name)
            values = values[:n]
        if self.checks:
            values = values[:len(values) - self.checks]
        return _rebuild(self.template, iter(values))


class FlatSteps:
    """A host program's steps as a flat list of calls: what a call of a device program
    costs in Python is mostly per step, so each step's work is decided once here.

    Constants get slots of their own past the program's (filled once: ``init``), so
    every step reads its operands with one ``itemgetter``; the backend says how each
    step is called (``Target.step_call``: a kernel is called with its operands as one
    tuple, without the generic step's dispatch).  Values, errors and their locations
    are those of ``HostProgram._steps``.
    """

    def __init__(self, prog: HostProgram):
        t = _TARGETS[prog.backend]
        n = prog.nslots
        consts: list[Any] = []
        ops = []
        self.host = False  # a step that is not a kernel: NumPy's errors ignored then
        for st in prog.steps:
            idx = []
            for is_slot, x in st.inputs:
                if is_slot:
                    idx.append(x)
                else:
                    idx.append(n + len(consts))
                    consts.append(x)
            fn, packed = t.step_call(st)
            self.host = self.host or not packed
            if len(idx) > 1:
                get = itemgetter(*idx)
            elif idx:
                get = _one(idx[0])
            else:
                get = _none
            ops.append((fn, packed, get, st.output, st.outputs, st.when))
        self.ops = ops
        self.steps = prog.steps
        self.init = [None] * n + consts
        self.backend = prog.backend

    def run(self, slots: list[Any]) -> None:
        """Run the steps on ``slots`` (the program's parameters filled in), which is
        extended by the constants' slots."""
        slots.extend(self.init[len(slots):])
        if self.host:
            with np.errstate(all="ignore"):
                self._run(slots)
        else:
            self._run(slots)

    def _run(self, slots: list[Any]) -> None:
        i = 0
        try:
            for i, (fn, packed, get, out, outs, when) in enumerate(self.ops):  # noqa: B007
                if when is not None:
                    c = slots[when[0]]
                    if c is None or bool(c) != when[1]:
                        continue  # only the side of a branch not taken needs it
                r = fn(get(slots)) if packed else fn(*get(slots))
                if outs is None:
                    slots[out] = r
                else:
                    for slot, v in zip(outs, r, strict=True):
                        slots[slot] = v
        except MycError as exc:
            raise exc.with_loc(self.steps[i].loc) from None
        except Exception as exc:  # noqa: BLE001 - located like the evaluator's
            if _TARGETS[self.backend].from_signal(exc):
                raise
            st = self.steps[i]
            raise translate_exception(exc, st.name, st.loc) from None


def _one(i: int):
    def get(slots: list[Any]) -> tuple:
        return (slots[i],)
    return get


def _none(slots: list[Any]) -> tuple:
    return ()


def _taped_reruns(order: list[Any]) -> dict[int, Apply]:
    """Untaped ``loop`` nodes (by id) and the taped loop that reruns each for its
    adjoint: the same body graph and carried count, the same inputs (nodes, or
    constants of equal value).  Loops are pure, so the taped run's leading results
    are the untaped loop's."""
    loops = [n for n in order if isinstance(n, Apply) and n.inputs[0].value is P.loop]
    taped = [n for n in loops if n.inputs[1].value.tape]
    out: dict[int, Apply] = {}
    for n in loops:
        body = n.inputs[1].value
        if body.tape:
            continue
        for t in taped:
            tb = t.inputs[1].value
            if tb.graph is body.graph and tb.nstate == body.nstate and \
                    t.id not in {x.id for x in out.values()} and \
                    _same_inputs(n.inputs[2:], t.inputs[2:]):
                out[n.id] = t
                break
    return out


def _same_inputs(a: list[Node], b: list[Node]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x is y:
            continue
        if not (isinstance(x, Constant) and isinstance(y, Constant)):
            return False
        u, v = x.value, y.value
        if u is v:
            continue
        if type(u) is not type(v):
            return False
        if isinstance(u, np.ndarray):
            if u.dtype != v.dtype or u.shape != v.shape or not np.array_equal(u, v):
                return False
        elif isinstance(u, bool | int | float | np.generic):
            if u != v or getattr(u, "dtype", None) != getattr(v, "dtype", None):
                return False
        else:
            return False
    return True


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array<{v.dtype}{list(v.shape)}>" if v.size > 4 else repr(v.tolist())
    return repr(v)


def _is_data(v: Any) -> bool:
    a = abstract_of(v)
    return a is not None and (not isinstance(a, AScalar) or a.dtype.kind == "f")


class _Out:
    """A place in the output template filled by the next computed output."""

    def __repr__(self) -> str:
        return "<out>"


OUT = _Out()


def _template(v: Any) -> Any:
    """The output template with the typed graph's nodes replaced by ``OUT`` markers."""
    if isinstance(v, tuple):
        return like(v, [_template(x) for x in v])
    return OUT if isinstance(v, Node) else v


def _rebuild(template: Any, results) -> Any:
    if isinstance(template, tuple):
        return like(template, [_rebuild(t, results) for t in template])
    if isinstance(template, _Out):
        return next(results)
    return template


def _as_python(a: AScalar):
    return {"f": float, "i": int, "b": bool}[a.dtype.kind]


class _Finish:
    """Gives a step's raw result the kind its abstract value promises."""

    def __init__(self, prim: Primitive, abstract: Any):
        self.prim = prim
        self.abstract = abstract
        self.name = prim.name

    def __call__(self, *args: Any) -> Any:
        r = self.prim.impl(*args)
        a = self.abstract
        if type(r) in DEVICE_ARRAY_TYPES:  # a device scalar
            return owner(r).scalar(r, a)
        if isinstance(a, AScalar):
            if a.weak:
                py = self.__dict__.get("_py")  # (not pickled by older versions)
                if py is None:
                    py = self._py = _as_python(a)
                return py(r)
            if not isinstance(r, np.generic) or r.dtype != a.dtype:
                return a.dtype.type(r)
        return r


@timed("lower")
def lower(typed: Graph, template: Any, name: str, fused: bool | None = None,
          lone: bool = False, fns: dict[int, CallRunner] | None = None,
          backend: str = "cpu", compiler: Any = None,
          groups: list[Any] | None = None, native_max: int | None = None,
          in_body: bool = False) -> HostProgram:
    """The host program of a typed graph; fusion groups become compiled kernels.

    A small program made only of what native code covers (kernels, scalar arithmetic,
    GEMM) is lowered with every array op in a kernel, so that it runs as one native
    function (``HostProgram.native``) instead of a Python loop over steps.
    ``compiler``: compiles each kernel instead of ``backend`` 's own (``myc.ir`` 's
    target stage records the kernels of a device backend with it, needing no device).
    ``groups``: ``typed`` 's fusion groups, when the pipeline's ``fused`` stage made them.
    ``native_max``: the size limit of native-first programs (:func:`native_blockers`),
    for this program and the typed functions it calls.  ``in_body``: ``typed`` is a loop
    body (its own loops' native functions are made at their first use: the body's
    usually runs them inline, ``LoopRunner.native``).
    """
    if fused is None:
        fused = not os.environ.get("MYC_NO_FUSION")
    t = target(backend)
    if compiler is None:  # e.g. no GPU: say what to install first
        t.check_available()
    fns = {} if fns is None else fns  # typed functions lowered so far (recursion)
    if t.native_host:  # a select between kernels would split them (on a device a
        from myc.opt.selects import selects_as_where

        selects_as_where(typed)  # select is free and where's zeros an upload)
    if fused and not lone and t.native_host and native_capable(typed, t, native_max):
        prog = lower(typed, template, name, fused, lone=True, fns=fns, native_max=native_max)
        pending = _native_program(prog, build=False)  # checked only
        if pending is not None and all(st.kind == "kernel" for st in prog.steps):
            # only kernels: run from Python, they cost a first call no more than one
            # native function does, so that function (its glue's Python and LLVM: W1's
            # ~25 ms) is made at the second run, and a function called once never pays
            prog._pending, prog.lazy_native = pending, True
            return prog
        if pending is not None and pending.built() is not None:
            prog._native = pending
            return prog
    mng = Manager(typed)
    order = schedule(typed, mng.owned.get(typed, []))
    slot_of: dict[int, int] = {}
    specs: list[Any] = []
    params = []
    for p in typed.parameters:
        slot_of[p.id] = len(slot_of)
        specs.append(p.abstract)
        params.append(slot_of[p.id])

    def operand(n: Node) -> tuple[bool, Any]:
        if isinstance(n, Constant):
            return (False, n.value)
        return (True, slot_of[n.id])

    steps = []
    out = typed.output
    # on a device every array op the kernel IR expresses is a kernel (it runs there)
    kernels = _kernels(typed, name, lone or t.kernel_every_op, backend, compiler,
                       None if lone else groups) if fused else {}
    add_count("kernels", len({id(u) for u in kernels.values()}))
    done: set[int] = set()
    # a loop whose taped rerun (for its adjoint) runs the same body on the same inputs
    # is that rerun, run once where the loop was (its results lead the taped loop's,
    # which add the tape and the count): the body runs once, not twice
    taped_for = _taped_reruns(order) if t.merge_taped_reruns else {}
    twins = {t.id for t in taped_for.values()}
    for unit in schedule_units(order, kernels):
        if isinstance(unit, Elided):
            done.update(m.id for m in unit.members)
            continue
        if isinstance(unit, KernelUnit):
            plan = unit.plan
            for m in plan.outputs:
                slot_of[m.id] = len(slot_of)
                specs.append(m.abstract)
            steps.append(Step(unit, [operand(i) for i in plan.inputs], -1, plan.outputs[0].loc,
                              plan.kernel.name, [slot_of[m.id] for m in plan.outputs],
                              plan.kernel, kind="kernel"))
            done.update(m.id for m in unit.members)
            continue
        n = unit
        if n is out and isinstance(n, Apply) and n.inputs[0].value is P.make_tuple:
            continue
        prim = n.inputs[0].value  # type: ignore[union-attr]
        assert isinstance(prim, Primitive), f"typed graph calls a non-primitive: {n}"
        if n.id in twins:  # a taped loop run already, as its untaped twin
            continue
        slot_of[n.id] = len(slot_of)
        specs.append(n.abstract)
        fn = _Finish(prim, n.abstract) if isinstance(n.abstract, AScalar) else prim
        if prim is P.loop and n.id in taped_for:
            twin = taped_for[n.id]
            slot_of[twin.id] = slot_of[n.id]
            specs.append(twin.abstract)  # (slot numbers count slot_of's keys: one unused)
            n = twin
        if prim is P.loop:
            body = n.inputs[1].value
            # a loop body compiles even lone array ops: then it can run natively
            fn = LoopRunner(lower(body.graph, (), f"{name}_loop", fused, lone=True, fns=fns,
                                  backend=backend, compiler=compiler, native_max=native_max,
                                  in_body=True),
                            body.nstate, body.taped_states(), lazy=in_body)
            steps.append(Step(fn, [operand(i) for i in n.inputs[2:]], slot_of[n.id], n.loc,
                              "loop", kernel=fn, kind="loop"))
            continue
        if prim is P.invoke:
            tf = n.inputs[1].value
            fn = fns.get(id(tf))
            if fn is None:
                fn = fns[id(tf)] = CallRunner(tf.graph.name, tf.result[1])
                fn.body = lower(tf.graph, (), tf.graph.name.replace(":", "_"), fused, fns=fns,
                                backend=backend, compiler=compiler, native_max=native_max)
            steps.append(Step(fn, [operand(i) for i in n.inputs[2:]], slot_of[n.id], n.loc,
                              f"invoke {tf.graph.name}", kind="call"))
            continue
        what = prim.name
        if prim is P.guarded and isinstance(n.inputs[2], Constant):  # errors name the op
            what = getattr(n.inputs[2].value, "name", what)
        op, _, guarded = classify(prim, n.inputs[1:])
        steps.append(Step(fn, [operand(i) for i in n.inputs[1:]], slot_of[n.id], n.loc,
                          what, op=op, guarded=guarded))
    if isinstance(out, Apply) and out.inputs[0].value is P.make_tuple:
        outputs = [operand(i) for i in out.inputs[1:]]
    elif isinstance(out, (Apply, Parameter)):
        outputs = [operand(out)]
    else:
        outputs = []
    values = [slot_value(a) for a in specs]
    for st in steps:  # kernel launches, products and transposes as data, on their slots'
        # values
        if st.kind == "kernel":
            st.host = kernel_op(st.kernel, [p.divide_by for p in st.fn.plan.post],
                                [values[x] if s else None for s, x in st.inputs],
                                [values[x] for x in st.outputs])
        elif st.op in ("transpose", "matrix_transpose"):
            st.host = _permute(st, specs, values)
        elif st.op in ("gemm", "gemm_acc") and not st.guarded:
            st.host = _gemm(st, specs, values)
    steps = _live(steps, outputs)
    _predicate(steps, outputs)
    outputs = t.adapt(steps, outputs, specs)  # e.g. kernels on the device, other steps
    # on the device where the backend has them
    return HostProgram(name, len(slot_of), params, steps, outputs, _template(template),
                       graph=typed,
                       guards=list(typed.flags.get("guards", [])),
                       checks=typed.flags.get("checks", 0), specs=specs,
                       values=values, backend=backend)


def _gemm(st: Step, specs: list[Any], values: list[Any]) -> Any:
    """A product step's ``hostplan.Gemm`` (``gemm_acc``: ``acc + alpha * a @ b``), None
    where its operands are not arrays np.matmul pairs (``hostplan.gemm_op``)."""
    ops = [values[x] if is_slot else slot_value(abstract_of(x)) for is_slot, x in st.inputs]
    if any(v is None for v in ops[:3]):
        return None
    if st.op == "gemm":
        return gemm_op(ops[0], ops[1], values[st.output])
    alpha = st.inputs[3][1]
    return None if st.inputs[3][0] else gemm_op(ops[0], ops[1], values[st.output], ops[2],
                                                 float(alpha))


def _permute(st: Step, specs: list[Any], values: list[Any]) -> Any:
    """A transpose step's ``hostplan.Permute`` (None where its axes are computed, or it
    is none: ``hostplan.transpose_op``); a guarded one's is its operation's."""
    ins = st.inputs[3:] if st.guarded else st.inputs
    (is_slot, x), axes = ins[0], ins[1] if len(ins) > 1 else (False, None)
    src = specs[x] if is_slot else abstract_of(x)
    if axes[0] or not isinstance(src, AArray):
        return None
    return transpose_op(st.op, values[x] if is_slot else slot_value(src),
                        values[st.output], axes[1])


def _live(steps: list[Step], outputs: list[tuple[bool, Any]]) -> list[Step]:
    """The steps whose results are read: a value that every kernel using it recomputes
    (fusion's rematerialization) is not computed on its own."""
    live = {x for is_slot, x in outputs if is_slot}
    kept: list[Step] = []
    for st in reversed(steps):
        outs = st.outputs if st.outputs is not None else [st.output]
        if any(o in live for o in outs):
            kept.append(st)
            live.update(x for is_slot, x in st.inputs if is_slot)
    return kept[::-1]


def _predicate(steps: list[Step], outputs: list[tuple[bool, Any]]) -> None:
    """Mark the steps that only a branch not taken needs (``Step.when``): both sides of
    an if-converted branch are in the program, but the step runner skips a step whose
    every use is on the other side of a ``select`` -- or in steps skipped likewise -- so
    a branch costs only the side taken (a recursive function's base case does not pay
    for its recursive side).  Found on the lowered steps, whatever the passes did."""
    made: dict[int, int] = {}  # slot -> the step that writes it
    for si, st in enumerate(steps):
        for o in (st.outputs if st.outputs is not None else [st.output]):
            made[o] = si
    always = object()
    need: list[Any] = [None] * len(steps)  # None: no use seen yet
    for o in (x for is_slot, x in outputs if is_slot):
        if o in made:
            need[made[o]] = always
    for ui in range(len(steps) - 1, -1, -1):
        u = steps[ui]
        if need[ui] is None:
            need[ui] = always  # unused: nothing to gain, nothing to risk
        select = u.op == "select" and u.outputs is None and len(u.inputs) == 3 \
            and u.inputs[0][0]
        for k, (is_slot, x) in enumerate(u.inputs):
            if not is_slot or x not in made:
                continue
            si = made[x]
            if select and k > 0:
                c = u.inputs[0][1]
                lit = (c, k == 1)
            else:
                lit = need[ui]
            if need[si] is None:
                need[si] = lit
            elif need[si] is not always and need[si] != lit:
                need[si] = always
    for si, st in enumerate(steps):
        w = need[si]
        if w is not always and w is not None and made.get(w[0], -1) < si:
            st.when = w  # the condition is known by then


class Tape:
    """The state of a taped loop at the start of each iteration: one array per carried
    value it stores, iterations along the first axis (rows past ``count`` are unused
    capacity); None for a state not stored (``LoopBody.taped_states``: its adjoint never
    reads it)."""

    def __init__(self, leaves: list[np.ndarray | None], count: int, specs: list[Any]):
        self.leaves = leaves
        self.count = count
        self.specs = specs

    @classmethod
    def of(cls, states: list[list[Any]], specs: list[Any],
           kept: tuple[int, ...] | None = None) -> Tape:
        leaves: list[Any] = []
        for j, a in enumerate(specs):
            if kept is not None and j not in kept:
                leaves.append(None)
                continue
            dt = np.uint8 if a.dtype == np.bool_ else a.dtype
            column = [s[j] for s in states]
            dev = next((owner(v) for v in column if type(v) in DEVICE_ARRAY_TYPES), None)
            if dev is not None:
                leaves.append(dev.stack(column, dt))
                continue
            leaves.append(np.array(column, dtype=dt))
        return cls(leaves, len(states), specs)

    def get(self, j: int, k: int) -> Any:
        if not 0 <= k < self.count:
            raise IndexError(f"tape step {k} of {self.count}")
        leaf = self.leaves[j]
        if leaf is None:  # (the adjoint reads only the states it kept)
            raise IndexError(f"state {j} of a loop is not on its tape")
        v = leaf[k]
        a = self.specs[j]
        if isinstance(a, AScalar):
            if type(v) in DEVICE_ARRAY_TYPES:
                return owner(v).scalar(v, a)
            if a.dtype == np.bool_:
                v = bool(v)
            return _as_python(a)(v) if a.weak else a.dtype.type(v)
        return v


def _zero(a: Any, const: Any) -> Any:
    if a is None:
        return const
    if isinstance(a, AScalar):
        return _as_python(a)(0) if a.weak else a.dtype.type(0)
    return np.zeros(a.shape, a.dtype)


class LoopRunner:
    """A ``loop`` step: runs its body program until the body says stop.

    When every step of the body is a serial kernel or scalar arithmetic, the whole loop
    is one native function (the backend's ``native_loop``): no return to Python per
    iteration.  Otherwise the body's steps run from here, one iteration at a time.
    """

    def __init__(self, body: HostProgram, nstate: int, tape: tuple[int, ...] | None = None,
                 plan: Any = None, lazy: bool = False):
        self.body = body
        self.nstate = nstate
        # the states stored per iteration (``LoopBody.taped_states``); None: untaped
        self.tape = tape
        self._plan = plan
        if not lazy:
            self._native = _native_loop(body, nstate, tape, plan)

    @property
    def native(self):
        """The loop as one native function, or None.  ``lazy``: made at its first use --
        a loop in another loop's body runs inline in that loop's native function
        (``myc.backends.cpu.loopgen``), so its own is needed only where that one is not."""
        if "_native" not in self.__dict__:
            self._native = _native_loop(self.body, self.nstate, self.tape, self._plan)
        return self._native

    def __reduce__(self):  # machine code is bound again (it calls kernels by address)
        built = "_native" in self.__dict__
        plan = self._native.plan if built and self._native is not None else \
            None if built else self._plan
        return (LoopRunner, (self.body, self.nstate, self.tape, plan, not built))

    def __call__(self, enabled: Any, *inputs: Any) -> tuple:
        if not enabled:  # in a side of an if-converted branch that is not taken
            n = self.nstate
            zeros = [_zero(self.body.specs[x] if s else None, x)
                     for s, x in self.body.outputs[1 + n:]]
            extra = (Tape.of([], self.body.specs[:n], self.tape), 0) \
                if self.tape is not None else ()
            return (None,) * (1 + n) + tuple(zeros) + extra
        if self.native is not None:
            try:
                return (None,) * (1 + self.nstate) + self.native(list(inputs))
            except Bailout:
                pass  # Python's semantics decide this run: the loop is pure, start over
        n = self.nstate
        state, invariants = list(inputs[:n]), list(inputs[n:])
        tape: list[list[Any]] = []
        while True:
            if self.tape is not None:
                tape.append(state)
            outs = self.body.run_flat(state + invariants)
            if not outs[0]:
                extra = (Tape.of(tape, self.body.specs[:n], self.tape), len(tape)) \
                    if self.tape is not None else ()
                return (None,) * (1 + n) + tuple(outs[1 + n:]) + extra
            state = outs[1:1 + n]

    def __str__(self) -> str:
        return self.body.describe()


_CALLS = threading.local()  # this thread's typed calls: Python's recursion limit raised
# by the outermost; "replay": calls made while a native call's bailout is rerun


class CallRunner:
    """An ``invoke`` step: calls the host program of a typed function (recursion whose
    depth depends on data).  ``body`` is set after construction: a recursive function's
    program contains its own runner."""

    def __init__(self, name: str, results: list[Any]):
        self.name = name
        self.results = results
        self.body: HostProgram | None = None

    def __call__(self, enabled: Any, *inputs: Any) -> tuple:
        if not enabled:  # in a side of an if-converted branch that is not taken
            return tuple(_zero(a, None) for a in self.results)
        state = _CALLS.__dict__
        native = self.body.native
        if native is not None and not state.get("replay"):
            try:
                return native(list(inputs))
            except Bailout:
                # Python's semantics decide this call (an error, or deeper than the
                # machine stack allows): its steps, and the calls they make, from here
                state["replay"] = state.get("replay", 0) + 1
                try:
                    return self._steps(list(inputs), state)
                finally:
                    state["replay"] -= 1
        return self._steps(list(inputs), state)

    def _steps(self, inputs: list[Any], state: dict) -> tuple:
        if state.get("depth"):
            return tuple(self.body.run_flat(inputs))
        from myc.ir.evaluator import _RECURSION_LIMIT
        from myc.support.recursion import raised_recursion_limit

        state["depth"] = 1  # the outermost call raises Python's limit
        try:
            with raised_recursion_limit(_RECURSION_LIMIT):
                return tuple(self.body.run_flat(inputs))
        finally:
            state["depth"] = 0

    def __str__(self) -> str:
        return f"calls {self.name}"


_SMALL_PROGRAM = 400  # nodes (MYC_NATIVE_FIRST_MAX overrides: docs/loops.md)
# a ``native_max`` that lifts the size limit: a tier-up compiles a program over it
# native-first (``myc.runtime.tiering``)
NO_SIZE_LIMIT = 1 << 62


def _native_first_max() -> int:
    try:
        return int(os.environ.get("MYC_NATIVE_FIRST_MAX", _SMALL_PROGRAM))
    except ValueError:
        raise MycError("MYC_NATIVE_FIRST_MAX must be a number of operations, not "
                       f"{os.environ['MYC_NATIVE_FIRST_MAX']!r}") from None


def native_capable(typed: Graph, t: Any, native_max: int | None = None) -> bool:
    """Is every operation of ``typed`` one the native host program covers (then it is
    lowered with every array op in a kernel, to run as one native function)?
    ``native_max``: see :func:`native_blockers`."""
    if os.environ.get("MYC_NO_NATIVE_LOOPS"):
        return False
    return not native_blockers(typed, t, native_max)


def native_known(t: Any) -> frozenset[str]:
    """The graph operations a native-first program of backend ``t`` may hold (none: it
    has no native host programs): fusible ones and reductions (in kernels), the
    primitives whose step kinds its native generator covers (``Target.native_kinds``,
    ``Primitive.step_kind``), and calls of typed functions."""
    kinds = t.native_kinds()
    if not kinds:
        return frozenset()
    from myc.opt.fusion import ELEMENTWISE, REDUCTIONS

    return ELEMENTWISE | REDUCTIONS | primitives_of(kinds) | {"invoke"}


def native_blockers(typed: Graph, t: Any, native_max: int | None = None) -> list[str]:
    """Why ``typed`` is not lowered native-first (empty: it is): the operations native
    code does not cover, by name, or its size.  A program that is not native-first
    keeps its small array operations as NumPy steps, so its host program steps.
    ``native_max``: the most operations a native-first program may have (None: the
    ``MYC_NATIVE_FIRST_MAX`` setting; :data:`NO_SIZE_LIMIT`: any number)."""
    known = native_known(t)
    if not known:
        return ["the backend has no native host programs"]
    nodes = Manager(typed).owned.get(typed, [])
    limit = _native_first_max() if native_max is None else native_max
    if len(nodes) > limit:
        # a kernel per small op costs compile time: ~10 ms of LLVM per distinct kernel
        return [f"over {limit} operations ({len(nodes)}; MYC_NATIVE_FIRST_MAX)"]
    out: list[str] = []
    for n in nodes:
        if not isinstance(n, Apply):
            continue
        name = prim_of_name(n)
        if name not in known:
            out.append(name)
        elif name == "invoke" and not all(  # native calls pass scalars only
                isinstance(abstract_of(i.value) if isinstance(i, Constant) else
                           getattr(i, "abstract", None), AScalar) for i in n.inputs[3:]):
            out.append("a call of a function taking arrays")
    if not out and not any(isinstance(n, Apply) for n in nodes):
        out.append("no operations")
    return list(dict.fromkeys(out))


def _native_program(prog: HostProgram, build: bool = True):
    """A straight-line program as a loop that runs once (the backend's native generator);
    its calls of typed functions (itself or others) are native calls where the callees
    are scalar functions (the generator decides).  ``build`` False: checked only (its
    ``built()`` makes the code)."""
    if os.environ.get("MYC_NO_NATIVE_LOOPS") or not prog.specs or \
            not _TARGETS[prog.backend].native_host or any(
            st.kind == "loop" for st in prog.steps):
        return None
    return _native_loop(once_view(prog), 0, plan=prog.__dict__.get("_native_plan"), build=build)


def once_view(prog: HostProgram) -> Any:
    """A straight-line program as a loop body that runs once (what a backend's native
    generator takes for a whole program), its ``origin`` the program itself."""
    from types import SimpleNamespace

    return SimpleNamespace(params=prog.params, steps=prog.steps, specs=prog.specs,
                           values=prog.values, nslots=prog.nslots,
                           outputs=[(False, False), *prog.outputs], once=True, origin=prog)


def _native_loop(body: HostProgram, nstate: int, tape: tuple[int, ...] | None = None,
                 plan: Any = None,
                 build: bool = True):
    if os.environ.get("MYC_NO_NATIVE_LOOPS"):
        return None
    t = _TARGETS[getattr(body, "backend", "cpu")]
    return t.native_loop(body, nstate, tape, plan, build) if t.native_host else None


class KernelUnit:
    """A compiled fusion group as a host-program step: inputs in, outputs out."""

    def __init__(self, plan, members: list[Apply], compiled: Any, backend: str = "cpu"):
        self.plan = plan
        self.members = members
        self.compiled = compiled
        self.name = plan.kernel.name
        self.backend = backend

    def __call__(self, *vals: Any) -> list[Any]:
        from myc.lower.post import finish

        t = _TARGETS[self.backend]
        if t.device_resident:  # device arrays in and out
            return t.finish(self, vals)
        arrays = [np.asarray(v, dtype=b.dtype) for v, b in zip(vals, self.plan.kernel.inputs,
                                                                 strict=True)]
        outs = self.compiled(arrays)
        return [finish(o, p) for o, p in zip(outs, self.plan.post, strict=True)]

    def __reduce__(self):  # the disk cache keeps the kernel IR; machine code is cached too
        # (and the compiled kernel itself where its backend's pickles: ``reloads``)
        kept = self.compiled if getattr(self.compiled, "reloads", False) else None
        return (_kernel_unit, (self.plan.kernel, self.plan.post, self.backend, kept))


class Elided:
    """A fusion group none of whose values is stored: the groups that read them
    recompute them, so it is not run at all."""

    def __init__(self, members: list[Apply]):
        self.members = members


class _Plan:
    def __init__(self, kernel, post):
        self.kernel = kernel
        self.post = post


def _kernel_unit(kernel, post, backend: str = "cpu", compiled: Any = None) -> KernelUnit:
    if compiled is None:
        compiled = _compiler(backend)(kernel)
    if compiled is None:  # pragma: no cover - it compiled when the program was stored
        raise RuntimeError(f"kernel {kernel.name} no longer compiles for {backend}")
    return KernelUnit(_Plan(kernel, post), [], compiled, backend)


def _compiler(backend: str):
    """``compile_kernel`` of ``backend``: a kernel in, a callable on NumPy arrays out
    (or None where that backend's generator does not cover the kernel)."""
    return target(backend).kernel_compiler()


def _kernels(typed: Graph, name: str, lone: bool = False, backend: str = "cpu",
             compiler: Any = None, groups: list[Any] | None = None) -> dict[int, KernelUnit]:
    """Compiled kernels of the typed graph's fusion groups, keyed by member node id."""
    from myc.opt.fusion import fuse

    try:
        compile_kernel = compiler or _compiler(backend)
        from myc.lower.groups import group_kernels, stored_members
    except ImportError:  # pragma: no cover - the kernel backend is optional
        return {}
    base = re.sub(r"\W", "_", name) or "k"
    out: dict[int, KernelUnit] = {}
    if groups is None:
        groups = fuse(typed, 1) if lone else fuse(typed)
    for grp, plan in group_kernels(groups, f"{base}_k", None if lone else _worth_a_kernel):
        if not grp.outputs:  # every user recomputes its values: nothing to run
            unit = Elided(grp.members)
        else:
            try:
                compiled = compile_kernel(plan.kernel)
            except MycError as exc:  # the backend refuses it (a dtype its device
                raise exc.with_loc(  # lacks): said at the group's first line
                    grp.members[0].loc if grp.members else None) from None
            if compiled is None:  # not covered by this backend: NumPy runs the program
                lowering_fallback(  # (all of it: groups elided into this one are not
                    f"{backend}-kernel",  # computed)
                    f"kernel {plan.kernel.name} cannot be generated for {backend}; the "
                    "whole program runs on NumPy instead of kernels",
                    grp.members[0].loc if grp.members else None)
                return {}
            unit = KernelUnit(plan, grp.members, compiled, backend)
        for m in stored_members(grp):
            out[m.id] = unit
    return out


def _worth_a_kernel(grp: Any) -> bool:
    """Not a lone elementwise op: NumPy's loop is as good."""
    return len(grp.members) >= 2 or any(
        prim_of_name(m) in ("sum", "max", "min", "mean") for m in grp.members)


def prim_of_name(n: Node) -> str:
    v = n.inputs[0].value if isinstance(n, Apply) and isinstance(n.inputs[0], Constant) \
        else None
    return getattr(v, "name", "")


def schedule_units(order: list[Apply], kernels: dict[int, KernelUnit]) -> list[Any]:
    """Nodes and kernels in an order where every unit comes after what it reads.

    Groups are convex, so ordering each kernel where its last member was scheduled
    and then sorting units topologically keeps inputs before users.
    """
    from myc.lower.groups import GroupKernel  # (not at import: a program loaded from
    # the disk cache needs this module's classes, not the lowering's)

    unit_of = {}
    units: list[Any] = []
    for n in order:
        u = kernels.get(n.id, n)
        if id(u) not in unit_of:
            unit_of[id(u)] = len(units)
            units.append(u)
    deps: dict[int, set[int]] = {i: set() for i in range(len(units))}
    ids = {x.id for x in order}
    for me, u in enumerate(units):
        # a kernel reads what its members -- those it recomputes included -- read from
        # outside it; a value it recomputes is not read from the group that stores it
        members = u.members if isinstance(u, (KernelUnit, Elided, GroupKernel)) else [u]
        own = {m.id for m in members}
        for m in members:
            for i in m.inputs:
                if isinstance(i, Apply) and i.id in ids and i.id not in own:
                    src = unit_of.get(id(kernels.get(i.id, i)))
                    if src is not None and src != me:
                        deps[me].add(src)
    done: list[int] = []
    placed: set[int] = set()
    pending = list(range(len(units)))
    while pending:
        for k, u in enumerate(pending):
            if deps[u] <= placed:
                placed.add(u)
                done.append(u)
                pending.pop(k)
                break
        else:  # groups are convex; should a bug make them cyclic, run op by op instead
            if os.environ.get("MYC_STRICT") == "internal":
                raise AssertionError("fusion groups form a cycle")
            lowering_fallback("fusion-cycle", "its fusion groups form a cycle (a "
                              "compiler bug); this program runs op by op, unfused",
                              order[0].loc if order else None)
            return schedule_units(order, {})
    return [units[i] for i in done]
