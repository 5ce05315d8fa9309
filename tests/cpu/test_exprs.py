"""Random fusion groups: typed expression DAGs of the exactly-rounded ops over
broadcast inputs of all dtypes, with several stores and reductions each, compared
bit for bit with the reference (float sums with a rounding tolerance)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from myc.lower.kernel import (
    BINARY_OPS,
    COMPARISONS,
    DTYPES,
    FLOATS,
    UNARY_OPS,
    Binary,
    Buffer,
    Cast,
    Const,
    Kernel,
    Load,
    Reduce,
    Select,
    Store,
    Unary,
    kind,
)
from tests.cpu.helpers import assert_same, run, values
from tests.cpu.test_ops import INEXACT

EXACT_UNARY = [op for op in UNARY_OPS if op not in INEXACT]
EXACT_BINARY = [op for op in BINARY_OPS if op not in INEXACT]


@st.composite
def expr(draw, dtype: str, depth: int, leaves):
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        if draw(st.integers(0, 3)) == 0:
            v = draw(st.sampled_from([0, 1, -1, 2, 3, 0.5, -2.5]))
            return Const(bool(v) if dtype == "bool" else v, dtype) \
                if not (kind(dtype) == "i" and isinstance(v, float)) else Const(int(v), dtype)
        return draw(st.sampled_from(leaves[dtype]))
    choice = draw(st.sampled_from(["unary", "binary", "cmp", "select", "cast"]))
    sub = lambda d: expr(d, depth - 1, leaves)  # noqa: E731
    if choice == "unary":
        ops = [op for op in EXACT_UNARY if kind(dtype) in UNARY_OPS[op]]
        if ops:
            return Unary(draw(st.sampled_from(ops)), draw(sub(dtype)))
    if choice == "binary":
        ops = [op for op in EXACT_BINARY if kind(dtype) in BINARY_OPS[op]
               and op not in COMPARISONS]
        if ops:
            return Binary(draw(st.sampled_from(ops)), draw(sub(dtype)), draw(sub(dtype)))
    if choice == "cmp" and dtype == "bool":
        src = draw(st.sampled_from(DTYPES))
        return Binary(draw(st.sampled_from(COMPARISONS)), draw(sub(src)), draw(sub(src)))
    if choice == "select":
        return Select(draw(sub("bool")), draw(sub(dtype)), draw(sub(dtype)))
    return Cast(draw(sub(draw(st.sampled_from(DTYPES)))), dtype)


@st.composite
def fusion_group(draw):
    nd = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    bufs, leaves = [], {d: [] for d in DTYPES}
    for dtype in DTYPES:
        for _ in range(draw(st.integers(1, 2))):
            k = draw(st.integers(0, nd))
            bshape = tuple(d if draw(st.booleans()) else 1 for d in shape[nd - k:])
            leaves[dtype].append(Load(len(bufs), dtype))
            bufs.append(Buffer(f"in{len(bufs)}", dtype, bshape))
    outs = []
    for i in range(draw(st.integers(1, 3))):
        dtype = draw(st.sampled_from(DTYPES))
        e = draw(expr(dtype, 4, leaves))
        if nd and draw(st.booleans()):
            axes = tuple(sorted(draw(st.sets(st.integers(0, nd - 1), min_size=1))))
            ops = ["max", "min"] + (["sum"] if dtype != "bool" else [])
            outs.append(Reduce(i, draw(st.sampled_from(ops)), e, axes, draw(st.booleans())))
        else:
            outs.append(Store(i, e))
    return Kernel("group", shape, tuple(bufs), tuple(outs)), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=150, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_match_the_reference(case):
    check_group(case, run)


def check_group(case, run) -> None:
    """``run(kernel, inputs) -> (compiled results, reference results)`` on the drawn
    group with random inputs (special values included) matches the reference."""
    kernel, seed = case
    rng = np.random.default_rng(seed)
    inputs = [values(rng, b.shape, b.dtype) for b in kernel.inputs]
    got, want = run(kernel, inputs)
    assert_matches(kernel, inputs, got, want)


def assert_matches(kernel: Kernel, inputs: list, got: list, want: list) -> None:
    """Bit for bit, but float sums within rounding of the sum of their terms' sizes."""
    for out in kernel.outputs:
        g, w = got[out.out_index], want[out.out_index]
        if isinstance(out, Reduce) and out.op == "sum" and out.expr.dtype in FLOATS:
            # summation order differs from NumPy's: allow rounding relative to sum |terms|
            mag = Kernel("mag", kernel.shape, kernel.inputs, (Reduce(
                0, "sum", Unary("abs", out.expr), out.axes, out.keepdims),)).reference(inputs)[0]
            eps = np.finfo(out.expr.dtype).eps
            assert g.shape == w.shape and g.dtype == w.dtype
            with np.errstate(invalid="ignore", over="ignore"):
                ok = (np.abs(g - w) <= 8 * eps * mag) | (g == w) | (np.isnan(g) & np.isnan(w))
            assert ok.all(), (g, w, kernel.format())
        else:
            assert_same(g, w, kernel.format())
