"""What an ``op`` step of the host program computes: its finer kind, decided once here.

The lowering (``myc.lower.program.lower``) gives every ``op`` step (one primitive run
on its slots) one of :data:`OP_KINDS`, so a backend's host-program generator keys its
emitters on that word instead of comparing primitive names or sniffing ``Step.fn``.
A kind says *what* is computed, never how a target does it (a GEMM may be BLAS, a
blocked loop or a device kernel; an index a pointer, a strided copy or a gather).  The
primitive (``Step.name``) stays the kind's variant where the kind has several (``dot``
against ``matmul``, ``argmin`` against ``argmax``, the operation of a ``scalar`` step).

Where AOT's host plan (``myc.lower.hostplan``) has a step for the same thing, the kind is
named after it: ``gemm``/``gemm_acc`` are a :class:`~myc.lower.hostplan.Gemm` (without
and with ``acc``), ``transpose``/``matrix_transpose`` a ``Permute``, ``alias`` an
``Alias``, ``select`` a ``Select``, ``tape_get`` a ``TapeGet``.  The others are the JIT's
own so far (its programs index, fill and build arrays outside kernels).
"""

from __future__ import annotations

from typing import Any

# primitive -> kind (a primitive not named here: ``scalar`` where it has a scalar
# semantics, else ``host``)
_BY_PRIM: dict[str, str] = {
    "matmul": "gemm", "dot": "gemm",  # np.dot of 1-d/2-d operands is a matrix product
    "matmul_acc": "gemm_acc",  # ``acc + alpha * a @ b`` (``myc.opt.products``)
    "transpose": "transpose",  # np.transpose(x, axes)
    "mT": "matrix_transpose",  # the last two axes swapped
    "reshape": "alias",  # the same data under another shape
    "select": "select",  # an if-converted branch's choice
    "tape_get": "tape_get",  # a row of a taped loop's tape
    "getitem": "index",  # x[index]: an element, a basic view or a gather
    "getitem_grad": "scatter_add",  # zeros of x's shape, d added at x[index]
    "dynamic_slice": "window",  # a window at a run-time start
    "dynamic_slice_grad": "window_add",  # zeros, the window set at a run-time start
    "zeros": "fill", "zeros_like": "fill", "ones": "fill", "ones_like": "fill",
    "concatenate": "concatenate",
    "array": "pack",  # np.array of computed numbers or arrays
    "make_tuple": "tuple",  # parts read by the steps using it (an index, pieces)
    "argmax": "arg_extreme", "argmin": "arg_extreme",
    "loop_out": "exit_value",  # one result of a loop or a call
}
# primitives on numbers outside ``myc.opt.fusion.ELEMENTWISE`` that have a scalar form
_SCALAR_EXTRA = frozenset({"check_math_domain", "py_max", "py_min", "to_bool", "to_float",
                           "to_int"})

OP_KINDS = tuple(dict.fromkeys([*_BY_PRIM.values(), "scalar", "host"]))

# what a ``fill`` step writes
FILL_VALUE: dict[str, int] = {"zeros": 0, "zeros_like": 0, "ones": 1, "ones_like": 1}

_ELEMENTWISE: frozenset[str] | None = None


def op_kind(name: str) -> str:
    """The kind of a step running primitive ``name`` (one of :data:`OP_KINDS`)."""
    kind = _BY_PRIM.get(name)
    if kind is not None:
        return kind
    global _ELEMENTWISE
    if _ELEMENTWISE is None:
        from myc.opt.fusion import ELEMENTWISE

        _ELEMENTWISE = frozenset(ELEMENTWISE) | _SCALAR_EXTRA
    return "scalar" if name in _ELEMENTWISE else "host"


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
