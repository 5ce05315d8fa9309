"""Every kernel-IR op, compiled, against ``Kernel.reference`` over hypothesis-drawn
shapes with NumPy broadcasting (including transposed reads) and every dtype."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from myc.lower.kernel import (
    BINARY_OPS,
    DTYPES,
    UNARY_OPS,
    Binary,
    Buffer,
    Cast,
    Kernel,
    Load,
    Select,
    Store,
    Unary,
    kind,
)
from myc.prims.scalar import SCALAR_OPS
from tests.cpu.helpers import assert_same, run, ulp_diff, values

# the transcendentals (the scalar-op table's math ops) are compared in ulps; the special
# functions have their own accuracy tests (tests/cpu/test_special.py: in ulps of
# max(|f|, 1), since their references are themselves inexact near the zeros of f)
INEXACT = {op for op, s in SCALAR_OPS.items() if s.math}
SPECIAL = {"erf", "gammaln", "digamma", "trigamma"}
ULP_TOL = 8  # ours (<= 2.5 ulp, see test_mathlib) plus NumPy's own float32 SIMD error


@st.composite
def broadcast_case(draw, max_dims=3):
    """A domain shape, two operand shapes that broadcast to it, and a seed.  The second
    operand is sometimes read through an explicit (permuted) axis map."""
    nd = draw(st.integers(0, max_dims))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(nd))

    def operand():
        k = draw(st.integers(0, nd))
        return tuple(d if draw(st.booleans()) else 1 for d in shape[nd - k:])

    xs = operand()
    axes = None
    if nd >= 2 and draw(st.booleans()):
        axes = tuple(draw(st.permutations(range(nd))))
        ys = tuple(shape[a] if draw(st.booleans()) else 1 for a in axes)
    else:
        ys = operand()
    return shape, xs, ys, axes, draw(st.integers(0, 2**32 - 1))


def ops_kernel(dtype: str, shape, xs, ys, axes, ops: str) -> Kernel:
    """One fusion group with a Store per op (``ops``: "exact" or "inexact")."""
    x, y = Load(0, dtype), Load(1, dtype, axes)
    exprs = []
    for op, kinds in UNARY_OPS.items():
        if kind(dtype) in kinds and (op in INEXACT) == (ops == "inexact") and op not in SPECIAL:
            exprs.append((op, Unary(op, x)))
    for op, kinds in BINARY_OPS.items():
        if kind(dtype) in kinds and (op in INEXACT) == (ops == "inexact"):
            exprs.append((op, Binary(op, x, y)))
    if ops == "exact":
        exprs.append(("select", Select(Binary("lt", x, y), x, y)))
        exprs += [(f"cast_{d}", Cast(x, d)) for d in DTYPES]
    bufs = (Buffer("x", dtype, xs), Buffer("y", dtype, ys))
    outs = tuple(Store(i, e) for i, (_, e) in enumerate(exprs))
    return Kernel("ops", shape, bufs, outs), [name for name, _ in exprs]


def check(dtype, case, ops):
    shape, xs, ys, axes, seed = case
    rng = np.random.default_rng(seed)
    k, names = ops_kernel(dtype, shape, xs, ys, axes, ops)
    inputs = [values(rng, xs, dtype), values(rng, ys, dtype)]
    got, want = run(k, inputs)
    for name, g, w in zip(names, got, want):
        if name in INEXACT:
            assert g.dtype == w.dtype and g.shape == w.shape, name
            # kernels flush subnormal results to zero (MYC_SUBNORMALS=flush, the
            # default): a subnormal reference value matches a zero
            tiny = np.finfo(w.dtype).tiny
            w = np.where((np.abs(w) < tiny) & (g == 0), g, w)
            if name == "pow":
                w = _numpy_scalar_sqrt(g, w, inputs)
            d = ulp_diff(g, w)
            assert d.max(initial=0) <= ULP_TOL, (name, d.max(), inputs)
        else:
            assert_same(g, w, name)


def _numpy_scalar_sqrt(g, w, inputs):
    """NumPy computes ``x ** y`` for a one-element ``y == 0.5`` as ``sqrt(x)`` (its scalar-power
    fast path), so ``(-inf) ** 0.5`` is nan and ``(-0.0) ** 0.5`` is -0.0 there, where
    C99's ``pow`` -- and NumPy itself with an array exponent -- give +inf and +0.0.  The
    kernel computes ``pow``; a constant 0.5 exponent never reaches it (the optimizer
    makes it ``sqrt``: docs/numpy.md).  Only those two points are let through."""
    x, y = inputs
    if np.size(y) != 1 or float(np.ravel(y)[0]) != 0.5:
        return w
    x = np.broadcast_to(x, w.shape)
    fast = (x == -np.inf) | ((x == 0) & np.signbit(x))
    return np.where(fast, g, w)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), broadcast_case())
def test_exact_ops_match_the_reference_bit_for_bit(dtype, case):
    check(dtype, case, "exact")


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["float32", "float64"]), broadcast_case())
def test_transcendental_ops_match_the_reference(dtype, case):
    check(dtype, case, "inexact")


def test_every_declared_scalar_op_has_a_renderer_in_every_backend():
    """The set of ops comes from the table (myc.prims.scalar); each backend renders them
    all, and nothing else.  CUDA's generator is the CPU's (``KernelGen``) with a GPU
    ``frem``, so it renders the same set."""
    from myc.backends.cpu import codegen as cpu
    from myc.backends.cuda import codegen as cuda
    from myc.backends.opencl import codegen as opencl

    declared = set(SCALAR_OPS)
    assert issubclass(cuda._Exprs, cpu.KernelGen)
    for name, ops in [("cpu", cpu.rendered_ops()), ("opencl", opencl.rendered_ops())]:
        assert set(ops) - declared == set(), (name, "renders undeclared", set(ops) - declared)
        assert declared - set(ops) == set(), (name, "does not render", declared - set(ops))
