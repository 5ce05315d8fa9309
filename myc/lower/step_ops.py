"""What an ``op`` step of the host program computes: its finer kind, decided once here.

The lowering (``myc.lower.program.lower``) gives every ``op`` step (one primitive run
on its slots) one of :data:`OP_KINDS`, so a backend's host-program generator keys its
emitters on that word instead of comparing primitive names or sniffing ``Step.fn``.
A kind says *what* is computed, never how a target does it (a GEMM may be BLAS, a
blocked loop or a device kernel; an index a pointer, a strided copy or a gather).  Each
primitive declares its kind where it is declared (``Primitive.step_kind``, and
``fill_value`` for a fill); this module holds the list of kinds and reads the
declarations.  The primitive (``Step.name``) stays the kind's variant where the kind has
several (``dot`` against ``matmul``, ``argmin`` against ``argmax``, the operation of a
``scalar`` step).

Where AOT's host plan (``myc.lower.hostplan``) has a step for the same thing, the kind is
named after it: ``gemm``/``gemm_acc`` are a :class:`~myc.lower.hostplan.Gemm` (without
and with ``acc``), ``transpose``/``matrix_transpose`` a ``Permute``, ``alias`` an
``Alias``, ``select`` a ``Select``, ``tape_get`` a ``TapeGet``.  The others are the JIT's
own so far (its programs index, fill and build arrays outside kernels).
"""

from __future__ import annotations

from typing import Any

from myc.prims import REGISTRY

# the kinds, each primitive's declared with it (``Primitive.step_kind``, ``myc.prims``);
# the comment says what a step of that kind computes
OP_KINDS = (
    "gemm",  # a matrix product (``matmul``, ``dot`` of 1-d/2-d operands)
    "gemm_acc",  # ``acc + alpha * a @ b`` (``myc.opt.products``)
    "transpose",  # np.transpose(x, axes)
    "matrix_transpose",  # the last two axes swapped
    "alias",  # the same data under another shape
    "select",  # an if-converted branch's choice
    "tape_get",  # a row of a taped loop's tape
    "index",  # x[index]: an element, a basic view or a gather
    "scatter_add",  # zeros of x's shape, d added at x[index]
    "index_set",  # x copied, its element at a basic index set (an item assignment)
    "window",  # a window at a run-time start
    "window_add",  # zeros, the window set at a run-time start
    "fill",  # an array of one value (``Primitive.fill_value``)
    "concatenate",
    "pack",  # np.array of computed numbers or arrays
    "tuple",  # parts read by the steps using it (an index, pieces)
    "arg_extreme",  # np.argmax/np.argmin
    "exit_value",  # one result of a loop or a call
    "scalar",  # arithmetic on numbers: the primitive's scalar semantics
    "host",  # a NumPy-only step
)


def op_kind(name: str) -> str:
    """The kind of a step running primitive ``name`` (one of :data:`OP_KINDS`): the
    primitive's declared ``step_kind``; a step of anything else runs on the host."""
    p = REGISTRY.get(name)
    return p.step_kind if p is not None else "host"


def fill_value(name: str) -> int:
    """What a ``fill`` step running primitive ``name`` writes."""
    v = REGISTRY[name].fill_value
    assert v is not None, f"{name} is not a fill"
    return v


def primitives_of(kinds: frozenset[str] | set[str]) -> frozenset[str]:
    """The primitives whose steps are of one of ``kinds``."""
    return frozenset(n for n, p in REGISTRY.items() if p.step_kind in kinds)


def classify(prim: Any, inputs: list[Any]) -> tuple[str, str, bool]:
    """``(op kind, operation name, guarded?)`` of a step calling ``prim`` on ``inputs``
    (graph nodes): ``guarded(path, p, abstract, *args)`` -- ``p(*args)`` run only where
    ``path`` holds -- is ``p`` 's kind, guarded; one whose ``p`` is not a constant runs
    on the host."""
    from myc.ir.nodes import Constant

    name = prim.name
    if name == "guarded":
        inner = inputs[1] if len(inputs) > 1 and isinstance(inputs[1], Constant) else None
        inner_name = getattr(inner.value, "name", None) if inner is not None else None
        if not isinstance(inner_name, str):
            return "host", name, False
        return op_kind(inner_name), inner_name, True
    return op_kind(name), name, False
