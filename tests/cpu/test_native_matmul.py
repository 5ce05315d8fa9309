"""Batched and integer matrix products in native host programs (``host_gemm.gemm``):
float batches as GEMM calls from the machine code (broadcast batch dimensions, 1-d
operands, transposed operands as GEMM flags), int64 products as a generated loop that
wraps around like NumPy's.  Each program must run as one native function, agree with
NumPy and with the reference evaluator, and (floats) differentiate like central
differences -- inside data-dependent loops too."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.lower.program import LoopRunner
from tests.adversarial.common import fd_grad
from tests.cpu.test_native_program import _native_of, programs_run


def mm(a, b):
    return a @ b


def mm_call(a, b):
    return np.matmul(a, b) * 2.0


def mm_bt(a, b):
    return a @ np.transpose(b, (0, 2, 1))


def mm_at(a, b):
    return np.matmul(np.transpose(a, (0, 2, 1)), b) + 1


def idot(a, b):
    return np.dot(a, b)


def mm_loss(a, b):
    return np.sum(np.tanh(a @ b))


def mm_bt_loss(a, b):
    return np.sum(np.sin(mm_bt(a, b)) * 1.5)


def grow(a, b):
    """A data-dependent loop whose body is a batched product."""
    while np.sum(a * a) < 50.0:
        a = np.tanh(a @ b) + a * 1.2
    return a


def grow_loss(a, b):
    return np.sum(grow(a, b))


def ipow(m, x):
    """An int64 matrix power: loops until an entry passes a bound (which wraps)."""
    p = m
    i = 0
    while np.max(np.abs(p)) < x:
        p = p @ m
        i += 1
    return p, i


SHAPES = [((3, 4, 5), (3, 5, 2)), ((3, 4, 5), (5, 2)), ((4, 5), (3, 5, 2)),
          ((2, 1, 4, 5), (3, 5, 2)), ((1, 4, 5), (3, 5, 2)), ((5,), (3, 5, 2)),
          ((3, 4, 5), (5,)), ((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 4)), ((4, 3), (3,))]
EMPTY = [((0, 4, 5), (0, 5, 2)), ((3, 4, 0), (3, 0, 2)), ((3, 0, 5), (5, 2)),
         ((2, 3, 4), (2, 4, 0)), ((0,), (0,)), ((2, 0), (0, 3))]


def _data(shape, dtype, rng):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-9, 10, shape).astype(np.int64)
    return rng.standard_normal(shape).astype(dtype)


def _check(fn, *args, exact=False):
    got = myc.jit(fn)(*args)
    ref = fn(*args)
    interp = myc.jit(fn, backend="interp")(*args)
    flat = got if isinstance(got, tuple) else (got,)
    for r in (ref, interp):
        for g_, r_ in zip(flat, r if isinstance(r, tuple) else (r,), strict=True):
            assert np.asarray(g_).dtype == np.asarray(r_).dtype
            assert np.shape(g_) == np.shape(r_)
            if exact:
                assert np.array_equal(g_, r_)
            else:
                np.testing.assert_allclose(g_, r_, rtol=2e-5, atol=1e-5)
    assert _native_of(fn, *args) is not None, "expected one native function"
    return got


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("sa,sb", SHAPES + EMPTY, ids=str)
def test_matmul_shapes_are_native(sa, sb, dtype):
    rng = np.random.default_rng(0)
    a, b = _data(sa, dtype, rng), _data(sb, dtype, rng)
    _check(mm, a, b, exact=dtype == np.int64)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_transposed_batched_operands(dtype):
    rng = np.random.default_rng(1)
    exact = dtype == np.int64
    _check(mm_bt, _data((3, 4, 5), dtype, rng), _data((3, 2, 5), dtype, rng), exact=exact)
    _check(mm_bt, _data((1, 4, 5), dtype, rng), _data((3, 2, 5), dtype, rng), exact=exact)
    _check(mm_at, _data((3, 5, 4), dtype, rng), _data((3, 5, 2), dtype, rng), exact=exact)
    _check(mm_call, _data((2, 3, 4), dtype, rng), _data((4, 6), dtype, rng), exact=exact)


def test_integer_matmul_wraps_like_numpy():
    rng = np.random.default_rng(2)
    a = rng.integers(-2**62, 2**62, (2, 3, 7))
    b = rng.integers(-2**62, 2**62, (7, 4))
    with np.errstate(all="ignore"):
        got = _check(mm, a, b, exact=True)
    assert got.dtype == np.int64
    big = np.full((2, 2), 2**62, np.int64)
    assert np.array_equal(myc.jit(mm)(big, big), big @ big)  # 2 * 2**124 wraps to 0
    v = np.array([2**62, 2**62, 2**62], np.int64)
    assert myc.jit(idot)(v, v) == np.dot(v, v) and type(myc.jit(idot)(v, v)) is np.int64


def test_integer_dot_shapes():
    rng = np.random.default_rng(3)
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4))]:
        _check(idot, _data(sa, np.int64, rng), _data(sb, np.int64, rng), exact=True)


def test_np_dot_of_3d_keeps_numpy_semantics():
    # np.dot contracts a 3-d operand unlike matmul: not native, still NumPy's answer
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    np.testing.assert_allclose(myc.jit(idot)(a, b), np.dot(a, b), rtol=1e-12)


def test_mismatched_batches_are_still_an_error():
    a, b = np.ones((2, 3, 4)), np.ones((3, 4, 5))
    with pytest.raises(myc.MycError):
        myc.jit(mm)(a, b)


@pytest.mark.parametrize("sa,sb", [((3, 4, 5), (3, 5, 2)), ((3, 4, 5), (5, 2)),
                                   ((4, 5), (3, 5, 2)), ((2, 1, 4, 5), (3, 5, 2)),
                                   ((5,), (3, 5, 2))], ids=str)
def test_batched_gradients_are_native_and_match_differences(sa, sb):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    g = myc.grad(mm_loss, argnums=(0, 1))
    ga, gb = g(a, b)
    np.testing.assert_allclose(ga, fd_grad(mm_loss, (a, b), 0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gb, fd_grad(mm_loss, (a, b), 1), rtol=1e-5, atol=1e-7)
    ia, ib = myc.jit(g, backend="interp")(a, b)
    np.testing.assert_allclose(ga, ia, rtol=1e-10)
    np.testing.assert_allclose(gb, ib, rtol=1e-10)
    assert _native_of(g, a, b) is not None


def test_transposed_operand_gradient():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 2, 5))
    g = myc.grad(mm_bt_loss, argnums=(0, 1))
    ga, gb = g(a, b)
    np.testing.assert_allclose(ga, fd_grad(mm_bt_loss, (a, b), 0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gb, fd_grad(mm_bt_loss, (a, b), 1), rtol=1e-5, atol=1e-7)
    assert _native_of(g, a, b) is not None


def _loops(fn, *args):
    """The loop steps of ``fn``'s program for ``args``."""
    return [st.fn for p in programs_run(fn, *args) for st in p.steps
            if isinstance(st.fn, LoopRunner)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loop_with_batched_matmul_is_native(dtype):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((4, 3, 3)) * 0.1).astype(dtype)
    b = (rng.standard_normal((3, 3)) * 0.5).astype(dtype)
    got = myc.jit(grow)(a, b)
    np.testing.assert_allclose(got, grow(a, b), rtol=1e-4 if dtype == np.float32 else 1e-10)
    np.testing.assert_allclose(got, myc.jit(grow, backend="interp")(a, b), rtol=1e-4)
    loops = _loops(myc.jit(grow), a, b)
    assert loops and all(lp.native is not None for lp in loops)


def test_loop_with_batched_matmul_gradient():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 3, 3)) * 0.1
    b = rng.standard_normal((2, 3, 3)) * 0.5
    g = myc.grad(grow_loss, argnums=(0, 1))
    ga, gb = g(a, b)
    np.testing.assert_allclose(ga, fd_grad(grow_loss, (a, b), 0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gb, fd_grad(grow_loss, (a, b), 1), rtol=1e-4, atol=1e-6)
    loops = _loops(g, a, b)
    assert loops and all(lp.native is not None for lp in loops)


def test_loop_with_integer_matmul_is_native():
    m = np.array([[1, 1], [1, 0]], np.int64)
    for bound in (10, 1000, 2**40):
        p, i = myc.jit(ipow)(m, bound)
        rp, ri = ipow(m, bound)
        assert np.array_equal(p, rp) and p.dtype == np.int64 and i == ri
    m3 = np.array([[[3, 1], [1, 2]], [[2, 0], [1, 1]]], np.int64)  # batched, wraps
    with np.errstate(all="ignore"):
        p, i = myc.jit(ipow)(m3, 2**62)
        rp, ri = ipow(m3, 2**62)
    assert np.array_equal(p, rp) and i == ri
    loops = _loops(myc.jit(ipow), m, 1000)
    assert loops and all(lp.native is not None for lp in loops)


def transposed_twice_used(a, b):
    t = np.transpose(a, (0, 2, 1))  # read by a GEMM (a flag) and returned (a copy)
    return t @ b, t


def transposed_twice_loss(a, b):
    x, t = transposed_twice_used(a, b)
    return np.sum(np.sin(x)) + np.sum(t * t * np.arange(12.0).reshape(4, 3))


def test_batched_transpose_copied_where_not_only_a_gemm_reads_it():
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    _check(transposed_twice_used, a, b)
    g = myc.grad(transposed_twice_loss, argnums=(0, 1))
    ga, gb = g(a, b)
    np.testing.assert_allclose(ga, fd_grad(transposed_twice_loss, (a, b), 0), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(gb, fd_grad(transposed_twice_loss, (a, b), 1), rtol=1e-5,
                               atol=1e-7)
    assert _native_of(g, a, b) is not None
