"""Kernel-IR scalar operations: the one place their semantics and NumPy reference live.

A fused kernel (``myc.lower.kernel``) computes with these operations on scalars of one
dtype; a primitive that maps onto one (``register(..., scalar="exp")``) fuses.  Each
:class:`ScalarOp` states the operand kinds it accepts and its NumPy reference, which
``Kernel.reference`` evaluates and every backend is tested against.  Backends keep their
own *renderers* (LLVM IR, OpenCL C), keyed by the op name; ``tests/cpu/test_ops.py``
checks that every op declared here has one in every backend and no backend renders an
op that is not declared.

Semantics are NumPy's ufuncs in the operands' dtype, except where a reference below says
otherwise: integer ``pow``, ``mod`` and ``floordiv`` by zero give 0 (NumPy warns and
gives 0), ``floor``/``ceil`` of an int64 are the int itself, ``and``/``or`` are logical
on bools and bitwise on int64, ``sigmoid`` never overflows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ScalarOp:
    """One kernel-IR operation.

    ``kinds``: the operand kinds it accepts ("f" float, "i" int64, "b" bool);
    ``reference``: NumPy arrays of the operands' dtype in, the result out;
    ``math``: a transcendental each backend renders as a library function (myc's own
    LLVM math library, OpenCL C's built-ins), rather than inline arithmetic;
    ``promote``: a comparison-like op whose operands take their *promoted* dtype (the
    result is bool or that dtype) rather than the primitive's result dtype.
    """

    name: str
    arity: int
    kinds: str
    reference: Callable[..., Any]
    math: bool = False
    promote: bool = False
    doc: str = ""


SCALAR_OPS: dict[str, ScalarOp] = {}


def scalar_op(name: str, arity: int, kinds: str, reference: Callable[..., Any],
              math: bool = False, promote: bool = False, doc: str = "") -> ScalarOp:
    """Declare a kernel-IR scalar operation (once)."""
    assert name not in SCALAR_OPS, f"scalar op {name} declared twice"
    op = ScalarOp(name, arity, kinds, reference, math, promote, doc)
    SCALAR_OPS[name] = op
    return op


def unary_ops() -> dict[str, str]:
    """op -> the operand kinds it accepts, for the one-operand ops."""
    return {k: v.kinds for k, v in SCALAR_OPS.items() if v.arity == 1}


def binary_ops() -> dict[str, str]:
    """op -> the operand kinds it accepts, for the two-operand ops."""
    return {k: v.kinds for k, v in SCALAR_OPS.items() if v.arity == 2}


def math_ops(arity: int = 1) -> frozenset[str]:
    """The transcendental ops of ``arity`` (rendered as math-library functions)."""
    return frozenset(k for k, v in SCALAR_OPS.items() if v.math and v.arity == arity)


def accumulator_dtype(op: str, dtype: str) -> str:
    """The dtype a reduction ``op`` over ``dtype`` accumulates in: float32 sums add in
    float64 (NumPy's pairwise float32 sums are that accurate; a running float32 sum is
    not); everything else in its own dtype.  (The CPU backend gets the same accuracy by
    adding blocks of float32 partial sums in float64.)"""
    return "float64" if op == "sum" and dtype == "float32" else dtype


def _is_int(x: np.ndarray) -> bool:
    return np.asarray(x).dtype.kind in "iu"


def _int_or(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` on floats; the identity on integers (floor/ceil of an int64)."""
    return lambda x: x if _is_int(x) else f(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    s = 1 / (1 + e)
    return np.where(x >= 0, s, e * s)


def _ipow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    res = np.ones(x.shape, np.int64)
    base = x.copy()
    e = np.where(y < 0, 0, y)
    for _ in range(63):
        res = np.where(e & 1, res * base, res)
        base = base * base
        e = e >> 1
    neg = np.where(x == 1, 1, np.where(x == -1, np.where(y & 1, -1, 1), 0))
    return np.where(y < 0, neg, res)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _ipow(x, y) if _is_int(x) else np.power(x, y)


def _logical(logical: Callable[..., Any], bitwise: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x, y: (logical if np.asarray(x).dtype == np.bool_ else bitwise)(x, y)


# ---------------------------------------------------------------- one operand
scalar_op("neg", 1, "fi", np.negative)
for _name, _fn in [("exp", np.exp), ("log", np.log), ("log1p", np.log1p),
                   ("expm1", np.expm1), ("sin", np.sin), ("cos", np.cos), ("tan", np.tan),
                   ("tanh", np.tanh), ("arctan", np.arctan)]:
    scalar_op(_name, 1, "f", _fn, math=True)
scalar_op("sigmoid", 1, "f", _sigmoid, math=True,
          doc="1 / (1 + exp(-x)), evaluated without overflow for large -x")
scalar_op("sqrt", 1, "f", np.sqrt)
scalar_op("square", 1, "fi", np.square)
scalar_op("abs", 1, "fi", np.abs)
scalar_op("sign", 1, "fi", np.sign)
scalar_op("floor", 1, "fi", _int_or(np.floor))
scalar_op("ceil", 1, "fi", _int_or(np.ceil))
scalar_op("not", 1, "b", np.logical_not)

# ---------------------------------------------------------------- two operands
scalar_op("add", 2, "fib", np.add)
scalar_op("sub", 2, "fi", np.subtract)
scalar_op("mul", 2, "fib", np.multiply)
scalar_op("div", 2, "f", np.true_divide)
scalar_op("maximum", 2, "fib", np.maximum)
scalar_op("minimum", 2, "fib", np.minimum)
scalar_op("pow", 2, "fi", _pow, math=True,
          doc="int64: exact, by squaring; negative exponents give 0 unless |x| == 1")
scalar_op("arctan2", 2, "f", np.arctan2, math=True)
scalar_op("mod", 2, "fi", np.mod, doc="int64 by zero gives 0, as NumPy's")
scalar_op("floordiv", 2, "fi", np.floor_divide, doc="int64 by zero gives 0, as NumPy's")
for _name, _fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    scalar_op(_name, 2, "fib", _fn, promote=True)
scalar_op("and", 2, "ib", _logical(np.logical_and, np.bitwise_and), promote=True)
scalar_op("or", 2, "ib", _logical(np.logical_or, np.bitwise_or), promote=True)
