"""A host program as one native function: a data-dependent loop with no return to Python
per iteration, or a whole straight-line program run once (``HostProgram.native``).

When every step of the body is a compiled kernel, scalar arithmetic, comparisons and
selects, a matrix product or transpose, basic indexing, an integer-array gather or its
gradient (a scatter-add) or a fill (``native_ops.py``), the whole thing becomes::

    int32 @myc_loop(ptr %io)

``io`` holds data pointers: the inputs (arrays, or 8-byte cells for scalars), the
constant arrays the body reads, one scratch buffer per step result (and per-chunk
partials of reductions that run on threads), two buffers per loop-carried array (the
next state is copied into the one not being read, so a kernel never reads the buffer
it writes), and the exit values' destinations -- a program run once writes its array
results straight there.  The loop itself -- its blocks, the swap of the state buffers,
the tape, the poll for Ctrl-C -- is ``loop_emit``'s, which AOT libraries' loops use
too (under their policies: copied state, a growing tape, status codes).  Kernels are
called by address (they live in their own JIT modules, bound to content-named symbols,
so this module's machine code is cached on disk: ``machine_code``); big ones are split
over threads from the machine code; GEMM is NumPy's bundled OpenBLAS, called from the
machine code (``host_gemm``).  Python-only semantics (an int overflowing 64 bits, a
Python float division by zero, an index out of range) return status 1: the run restarts
on the step-by-step host runner, which gives CPython's answer or error.

A loop step inside the body (a nested loop: a loop node the tracer kept inside a loop
body, or a gradient's taped and backward inner loops) is emitted inline, in the same
function (``_loop_step``): its buffers are the program's (``extras``: made once per
thread by the runner), its state is swapped as the outer loop's, its tape (a taped
inner loop) grows by ``realloc`` in rows kept across calls, its iterations poll for
Ctrl-C, and its failures take the same path back to Python.

Anything else (NumPy-only steps, checks that raise) keeps the step-by-step
runner: ``native_loop`` returns ``None``.  This module checks and generates; a call of
the generated code (the io array, result and tape buffers) is ``native_run``'s.

Steps are told apart by the kinds the lowering gave them (``Step.kind``; an ``op``
step's ``Step.op``, ``myc.lower.step_ops``): ``_CHECKS`` and ``_EMITS`` map each op kind
to its coverage check and its emitter; the steps on numbers (``_check_scalar``,
``_emit_number``) compute a primitive's scalar op (the primitive table's) with the
kernel generator's code (``scalar_llvm``), Python's checks around it, and the few
primitives with no scalar op (Python's casts, ``int()``, builtin ``max``) by name.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import threading
from dataclasses import dataclass, field
from math import prod
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from myc.backends.cpu import (
    blas_threads,
    host_gemm,
    kernel_calls,
    loop_emit,
    machine_code,
    native_ops,
    strided_copy,
    threads,
)
from myc.backends.cpu import specfun as _specfun  # noqa: F401  (erf, gammaln, ...: joins the library)
from myc.backends.cpu.codegen import LLTYPE, MEMTYPE
from myc.backends.cpu.emit import (
    F64,
    I1,
    I8,
    I32,
    I64,
    PTR,
    checked,
    declare,
    is_float,
    overloaded,
    with_overflow,
)
from myc.backends.cpu.jit import JitModule
from myc.backends.cpu.native_run import NativeRun, memdtype
from myc.backends.cpu.scalar_llvm import MATH_OPS, ScalarLLVM, dtype_of
from myc.backends.cpu.threads import CHUNKS_PER_THREAD, chunks, num_threads
from myc.lower.hostplan import Permute, Value
from myc.lower.placement import ARRAY_KINDS, Exit, Placement, Shared, State
from myc.lower.program import once_view
from myc.lower.step_ops import fill_value, primitives_of
from myc.prims import REGISTRY
from myc.prims.abstract import AArray, AScalar, ATape, abstract_of
from myc.timings import timed

# the kinds whose steps may compute a number (or choose or read a pointer) in
# ``_emit_number``, besides ``scalar``
_NUMBER_KINDS = frozenset({"select", "tape_get", "index", "arg_extreme"})
# the one-operand transcendental scalar ops (the table's, mathlib's functions), and sqrt
_MATH = MATH_OPS | {"sqrt"}
# the ``scalar`` steps ``_emit_number`` computes (by their scalar op where they have one:
# Python's checks are written for these), and the other steps it covers
_SCALAR = {n for n, p in REGISTRY.items() if p.scalar is not None and p.scalar.name in _MATH} | {
    "add", "sub", "mul", "neg", "lt", "le", "gt", "ge", "eq", "ne", "and_", "or_", "abs",
    "truediv", "to_weak", "to_float", "to_bool", "py_max", "py_min", "to_int",
    "check_math_domain", "grad_cast", "mod", "floordiv", "maximum", "minimum", "clip",
    "floor", "pow"} | primitives_of(_NUMBER_KINDS)
# the scalar ops (``myc.prims.scalar``) of comparisons
_COMPARE = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
_MAX_NATIVE_DEPTH = 10_000  # a recursive function's calls on the machine stack (~2 MB)


class Unsupported(Exception):  # noqa: N818 - a control signal
    pass


@timed("native codegen")
def native_loop(body, nstate: int, tape: tuple[int, ...] | None = None,
                plan: NativePlan | None = None, build: bool = True) -> NativeLoop | None:
    """The loop as native code, or ``None`` when its body needs the host runner;
    ``plan``: what an earlier build of this loop left (``NativeLoop.plan``).  With
    ``build`` False the steps are only checked: the code is made at ``NativeLoop.built``."""
    try:
        return NativeLoop(body, nstate, tape, plan=plan, build=build)
    except Unsupported:
        return None


def _kernel_symbol(ck) -> str:
    """The name this module calls a compiled kernel by: its content's (so this module's
    machine code can be cached and loaded again in another process)."""
    return f"myc_kernel_{ck.key[:24]}"


@dataclass(frozen=True)
class NativePlan:
    """What building a native program computes besides its module, with the module's
    machine code: kept with the program in the disk cache, so loading the program again
    neither builds nor prints the module (most of a disk-cache hit's time otherwise).

    ``symbols`` says how each external the code calls is found in this process:
    ``(symbol, "kernel", kernel key)`` or ``(symbol, "blas", symbol)``.  ``threads``
    is the thread count the code's chunking was made for.
    """

    threads: int
    n_io: int
    scratch: tuple[tuple[tuple[int, ...], np.dtype], ...]
    symbols: tuple[tuple[str, str, str], ...]
    object_code: bytes
    # the buffers of nested loops (``NativeLoop.extras``) and their first io position
    extras: tuple = ()
    extras_at: int = 0


def _unwrap(st) -> tuple[str, list, int, bool]:
    """(operation, its inputs, their offset in the step's inputs, guarded?) of an ``op``
    step: ``guarded(path, prim, abstract, *args)`` is ``prim(*args)`` run where ``path``
    holds (the lowering named the step after ``prim``: ``Step.guarded``)."""
    if st.guarded:
        return st.name, st.inputs[3:], 3, True
    return st.name, st.inputs, 0, False


_DT_NAMES: dict[Any, str] = {}  # NumPy's str(dtype) runs Python code: memoized


def _dtname(dt: Any) -> str:
    name = _DT_NAMES.get(dt)
    if name is None:
        name = _DT_NAMES[dt] = str(np.dtype(dt))
    return name


def _ltype(a: Any) -> ir.Type:
    return LLTYPE[_dtname(a.dtype)]


def _mem(a: Any) -> ir.Type:
    return MEMTYPE[_dtname(a.dtype)]


class NativeLoop(NativeRun):
    """``loop(inputs) -> exit values`` as one call into machine code."""

    def __init__(self, body, nstate: int, tape: tuple[int, ...] | None = None,
                 callee: bool = False, plan: NativePlan | None = None, build: bool = True,
                 nested: bool = False):
        """Check that every step is one native code covers (else raise Unsupported),
        then compile, or take ``plan``'s machine code (an earlier build of this program)
        -- except for a ``callee``: a typed function another function calls, only
        checked here and emitted into its caller's module (``_build``) -- and except
        when ``build`` is False: then the code is made by ``built`` (a program's
        first call runs its steps from Python, ``HostProgram.native``) -- and except for a
        ``nested`` loop (a loop step of another loop's body): only checked, and emitted
        inline into the function of the body holding it (``_loop_step``)."""

        self.body = body
        self.nstate = nstate
        self.tape = tape
        self.cap = 64
        specs = body.specs
        if len(specs) != body.nslots:
            raise Unsupported("slot types unknown")
        for p in body.params:
            if not isinstance(specs[p], (AArray, AScalar, ATape)):
                raise Unsupported("a loop input that is not data")
        self.consts: list[np.ndarray] = []
        self.scratch: list[tuple[tuple[int, ...], np.dtype]] = []
        self.once = bool(getattr(body, "once", False))
        self.rows_in_place: dict[int, int] = {}  # (``Placement.rows``, made with the code)
        self.tuples: dict[int, list] = {}  # slot -> the parts of the index tuple it holds
        self.rows: set[int] = set()  # steps x[i] (or its gradient) by a computed int i
        # guarded steps x[i, j, :] (or their gradients) by computed ints: run everywhere,
        # their index clamped, failing only where their path holds
        self.guarded_dynamic: set[int] = set()
        self.windows: set[int] = set()  # dynamic slices that are a contiguous window
        # where its buffers go (``lower/placement``): the reads and transposes read as
        # GEMM flags now, the buffers once the checks have said which steps are views
        self.placement = Placement(body, nstate)
        self.nested = nested
        # calls of typed functions (recursion whose depth depends on data): each callee
        # is one LLVM function of this module, called with a frame of 8-byte argument and
        # result cells on the machine stack -- so a callee takes and returns scalars only
        self.origin = getattr(body, "origin", None)
        self.callee = callee
        self.calls: dict[int, Any] = {}  # invoke's output slot -> the callee's program
        self.inner: dict[int, NativeLoop] = {}  # a loop step's output slot -> its loop
        # buffers of nested loops, io positions from ``extras_at`` on (``_loop_step``)
        self.extras: list[tuple] = []
        self.extras_at = 0
        if callee and not all(isinstance(specs[p], AScalar) for p in body.params):
            raise Unsupported("a called function taking arrays")
        for st in body.steps:
            if st.kind == "call":
                if st.fn.body is None or not all(isinstance(a, AScalar)
                                                 for a in st.fn.results):
                    raise Unsupported("a call of a function returning arrays")
                self.calls[st.output] = st.fn.body
        for si, st in enumerate(body.steps):
            if st.kind == "call":
                continue
            if st.kind == "loop":
                if callee:
                    raise Unsupported("a loop in a called function")
                self.inner[st.output] = self._check_loop(st)
                continue
            if st.kind == "kernel":
                ck = st.fn.compiled
                if ck._empty:
                    raise Unsupported("an empty kernel")
                for o, div, slot in zip(st.host.outputs, st.host.divide_by, st.outputs,
                                        strict=True):
                    if div is not None and np.dtype(o.dtype).kind != "f":
                        raise Unsupported("an integer mean")
                    if not isinstance(specs[slot], (AArray, AScalar)):
                        raise Unsupported("kernel output type")
                for (is_slot, x), v in zip(st.inputs, st.host.inputs, strict=True):
                    a = specs[x] if is_slot else abstract_of(x)
                    if isinstance(a, AArray) and (a.dtype != np.dtype(v.dtype)
                                                  or a.shape != tuple(v.shape)):
                        raise Unsupported("a kernel input converted on the fly")
                    if a is None:
                        raise Unsupported("a kernel input that is not data")
                continue
            name, ins_, _off, _guard = _unwrap(st)
            out = specs[st.output]
            check = _CHECKS.get(st.op)  # (False: what the scalar steps' check says)
            if check is not None and check(self, si, st, name, ins_, _guard, out):
                continue
            self._check_scalar(st, name, ins_, out)
        for is_slot, x in body.outputs:
            a = specs[x] if is_slot else abstract_of(x)
            if is_slot and not isinstance(a, (AArray, AScalar)):
                raise Unsupported("an exit value that is not data")
            if callee and is_slot and not isinstance(a, AScalar):
                raise Unsupported("a called function returning arrays")
        self.param_specs = [specs[p] for p in body.params]
        self.exit_outputs = body.outputs[1 + nstate:]
        self.symbol = "myc_loop"  # one function per JIT module
        self.symbols: dict[str, int] = {}  # externals the code calls -> their addresses
        self.kernel_of: dict[str, str] = {}  # a kernel's symbol -> the kernel's key
        if callee or nested:
            return
        # every function reachable through calls, checked before any code is made
        self.units: dict[int, NativeLoop] = {}  # id(program) -> its checked callee
        todo = list(self.calls.values())
        while todo:
            q = todo.pop()
            if id(q) in self.units or (self.once and q is self.origin):
                continue
            unit = NativeLoop(once_view(q), 0, callee=True)
            self.units[id(q)] = unit
            todo += unit.calls.values()
        # this function is called itself (on a frame, not the caller's io): scalars only
        self.framed = self.once and self.origin is not None and any(
            q is self.origin for u in [self, *self.units.values()] for q in u.calls.values())
        if build:
            self._make(plan)

    def built(self) -> NativeLoop | None:
        """This checked program's code made now (``build=False``); None when making it
        found a step native code does not cover after all."""
        try:
            self._make(None)
        except Unsupported:
            return None
        return self

    def _make(self, plan: NativePlan | None) -> None:
        self._local = threading.local()
        self._text: str | None = None
        if plan is None or not self._restore(plan):
            module = self._build()
            self._text = str(module)
            threads.pool()  # its entries bound: parallel calls go through it
            for sym, addr in self.symbols.items():
                llvm.add_symbol(sym, addr)
            self._jit = machine_code.load_or_compile(self._text, machine_code.compiled_light(
                module, self.once and not self.calls and not self.units,
                self._elements_per_step()))
            self.plan = NativePlan(
                num_threads(), self.n_io, tuple(self.scratch),
                tuple((s_, "kernel", self.kernel_of[s_]) if s_ in self.kernel_of else
                      (s_, "blas", s_) for s_ in self.symbols), self._jit.object_code,
                tuple(self.extras), self.extras_at)
        self._fn = _FN(self._jit.address(self.symbol))
        # may run long: Ctrl-C is polled
        self.polls = not self.once or bool(self.calls) or bool(self.inner)

    def _elements_per_step(self) -> float:
        """The array elements a step of this program reads and writes, on average: how
        much of its run time is its steps' own work rather than the host code between
        them (a reduction's work is what it reads: W1's sum of 2^22 elements writes one)."""
        specs = self.body.specs

        def size(slot: Any) -> int:
            a = specs[slot] if isinstance(slot, int) and slot < len(specs) else None
            return int(np.prod(a.shape)) if isinstance(a, AArray) else 1

        total = 0
        for st in self.body.steps:
            total += sum(size(o) for o in st.outputs or [st.output])
            total += sum(size(ref) for is_slot, ref in st.inputs if is_slot)
        return total / max(len(self.body.steps), 1)

    def _restore(self, plan: NativePlan) -> bool:
        """Take the machine code and buffers of an earlier build of this very program
        (``plan``), binding its externals in this process; False when something it
        needs is not here (another thread count, a kernel not loaded, no BLAS)."""

        if not isinstance(plan, NativePlan) or plan.threads != num_threads():
            return False
        kernels = {st.fn.compiled.key: st.fn.compiled
                   for u in [*self._nest(), *self.units.values()] for st in u.body.steps
                   if st.kind == "kernel"}
        symbols = {}
        for sym, kind, ref in plan.symbols:
            if kind == "kernel":
                if ref not in kernels or _kernel_symbol(kernels[ref]) != sym:
                    return False
                symbols[sym] = ctypes.cast(kernels[ref]._fn, ctypes.c_void_p).value
            else:
                addr = blas_threads.openblas_address(ref)
                if addr is None:
                    return False
                symbols[sym] = addr
        try:
            threads.pool()  # its entries bound: parallel calls go through it
            for sym, addr in symbols.items():
                llvm.add_symbol(sym, addr)
            self._jit = JitModule(object_code=plan.object_code)
        except Exception:  # noqa: BLE001 - damaged machine code: build it again
            return False
        self.consts = [x for _, x in self._const_inputs()]
        self.scratch = list(plan.scratch)
        self.extras, self.extras_at = list(plan.extras), plan.extras_at
        self.n_io = plan.n_io
        self.symbols = symbols
        self.plan = plan
        return True

    def _of(self, operand: tuple[bool, Any]) -> Any:
        """The abstract value of a step's operand ``(is_slot, slot or constant)``."""
        is_slot, x = operand
        return self.body.specs[x] if is_slot else abstract_of(x)

    def _nbytes(self, slot: int) -> int:
        """The bytes of the value in ``slot`` (``HostProgram.values``)."""
        return self.body.values[slot].nbytes

    def _nest(self) -> list[NativeLoop]:
        """This program and the loops nested in it, at any depth."""
        out = [self]
        for child in self.inner.values():
            out += child._nest()
        return out

    # -- checks: is each step one native code covers? -----------------------------------
    def _check_loop(self, st) -> NativeLoop:
        """A loop step of this body: its own body checked as a nested loop (emitted inline
        by ``_loop_step``), its inputs of the kinds its parameters are."""
        run = st.fn
        child = NativeLoop(run.body, run.nstate, run.tape, nested=True)
        if child.calls:
            raise Unsupported("a call of a typed function in a nested loop")
        specs = self.body.specs
        if len(st.inputs) != 1 + len(child.param_specs):
            raise Unsupported("a loop whose inputs do not match its body")
        for (is_slot, x), a in zip(st.inputs[1:], child.param_specs, strict=True):
            got = specs[x] if is_slot else abstract_of(x)
            if type(got) is not type(a) or (isinstance(a, AArray) and (
                    got.shape != a.shape or got.dtype != a.dtype)):
                raise Unsupported("a loop input of another type than its body's")
        en_slot, en = st.inputs[0]
        if en_slot and not (isinstance(specs[en], AScalar) and specs[en].dtype == np.bool_):
            raise Unsupported("a loop enabled by a non-bool")
        return child

    def _check_scalar(self, st, name: str, ins_: list, out: Any) -> None:
        """A step on numbers (or a select or tape read of arrays: pointers), the kinds
        with no check of their own, and what the other kinds' checks leave: raise
        Unsupported unless native code computes it as Python and NumPy do."""
        specs = self.body.specs
        if name not in _SCALAR:
            raise Unsupported(f"host step {st.name}")
        if isinstance(out, AArray):
            if st.op not in ("select", "tape_get"):
                raise Unsupported(f"array arithmetic outside kernels ({name})")
            if st.op == "tape_get" and not (ins_[0][0] and not ins_[1][0]):
                raise Unsupported("a tape read")
            return
        if not isinstance(out, AScalar):
            raise Unsupported("non-numeric step")
        ins = [self._of(o) for o in ins_]
        if st.op == "tape_get":
            if not (ins_[0][0] and isinstance(specs[ins_[0][1]], ATape)
                    and not ins_[1][0]):
                raise Unsupported("a tape read")
            return
        if st.op == "arg_extreme":
            if not (ins_[0][0] and isinstance(ins[0], AArray) and prod(ins[0].shape) > 0
                    and not ins_[1][0] and ins_[1][1] is None
                    and str(ins[0].dtype) in MEMTYPE and out.dtype == np.int64):
                raise Unsupported(f"{name} along an axis")
            return
        if st.op == "index" and not ins_[0][0] and not ins_[1][0]:
            if _constant_element(ins_[0][1], ins_[1][1]) is None:
                raise Unsupported("an index of a constant other than one element")
            return
        if st.op == "index" and ins_[0][0] and isinstance(ins[0], AArray) and \
                not ins_[1][0] and not isinstance(ins_[1][1], (int, np.integer)):
            view = native_ops.basic_view(tuple(ins[0].shape), ins_[1][1])
            if view is None or view[1] != ():
                raise Unsupported("an index other than a constant element")
            return
        if st.op == "index" and self._element_index(ins_) is not None:
            return  # x[i, j] by computed ints
        if st.op == "index" and _empty_index(ins_[1]) and isinstance(ins[0], AScalar):
            return  # a number's x[()]: itself
        if st.op == "index":
            if not (isinstance(ins[0], AArray) and ins[0].ndim == 1
                    and (ins_[0][0] or isinstance(ins_[0][1], np.ndarray))  # or constant
                    and ins[0].shape[0] > 0
                    and isinstance(ins[1], AScalar) and ins[1].dtype.kind == "i"):
                raise Unsupported("indexing other than a[i] of a 1-d array")
            return
        ins = [_scalar_of(a) for a in ins]  # a 0-d array operand: its element
        if any(not isinstance(a, AScalar) for a in ins):
            raise Unsupported("a scalar step on an array")
        sop = REGISTRY[name].scalar
        op = sop.name if sop is not None else None  # (as ``_emit_number`` dispatches)
        if (op in ("maximum", "minimum") or name == "clip") and (
                out.dtype.kind not in "fib" or (out.dtype.kind == "b") != all(
                    a.dtype.kind == "b" for a in ins)):
            raise Unsupported(f"{name} of mixed bools")
        if op in ("floor", "pow") and out.dtype.kind != "f":
            raise Unsupported(f"{name} of integers")
        if op == "abs" and out.dtype.kind not in "fi":
            raise Unsupported("abs of a bool")
        if name in ("py_max", "py_min") and any(a.dtype.kind != out.dtype.kind or
                                               a.dtype.kind not in "fi" for a in ins):
            raise Unsupported("max/min of mixed kinds (the result's type is data's)")
        if op in ("mod", "floordiv") and any(a.dtype.kind != "i" for a in (*ins, out)):
            raise Unsupported(f"{name} of non-integers")
        if name == "to_int" and (out.dtype.kind != "i" or not out.weak):
            raise Unsupported("int() to a NumPy integer")
        if name == "check_math_domain" and out.dtype.kind != "f":
            raise Unsupported("a domain check of a non-float")
        if name == "grad_cast" and (out.dtype.kind != "f" or
                                    any(a.dtype.kind != "f" for a in ins)):
            raise Unsupported("a gradient cast other than float to float")

    def _check_gemm(self, si, st, name, ins_, guard, out) -> bool:
        if guard:
            return False
        ins = [self._of(o) for o in ins_]
        acc = st.op == "gemm_acc"
        why = host_gemm.gemm_refusal("matmul" if acc else name, ins[:2] if acc else ins, out,
                                     st.host)
        if why is None and acc and (ins[2] != out or not ins_[2][0] or ins_[3][0]):
            why = "a product accumulated into a value of another type"
        if why is not None:
            raise Unsupported(why)
        return True

    def _check_matrix_transpose(self, si, st, name, ins_, guard, out) -> bool:
        if guard:
            return False
        ins = [self._of(o) for o in ins_]
        why = host_gemm.gemm_refusal("mT", ins, out)
        if why is None and not isinstance(st.host, Permute):
            why = "a transpose of this kind"
        if why is not None:
            raise Unsupported(why)
        return True

    def _check_transpose(self, si, st, name, ins_, guard, out) -> bool:
        if st.output in self.placement.flags:
            return True  # a GEMM's transpose flag, or copied as an mT
        return self._check_array(si, st, name, ins_, guard, out)

    def _check_alias(self, si, st, name, ins_, guard, out) -> bool:
        if guard or not isinstance(out, AArray):
            return False
        s_, x = ins_[0]
        xa = self.body.specs[x] if s_ else abstract_of(x)
        if not isinstance(xa, (AArray, AScalar)) or prod(out.shape) != 1 and \
                not isinstance(xa, AArray) or _dtname(out.dtype) not in MEMTYPE or \
                xa.dtype != out.dtype:
            raise Unsupported("a reshape of this kind")
        # the same contiguous data under another shape; a number (np.reshape(
        # 2.5, (1,))) is stored in a buffer of its own (``_alias``)
        return True

    def _check_tuple(self, si, st, name, ins_, guard, out) -> bool:
        if guard:
            return False
        self.tuples[st.output] = (si, list(st.inputs))  # an index, for its users
        return True

    def _check_index(self, si, st, name, ins_, guard, out) -> bool:
        if isinstance(out, AArray) and st.op != "index_set" and \
                self._row_index(st.op, ins_, out):
            self.rows.add(si)  # x[i]: a row by a computed int, guarded or not
            return True
        if guard and isinstance(out, AArray) and \
                self._index_parts(si, ins_[1])[0] == "dynamic":
            # R[i, j] (or its scatter) by a loop's counter, on the loop's path: the
            # computed ints are clamped into range (``_dynamic_offset``), so it runs
            # whatever the path, and fails only where the path holds
            self._array_step_plan(si, st.op, name, ins_, out)
            self.guarded_dynamic.add(si)
            return True
        return self._check_array(si, st, name, ins_, guard, out)

    def _check_array(self, si, st, name, ins_, guard, out) -> bool:
        if guard or not isinstance(out, AArray):
            return False
        self._array_step_plan(si, st.op, name, ins_, out)
        return True

    def _check_exit_value(self, si, st, name, ins_, guard, out) -> bool:
        # one result of a call: read from the call's result cells (``_emit_exit_value``);
        # of a nested loop, an exit value (or its tape, or its count) from its cells
        if guard or not st.inputs[0][0]:
            return False
        child = self.inner.get(st.inputs[0][1])
        if child is None:
            return st.inputs[0][1] in self.calls
        k = st.inputs[1][1] - 1 - child.nstate
        types = child._exit_types()
        t = types[k] if 0 <= k < len(types) else None
        if t is None or not isinstance(out, t if isinstance(t, type) else type(t)) or (
                isinstance(out, AArray) and (out.shape, out.dtype) != (t.shape, t.dtype)):
            raise Unsupported("a read of a nested loop's state")
        return True

    @property
    def llvm_ir(self) -> str:
        """The module's LLVM IR as generated (built again if the code came from a plan)."""
        if self._text is None:
            import copy

            again = copy.copy(self)
            again.consts, again.scratch, again.symbols, again.kernel_of = [], [], {}, {}
            again.extras = []
            self._text = str(again._build())
        return self._text

    # -- code --------------------------------------------------------------------------
    def _build(self) -> ir.Module:
        """The module: this program's function and one per function it calls (directly
        or not), each taking ``(io, depth)``; the entry point starts at depth 0."""
        module = ir.Module(name=self.symbol)
        if self.calls:  # calls: the body takes its depth, the entry point starts at 0
            fn = ir.Function(module, ir.FunctionType(I32, [PTR, I64]), "myc_body")
            fn.linkage = "internal"
            top = ir.Function(module, ir.FunctionType(I32, [PTR]), self.symbol)
            tb = ir.IRBuilder(top.append_basic_block("entry"))
            tb.ret(tb.call(fn, [top.args[0], ir.Constant(I64, 0)]))
        else:
            fn = ir.Function(module, ir.FunctionType(I32, [PTR]), self.symbol)
        # id(program) -> (its function, its parameter types, its exit values)
        fns: dict[int, tuple[ir.Function, list[Any], list]] = {}
        if self.once and self.origin is not None:
            fns[id(self.origin)] = (fn, self.param_specs, self.exit_outputs)
        for k, (key, unit) in enumerate(self.units.items()):
            f = ir.Function(module, ir.FunctionType(I32, [PTR, I64]), f"myc_fn{k}")
            f.linkage = "internal"
            fns[key] = (f, unit.param_specs, unit.exit_outputs)
        self._emit(module, fn, fns, self.framed)
        for key, unit in self.units.items():
            unit.symbols = self.symbols  # BLAS, kernels: bound when the module loads
            unit.kernel_of = self.kernel_of
            unit._emit(module, fns[key][0], fns, True)
        return module

    def _const_inputs(self) -> list[tuple[Any, np.ndarray]]:
        """The constant arrays the code reads, in io order, each with its place: ``(step,
        input position)``, or ``(-1, id)`` for a constant exit value."""
        out = []
        for si, st in enumerate(self.body.steps):
            for k, (is_slot, x) in enumerate(st.inputs):
                if not is_slot and isinstance(x, np.ndarray):
                    out.append(((si, k), np.ascontiguousarray(x)))
                elif not is_slot and isinstance(x, tuple) and x and all(
                        isinstance(p, np.ndarray) for p in x):  # an index tuple of arrays
                    out += [((si, (k, j)), np.ascontiguousarray(p)) for j, p in enumerate(x)]
        for is_slot, x in self.body.outputs:
            if not is_slot and isinstance(x, np.ndarray):
                out.append(((-1, id(x)), np.ascontiguousarray(x)))
        return out

    def _exit_types(self) -> list[Any]:
        """What this loop's step holds past its state: the exit values' abstract values,
        then a taped loop's tape and count (``ATape``, ``AScalar``: classes)."""
        specs = self.body.specs
        out = [specs[x] if is_slot else abstract_of(x) for is_slot, x in self.exit_outputs]
        return out + ([ATape, AScalar] if self.tape is not None else [])

    def _emit(self, module: ir.Module, fn: ir.Function, fns: dict, framed: bool,
              host: _Nest | None = None) -> list[ir.Value] | None:
        """This program's code into ``fn``; ``framed``: it is called from native code with
        a frame of argument and result cells as its io (so it has no buffers).  ``host``:
        this is a nested loop, emitted where its step is in the body holding it (which
        gives its inputs, its buffers and its failure path); its exit values returned."""

        body, specs, values, n = self.body, self.body.specs, self.body.values, self.nstate
        if host is None:
            entry = fn.append_basic_block("entry")
            bail = fn.append_basic_block("bail")
            b = ir.IRBuilder(bail)
            b.ret(ir.Constant(I32, 1))
            b = ir.IRBuilder(entry)

            def bail_if(bad: ir.Value) -> None:
                ok = fn.append_basic_block("ok")
                b.cbranch(bad, bail, ok)
                b.position_at_end(ok)
        else:
            entry, b, bail_if = host.entry, host.b, host.bail_if

        # failing returns to Python; Ctrl-C is polled once per iteration of a loop
        fail = loop_emit.BailOut(bail_if, polls=not self.once)

        io = fn.args[0]
        nio = [0]
        if len(fn.args) > 1 and host is None:  # past this depth, the host runner
            # decides (Python's limit)
            bail_if(b.icmp_signed(">", fn.args[1], ir.Constant(I64, _MAX_NATIVE_DEPTH)))
            fail.interrupted(b)  # a call tree can be exponential

        def io_ptr() -> ir.Value:
            at = b.gep(io, [ir.Constant(I64, nio[0])], inbounds=True, source_etype=PTR)
            p = b.load(at, typ=PTR)
            nio[0] += 1
            return p

        def extra(record: tuple) -> ir.Value:
            """A buffer of a nested loop: made by the runner (``extras``), past the io
            this program's own code reads."""
            if host is not None:
                return host.extra(record)
            self.extras.append(record)
            return io_ptr()

        def buf(record: tuple) -> ir.Value:
            """A buffer of this program: ``("const", array)``, ``("scratch", shape,
            dtype)``, ``("state", shape, dtype)`` (a loop-carried array's)."""
            if host is not None:
                return extra(("const", record[1]) if record[0] == "const" else
                             ("scratch", *record[1:]))
            if record[0] == "const":
                self.consts.append(record[1])
            elif record[0] == "scratch":
                self.scratch.append(record[1:])
            return io_ptr()

        slots: dict[int, ir.Value] = {}  # slot -> alloca holding its value

        def slot_var(k: int) -> ir.Value:
            if k not in slots:
                with native_ops.at_entry(b, entry):
                    a = specs[k]
                    slots[k] = b.alloca(_ltype(a) if isinstance(a, AScalar) else PTR)
            return slots[k]

        # inputs
        for slot, a in zip(body.params, self.param_specs, strict=True):
            if host is not None:  # given by the body holding this loop
                b.store(host.inputs.pop(0), slot_var(slot))
                continue
            p = io_ptr()
            var = slot_var(slot)
            if not isinstance(a, AScalar):  # an array, or a tape's [count, pointers...]
                b.store(p, var)
            else:
                v = b.load(p, typ=_mem(a))
                if a.dtype == np.bool_:
                    v = b.trunc(v, I1)
                b.store(v, var)
        # io order (``_run`` fills it the same way): inputs, constant arrays, scratch,
        # state buffers, exit values, tape
        const_ptr: dict[Any, ir.Value] = {}
        for key, x in self._const_inputs():
            const_ptr[key] = buf(("const", x))
        # where each step result goes (``lower/placement``: the array handed back, a
        # state's free buffer, a sum's buffer, or a scratch buffer of its own)
        pl = self.placement.place(
            {si for si, st in enumerate(body.steps) if st.op in ARRAY_KINDS and self._alias(si)},
            self.guarded_dynamic, self.nested)
        self.rows_in_place = pl.rows
        partial_ptr: dict[Value, ir.Value] = {}
        self.chunks: dict[int, list[tuple[int, int]]] = {}
        # a placed value -> its buffer (an exit's: set below; ("state", j): state j's
        # free buffer, which changes per iteration)
        ptr: dict[Value, Any] = {}

        def placed(v: Value, record: tuple) -> None:
            where = pl.buffers[v]
            ptr[v] = where if isinstance(where, Exit) else \
                ("state", where.index) if isinstance(where, State) else \
                ptr[where.value] if isinstance(where, Shared) else buf(record)

        for si, st in enumerate(body.steps):
            if st.kind == "kernel":
                ck = st.fn.compiled
                pieces = [(0, ck.plan.extent)] if ck._serial else \
                    chunks(ck.plan, num_threads(), CHUNKS_PER_THREAD)
                self.chunks[si] = pieces
                for i, v in enumerate(st.host.outputs):
                    shape, dt = tuple(v.shape), np.dtype(v.dtype)
                    placed(v, ("scratch", shape, dt))
                    if len(pieces) > 1 and ck.plan.outs[i].shared:
                        partial_ptr[v] = buf(("scratch", (len(pieces), *shape), dt))
            elif values[st.output] in pl.buffers and st.kind == "op":
                v = values[st.output]
                placed(v, ("scratch", *_buffer(v)))
        state_slots = body.params[:n]
        array_state = [j for j in range(n) if isinstance(specs[state_slots[j]], AArray)]
        state_bufs = {}
        for j in array_state:
            rec = ("state", *_buffer(values[state_slots[j]]))
            state_bufs[j] = (buf(rec), buf(rec))
        for j in self.rows_in_place.values():  # one buffer, updated in place
            state_bufs[j] = (state_bufs[j][0], state_bufs[j][0])
        exit_ptrs = [io_ptr() for _ in self.exit_outputs] if host is None else []
        for v, where in list(ptr.items()):
            if isinstance(where, Exit):
                ptr[v] = exit_ptrs[where.index]
        # state arrays a kernel writes straight into their next buffer (no copy)
        self.in_place = {w.index for w in pl.buffers.values() if isinstance(w, State)}
        self.partial_ptr = partial_ptr
        tape = rows = None
        if self.tape is not None and host is None:  # the states each iteration starts
            # from (those the adjoint reads: ``LoopBody.taped_states``), in buffers the
            # runner sized
            tape_ptrs = [io_ptr() for _ in range(n)]
            cap_cell, count_cell = io_ptr(), io_ptr()
            tape = loop_emit.BoundedTape(fn, tape_ptrs, cap_cell, count_cell, 2)
            b.store(ir.Constant(I64, 0), count_cell)
        elif self.tape is not None:  # a nested loop's: rows grown by realloc, kept by the
            # runner across runs and calls (``("tape", n)``: an int64 capacity, n row
            # pointers; those of states not taped stay NULL)
            cells = extra(("tape", n))
            with native_ops.at_entry(b, entry):
                count_cell = b.alloca(I64)
            b.store(ir.Constant(I64, 0), count_cell)
            tape = loop_emit.GrowingTape(
                [b.gep(cells, [ir.Constant(I64, 1 + j)], source_etype=I64)
                 for j in range(n)], cells, count_cell, declare(module, "realloc", PTR, [PTR, I64]),
                lambda op, x, y: checked(b, op, x, y), fail, "a nested loop's tape")
        if self.tape is not None:

            def row(slot: int, a: Any):
                if isinstance(a, AArray):
                    return lambda: b.load(slot_var(slot), typ=PTR)

                def number() -> ir.Value:
                    v = b.load(slot_var(slot), typ=_ltype(a))
                    return b.zext(v, I8) if a.dtype == np.bool_ else v
                return number

            rows = [loop_emit.TapeRow(j, values[slot].nbytes, row(slot, specs[slot]),
                                      not isinstance(specs[slot], AArray))
                    for j, slot in enumerate(state_slots) if j in self.tape]
        if host is None:
            self.n_io = self.extras_at = nio[0]
        # (a nested loop's state bit at entry: which buffer is free at its start does not
        # matter, nothing reads either then)
        with native_ops.at_entry(b, entry) if host is not None else contextlib.nullcontext():
            states = loop_emit.Swapped(b, state_bufs,
                                       lambda j, v: b.store(v, slot_var(state_slots[j])))

        def next_buf(j: int) -> ir.Value:
            return states.next_buffer(b, j)

        for j in set(self.rows_in_place.values()):  # the initial state copied in: the caller's
            # array is never written
            loop_emit.memcpy(b, state_bufs[j][0], b.load(slot_var(state_slots[j]), typ=PTR),
                             values[state_slots[j]].nbytes)
            b.store(state_bufs[j][0], slot_var(state_slots[j]))
        loop = loop_emit.Loop(b, states, fail, tape, rows)
        loop.start()

        def value(si: int, k: int, is_slot: bool, x: Any, want: Any = None) -> ir.Value:
            """An operand as an LLVM value (arrays: a pointer), converted to ``want``."""
            if is_slot:
                a = specs[x]
                v = b.load(slot_var(x), typ=_ltype(a) if isinstance(a, AScalar) else PTR)
                if want is not None and isinstance(a, AArray) and a.shape == ():
                    v = b.load(v, typ=_mem(a))  # a 0-d array read as a number
                    if a.dtype == np.bool_:
                        v = b.trunc(v, I1)
            elif isinstance(x, np.ndarray) and (want is None or x.ndim):
                return const_ptr[(si, k) if si >= 0 else (-1, id(x))]
            else:
                if isinstance(x, np.ndarray):  # a 0-d constant read as a number
                    x = x[()]
                a = abstract_of(x)
                if a.dtype.kind == "i" and not -(1 << 63) <= int(x) < (1 << 63):
                    raise Unsupported("an int constant beyond 64 bits")
                v = ir.Constant(_ltype(a), bool(x) if a.dtype == np.bool_ else
                                float(x) if a.dtype.kind == "f" else int(x))
            return v if want is None else convert(v, _ltype(a), want)

        scalar = ScalarLLVM.over(b)  # the scalar operations, as kernels compute them

        def convert(v: ir.Value, src: ir.Type, dst: ir.Type) -> ir.Value:
            if src == dst:
                return v
            return scalar.cast(scalar.e.v(v), dtype_of(src), dtype_of(dst)).v

        if framed and self.n_io != len(body.params) + len(self.exit_outputs):
            raise Unsupported("a recursive function with array buffers")
        call_cells: dict[int, tuple[list[ir.Value], list]] = {}

        def bail_on(bad: ir.Value, path=None) -> None:
            # a guarded operation fails only where its branch is taken
            bail_if(bad if path is None else b.and_(path, bad))
        e = _Emitting(b, module, entry, value, convert, slot_var, ptr, bail_if,
                      bail_on, call_cells, scalar, extra)
        for si, st in enumerate(body.steps):
            if st.kind == "loop":
                self._loop_step(e, fn, fns, si, st)
                continue
            if st.kind == "kernel":
                self._kernel_step(b, si, st, value, convert, slot_var, ptr, entry,
                                  next_buf)
                continue
            if st.kind == "call":
                call_cells[st.output] = self._call_step(b, fn, entry, si, st, value, bail_if,
                                                        fns)
                continue
            name, ins_, off, guard = _unwrap(st)
            path = value(si, 0, *st.inputs[0], want=I1) if guard else None
            out = specs[st.output]
            emit = _EMITS.get(st.op)  # (False: emitted as the steps on numbers are)
            if emit is not None and emit(self, e, si, st, ins_, off, path, out):
                continue
            self._emit_number(e, si, st, name, ins_, off, path, out)

        def store_row(si: int, dst: ir.Value) -> None:  # (``Placement._rows_in_place``)
            st = body.steps[si]
            _name, ins_, _off, guard = _unwrap(st)
            if not guard:
                self._array_step(b, entry, si, st.op, st.name, list(ins_),
                                 specs[st.output], dst, bail_if, value)
                return
            # only where its path holds (there an index out of range fails)
            with b.if_then(value(si, 0, *st.inputs[0], want=I1)):
                self._array_step(b, entry, si, st.op, st.name, list(ins_),
                                 specs[st.output], dst, bail_if, value)

        # next state: arrays copied into the buffer not being read (unless a kernel wrote
        # it there), then all slots set
        def next_state(j: int) -> loop_emit.Next:
            is_slot, x = body.outputs[1 + j]
            a = specs[state_slots[j]]
            if not isinstance(a, AArray):
                return loop_emit.Next(lambda: value(-1, -1, is_slot, x, want=_ltype(a)))
            if j in self.in_place:
                return loop_emit.Next(None)
            chain = [si for si, jj in self.rows_in_place.items() if jj == j]
            if chain:  # (in step order: a chain of row stores, ``_rows_in_place``)
                return loop_emit.Next(None, update=lambda dst, chain=chain: [
                    store_row(si, dst) for si in chain])
            return loop_emit.Next(lambda: value(-1, -1, is_slot, x),
                                  values[state_slots[j]].nbytes)

        go_slot, go = body.outputs[0]
        loop.close(lambda: value(-1, -1, go_slot, go, want=I1),
                   [next_state(j) for j in range(n)])
        if host is not None:  # a nested loop: its exit values (arrays: pointers), then
            # its tape ([count, row pointers...], as a taped loop's tape input) and count
            outs = [value(-1, -1, is_slot, x, want=None if isinstance(
                a, AArray) else _ltype(a)) for (is_slot, x), a in zip(
                    self.exit_outputs, self._exit_types(), strict=False)]
            if self.tape is not None:
                count = b.load(count_cell, typ=I64)
                with native_ops.at_entry(b, entry):
                    tp = b.alloca(PTR, size=ir.Constant(I64, 1 + n))
                b.store(count, tp)
                for j in range(n):
                    b.store(b.load(tape.cells[j], typ=PTR),
                            b.gep(tp, [ir.Constant(I64, 1 + j)], source_etype=PTR))
                outs += [tp, count]
            return outs
        # an exit value that is a state updated in place: its row stored now, after the
        # other exits are copied (one may be a view of the buffer)
        late = {body.steps[si].output: (si, j) for si, j in self.rows_in_place.items()
                if body.outputs[1 + j][1] == body.steps[si].output}
        order = sorted(range(len(self.exit_outputs)), key=lambda e: bool(
            self.exit_outputs[e][0] and self.exit_outputs[e][1] in late))
        for e in order:
            (is_slot, x), dst = self.exit_outputs[e], exit_ptrs[e]
            a = specs[x] if is_slot else abstract_of(x)
            if not is_slot:
                continue  # a constant: filled in by the caller
            if x in late:
                _si, j = late.pop(x)
                buf = b.load(slot_var(state_slots[j]), typ=PTR)
                for si in [si for si, jj in self.rows_in_place.items() if jj == j]:
                    store_row(si, buf)
                b.store(buf, slot_var(x))
            if isinstance(a, AArray) and pl.direct.get(x) == e:
                continue  # written in place
            if isinstance(a, AArray):
                src = value(-1, -1, is_slot, x)
                loop_emit.memcpy(b, dst, src, values[x].nbytes)
            else:
                v = value(-1, -1, is_slot, x)
                if a.dtype == np.bool_:
                    v = b.zext(v, I8)
                b.store(v, dst)
        b.ret(ir.Constant(I32, 0))
        self.n_io = nio[0]  # with the nested loops' buffers
        return None

    # -- the emitters of the op kinds (``_EMITS``): True when the step is emitted -------
    def _emit_gemm(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        """A product (``gemm``, ``gemm_acc``: through BLAS or a loop, ``host_gemm``), or a
        2-d transpose: a GEMM's transpose flag, else copied (``strided_copy.permute``)."""
        b = e.b
        mt = st.op in ("transpose", "matrix_transpose")
        flags = self.placement.flags
        if mt and st.output in flags and st.output not in self.placement.copied:
            return True  # only read by GEMMs, as a transpose flag
        dst = e.buffers[self.body.values[st.output]]
        acc = st.op == "gemm_acc"
        if acc and not isinstance(self.placement.buffers[self.body.values[st.output]],
                                  Shared):  # the sum so far, copied
            loop_emit.memcpy(b, dst, e.value(si, 2, *ins_[2]), self._nbytes(st.output))
        if not mt:  # (src).T: src read with the transpose flag
            flagged = [bool(s_ and x in flags) for s_, x in ins_[:2]]
            ptrs = [e.value(si, k, *(flags[ins_[k][1]] if t else ins_[k]))
                    for k, t in enumerate(flagged)]
            host_gemm.gemm(b, e.module, self.symbols, st.host, *ptrs, dst, *flagged, e.entry)
        else:  # (the last two axes swapped)
            strided_copy.permute(b, _mem(out), dst, e.value(si, 0, *ins_[0]),
                                 st.host.src.shape, st.host.perm)
        if isinstance(out, AScalar):  # a vector times a vector: a 0-d result
            b.store(b.load(dst, typ=_mem(out)), e.slot_var(st.output))
            return True
        b.store(dst, e.slot_var(st.output))
        return True

    def _emit_transpose(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        if st.output in self.placement.flags:  # a swap of the last two axes: as an mT
            return self._emit_gemm(e, si, st, ins_, off, path, out)
        return self._emit_array(e, si, st, ins_, off, path, out)

    def _emit_alias(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        if st.guarded or not isinstance(out, AArray):
            return False
        b = e.b
        if self._alias(si):
            b.store(e.value(si, 0, *ins_[0]), e.slot_var(st.output))  # an alias
        else:  # a number in a buffer of one element
            dst = e.buffers[self.body.values[st.output]]
            v = e.value(si, 0, *ins_[0], want=_ltype(out))
            b.store(b.zext(v, I8) if out.dtype == np.bool_ else v, dst)
            b.store(dst, e.slot_var(st.output))
        return True

    def _emit_window(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        if si in self.windows:  # x[s:s + n] along the first axis: a pointer into x
            self._window_step(e.b, si, ins_, out, e.value, e.slot_var)
            return True
        return self._emit_array(e, si, st, ins_, off, path, out)

    def _emit_index(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        if si in self.rows:  # x[i] (or its gradient) by a computed int: a row
            self._row_step(e.b, e.module, si, st.op, ins_, off, out, path, e.bail_on,
                           e.value, e.buffers, e.slot_var)
            return True
        return self._emit_array(e, si, st, ins_, off, path, out)

    def _emit_array(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        """An array result in a buffer of its own (``_array_step``)."""
        guarded = st.guarded and si in self.guarded_dynamic
        if (st.guarded and not guarded) or not isinstance(out, AArray):
            return False
        if si in self.rows_in_place:  # stored as the state advances (``Placement._rows_in_place``)
            return True
        dst = e.buffers[self.body.values[st.output]]
        bail = (lambda bad: e.bail_on(bad, path)) if guarded else e.bail_if
        self._array_step(e.b, e.entry, si, st.op, st.name, ins_, out, dst, bail, e.value)
        e.b.store(dst, e.slot_var(st.output))
        return True

    def _emit_tuple(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        return not st.guarded  # read by the steps using it (``self.tuples``)

    def _emit_exit_value(self, e: _Emitting, si, st, ins_, off, path, out) -> bool:
        """One result of a native call: read from the call's result cells."""
        if not st.guarded and st.inputs[0][0] and st.inputs[0][1] in e.loops:
            cells, types = e.loops[st.inputs[0][1]]  # a nested loop's result
            k = st.inputs[1][1] - 1 - self.inner[st.inputs[0][1]].nstate
            v = e.b.load(cells[k], typ=types[k])
            if isinstance(out, AScalar):
                v = e.convert(v, types[k], _ltype(out))
            e.b.store(v, e.slot_var(st.output))
            return True
        if st.guarded or not (st.inputs[0][0] and st.inputs[0][1] in e.call_cells):
            return False
        b = e.b
        k = st.inputs[1][1]
        cells, exits = e.call_cells[st.inputs[0][1]]
        callee = self.calls[st.inputs[0][1]]
        is_slot, x = exits[k]
        if not is_slot:
            b.store(e.value(si, 1, False, x, want=_ltype(out)), e.slot_var(st.output))
            return True
        xa = callee.specs[x]
        v = b.load(cells[k], typ=_mem(xa))
        if xa.dtype == np.bool_:
            v = b.trunc(v, I1)
        b.store(e.convert(v, _ltype(xa), _ltype(out)), e.slot_var(st.output))
        return True

    def _weak(self, si: int) -> bool:
        """Are all of step ``si`` 's operands Python numbers (weakly typed)?"""
        specs = self.body.specs
        ins = _unwrap(self.body.steps[si])[1]
        return all(_scalar_of(specs[x] if s_ else abstract_of(x)).weak for s_, x in ins)

    def _emit_number(self, e: _Emitting, si, st, name, ins_, off, path, out) -> None:
        """A step on numbers (``scalar``, and ``select``, ``tape_get``, ``index`` and
        ``arg_extreme`` with a number for result), or a select or tape read of arrays (a
        pointer): what the kinds with no emitter, or whose emitter declined, are.  The
        operation of a ``scalar`` step is its primitive's scalar op (``op``, the
        primitive table's, computed by the kernel generator's code: ``e.scalar``) with
        Python's checks around it, or one of the few primitives with no scalar op (casts,
        ``int()``, builtin ``max``, math's domain check, ``clip``) by its name."""
        b, module, entry, value, convert, slot_var, bail_on = (
            e.b, e.module, e.entry, e.value, e.convert, e.slot_var, e.bail_on)
        specs = self.body.specs
        weak = self._weak
        sc = e.scalar
        sop = REGISTRY[name].scalar if name in REGISTRY else None
        op = sop.name if sop is not None else None
        if isinstance(out, AArray) and st.op == "tape_get":
            tp = value(si, off + 0, *ins_[0])
            k = value(si, off + 2, *ins_[2], want=I64)
            bail_on(b.icmp_unsigned(">=", k, b.load(tp, typ=I64)), path)
            base = b.load(b.gep(tp, [ir.Constant(I64, 1 + ins_[1][1])],
                                source_etype=PTR), typ=PTR)
            elem = b.gep(base, [b.mul(k, ir.Constant(I64, self._nbytes(st.output)))],
                         source_etype=I8)
            b.store(elem, slot_var(st.output))
            return
        if isinstance(out, AArray):  # select between arrays: between pointers
            c = value(si, off + 0, *ins_[0], want=I1)
            sides = [self._array_operand(b, entry, value, si, off + k, ins_[k], out)
                     for k in (1, 2)]
            r = b.select(c, *sides)
            b.store(r, slot_var(st.output))
            return
        rt = _ltype(out)
        if st.op == "select":
            c = value(si, off + 0, *ins_[0], want=I1)
            r = b.select(c, value(si, off + 1, *ins_[1], want=rt),
                         value(si, off + 2, *ins_[2], want=rt))
        elif op in _COMPARE:
            ops_ = [_scalar_of(specs[x] if s else abstract_of(x)) for s, x in ins_]
            ct = _compare_type(ops_)
            for k, a in enumerate(ops_):  # an int compared with a float: exact in
                # a double up to 53 bits (CPython compares exactly), else the host
                if is_float(ct) and a.dtype.kind == "i":
                    big = _beyond_53_bits(b, value(si, off + k, *ins_[k], want=I64))
                    bail_on(big, path)
            x0 = value(si, off + 0, *ins_[0], want=ct)
            x1 = value(si, off + 1, *ins_[1], want=ct)
            r = sc.binary(op, sc.e.v(x0), sc.e.v(x1), dtype_of(ct)).v
            r = convert(r, I1, rt)
        elif op == "neg":
            r = sc.unary(op, sc.e.v(value(si, off + 0, *ins_[0], want=rt)), dtype_of(rt)).v
        elif op == "abs":
            x0 = value(si, off + 0, *ins_[0], want=rt)
            if not is_float(rt) and weak(si):  # Python's ints: abs(-2**63) is 2**63
                bail_on(b.icmp_signed("==", x0, ir.Constant(rt, -(1 << 63))), path)
            r = sc.unary(op, sc.e.v(x0), dtype_of(rt)).v
        elif op in _MATH:
            if not is_float(rt):
                raise Unsupported(f"{name} of an integer")
            r = sc.unary(op, sc.e.v(value(si, off + 0, *ins_[0], want=rt)), dtype_of(rt)).v
        elif name in ("to_weak", "to_float", "to_bool", "grad_cast"):
            r = value(si, off + 0, *ins_[0], want=rt)
        elif st.op == "arg_extreme":  # the flat index of the first extreme
            r = self._arg_extreme(b, entry, name, specs[ins_[0][1]],
                                  value(si, off + 0, *ins_[0]), rt)
        elif name in ("py_max", "py_min"):  # Python's max(x, y): y only if y > x
            # (not np.maximum's semantics, where a NaN wins)
            x0 = value(si, off + 0, *ins_[0], want=rt)
            x1 = value(si, off + 1, *ins_[1], want=rt)
            cmp = ">" if name == "py_max" else "<"
            r = b.select(b.fcmp_ordered(cmp, x1, x0) if is_float(rt) else
                         b.icmp_signed(cmp, x1, x0), x1, x0)
        elif name == "to_int":  # int(x): Python's int has no bound, NaN/inf raise (not
            # a NumPy cast, ``ScalarLLVM.cast``, which gives INT64_MIN for those)
            src_a = self._of(ins_[0])
            st_ = _ltype(src_a)
            x0 = value(si, off + 0, *ins_[0], want=st_)
            if is_float(st_):
                fits = b.fcmp_ordered("<", b.call(overloaded(module, "llvm.fabs", st_),
                                                  [x0]), ir.Constant(st_, 2.0 ** 63))
                bail_on(b.not_(fits), path)
                x0 = b.select(fits, x0, ir.Constant(st_, 0.0))
                r = b.fptosi(x0, rt)
            else:
                r = convert(x0, st_, rt)
        elif name == "check_math_domain":  # math's domain/range errors: Python decides
            xa = self._of(ins_[1])
            y = value(si, off + 0, *ins_[0], want=rt)
            bad = b.not_(b.fcmp_ordered("<", b.call(overloaded(module, "llvm.fabs", rt),
                                                    [y]), ir.Constant(rt, math.inf)))
            if is_float(_ltype(xa)):
                xt = _ltype(xa)
                xv = value(si, off + 1, *ins_[1], want=xt)
                bad = b.and_(bad, b.fcmp_ordered("<", b.call(overloaded(
                    module, "llvm.fabs", xt), [xv]), ir.Constant(xt, math.inf)))
            bail_on(bad, path)
            r = y
        elif op == "div":
            kinds = {_scalar_of(specs[x] if s_ else abstract_of(x)).dtype.kind
                     for s_, x in ins_}
            if not kinds <= {"f", "i"} or ("i" in kinds and rt != F64):
                raise Unsupported("a division of these types")
            if weak(si) and "i" in kinds:  # CPython rounds int / int once: exact
                # when both fit a double's 53 bits, else the host decides
                for k in (0, 1):
                    if _scalar_of(specs[ins_[k][1]] if ins_[k][0]
                                  else abstract_of(ins_[k][1])).dtype.kind == "i":
                        big = _beyond_53_bits(b, value(si, off + k, *ins_[k], want=I64))
                        bail_on(big, path)
            x0 = value(si, off + 0, *ins_[0], want=rt)
            x1 = value(si, off + 1, *ins_[1], want=rt)
            if weak(si):  # Python floats: x / 0.0 raises
                bail_on(b.fcmp_ordered("==", x1, ir.Constant(rt, 0.0)), path)
            if path is not None:  # off its path: a harmless division, result unused
                x1 = b.select(path, x1, ir.Constant(rt, 1.0))
                x0 = b.select(path, x0, ir.Constant(rt, 0.0))
            r = sc.binary(op, sc.e.v(x0), sc.e.v(x1), dtype_of(rt)).v
        elif st.op == "tape_get":
            tp = value(si, off + 0, *ins_[0])
            j = ins_[1][1]
            k = value(si, off + 2, *ins_[2], want=I64)
            bail_on(b.icmp_unsigned(">=", k, b.load(tp, typ=I64)), path)
            base = b.load(b.gep(tp, [ir.Constant(I64, 1 + j)], source_etype=PTR),
                          typ=PTR)
            elem = b.gep(base, [b.mul(k, ir.Constant(I64, self._nbytes(st.output)))],
                         source_etype=I8)
            v = b.load(elem, typ=_mem(out))
            r = b.trunc(v, I1) if out.dtype == np.bool_ else v
        elif st.op == "index" and _empty_index(ins_[1]) and isinstance(
                self._of(ins_[0]), AScalar):
            r = value(si, off + 0, *ins_[0], want=rt)
        elif st.op == "index" and not ins_[0][0] and not ins_[1][0]:  # known already
            r = value(si, off + 0, False, _constant_element(ins_[0][1], ins_[1][1]),
                      want=rt)
        elif st.op == "index" and not ins_[1][0] and \
                not isinstance(ins_[1][1], (int, np.integer)):  # x[2, 5]: a constant place
            arr_a = specs[ins_[0][1]]
            offset = native_ops.basic_view(tuple(arr_a.shape), ins_[1][1])[0]
            mt = MEMTYPE[_dtname(arr_a.dtype)]
            base = value(si, off + 0, *ins_[0])
            v = b.load(b.gep(base, [ir.Constant(I64, offset)], source_etype=mt), typ=mt)
            src = LLTYPE[_dtname(arr_a.dtype)]
            if src == I1:
                v = b.trunc(v, I1)
            r = convert(v, src, rt)
        elif st.op == "index" and self._element_index(ins_) is not None:
            arr_a = self._of(ins_[0])
            const, dyn = self._element_index(ins_)
            at = self._dynamic_offset(b, tuple(arr_a.shape), dyn, value,
                                      lambda bad, path=path: bail_on(bad, path))
            at = b.add(at, ir.Constant(I64, native_ops.basic_view(
                tuple(arr_a.shape), const)[0]))
            mt = MEMTYPE[_dtname(arr_a.dtype)]
            v = b.load(b.gep(value(si, off + 0, *ins_[0]), [at], source_etype=mt), typ=mt)
            src = LLTYPE[_dtname(arr_a.dtype)]
            r = convert(b.trunc(v, I1) if src == I1 else v, src, rt)
        elif st.op == "index":
            arr_a = self._of(ins_[0])
            base = value(si, off + 0, *ins_[0])
            i = native_ops.wrapped_index(b, value(si, off + 1, *ins_[1], want=I64),
                                         arr_a.shape[0], lambda bad: bail_on(bad, path))
            if path is not None:  # not on its path: read a valid element, unused
                i = b.select(path, i, ir.Constant(I64, 0))
            mt = MEMTYPE[_dtname(arr_a.dtype)]
            v = b.load(b.gep(base, [i], source_etype=mt), typ=mt)
            src = LLTYPE[_dtname(arr_a.dtype)]
            if src == I1:
                v = b.trunc(v, I1)
            r = convert(v, src, rt)
        elif op in ("maximum", "minimum") or name == "clip":  # NumPy's: a NaN wins
            xs = [sc.e.v(value(si, off + k, *ins_[k], want=rt)) for k in range(len(ins_))]
            r = sc.binary(op or "maximum", xs[0], xs[1], dtype_of(rt))
            if name == "clip":  # np.clip(x, lo, hi): minimum(maximum(x, lo), hi)
                r = sc.binary("minimum", r, xs[2], dtype_of(rt))
            r = r.v
        elif op == "floor":
            r = sc.unary(op, sc.e.v(value(si, off + 0, *ins_[0], want=rt)), dtype_of(rt)).v
        elif op == "pow":  # C's pow (NumPy's and CPython's float **), not the kernels':
            # a kernel's float pow is myc's math library's, within an ulp of it, but a
            # Python float ** must give CPython's result to the bit
            x0 = value(si, off + 0, *ins_[0], want=rt)
            x1 = value(si, off + 1, *ins_[1], want=rt)
            r = b.call(overloaded(module, "llvm.pow", rt, 2), [x0, x1])
            if weak(si):  # Python floats: a complex result, 0.0 ** -1 and an
                # overflow raise where C gives NaN or inf: the host decides
                fr, f0, f1 = (b.fcmp_ordered("<", b.call(overloaded(
                    module, "llvm.fabs", rt), [v]), ir.Constant(rt, math.inf))
                    for v in (r, x0, x1))
                bail_on(b.and_(b.not_(fr), b.and_(f0, f1)), path)
        elif op in ("mod", "floordiv"):  # ints, rounded towards -inf as Python's
            x0 = value(si, off + 0, *ins_[0], want=rt)
            x1 = value(si, off + 1, *ins_[1], want=rt)
            bad = b.or_(b.icmp_signed("==", x1, ir.Constant(rt, 0)), b.and_(
                b.icmp_signed("==", x1, ir.Constant(rt, -1)),
                b.icmp_signed("==", x0, ir.Constant(rt, -(1 << 63)))))
            bail_on(bad, path)  # (the host raises, or computes in Python's ints)
            # elsewhere NumPy's int64 floor division is Python's (it never traps: by 0
            # it gives 0, by -1 it wraps, whatever the path)
            r = sc.binary(op, sc.e.v(x0), sc.e.v(x1), dtype_of(rt)).v
        else:
            assert op in ("add", "sub", "mul", "and", "or"), name
            x0 = value(si, off + 0, *ins_[0], want=rt)
            x1 = value(si, off + 1, *ins_[1], want=rt)
            r = None
            if op in ("and", "or"):
                if is_float(rt):
                    raise Unsupported("bitwise op on floats")
            elif rt == I1:  # (True + True is 2 in Python, True in NumPy)
                raise Unsupported("arithmetic on bools")
            elif not is_float(rt) and weak(si):  # Python ints do not wrap: leave when
                # 64 bits overflow
                pair = b.call(with_overflow(module, {"add": "sadd", "sub": "ssub",
                                                     "mul": "smul"}[op]), [x0, x1])
                bail_on(b.extract_value(pair, 1), path)
                r = b.extract_value(pair, 0)
            if r is None:
                r = sc.binary(op, sc.e.v(x0), sc.e.v(x1), dtype_of(rt)).v
        b.store(r, slot_var(st.output))

    @staticmethod
    def _arg_extreme(b, entry, name: str, a: AArray, base, rt, dst=None,
                     axis: int | None = None) -> ir.Value | None:
        """``np.argmax``/``np.argmin``: a serial scan keeping the first extreme; a NaN is
        an extreme (NumPy returns the first NaN's index).  Whole array: the flat index;
        along ``axis``: one index per position of the other axes, stored to ``dst``."""
        mt, lt = MEMTYPE[_dtname(a.dtype)], LLTYPE[_dtname(a.dtype)]
        shape = tuple(a.shape)
        if axis is None:
            outer, n, inner = 1, prod(shape), 1
        else:
            outer, n, inner = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
        with native_ops.at_entry(b, entry):
            best_p, idx_p = b.alloca(mt), b.alloca(I64)
        op = ">" if name == "argmax" else "<"
        c = ir.Constant

        def scan(o, j):  # the extreme of x[o, :, j]
            start = b.add(b.mul(o, c(I64, n * inner)), j)
            b.store(b.load(b.gep(base, [start], source_etype=mt), typ=mt), best_p)
            b.store(c(I64, 0), idx_p)

            def body(i):
                k = b.add(i, c(I64, 1))
                at = b.add(start, b.mul(k, c(I64, inner)))
                v = b.load(b.gep(base, [at], source_etype=mt), typ=mt)
                best = b.load(best_p, typ=mt)
                if is_float(lt):
                    better = b.or_(b.fcmp_ordered(op, v, best),
                                   b.and_(b.fcmp_unordered("uno", v, v),
                                          b.fcmp_ordered("ord", best, best)))
                elif lt == I1 or a.dtype.kind == "u":
                    better = b.icmp_unsigned(op, v, best)
                else:
                    better = b.icmp_signed(op, v, best)
                b.store(b.select(better, v, best), best_p)
                b.store(b.select(better, k, b.load(idx_p, typ=I64)), idx_p)

            native_ops.counted(b, n - 1, body, name)
            return b.load(idx_p, typ=I64)

        if dst is None:
            idx = scan(c(I64, 0), c(I64, 0))
            return idx if rt == I64 else b.trunc(idx, rt)
        native_ops.counted(b, outer, lambda o: native_ops.counted(
            b, inner, lambda j: b.store(scan(o, j), b.gep(
                dst, [b.add(b.mul(o, c(I64, inner)), j)], source_etype=I64)),
            f"{name}.in"), f"{name}.out")
        return None

    def _call_step(self, b, fn, entry, si, st, value, bail_if,
                   fns: dict) -> tuple[list[ir.Value], list]:
        """A call of a typed function (this one or another): the callee's io frame
        (argument and result cells) on the stack, a call at depth + 1 where the call's
        path holds, its status passed on.  The result cells, and the callee's exits."""
        args = st.inputs[1:]
        q = self.calls[st.output]
        target, param_specs, exits = fns[id(q)]
        nres = len(exits)
        if len(args) != len(param_specs):
            raise Unsupported("a call whose arguments do not match its function")
        types = [_mem(a) for a in param_specs] + [
            _mem(q.specs[x]) if is_slot else I64 for is_slot, x in exits]
        with native_ops.at_entry(b, entry):
            frame = b.alloca(PTR, size=ir.Constant(I64, len(args) + nres))
            cells = [b.alloca(t) for t in types]
        for cell, t in zip(cells[len(args):], types[len(args):], strict=True):
            b.store(ir.Constant(t, 0), cell)  # a call not made returns zeros
        go = fn.append_basic_block("call")
        after = fn.append_basic_block("called")
        b.cbranch(value(si, 0, *st.inputs[0], want=I1), go, after)
        b.position_at_end(go)
        for k, cell in enumerate(cells):
            if k < len(args):
                a = param_specs[k]
                v = value(si, k + 1, *args[k], want=_ltype(a))
                b.store(b.zext(v, I8) if a.dtype == np.bool_ else v, cell)
            at = b.gep(frame, [ir.Constant(I64, k)], inbounds=True, source_etype=PTR)
            b.store(b.bitcast(cell, PTR), at)
        status = b.call(target, [frame, b.add(fn.args[1], ir.Constant(I64, 1))])
        bail_if(b.icmp_signed("!=", status, ir.Constant(I32, 0)))
        b.branch(after)
        b.position_at_end(after)
        return cells[len(args):], exits

    def _loop_step(self, e: _Emitting, fn: ir.Function, fns: dict, si: int, st) -> None:
        """A loop step of this body, emitted inline (``_Nest``) where its ``enabled``
        holds (a loop in a side of an if-converted branch may not run): its inputs
        become its state and invariants, and its results go to cells that the steps
        reading them load (zeros, an empty tape, where it did not run)."""
        b, child = e.b, self.inner[st.output]
        exits = child._exit_types()
        types = [PTR if a is ATape or isinstance(a, AArray) else I64 if a is AScalar
                 else _ltype(a) for a in exits]
        with native_ops.at_entry(b, e.entry):
            cells = [b.alloca(t) for t in types]
        e.loops[st.output] = (cells, types)
        en_slot, en = st.inputs[0]
        after = None
        if en_slot or not en:  # zeros where it does not run
            for cell, t, a in zip(cells, types, exits, strict=True):
                if isinstance(a, AArray):
                    v = e.extra(("zeros", tuple(a.shape), memdtype(np.dtype(a.dtype))))
                elif a is ATape:
                    with native_ops.at_entry(b, e.entry):
                        v = b.alloca(PTR, size=ir.Constant(I64, 1 + child.nstate))
                    b.store(ir.Constant(I64, 0), v)  # no rows
                else:
                    v = ir.Constant(t, 0)
                b.store(v, cell)
            if not en_slot:
                return
            go = fn.append_basic_block("nested")
            after = fn.append_basic_block("nested_done")
            b.cbranch(e.value(si, 0, True, en, want=I1), go, after)
            b.position_at_end(go)
        inputs = [e.value(si, k + 1, is_slot, x,
                          want=_ltype(a) if isinstance(a, AScalar) else None)
                  for k, ((is_slot, x), a) in enumerate(zip(st.inputs[1:],
                                                            child.param_specs, strict=True))]
        child.symbols, child.kernel_of = self.symbols, self.kernel_of
        outs = child._emit(e.module, fn, fns, False,
                           _Nest(b, e.entry, e.bail_if, e.extra, inputs))
        for cell, v in zip(cells, outs, strict=True):
            b.store(v, cell)
        if after is not None:
            b.branch(after)
            b.position_at_end(after)

    def _kernel_step(self, b, si, st, value, convert, slot_var, buffers, entry,
                     next_buf) -> None:
        ck = st.fn.compiled
        op = st.host  # the step as data (``hostplan.KernelOp``)
        with native_ops.at_entry(b, entry):
            # 8-byte cells behind opaque pointers: any scalar type can be stored
            cells = [b.alloca(PTR) for _ in op.inputs]
        ins = []
        for k, ((is_slot, x), buf) in enumerate(zip(st.inputs, op.inputs, strict=True)):
            a = self.body.specs[x] if is_slot else abstract_of(x)
            if isinstance(a, AArray):
                p = value(si, k, is_slot, x)
            else:  # a scalar: a 0-d buffer of the kernel's dtype
                mt = MEMTYPE[buf.dtype]
                v = value(si, k, is_slot, x, want=LLTYPE[buf.dtype])
                if mt == I8:
                    v = b.zext(v, I8)
                b.store(v, cells[k])
                p = cells[k]
            ins.append(p)
        outs = []
        for i in range(len(st.outputs)):
            p = buffers[op.outputs[i]]
            if isinstance(p, tuple):  # ("state", j): the buffer the next state goes in
                p = next_buf(p[1])
            outs.append(p)
        # one partial per chunk for an output several chunks reduce into, combined after
        # the join (placed in the scratch: ``partial_ptr``)
        partials = {i: self.partial_ptr[v] for i, v in enumerate(op.outputs)
                    if v in self.partial_ptr}
        kouts = kernel_calls.outputs(op, ck.plan, outs, lambda v: prod(v.shape),
                                     lambda i, p: p.init and i not in partials,
                                     lambda i, p: i in partials)
        # the kernel lives in another JIT module: called through a symbol bound to its
        # address (llvm.add_symbol), which MCJIT resolves when this module loads
        sym = _kernel_symbol(ck)
        target = b.module.globals.get(sym)
        if target is None:
            target = ir.Function(b.module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64]),
                                 sym)
            self.symbols[sym] = ctypes.cast(ck._fn, ctypes.c_void_p).value
            self.kernel_of[sym] = ck.key
        pieces = self.chunks[si]
        chunks = kernel_calls.Serial(*pieces[0], entry) if len(pieces) == 1 else \
            kernel_calls.PoolChunks(entry, pieces, partials, num_threads())
        arrays = [isinstance(self.body.specs[slot], AArray) for slot in st.outputs]
        # (an array's mean divides it in place; a number's is divided below)
        kernel_calls.launch(b, target, ins, kouts, [], chunks, [
            div if array else None
            for array, div in zip(arrays, op.divide_by, strict=True)])
        for i, (slot, o, div) in enumerate(zip(st.outputs, op.outputs, op.divide_by,
                                               strict=True)):
            a = self.body.specs[slot]
            if arrays[i]:
                b.store(outs[i], slot_var(slot))
                continue
            v = b.load(outs[i], typ=MEMTYPE[o.dtype])
            src = LLTYPE[o.dtype]
            if src == I1:
                v = b.trunc(v, I1)
            if div is not None:  # a float's (an integer mean is refused: __init__)
                v = b.fdiv(v, ir.Constant(src, float(div)))
            b.store(convert(v, src, _ltype(a)), slot_var(slot))

    def _array_operand(self, b: ir.IRBuilder, entry, value, si: int, k: int,
                       operand: tuple[bool, Any], out: AArray) -> ir.Value:
        """A pointer to the elements of a select's side.  A side that folded to a NumPy
        scalar constant where the other is a 0-d array (the two sensitivities of an
        if-converted branch) lives in a cell written once at entry; it was passed as a
        number where a pointer was expected (an LLVM assertion: the select's operand
        types differ)."""
        is_slot, x = operand
        a = self.body.specs[x] if is_slot else abstract_of(x)
        if isinstance(a, AArray):
            return value(si, k, is_slot, x)
        if is_slot or tuple(out.shape) != ():
            raise Unsupported("a select between an array and a scalar")
        with native_ops.at_entry(b, entry):
            cell = b.alloca(_mem(out))
            v = value(si, k, is_slot, x, want=_ltype(out))
            b.store(v if _mem(out) == _ltype(out) else b.zext(v, _mem(out)), cell)
        return cell

    # -- indexing and fills ------------------------------------------------------------
    def _index_parts(self, si: int, index: tuple[bool, Any]):
        """The index of step ``si`` (its input 1): ``("basic", constant)``, or
        ``("gather", (parts, n))`` with parts ``(step, input position, is_slot, x)`` of int64
        arrays of one shape, ``n`` elements each (a tuple of them indexes the first axes);
        else raise Unsupported."""
        is_slot, x = index
        if not is_slot:
            if not isinstance(x, np.ndarray):
                if isinstance(x, tuple) and any(isinstance(p, np.ndarray) for p in x):
                    if not all(isinstance(p, np.ndarray) for p in x):
                        raise Unsupported("a constant index tuple mixing arrays and slices")
                    # x[(rows, cols)]: each array an io input of its own (_const_inputs)
                    parts = [(si, (1, j), False, p) for j, p in enumerate(x)]
                else:
                    return "basic", x
            else:
                parts = [(si, 1, False, x)]
        elif x in self.tuples:
            sj, ins = self.tuples[x]
            parts = [(sj, k, s_, p) for k, (s_, p) in enumerate(ins)]
            dyn = self._dynamic_index(parts)
            if dyn is not None:
                return "dynamic", dyn
        else:
            parts = [(si, 1, True, x)]
            if self.body.steps[si].op == "index_set":  # y[i] = v by a computed int
                dyn = self._dynamic_index(parts)
                if dyn is not None:
                    return "dynamic", dyn
        # index arrays of any rank (an embedding's (batch, k) negatives): the result's
        # rows are in the index's C order, so the gather reads it flat
        shape = None
        for _sj, _k, s_, p in parts:
            a = self.body.specs[p] if s_ else abstract_of(p)
            if not (isinstance(a, AArray) and a.ndim >= 1 and a.dtype == np.int64):
                raise Unsupported("an index other than int64 arrays or a basic index")
            if shape is not None and a.shape != shape:
                raise Unsupported("index arrays of different shapes")
            shape = a.shape
        return "gather", (parts, prod(shape))

    def _dynamic_index(self, parts: list[tuple]) -> tuple[tuple, list[tuple]] | None:
        """A basic index with computed ints (``x[:, k]``, ``x[i, j]``): the constant index
        with 0 at each computed place, and the computed parts ``(axis, step, input
        position, x)``; None unless every part is a constant int or slice or a computed
        int64 (each part then indexes the axis at its place)."""
        const, dyn = [], []
        for d, (sj, k, s_, p) in enumerate(parts):
            if not s_:
                if not (isinstance(p, slice) or (isinstance(p, (int, np.integer))
                                                 and not isinstance(p, bool))):
                    return None
                const.append(p)
                continue
            a = self.body.specs[p]
            if not (isinstance(a, AScalar) and a.dtype == np.int64):
                return None
            const.append(0)
            dyn.append((d, sj, k, p))
        return (tuple(const), dyn) if dyn else None

    def _element_index(self, ins_: list) -> tuple[tuple, list[tuple]] | None:
        """``x[i, j]`` with some of the ints computed: one element (``_dynamic_index``)."""
        (xs_, x), (is_, t) = ins_[0], ins_[1]
        a = self.body.specs[x] if xs_ else abstract_of(x)
        if not (is_ and t in self.tuples and isinstance(a, AArray)
                and _dtname(a.dtype) in MEMTYPE and len(ins_) == 2):
            return None
        sj, parts = self.tuples[t]
        dyn = self._dynamic_index([(sj, k, s_, p) for k, (s_, p) in enumerate(parts)])
        if dyn is None or len(dyn[0]) != a.ndim or any(
                isinstance(p, slice) for p in dyn[0]) or 0 in a.shape:
            return None
        return dyn

    def _dynamic_offset(self, b, xshape: tuple, dyn: list[tuple], value, bail_if) -> ir.Value:
        """The element offset of a dynamic index's computed ints (negative ones count
        from the end; out of range, the host runner raises Python's IndexError)."""
        at = ir.Constant(I64, 0)
        for d, sj, k, p in dyn:
            size = ir.Constant(I64, xshape[d])
            i = value(sj, k, True, p, want=I64)
            i = b.select(b.icmp_signed("<", i, ir.Constant(I64, 0)), b.add(i, size), i)
            bad = b.icmp_unsigned(">=", i, size)
            bail_if(bad)
            i = b.select(bad, ir.Constant(I64, 0), i)
            at = b.add(at, b.mul(i, ir.Constant(I64, prod(xshape[d + 1:]))))
        return at

    def _row_index(self, kind: str, ins_: list, out: AArray) -> bool:
        """Is this ``x[i]`` (``getitem``) or its gradient (``getitem_grad``: zeros of
        ``x``'s shape, row ``i`` set) with ``i`` a computed int64 and ``x`` a C-contiguous
        array?  A loop's ``xs[t]``: its counter is loop data, so the index is computed
        (and guarded: it may fail only where the loop goes on)."""
        specs = self.body.specs
        (xs_, x), (is_, i) = ins_[0], ins_[1]
        xa = specs[x] if xs_ else abstract_of(x)
        ia = specs[i] if is_ else None
        if not (isinstance(xa, AArray) and xa.ndim >= 1 and xa.shape[0] > 0
                and isinstance(ia, AScalar) and ia.dtype == np.int64
                and out.dtype == xa.dtype and _dtname(out.dtype) in MEMTYPE):
            return False
        if kind == "index":
            return len(ins_) == 2 and tuple(out.shape) == tuple(xa.shape[1:])
        if len(ins_) != 3 or tuple(out.shape) != tuple(xa.shape) or out.dtype.kind != "f":
            return False
        ds_, d = ins_[2]
        da = specs[d] if ds_ else abstract_of(d)
        if isinstance(da, AArray):
            return da.dtype == out.dtype and tuple(da.shape) == tuple(xa.shape[1:])
        return isinstance(da, AScalar) and xa.ndim == 1 and da.dtype.kind in "fib"

    def _alias(self, si: int) -> bool:
        """Does step ``si``'s array result alias another array (no buffer of its own)?"""
        st = self.body.steps[si]
        ins_ = _unwrap(st)[1]
        if st.op == "alias":  # an array's data under another shape, not a number's
            return isinstance(self._of(ins_[0]), AArray)
        return si in self.windows or (si in self.rows and st.op == "index")

    def _row_step(self, b, module, si: int, kind: str, ins_: list, off: int, out: AArray,
                  path, bail_on, value, buffers, slot_var) -> None:
        """``x[i]``: a pointer into ``x`` (rows of a C-contiguous array are contiguous, and
        nothing writes an array a step reads while the iteration runs); its gradient:
        zeros with row ``i`` set.  An index out of range (negative ones count from the
        end) hands the run to the host runner, which raises Python's IndexError -- only
        where the step's path holds; elsewhere row 0 is read (its result is discarded)."""
        specs = self.body.specs
        xa = self._of(ins_[0])
        ty = MEMTYPE[_dtname(out.dtype)]
        row = prod(xa.shape[1:])
        rowbytes = row * memdtype(np.dtype(out.dtype)).itemsize
        size = ir.Constant(I64, xa.shape[0])
        i = value(si, off + 1, *ins_[1], want=I64)
        i = b.select(b.icmp_signed("<", i, ir.Constant(I64, 0)), b.add(i, size), i)
        bad = b.icmp_unsigned(">=", i, size)
        bail_on(bad, path)
        if path is not None:
            bad = b.or_(bad, b.not_(path))
        i = b.select(bad, ir.Constant(I64, 0), i)
        if kind == "index":
            ptr = b.gep(value(si, off + 0, *ins_[0]), [b.mul(i, ir.Constant(I64, rowbytes))],
                        source_etype=I8)
            b.store(ptr, slot_var(self.body.steps[si].output))
            return
        dst = buffers[self.body.values[self.body.steps[si].output]]
        kernel_calls.fill(b, dst, ty, 0, prod(out.shape))
        with b.if_then(b.not_(bad)):
            at = b.gep(dst, [b.mul(i, ir.Constant(I64, row))], source_etype=ty)
            ds_, d = ins_[2]
            da = specs[d] if ds_ else abstract_of(d)
            if isinstance(da, AArray):
                if rowbytes:
                    loop_emit.memcpy(b, at, value(si, off + 2, ds_, d), rowbytes)
            else:
                b.store(value(si, off + 2, ds_, d, want=LLTYPE[_dtname(out.dtype)]), at)
        b.store(dst, slot_var(self.body.steps[si].output))

    def _window_step(self, b, si: int, ins_: list, out: AArray, value, slot_var) -> None:
        """A dynamic slice whose window is contiguous: a pointer at the clamped start, as
        ``x[i]`` (``_row_step``) is -- no copy."""
        x = self._of(ins_[0])
        axis = int(ins_[2][1])
        start = value(si, 1, *ins_[1], want=I64)
        last = ir.Constant(I64, max(x.shape[axis] - out.shape[axis], 0))
        start = b.select(b.icmp_signed("<", start, ir.Constant(I64, 0)),
                         ir.Constant(I64, 0), start)
        start = b.select(b.icmp_signed(">", start, last), last, start)
        ty = MEMTYPE[_dtname(out.dtype)]
        at = b.mul(start, ir.Constant(I64, prod(x.shape[axis + 1:])))
        b.store(b.gep(value(si, 0, *ins_[0]), [at], source_etype=ty),
                slot_var(self.body.steps[si].output))

    def _array_step_plan(self, si: int, kind: str, name: str, ins_: list,
                         out: AArray) -> None:
        specs = self.body.specs
        if kind in ("window", "window_add"):
            x = self._of(ins_[0])
            st = self._of(ins_[1])
            if not (isinstance(x, AArray) and x.dtype == out.dtype
                    and _dtname(out.dtype) in MEMTYPE and isinstance(st, AScalar)
                    and st.dtype.kind == "i" and not ins_[2][0] and not ins_[3][0]):
                raise Unsupported(f"{name} of this kind")
            if kind == "window" and prod(x.shape[:int(ins_[2][1])]) == 1:
                self.windows.add(si)  # rows of a C-contiguous array: a pointer into it
            return
        if kind == "fill":
            return
        if kind == "pack":
            self._array_leaves(si, ins_, out)
            return
        if kind == "concatenate":
            self._concat_pieces(si, ins_, out)
            return
        if kind == "transpose":
            # (its ``Permute``: ``np.transpose(x, axes)``, ``x.T``, ``axes`` constant)
            if not isinstance(self.body.steps[si].host, Permute) or \
                    _dtname(out.dtype) not in MEMTYPE:
                raise Unsupported("a transpose of this kind")
            return
        if kind == "arg_extreme":
            x = specs[ins_[0][1]] if ins_[0][0] else None
            axis = ins_[1][1] if not ins_[1][0] else None
            if not (isinstance(x, AArray) and isinstance(axis, (int, np.integer))
                    and -x.ndim <= axis < x.ndim and x.shape[axis] > 0
                    and str(x.dtype) in MEMTYPE and out.dtype == np.int64
                    and tuple(out.shape) == x.shape[:axis % x.ndim] +
                    x.shape[axis % x.ndim + 1:]):
                raise Unsupported(f"{name} of this kind")
            return
        x = self._of(ins_[0])
        if kind == "scatter_add" and isinstance(x, AScalar) and _empty_index(ins_[1]) \
                and out.shape == () and out.dtype.kind == "f" and len(ins_) == 3:
            d = self._of(ins_[2])
            if isinstance(_scalar_of(d), AScalar) and d.dtype.kind in "fi":
                return  # a number's x[()]: its sensitivity, in a 0-d buffer
        if not isinstance(x, AArray):
            raise Unsupported("indexing a non-array")
        how, parts = self._index_parts(si, ins_[1])
        if how == "dynamic" and (len(parts[0]) > x.ndim or any(
                x.shape[d] == 0 for d, *_ in parts[1])):
            raise Unsupported("a computed index past the array's axes")
        if how in ("basic", "dynamic"):
            view = native_ops.basic_view(tuple(x.shape), parts if how == "basic"
                                         else parts[0])
            want = view[1] if view is not None and kind == "index" else x.shape
            if view is None or tuple(want) != tuple(out.shape):
                raise Unsupported("a basic index myc cannot follow")
        else:
            got, n = parts
            _sj, _k, s_, p0 = got[0]
            idx_shape = tuple((specs[p0] if s_ else abstract_of(p0)).shape)
            shape = (*idx_shape, *x.shape[len(got):])
            if len(got) > x.ndim or tuple(out.shape) != (
                    shape if kind == "index" else tuple(x.shape)):
                raise Unsupported("a gather of another shape")
        if kind == "scatter_add":
            d = self._of(ins_[2])
            if out.dtype.kind != "f" or tuple(out.shape) != tuple(x.shape) or \
                    not isinstance(d, (AArray, AScalar)) or d.dtype != out.dtype:
                raise Unsupported("a scatter of other types")
        if kind == "index_set":  # R[i, j] = v, R[t] = row: x copied, the view stored
            # (a number into every element of it: a row of an adjoint zeroed)
            d = self._of(ins_[2])
            if how not in ("basic", "dynamic") or x.dtype != out.dtype or \
                    out.dtype.kind not in "fi" or not isinstance(d, (AScalar, AArray)) or \
                    d.dtype != out.dtype or (prod(d.shape) != 1 and
                                             tuple(d.shape) != tuple(view[1])):
                raise Unsupported("an item assignment of this kind")

    def _concat_pieces(self, si: int, ins_: list, out: AArray) -> tuple[list[tuple], Any]:
        """``np.concatenate(xs, axis)``: ``xs`` 's pieces as ``(step, input position,
        is_slot, x, abstract)`` (``xs`` a tuple built by a ``make_tuple`` step or a
        constant one) and the axis (None: the pieces raveled).  Raise Unsupported unless
        every piece is an array of the result's dtype and the shapes add up (NumPy's
        casting of mixed dtypes stays on the host)."""
        specs = self.body.specs
        (ts, t), (axs, axis) = ins_[0], ins_[1]
        if axs or len(ins_) != 2 or not (axis is None or isinstance(axis, (int, np.integer))):
            raise Unsupported("np.concatenate along a computed axis")
        if ts and t in self.tuples:
            sj, parts = self.tuples[t]
            pieces = [(sj, k, s_, x) for k, (s_, x) in enumerate(parts)]
        elif not ts and isinstance(t, tuple):
            pieces = [(-2, k, False, x) for k, x in enumerate(t)]
        else:
            raise Unsupported("np.concatenate of a value that is not a tuple of arrays")
        if _dtname(out.dtype) not in MEMTYPE or not pieces:
            raise Unsupported("np.concatenate of this dtype")
        out_ = []
        for sj, k, s_, x in pieces:
            a = specs[x] if s_ else abstract_of(x)
            if sj < 0 and isinstance(x, np.ndarray):
                raise Unsupported("a constant array inside a constant tuple")
            if not isinstance(a, AArray) or a.dtype != out.dtype or a.ndim == 0:
                raise Unsupported("np.concatenate of pieces of another dtype")
            out_.append((sj, k, s_, x, a))
        if axis is None:
            if out.ndim != 1 or sum(prod(a.shape) for *_, a in out_) != out.shape[0]:
                raise Unsupported("np.concatenate of another shape")
            return out_, None
        ax = int(axis) % out.ndim if -out.ndim <= axis < out.ndim else None
        if ax is None or any(a.ndim != out.ndim or tuple(a.shape[:ax]) != out.shape[:ax] or
                             tuple(a.shape[ax + 1:]) != out.shape[ax + 1:] for *_, a in out_) \
                or sum(a.shape[ax] for *_, a in out_) != out.shape[ax]:
            raise Unsupported("np.concatenate of another shape")
        return out_, ax

    def _array_leaves(self, si: int, ins_: list, out: AArray) -> list[tuple]:
        """``np.array(obj)`` of values the program computes: ``obj``'s leaves in order as
        ``(step, input position, is_slot, x)`` -- ``obj`` a (nested) tuple built by
        ``make_tuple`` steps or a constant, its leaves scalars or equally shaped arrays of
        the result's dtype.  Raise Unsupported for anything else, or for a conversion
        NumPy would make differently from a machine cast (a float into an integer)."""
        specs = self.body.specs
        if ins_[1][0] or len(ins_) != 2:
            raise Unsupported("np.array with a computed dtype")
        leaves: list[tuple] = []
        dims: list[int] = []

        def walk(sj: int, k: int, is_slot: bool, x: Any, depth: int) -> None:
            if is_slot and x in self.tuples:
                parts = [(sk, kk, s_, p) for kk, (s_, p) in enumerate(self.tuples[x][1])
                         for sk in [self.tuples[x][0]]]
            elif not is_slot and isinstance(x, tuple):
                parts = [(-2, kk, False, p) for kk, p in enumerate(x)]
            else:
                if sj < 0 and isinstance(x, np.ndarray):
                    raise Unsupported("a constant array inside a constant tuple")
                leaves.append((sj, k, is_slot, x))
                depths.add(depth)
                return
            if len(dims) == depth:
                dims.append(len(parts))
            elif dims[depth] != len(parts):
                raise Unsupported("np.array of a ragged nesting")
            for part in parts:
                walk(*part, depth + 1)

        depths: set[int] = set()
        walk(si, 0, *ins_[0], 0)
        if depths != {len(dims)}:
            raise Unsupported("np.array of a ragged nesting")
        kinds = {"f": "fib", "i": "ib", "b": "b"}.get(out.dtype.kind)
        leaf_shape = None
        for _sj, _k, is_slot, x in leaves:
            a = specs[x] if is_slot else abstract_of(x)
            if isinstance(a, AArray):
                if a.dtype != out.dtype:
                    raise Unsupported("np.array of arrays of another dtype")
                shape = tuple(a.shape)
            elif isinstance(a, AScalar) and not (isinstance(x, (np.ndarray, tuple))):
                shape = ()
                if kinds is None or a.dtype.kind not in kinds or str(out.dtype) not in LLTYPE:
                    raise Unsupported("np.array converting between these kinds")
                if not is_slot and a.dtype.kind == "i" and not -(1 << 63) <= int(x) < 1 << 63:
                    raise Unsupported("an int constant beyond 64 bits")
            else:
                raise Unsupported("np.array of values that are not data")
            if leaf_shape is not None and shape != leaf_shape:
                raise Unsupported("np.array of differently shaped values")
            leaf_shape = shape
        if leaf_shape is None or (*dims, *leaf_shape) != tuple(out.shape):
            raise Unsupported("np.array of another shape")
        return leaves

    def _array_step(self, b, entry, si: int, kind: str, name: str, ins_: list, out: AArray,
                    dst, bail_if, value) -> None:
        specs = self.body.specs
        ty = MEMTYPE[_dtname(out.dtype)]
        count = prod(out.shape)
        if kind == "pack":  # each leaf stored in turn, converted to the result's dtype
            leaves = self._array_leaves(si, ins_, out)
            each = count // len(leaves) if leaves else 0
            for t, (sj, k, is_slot, x) in enumerate(leaves):
                at = b.gep(dst, [ir.Constant(I64, t * each)], source_etype=ty)
                a = specs[x] if is_slot else abstract_of(x)
                if isinstance(a, AArray):
                    if each:
                        loop_emit.memcpy(b, at, value(sj, k, is_slot, x),
                                each * np.dtype(memdtype(out.dtype)).itemsize)
                    continue
                v = value(sj, k, is_slot, x, want=LLTYPE[_dtname(out.dtype)])
                b.store(b.zext(v, I8) if out.dtype == np.bool_ else v, at)
            return
        if kind == "concatenate":  # each piece's rows copied into its place in turn
            pieces, axis = self._concat_pieces(si, ins_, out)
            size = np.dtype(memdtype(out.dtype)).itemsize
            outer = 1 if axis is None else prod(out.shape[:axis])
            row = count // outer if outer else 0  # the result's elements per outer index
            at = 0  # the piece's first element in a row of the result
            for sj, k, is_slot, x, a in pieces:
                inner = prod(a.shape) // outer if outer else 0
                if inner == 0:
                    continue
                src = value(sj, k, is_slot, x)
                if outer == 1:
                    loop_emit.memcpy(b, b.gep(dst, [ir.Constant(I64, at)], source_etype=ty),
                            src, inner * size)
                else:
                    def piece_row(o, src=src, at=at, inner=inner):
                        loop_emit.memcpy(b, b.gep(dst, [b.add(
                            b.mul(o, ir.Constant(I64, row)), ir.Constant(I64, at))],
                            source_etype=ty), b.gep(src, [b.mul(o, ir.Constant(
                                I64, inner))], source_etype=ty), inner * size)
                    native_ops.counted(b, outer, piece_row, "concat")
                at += inner
            return
        if kind == "transpose":  # a strided read of x in the result's order (a 2-d swap
            # that only feeds GEMMs never gets here: a transpose flag)
            op = self.body.steps[si].host
            if count:
                strided_copy.permute(b, ty, dst, value(si, 0, *ins_[0]), op.src.shape,
                                     op.perm, name="ix")
            return
        if kind in ("window", "window_add"):  # the window at the start clamped into the
            # axis (a guard of the program holds NumPy's semantics: ``myc.infer.dynslice``)
            x = self._of(ins_[0])
            axis = int(ins_[2][1])
            full = tuple(out.shape) if kind == "window_add" else tuple(x.shape)
            window = tuple(x.shape) if kind == "window_add" else tuple(out.shape)
            strides = tuple(prod(full[k + 1:]) for k in range(len(full)))
            start = value(si, 1, *ins_[1], want=I64)
            last = ir.Constant(I64, max(full[axis] - window[axis], 0))
            start = b.select(b.icmp_signed("<", start, ir.Constant(I64, 0)),
                             ir.Constant(I64, 0), start)
            start = b.select(b.icmp_signed(">", start, last), last, start)
            at = b.mul(start, ir.Constant(I64, strides[axis]))
            if kind == "window":
                base = b.gep(value(si, 0, *ins_[0]), [at], source_etype=ty)
                strided_copy.copy(b, ty, dst, base, window, strides)
            else:
                kernel_calls.fill(b, dst, ty, 0, count)
                base = b.gep(dst, [at], source_etype=ty)
                strided_copy.copy(b, ty, value(si, 0, *ins_[0]), base, window, strides,
                                  store=True)
            return
        if kind == "fill":
            kernel_calls.fill(b, dst, ty, fill_value(name), count)
            return
        if kind == "arg_extreme":
            a = specs[ins_[0][1]]
            k = ins_[1][1] % a.ndim
            self._arg_extreme(b, entry, name, a, value(si, 0, *ins_[0]), I64, dst=dst,
                              axis=k)
            return
        x = self._of(ins_[0])
        if isinstance(x, AScalar):  # a number's x[()]: its sensitivity (planned so)
            b.store(value(si, 2, *ins_[2], want=LLTYPE[_dtname(out.dtype)]), dst)
            return
        how, parts = self._index_parts(si, ins_[1])
        d = None
        if kind == "index_set" and si not in self.rows_in_place:  # x copied, then its
            # element stored (as a scatter's)
            off = len(self.body.steps[si].inputs) - len(ins_)  # (a guarded step's)
            loop_emit.memcpy(b, dst, value(si, off, *ins_[0]),
                             self._nbytes(self.body.steps[si].output))
        if kind == "scatter_add":
            kernel_calls.fill(b, dst, ty, 0, count)
        if kind in ("scatter_add", "index_set"):
            d_slot, d_x = ins_[2]
            d_shape = tuple(getattr(specs[d_x] if d_slot else abstract_of(d_x), "shape", ()))
            if isinstance(specs[d_x] if d_slot else abstract_of(d_x), AScalar):
                with native_ops.at_entry(b, entry):  # one element: through a cell
                    cell = b.alloca(ty)
                b.store(value(si, 2, d_slot, d_x, want=LLTYPE[_dtname(out.dtype)]), cell)
                d = cell
            else:
                d = value(si, 2, d_slot, d_x)
        if how in ("basic", "dynamic"):
            offset, shape, strides = native_ops.basic_view(
                tuple(x.shape), parts if how == "basic" else parts[0])
            src = value(si, 0, *ins_[0]) if kind == "index" else dst
            if how == "dynamic":  # the computed ints move the view's start
                at = self._dynamic_offset(b, tuple(x.shape), parts[1], value, bail_if)
                src = b.gep(src, [at], source_etype=ty)
            if kind == "index":
                strided_copy.copy(b, ty, dst, src, shape, strides, offset=offset)
            else:
                strided_copy.copy(b, ty, d, src, shape, strides, offset=offset, store=True,
                                  broadcast=kind == "index_set" and prod(shape) > 1 and
                                  prod(d_shape) == 1)
            return
        got, n = parts
        idx = [value(sj, k, s_, p) for sj, k, s_, p in got]
        if kind == "index":
            native_ops.gather(b, ty, dst, value(si, 0, *ins_[0]), tuple(x.shape), idx, n,
                              bail_if, scatter=False)
        else:
            native_ops.gather(b, ty, d, dst, tuple(x.shape), idx, n, bail_if, scatter=True)

@dataclass
class _Emitting:
    """What the emitters of one program's steps share (``NativeLoop._emit``'s builder and
    its helpers)."""

    b: ir.IRBuilder
    module: ir.Module
    entry: ir.Block
    value: Any  # (step, input position, is_slot, x, want=None) -> an LLVM value
    convert: Any  # (value, from type, to type) -> value
    slot_var: Any  # slot -> the alloca holding its value
    buffers: dict  # a step result's value (``hostplan.Value``) -> its buffer
    bail_if: Any  # (condition) -> leave for the host runner where it holds
    bail_on: Any  # (condition, path) -> the same, only where the step's path holds
    call_cells: dict  # a call's output slot -> (its result cells, the callee's exits)
    scalar: ScalarLLVM  # the scalar operations' code, the kernel generator's
    extra: Any  # (record) -> a pointer to a nested loop's buffer the runner makes
    # a nested loop's output slot -> (cells holding its results, their LLVM types)
    loops: dict = field(default_factory=dict)


@dataclass
class _Nest:
    """Where a nested loop is emitted (``NativeLoop._loop_step``): the builder and entry
    block of the function of the body holding it, its failure path, how a buffer is
    made (``extra``), and the loop's inputs as LLVM values (its state, its invariants)."""

    b: ir.IRBuilder
    entry: ir.Block
    bail_if: Any
    extra: Any
    inputs: list[ir.Value]


# each op kind (``Step.op``) -> its check (``NativeLoop.__init__``: raise Unsupported, or
# say it is covered) and its emitter (``NativeLoop._emit``).  A kind with none
# (``scalar``, ``select``, ``tape_get``, ``host``), or a step its own declines (a
# guarded one, a number for result), is a step on numbers: ``_check_scalar`` and
# ``_emit_number``, keyed on the primitive (its scalar semantics)
_CHECKS = {
    "gemm": NativeLoop._check_gemm, "gemm_acc": NativeLoop._check_gemm,
    "matrix_transpose": NativeLoop._check_matrix_transpose,
    "transpose": NativeLoop._check_transpose, "alias": NativeLoop._check_alias,
    "tuple": NativeLoop._check_tuple, "index": NativeLoop._check_index,
    "scatter_add": NativeLoop._check_index, "index_set": NativeLoop._check_index,
    "exit_value": NativeLoop._check_exit_value,
    **dict.fromkeys(("fill", "arg_extreme", "pack", "window", "window_add", "concatenate"),
                    NativeLoop._check_array),
}
_EMITS = {
    "gemm": NativeLoop._emit_gemm, "gemm_acc": NativeLoop._emit_gemm,
    "matrix_transpose": NativeLoop._emit_gemm, "transpose": NativeLoop._emit_transpose,
    "alias": NativeLoop._emit_alias, "tuple": NativeLoop._emit_tuple,
    "index": NativeLoop._emit_index, "scatter_add": NativeLoop._emit_index,
    "index_set": NativeLoop._emit_index, "window": NativeLoop._emit_window,
    "exit_value": NativeLoop._emit_exit_value,
    **dict.fromkeys(("fill", "arg_extreme", "pack", "window_add", "concatenate"),
                    NativeLoop._emit_array),
}
# the op kinds this generator covers (never ``host``): what the backend declares
# (``myc.backends.registry.Cpu.native_kinds``); within a kind, the checks decide
NATIVE_KINDS = frozenset(_CHECKS) | frozenset(_EMITS) | {"scalar"} | _NUMBER_KINDS


def _empty_index(index: tuple[bool, Any]) -> bool:
    """Is this index the constant ``()`` (``x[()]``)?"""
    return not index[0] and isinstance(index[1], tuple) and index[1] == ()


def _beyond_53_bits(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """Is the int64 ``v`` too big for a double to hold exactly (|v| > 2**53)?"""
    lim = ir.Constant(v.type, 1 << 53)
    return b.or_(b.icmp_signed(">", v, lim), b.icmp_signed("<", v, b.neg(lim)))


def _scalar_of(a: Any) -> Any:
    """A 0-d array operand of a scalar step as the NumPy scalar it holds (its value is
    loaded from its buffer: ``value``)."""
    if isinstance(a, AArray) and a.shape == () and _dtname(a.dtype) in MEMTYPE:
        return AScalar(a.dtype, False)
    return a


def _constant_element(x: Any, index: Any) -> np.generic | None:
    """``x[index]`` when ``x`` is a constant array and that is one element (a gradient
    reads the elements of a constant ``np.array`` so), else None."""
    if not isinstance(x, np.ndarray) or str(x.dtype) not in LLTYPE:
        return None
    try:
        v = x[index]
    except (IndexError, TypeError, ValueError):
        return None
    return v if isinstance(v, np.generic) else None


def _compare_type(abstracts: list[Any]) -> ir.Type:
    """The type NumPy compares two scalars in (Python scalars are weak)."""
    kinds = {a.dtype.kind for a in abstracts}
    if "f" in kinds and "i" in kinds:
        # CPython compares an int with a float exactly: in a double, where the int
        # fits 53 bits (the caller checks); float32 would round it sooner
        if any(a.dtype.kind == "f" and a.dtype != np.float64 for a in abstracts):
            raise Unsupported("an int compared with a float32")
        return F64
    proxies = [{"f": 0.0, "i": 0, "b": False}[a.dtype.kind] if a.weak else a.dtype.type(0)
               for a in abstracts]
    dt = np.result_type(*proxies)
    return LLTYPE[_dtname(dt)]


def _buffer(v: Value) -> tuple[tuple, np.dtype]:
    """The shape and element type of a buffer holding ``v`` (a bool as one byte)."""
    return tuple(v.shape), memdtype(np.dtype(v.dtype))
