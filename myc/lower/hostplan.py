"""The host program as data: planned buffers and the step kinds over them.

A :class:`HostPlan` is what a backend's host-program generator turns into native code
(today the CPU backend's library emitter, ``myc.backends.cpu.aot_codegen``).  Nothing
here names a target: a buffer is a :class:`Value` -- a dtype and a shape (static, or
polynomials in dynamic sizes: :class:`~myc.lower.dims.Dim`) -- and each step says what
it reads and what it writes (:func:`operands`, :func:`results`), so buffers can be
placed (and, later, reused by lifetime) without knowing what a step computes.

The step kinds:

* :class:`KernelOp` -- a fused kernel (kernel IR), launched over its whole parallel
  range; ``divide_by`` divides an output in place afterwards (a ``mean``);
* :class:`Gemm` -- ``C = A @ B`` on contiguous row-major matrices (or ``C = acc +
  alpha * A @ B``: a sum of products accumulated, ``myc.opt.products``), batched as
  ``np.matmul`` broadcasts (the JIT's; :func:`gemm_op`);
* :class:`Permute` -- a transpose, copied into a new contiguous buffer;
* :class:`Alias` -- a view: the same contiguous data under another shape;
* :class:`LoopOp` -- a data-dependent loop: a body of steps, its carried state, its
  exit values, and (a gradient's forward rerun) a :class:`Tape` of the state at the
  start of every iteration;
* :class:`Select` -- an if-converted branch's choice (a copy of the side taken);
* :class:`TapeGet` -- a row of a tape (a gradient's backward loop);
* :class:`Check` -- a guard: go on only where a flag holds, else fail the call with a
  message (where Python would raise).

``myc.lower.planned`` produces a plan from the optimized typed graph.  The JIT's host
program (``myc.lower.program``) describes its slots with the same values
(:func:`slot_value`), its kernel launches, products and transposes as :class:`KernelOp`,
:class:`Gemm` and :class:`Permute` steps over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from myc.lower.dims import Dim
from myc.lower.kernel import Kernel
from myc.prims.abstract import AArray, AScalar

SHORT = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "bool"}
ITEMSIZE = {"float32": 4, "float64": 8, "int64": 8, "bool": 1}
# the most bytes one array of a plan may take: above any machine's address space
# (x86-64 and AArch64 user space is at most 2^56 bytes), and far enough below 2^63
# that the arena's sums, a tape's rows and 64 threads' partials stay in 64 bits
MAX_BYTES = 1 << 56


@dataclass(eq=False)
class Value:
    """A buffer with a static (or symbolic) shape; ``const`` holds the data of a
    constant."""

    dtype: str
    shape: tuple[int, ...]
    name: str = ""
    const: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return prod(self.shape) * np.dtype(self.dtype).itemsize

    def describe(self) -> str:
        return f"{SHORT[self.dtype]}[{','.join(map(str, self.shape))}]"


@dataclass(eq=False)
class KernelOp:
    kernel: Kernel
    inputs: list[Value]
    outputs: list[Value]
    divide_by: list[int | None] = field(default_factory=list)


def slot_value(a: Any) -> Value | None:
    """The buffer a JIT slot holding abstract value ``a`` is: an array's dtype and shape,
    a number's dtype (0-d; whether a slot is a number, held in a register by the native
    generator, is its abstract value's); None for what is not data (a tuple, a tape)."""
    if isinstance(a, (AArray, AScalar)):
        return Value(str(np.dtype(a.dtype)), tuple(a.shape) if isinstance(a, AArray) else ())
    return None


def kernel_op(kernel: Kernel, divide_by: list[int | None], inputs: list[Value | None],
              outputs: list[Value | None]) -> KernelOp:
    """A kernel launch step of the JIT (``lower/program.py``) on its slots' values
    (``slot_value``: one object per slot, shared by the steps that write and read it);
    an input the kernel holds in another dtype or shape (converted on the fly) or a
    constant on a buffer of the kernel's own."""

    def on(b, v: Value | None) -> Value:
        if v is not None and v.dtype == b.dtype and v.shape == tuple(b.shape):
            return v
        return Value(b.dtype, b.shape, b.name)

    return KernelOp(kernel, [on(b, v) for b, v in zip(kernel.inputs, inputs, strict=True)],
                    [on(b, v) for b, v in zip(kernel.output_buffers(), outputs, strict=True)],
                    list(divide_by))


def transpose_op(kind: str, src: Value | None, out: Value | None, axes: Any = None
                 ) -> Permute | None:
    """A JIT transpose step as data: ``kind`` ``"matrix_transpose"`` (the last two axes
    swapped) or ``"transpose"`` with constant ``axes`` (None: all reversed; negative
    ones counted from the end), as the :class:`Permute` of ``src`` into ``out``; None
    where that is not a permutation of ``src``'s axes giving ``out`` (as NumPy would
    refuse) or either is not an array of one dtype."""
    if src is None or out is None or src.dtype != out.dtype:
        return None
    n = len(src.shape)
    try:
        if kind == "matrix_transpose":
            perm = (*range(n - 2), n - 1, n - 2) if n >= 2 else ()
        else:
            perm = tuple(range(n))[::-1] if axes is None else tuple(int(a) % n for a in axes)
    except (TypeError, ZeroDivisionError):
        return None
    if sorted(perm) != list(range(n)) or tuple(src.shape[a] for a in perm) != out.shape:
        return None
    return Permute(src, out, perm)


@dataclass(eq=False)
class Gemm:
    """``out = a @ b``: ``m x k`` times ``k x n`` matrices, one per element of ``batch``
    (np.matmul's broadcast batch dimensions; each operand's element stride per batch
    dimension in ``a_strides``/``b_strides``, 0 where it is broadcast)."""

    a: Value
    b: Value
    out: Value
    m: int
    n: int
    k: int
    acc: Value | None = None  # the sum so far: ``out = acc + alpha * a @ b``
    alpha: float = 1.0
    batch: tuple[int, ...] = ()
    a_strides: tuple[int, ...] = ()
    b_strides: tuple[int, ...] = ()

    @property
    def tall(self) -> bool:
        """A batch of left matrices times one right matrix: one tall product."""
        return len(self.a.shape) > 2 and len(self.b.shape) <= 2


def gemm_op(a: Value, b: Value, out: Value, acc: Value | None = None, alpha: float = 1.0
            ) -> Gemm | None:
    """``a @ b`` (``acc + alpha * a @ b`` with ``acc``) as data, the shapes paired as
    ``np.matmul`` pairs them: a 1-d operand is a row (left) or column (right) matrix
    whose extra dimension the result drops, batch dimensions broadcast.  None where
    NumPy would refuse the shapes or ``out`` is not the product's shape."""
    if not a.shape or not b.shape:
        return None
    a2 = (1, *a.shape) if len(a.shape) == 1 else tuple(a.shape)
    b2 = (*b.shape, 1) if len(b.shape) == 1 else tuple(b.shape)
    (m, k), (k2, n) = a2[-2:], b2[-2:]
    try:
        batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    except ValueError:  # batch dimensions that do not broadcast
        return None
    shape = (*batch, *((m,) if len(a.shape) > 1 else ()), *((n,) if len(b.shape) > 1 else ()))
    if k != k2 or tuple(out.shape) != shape:
        return None
    return Gemm(a, b, out, m, n, k, acc, alpha, batch, _batch_strides(a2, len(batch)),
                _batch_strides(b2, len(batch)))


def _batch_strides(shape: tuple[int, ...], nb: int) -> tuple[int, ...]:
    """Element strides of a C-contiguous array's batch dimensions, right-aligned to
    ``nb`` broadcast batch dimensions (0 for a dimension it lacks or has of size 1)."""
    strides, acc = [], shape[-1] * shape[-2]
    for d in reversed(shape[:-2]):
        strides.append(0 if d == 1 else acc)
        acc *= d
    strides += [0] * (nb - len(shape[:-2]))
    return tuple(reversed(strides))


@dataclass(eq=False)
class Permute:
    src: Value
    out: Value
    perm: tuple[int, ...]


@dataclass(eq=False)
class Alias:
    src: Value
    out: Value


@dataclass(eq=False)
class Tape:
    """The loop-carried state of a taped loop at the start of each iteration.

    ``states`` are the loop's state buffers (their dtypes and shapes are the rows')."""

    states: list[Value]
    # the states stored (``LoopBody.taped_states``: those a TapeGet reads)
    read: list[int] = field(default_factory=list)


@dataclass(eq=False)
class LoopOp:
    """``loop(body, enabled, *init, *invariants)``: run ``body`` until ``go_on`` is false.

    ``state`` are the body's loop-carried parameters (each one buffer), set from
    ``init`` before the first iteration and from ``next_state`` after each; the body's
    invariant parameters are the outer values themselves.  When the loop stops,
    ``exits[e]`` is copied to ``results[e]`` (``None``: never read).  Where ``enabled``
    is false the loop does not run and its results are zeros (the untaken side of an
    if-converted branch)."""

    enabled: Value | None  # None: always runs
    init: list[Value]
    state: list[Value]
    body: list
    go_on: Value
    next_state: list[Value]
    exits: list[Value]
    results: list[Value | None]
    staged: list[Value | None] = field(default_factory=list)  # per state: swap buffer
    tape: Tape | None = None
    count: Value | None = None  # a taped loop's iteration count (int64 0-d)
    line: int = 0


@dataclass(eq=False)
class Select:
    """``out = a if cond else b`` (an if-converted branch): a copy of the chosen one."""

    cond: Value
    a: Value
    b: Value
    out: Value


@dataclass(eq=False)
class TapeGet:
    """``out = tape.states[index]`` as it was at the start of iteration ``step``."""

    tape: Tape
    index: int
    step: Value
    out: Value


@dataclass(eq=False)
class Check:
    """Go on only where ``flag`` holds; else fail the call with ``message`` -- where
    Python would raise (a variable first set inside a loop that never ran, read after
    it: ``UnboundLocalError``)."""

    flag: Value
    message: str


@dataclass(eq=False)
class HostPlan:
    """A whole host program: its inputs, steps and outputs (every one a :class:`Value`)."""

    name: str  # the entry point's name
    inputs: list[Value]
    ops: list
    outputs: list[Value]
    symbols: dict[str, int] = field(default_factory=dict)  # dynamic size -> lower bound
    max_size: int = MAX_BYTES  # a dynamic size above this is refused


def walk(ops: list):
    """Every step of ``ops``, those in loop bodies included (body steps after their
    loop)."""
    for op in ops:
        yield op
        if isinstance(op, LoopOp):
            yield from walk(op.body)


def operands(op) -> list[Value]:
    """The buffers ``op`` itself reads (a loop: its initial state and enable flag; its
    body's steps are walked on their own, see :func:`walk`)."""
    if isinstance(op, KernelOp):
        return op.inputs
    if isinstance(op, Gemm):
        return [op.a, op.b] + ([op.acc] if op.acc is not None else [])
    if isinstance(op, (Permute, Alias)):
        return [op.src]
    if isinstance(op, Select):
        return [op.cond, op.a, op.b]
    if isinstance(op, TapeGet):
        return [op.step]
    if isinstance(op, Check):
        return [op.flag]
    return list(op.init) + ([op.enabled] if op.enabled is not None else [])


def results(op) -> list[Value]:
    """The buffers ``op`` writes (an :class:`Alias` names its source's)."""
    if isinstance(op, KernelOp):
        return op.outputs
    if isinstance(op, (Gemm, Permute, Alias, Select, TapeGet)):
        return [op.out]
    if isinstance(op, Check):
        return []
    out = list(op.state) + [v for v in op.staged if v is not None]
    out += [v for v in op.results if v is not None]
    return out + ([op.count] if op.count is not None else [])


def stored_buffers(plan: HostPlan) -> list[Value]:
    """The buffers a run of ``plan`` stores, each once, in a fixed order: its inputs
    (room for a contiguous copy), every step's results but an alias's (it names its
    source's data), and each constant array of one value computed from the dynamic sizes
    (filled at run time).  Every one lives for the whole run today: reuse by lifetime
    is planned here when it comes."""
    out: list[Value] = []
    seen: set[int] = set()

    def add(v: Value) -> None:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)

    steps = list(walk(plan.ops))
    for v in plan.inputs:
        add(v)
    for op in steps:
        if not isinstance(op, Alias):
            for v in results(op):
                add(v)
    tails = [x for op in steps if isinstance(op, LoopOp)
             for x in (op.go_on, *op.next_state, *op.exits)]
    for v in [*(x for op in steps for x in operands(op)), *tails, *plan.outputs]:
        if is_size_const(v) and v.shape:
            add(v)
    return out


def c_strides(shape: tuple[int, ...], itemsize: int) -> list[int]:
    """The byte strides of a C-contiguous array of ``shape``."""
    out, acc = [], itemsize
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def is_size_const(v: Value) -> bool:
    """A constant computed from dynamic sizes (see ``myc/aot/dynamic.py``)."""
    return v.const is not None and v.const.dtype == object


def is_dynamic(v: Value) -> bool:
    return any(isinstance(d, Dim) for d in v.shape)
