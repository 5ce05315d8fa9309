"""Kernel IR: construction checks, the printer, structural identity, the reference."""

import numpy as np
import pytest

from myc.lower.kernel import (
    Binary,
    Buffer,
    Cast,
    Const,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Select,
    Store,
    Unary,
    c_strides,
    postorder,
)

F32 = "float32"


def test_typing_rules_are_checked_at_construction():
    x = Load(0, F32)
    with pytest.raises(AssertionError, match="operand dtypes differ"):
        Binary("add", x, Load(1, "float64"))
    with pytest.raises(AssertionError, match="exp on int64"):
        Unary("exp", Load(0, "int64"))
    with pytest.raises(AssertionError, match="condition is not bool"):
        Select(x, x, x)
    with pytest.raises(AssertionError, match="unknown unary op"):
        Unary("cbrt", x)  # (erf is a declared op now: myc/prims/special.py)
    with pytest.raises(AssertionError, match="sum of bool"):
        Reduce(0, "sum", Load(0, "bool"), (0,))
    assert Binary("lt", x, x).dtype == "bool"
    assert Cast(x, "int64").dtype == "int64"
    assert Unary("not", Load(0, "bool")).dtype == "bool"


def test_kernel_checks_buffers_and_outputs():
    buf = Buffer("x", F32, (3, 1))
    Kernel("ok", (2, 3, 4), (buf,), (Store(0, Load(0, F32)),))
    with pytest.raises(AssertionError, match="does not broadcast"):
        Kernel("k", (2, 4), (buf,), (Store(0, Load(0, F32)),))
    with pytest.raises(AssertionError, match="reads"):
        Kernel("k", (3, 4), (buf,), (Store(0, Load(0, "float64")),))
    with pytest.raises(AssertionError, match="out_index"):
        Kernel("k", (3, 4), (buf,), (Store(1, Load(0, F32)),))
    with pytest.raises(AssertionError, match="does not fit"):
        Kernel("k", (3,), (buf,), (Store(0, Load(0, F32)),))
    with pytest.raises(AssertionError, match="over domain"):
        Kernel("k", (3, 4), (buf,), (Reduce(0, "max", Load(0, F32), (2,)),))
    # an axis map reads a (4, 3) buffer transposed into a (3, 4) domain
    Kernel("t", (3, 4), (Buffer("y", F32, (4, 3)),), (Store(0, Load(0, F32, (1, 0))),))


def test_printer_is_stable_and_shares_subexpressions():
    x, y = Load(0, F32), Load(1, F32, (0,))
    s = Binary("mul", Unary("exp", x), y)
    k = Kernel("k", (3, 4), (Buffer("x", F32, (4,)), Buffer("y", F32, (3,))),
               (Reduce(1, "sum", s, (1,), True), Store(0, Binary("add", s, Const(0.5, F32)))))
    assert k.format() == """\
kernel k shape=(3, 4)
  in0 x: float32[4]
  in1 y: float32[3]
  %0 = load in0 : float32
  %1 = exp %0 : float32
  %2 = load in1 axes=(0,) : float32
  %3 = mul %1 %2 : float32
  %4 = const 0.5 : float32
  %5 = add %3 %4 : float32
  out0 = store %5 : float32[3, 4]
  out1 = reduce.sum %3 axes=(1,) keepdims : float32[3, 1]"""
    assert str(k) == k.format()


def test_structural_identity_is_linear_on_dags():
    a = b = Load(0, F32)
    for _ in range(300):  # 2^300 paths: hashing or walking it as a tree would never end
        a = Binary("add", a, a)
        b = Binary("add", b, b)
    assert a == b and hash(a) == hash(b)
    assert len(postorder([a])) == 301
    assert Const(float("nan"), F32) == Const(float("nan"), F32)
    assert Const(1, F32) == Const(1.0, F32) != Const(1.0, "float64")
    k = Kernel("dag", (2,), (Buffer("x", F32, (2,)),), (Store(0, a),))
    assert len(k.format().splitlines()) == 2 + 301 + 1


def test_reference_broadcasting_axes_and_reductions():
    xs = np.arange(12, dtype=np.float64).reshape(4, 3)
    ys = np.array([1.0, 2.0, 3.0])
    x = Load(0, "float64", (1, 0))  # (4, 3) buffer read as a (3, 4) domain
    y = Load(1, "float64", (0,))  # (3,) along axis 0 (not right-aligned)
    v = Binary("mul", x, y)
    k = Kernel("k", (3, 4), (Buffer("x", "float64", (4, 3)), Buffer("y", "float64", (3,))),
               (Store(0, v), Reduce(1, "sum", v, (0,)), Reduce(2, "max", v, (0, 1), True)))
    out, s, m = k.reference([xs, ys])
    want = xs.T * ys[:, None]
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(s, want.sum(0))
    assert m.shape == (1, 1) and m[0, 0] == want.max()


def test_reference_empty_reductions_give_the_identity():
    k = Kernel("e", (0, 3), (Buffer("x", F32, (0, 3)),),
               (Reduce(0, "sum", Load(0, F32), (0,)), Reduce(1, "max", Load(0, F32), (0,)),
                Reduce(2, "min", Load(0, F32), (1,))))
    s, m, n = k.reference([np.zeros((0, 3), np.float32)])
    np.testing.assert_array_equal(s, [0, 0, 0])
    np.testing.assert_array_equal(m, [-np.inf] * 3)
    assert n.shape == (0,)


def test_reference_integer_semantics():
    i = "int64"
    x, y = Load(0, i), Load(1, i)
    k = Kernel("k", (6,), (Buffer("x", i, (6,)), Buffer("y", i, (6,))),
               (Store(0, Binary("pow", x, y)), Store(1, Binary("floordiv", x, y)),
                Store(2, Binary("mod", x, y))))
    xs = np.array([2, -1, 3, 5, -7, 1], np.int64)
    ys = np.array([10, -3, -2, 0, 2, -5], np.int64)
    p, q, r = k.reference([xs, ys])
    np.testing.assert_array_equal(p, [1024, -1, 0, 1, 49, 1])
    np.testing.assert_array_equal(q, [0, 0, -2, 0, -4, -1])
    np.testing.assert_array_equal(r, [2, -1, -1, 0, 1, -4])


def test_postorder_skips_what_is_done_and_below_opaque_nodes():
    x, y = Load(0, F32), Load(1, F32)
    e = Unary("exp", Binary("sub", x, y))
    row = RowReduce("sum", e)
    top = Binary("div", e, row)
    assert postorder([top]) == [x, y, Binary("sub", x, y), e, row, top]
    # a backend reading ``row`` from a buffer: its operand is computed only for ``top``
    assert postorder([row], opaque=RowReduce) == [row]
    assert postorder([top], done=[e], opaque=RowReduce) == [row, top]
    assert c_strides((2, 3, 4)) == [12, 4, 1] and c_strides(()) == []
