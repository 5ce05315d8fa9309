"""Adversarial differential tests: the compiled ``cpu`` path against the reference
``interp`` evaluator and plain CPython, for jit, grad, value_and_grad, vjp and jvp.

Every program lives in this file (myc reads source).  Each comparison checks the
structure (tuples), the kind of every scalar (Python float/int vs NumPy scalar), array
dtypes and shapes, and the values (NaN-aware).  The discrepancies this file found
(a fusion cycle, gradients through integer max/min, math domain errors, an error class)
were fixed; their reproducers stay here as regression tests.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import myc
from tests.adversarial.common import assert_compiled

RNG = np.random.default_rng(1234)


def f64(*shape):
    return RNG.standard_normal(shape)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# -- comparison helpers ---------------------------------------------------------------


def _tol(dtype, rtol):
    if rtol is not None:
        return rtol, rtol * 1e-3
    if np.dtype(dtype) == np.float32:
        return 1e-4, 1e-5
    return 1e-9, 1e-12


def assert_same(ref, got, rtol=None, path="out"):
    """Same structure, same scalar kinds, same dtypes/shapes, close values (NaN-aware)."""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), f"{path}: {ref!r} vs {got!r}"
        for i, (r, g) in enumerate(zip(ref, got)):
            assert_same(r, g, rtol, f"{path}[{i}]")
        return
    assert type(got) is type(ref), f"{path}: kind {type(ref).__name__} vs {type(got).__name__}"
    if isinstance(ref, (bool, int)) and not isinstance(ref, np.generic):
        assert got == ref, f"{path}: {ref!r} vs {got!r}"
        return
    ref_a, got_a = np.asarray(ref), np.asarray(got)
    assert got_a.dtype == ref_a.dtype, f"{path}: dtype {ref_a.dtype} vs {got_a.dtype}"
    assert got_a.shape == ref_a.shape, f"{path}: shape {ref_a.shape} vs {got_a.shape}"
    if ref_a.dtype.kind in "biu":
        np.testing.assert_array_equal(got_a, ref_a, err_msg=path)
    else:
        r, a = _tol(ref_a.dtype, rtol)
        np.testing.assert_allclose(got_a, ref_a, rtol=r, atol=a, equal_nan=True, err_msg=path)


def _call(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def check_jit(fn, *args, rtol=None, python=True):
    """cpu vs interp, and (when ``python``) both vs CPython."""
    ref_i = _call(myc.jit(fn, backend="interp"), args)
    jc = myc.jit(fn)
    got = _call(jc, args)
    assert_same(ref_i, got, rtol)
    assert_compiled(jc)
    if python:
        assert_same(_call(fn, args), got, rtol)


def check_calls(fn, argsets, rtol=None, python=True):
    """The same jitted objects called repeatedly with changing inputs (guards)."""
    ji, jc = myc.jit(fn, backend="interp"), myc.jit(fn)
    for args in argsets:
        got = _call(jc, args)
        assert_same(_call(ji, args), got, rtol)
        if python:
            assert_same(_call(fn, args), got, rtol)
    assert_compiled(jc)


def check_vg(fn, argsets, argnums=0, rtol=None):
    """value_and_grad / grad on cpu (plain and jitted), same objects across calls."""
    ref = myc.jit(myc.value_and_grad(fn, argnums), backend="interp")
    refg = myc.jit(myc.grad(fn, argnums), backend="interp")
    vg = myc.value_and_grad(fn, argnums)
    vgj = myc.jit(myc.value_and_grad(fn, argnums))
    g = myc.grad(fn, argnums)
    for args in argsets:
        want = _call(ref, args)
        assert_same(want, _call(vg, args), rtol)
        assert_same(want, _call(vgj, args), rtol)
        assert_same(_call(refg, args), _call(g, args), rtol)
    for j in (vg, vgj, g):
        assert_compiled(j, fn.__name__)


# -- programs: dtypes -----------------------------------------------------------------


def p_f32_scalar(x, a):
    return x * 2 + a * x - 1.5, x / 3, 3 - x, x * 0.1


def p_idiv(x, y):
    return x // y, x % y


def p_py_idiv(a, b):
    return a // b, a % b


def p_cmp_arith(x, y):
    return (x > y) * 2.0 + (x < y) + (x == y).astype(np.float64), (x >= y) * 3


def p_bool_sum(x):
    return (x > 0).sum(), (x > 0).mean(), (x > 0).sum(axis=0)


def p_mean(x):
    return x.mean(), x.mean(axis=0)


def p_maxmin(x):
    return x.max(), x.min(), np.max(x, axis=0), x.min(axis=-1, keepdims=True)


def p_where(c, a, b):
    return np.where(c, a, b)


def p_where_cmp(x, i):
    return np.where(x > 0, x, i), np.where(x > 0, 1, 0), np.where(x < 0, x, 0.5)


def p_clip(x):
    return np.clip(x, -1, 2), np.clip(x, -1.5, 2), np.clip(x, 2.0, -1.0)


def p_pow(x):
    return x**2, x**3, x**-1, np.power(x, 3), x**3.0, x**0.5, x**0


def p_astype(x):
    return (
        x.astype(np.int64).astype(np.float64),
        x.astype(np.float32).astype(np.float64),
        x.astype(bool).astype(np.int64),
        x.astype(np.float32) + 1,
    )


def p_int_pow(i):
    return i**2, i * i * i, i**0


def p_mixed(x, y):
    return x + y, x * y, np.maximum(x, y), np.minimum(x, 0), x - y.astype(np.float32)


def p_bool_ops(b, c):
    return b + c, b * 1, b * 1.5, b & c, ~b, b | c


def p_true_div(i, j):
    return i / j


def p_fmod(x, y):
    return x % y, x // y


def p_unary(x):
    return (np.sign(x), np.floor(x), np.ceil(x), np.abs(x), np.square(x), -x)


def p_transc(x):
    return (
        np.exp(x),
        np.log(x),
        np.sqrt(x),
        np.sin(x),
        np.cos(x),
        np.tan(x),
        np.tanh(x),
        np.arctan(x),
        np.log1p(x),
        np.expm1(x),
    )


def p_scalar_kinds(x):
    return (
        x.sum(),
        float(x.sum()),
        x.sum() * 2.0,
        x.max() + 1,
        int(x.sum()),
        len(x),
        x.sum() + x.shape[0],
    )


def p_scalar_py(a, b):
    return max(a, b), min(a, b), abs(a - b), a**b if a > 0 else a * b, math.floor(a), int(a)


def p_scalar_nan(a, b):
    return max(a, b), min(a, b), abs(a - b), a > b, a == a


def p_zero_d(x, z):
    return x + z, z * 2.0, z.sum(), z + 1


DTYPE_CASES = [
    (p_f32_scalar, (f32(5), 2.0)),
    (p_f32_scalar, (f32(5), 2)),
    (p_f32_scalar, (f32(2, 3), np.float32(1.5))),
    (p_idiv, (np.array([-7, 7, -7, 7, 0, -1]), np.array([2, -2, -2, 2, 3, 5]))),
    (p_idiv, (np.array([-7.5, 7.5, -0.0, 3.0]), np.array([2.0, -2.0, 2.0, -1.5]))),
    (p_idiv, (np.arange(-70000, 70000, 2), np.array([-3, 7]).repeat(35000))),
    (p_idiv, (np.array([-7, 7, 3]), -2)),
    (p_idiv, (np.array([-7.0, 7.0, 3.0], dtype=np.float32), 2)),
    (p_py_idiv, (-7, 2)),
    (p_py_idiv, (-7.5, 2.0)),
    (p_py_idiv, (7, -2.5)),
    (p_cmp_arith, (f64(5), f64(5))),
    (p_cmp_arith, (f32(5), 0.1)),
    (p_cmp_arith, (np.array([0.1, 0.2], np.float32), 0.1)),
    (p_cmp_arith, (np.arange(5), 2)),
    (p_bool_sum, (f64(7, 3),)),
    (p_bool_sum, (f64(300, 300),)),
    (p_mean, (np.array([[1, 2], [4, 7]]),)),
    (p_mean, (np.array([[True, False], [True, True]]),)),
    (p_mean, (f32(300, 300),)),
    (p_maxmin, (np.array([[1, -2, 4], [0, 9, -9]]),)),
    (p_maxmin, (np.array([[1.0, np.nan], [np.inf, -np.inf]]),)),
    (p_maxmin, (np.array([[-np.inf, 2.0], [np.nan, 1.0]]),)),
    (p_maxmin, (np.array([[True, False], [False, False]]),)),
    (p_where, (f64(4) > 0, np.arange(4), 0.5)),
    (p_where, (f64(4) > 0, f32(4), np.arange(4))),
    (p_where, (f64(4) > 0, f32(4), 2)),
    (p_where, (f64(4) > 0, f32(4), 2.5)),
    (p_where, (True, f32(3), f64(3))),
    (p_where_cmp, (f32(6), np.arange(6))),
    (p_where_cmp, (f64(2, 3), np.arange(3))),
    (p_clip, (f32(6) * 3,)),
    (p_clip, (np.arange(-3, 4),)),
    (p_pow, (np.abs(f64(5)) + 0.1,)),
    (p_pow, (np.abs(f32(5)) + 0.1,)),
    (p_pow, (-np.abs(f64(5)) - 0.1,)),
    (p_pow, (np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -2.0]),)),
    (p_astype, (f64(6) * 3,)),
    (p_astype, (np.array([-2.7, -0.5, 0.0, 0.5, 2.7]),)),
    (p_int_pow, (np.arange(-3, 3),)),
    (p_mixed, (f32(3), f64(3))),
    (p_mixed, (f32(3), np.arange(3))),
    (p_mixed, (np.arange(3), np.array([True, False, True]))),
    (p_bool_ops, (f64(4) > 0, f64(4) > 0)),
    (p_true_div, (np.arange(4), np.array([1, 2, 3, 4]))),
    (p_true_div, (3, 4)),
    (p_true_div, (np.arange(4, dtype=np.float32), 4)),
    (
        p_fmod,
        (
            np.array([-7.5, 7.5, 1.0, np.inf, np.nan, -1e-20]),
            np.array([2.0, -2.0, 0.0, 2.0, 1.0, 1.0]),
        ),
    ),
    (p_unary, (np.array([-1.5, 0.0, -0.0, 2.5, np.nan, -np.inf, 1e17]),)),
    (p_unary, (np.array([-3, 0, 4]),)),
    (
        p_transc,
        (np.array([0.0, -0.0, 1e-310, 0.5, -0.5, 1.0, 700.0, -745.0, np.inf, -np.inf, np.nan]),),
    ),
    (p_transc, (np.array([0.0, 1e-40, 0.5, -0.5, 88.0, -100.0, np.inf, np.nan], np.float32),)),
    (p_scalar_kinds, (f64(4),)),
    (p_scalar_kinds, (f32(4),)),
    (p_scalar_kinds, (np.arange(4),)),
    (p_scalar_py, (1.5, 2.5)),
    (p_scalar_py, (-1.5, 2)),
    (p_scalar_nan, (float("nan"), 1.0)),
    (p_scalar_nan, (1.0, float("nan"))),
    (p_scalar_nan, (-0.0, 0.0)),
    (p_scalar_nan, (1, 1.0)),
    (p_zero_d, (f64(3), np.array(2.0))),
    (p_zero_d, (f32(3), np.array(2.0))),
    (p_zero_d, (f32(3), np.array(2.0, np.float32))),
    (p_zero_d, (np.arange(3), np.array(2))),
]


@pytest.mark.parametrize("fn,args", DTYPE_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_dtypes(fn, args):
    # a Python float computed from float32 data (float(x.sum())) carries float32 rounding:
    # the backends' sums may be reassociated (kernel IR's Reduce), so compare at float32's
    # tolerance, not float64's
    f32_in = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args)
    check_jit(fn, *args, rtol=1e-4 if f32_in else None)


# -- programs: shapes -----------------------------------------------------------------


def p_red_axes(x):
    return (
        x.sum(axis=0),
        x.sum(axis=1, keepdims=True),
        x.sum(axis=(0, 2)),
        x.mean(axis=(1, 2), keepdims=True),
        x.max(axis=-1),
        x.min(axis=(0, 1, 2)),
        np.sum(x, axis=(-1, 0), keepdims=True),
        x.sum(),
    )


def p_red_size1(x):
    return x.sum(axis=1), x.max(axis=1, keepdims=True), x.mean(axis=(0, 1))


def p_empty(x):
    return x.sum(), x.sum(axis=0), x * 2.0, np.exp(x), x.sum(axis=-1)


def p_reshape(x):
    return x.reshape(-1, 2), x.reshape(3, -1).T, x.reshape((2, 3)), x.reshape(6)


def p_transpose(x):
    return np.transpose(x, (2, 0, 1)), x.T, np.transpose(x), x.transpose(1, 0, 2) * 2.0


def p_t1d(x):
    return x.T + 1.0, x.T


def p_slices(x):
    return x[::-1], x[-2:0:-2], x[5:1:-1], x[::-3] * 2.0, x[-1], x[1:-1] + x[2:]


def p_slices2(x):
    return x[::-1, ::-2], x[1:, -1], x[:, 0].sum() + x[-1, :], x[-1:, ::2]


def p_gather(x, idx):
    return x[idx], x[idx] * 2.0


def p_gather2(x, r, c):
    return x[r, c], x[r]


def p_matmul(a, b):
    return a @ b


def p_dot(a, b):
    return np.dot(a, b)


def p_bcast(x, y):
    return x + y, x * y - y, np.maximum(x, y), np.where(x > y, x, y)


def p_bcast_red(x, y):
    z = x * y
    return z.sum(axis=0), z.sum(), (z - z.mean(axis=-1, keepdims=True)).max(axis=0)


def p_noncontig(x):
    return np.exp(x) + 1.0, x.sum(axis=0), x.max(axis=1)


SHAPE_CASES = [
    (p_red_axes, (f64(2, 3, 4),)),
    (p_red_axes, (f32(2, 3, 4),)),
    (p_red_axes, (np.arange(24).reshape(2, 3, 4) - 10,)),
    (p_red_axes, (f64(20, 60, 70),)),
    (p_red_size1, (f64(3, 1, 2),)),
    (p_red_size1, (f64(1, 1, 1),)),
    (p_empty, (np.zeros(0),)),
    (p_empty, (np.zeros((0, 3)),)),
    (p_empty, (np.zeros((3, 0)),)),
    (p_reshape, (f64(6),)),
    (p_transpose, (f64(2, 3, 4),)),
    (p_t1d, (f64(4),)),
    (p_slices, (f64(8),)),
    (p_slices, (f64(70001),)),
    (p_slices2, (f64(3, 5),)),
    (p_slices2, (f64(300, 301),)),
    (p_gather, (f64(5), np.array([0, 0, 4, -1, 2, 2]))),
    (p_gather, (f64(5, 2), np.array([3, 3, 1]))),
    (p_gather, (f64(5), np.array([], dtype=np.int64))),
    (p_gather2, (f64(4, 3), np.array([0, 1, 1, -1]), np.array([2, 2, 0, -3]))),
    (p_matmul, (f64(3), f64(3))),
    (p_matmul, (f64(2, 3), f64(3))),
    (p_matmul, (f64(3), f64(3, 2))),
    (p_matmul, (f64(4, 2, 3), f64(4, 3, 5))),
    (p_matmul, (f64(4, 2, 3), f64(3, 5))),
    (p_matmul, (f64(3), f64(4, 3, 5))),
    (p_matmul, (f32(2, 3), f64(3, 2))),
    (p_matmul, (f32(2, 3), f32(3, 2))),
    (p_matmul, (np.arange(6).reshape(2, 3), np.arange(3))),
    (p_matmul, (f64(2, 0), f64(0, 3))),
    (p_dot, (f64(3), f64(3))),
    (p_dot, (f64(2, 3), f64(3, 4))),
    (p_dot, (f64(2, 3), f64(3))),
    (p_bcast, (f64(3, 1), f64(4))),
    (p_bcast, (f64(1), f64(2, 3))),
    (p_bcast, (f64(2, 1, 3), f64(4, 1))),
    (p_bcast, (f64(3), np.array(0.5))),
    (p_bcast, (f32(3), np.array(0.5))),
    (p_bcast, (f64(3), 2)),
    (p_bcast, (np.array(1.5), np.array(-0.5))),
    (p_bcast, (f64(300, 1), f64(1, 301))),
    (p_bcast_red, (f64(3, 1), f64(4))),
    (p_bcast_red, (f64(1, 1), f64(2, 5))),
    (p_bcast_red, (f64(500, 1), f64(200))),
    (p_noncontig, (f64(300, 300).T,)),
    (p_noncontig, (f64(300, 600)[::-1, ::2],)),
    (p_noncontig, (np.asfortranarray(f64(5, 7)),)),
    (p_noncontig, (np.broadcast_to(f64(300), (400, 300)),)),
]


@pytest.mark.parametrize("fn,args", SHAPE_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_shapes(fn, args):
    check_jit(fn, *args)


def test_inputs_not_mutated_and_outputs_owned():
    x = f64(300, 300)
    keep = x.copy()
    out = myc.jit(p_t1d)(x)
    np.testing.assert_array_equal(x, keep)
    assert not np.shares_memory(out[1], x)


# -- programs: fusion boundaries ------------------------------------------------------


def p_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def p_layernorm(x):
    mu = x.mean(axis=-1, keepdims=True)
    v = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(v + 1e-5)


def p_variance(x):
    mu = x.mean()
    return ((x - mu) ** 2).mean(), ((x - x.mean(axis=0)) ** 2).sum(axis=0)


def p_two_reductions(x):
    y = np.exp(x) * 0.5 + x
    return y.sum(), y.max(), y, y.min(axis=0), (y / y.sum(axis=0, keepdims=True)).sum(axis=1)


def p_chain(x):
    y = x
    for i in range(30):
        y = np.tanh(y * 1.1 + 0.1) - 0.05 * y
    return y


def p_multi_out(x):
    a = x * 2.0
    b = np.sin(a)
    c = b.sum(axis=0)
    return a, b, c, c.sum(), a[0], b.T


def p_stability(x):
    return (
        np.log(1.0 + x * x),
        np.exp(x) - 1.0,
        np.log(np.exp(x).sum()),
        np.log(np.exp(x).sum(axis=-1, keepdims=True)),
    )


def p_red_then_elem(x, y):
    s = (x * y).sum(axis=0, keepdims=True)
    z = x / s + y * s.max()
    return z, z.mean(axis=1), s


FUSION_CASES = [
    (p_softmax, (f64(3, 5),)),
    (p_softmax, (f32(3, 5),)),
    (p_softmax, (f64(300, 301) * 30,)),
    (p_softmax, (f32(70, 1100),)),
    (p_layernorm, (f64(3, 5),)),
    (p_layernorm, (f32(256, 300),)),
    (p_variance, (f64(7, 3),)),
    (p_variance, (f32(400, 200),)),
    (p_two_reductions, (f64(9, 2),)),
    (p_two_reductions, (f64(300, 300),)),
    (p_chain, (f64(10),)),
    (p_chain, (f32(70000),)),
    (p_multi_out, (f64(3, 4),)),
    (p_multi_out, (f64(300, 300),)),
    (p_stability, (f64(2, 4) * 1e-9,)),
    (p_stability, (f64(2, 4) * 300,)),
    (p_red_then_elem, (f64(3, 4), f64(4))),
    (p_red_then_elem, (f64(300, 400), f64(400))),
]


@pytest.mark.parametrize("fn,args", FUSION_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_fusion(fn, args):
    check_jit(fn, *args)


def p_nan_reduce(x):
    return (
        x.max(),
        x.min(),
        x.max(axis=0),
        x.min(axis=1),
        np.maximum(x, 0.0).sum(),
        np.minimum(0.0, x).max(),
    )


@pytest.mark.parametrize("where", [0, 3, 35000, 69999, -1])
def test_nan_in_large_reductions(where):
    x = f64(700, 100)
    if where >= 0:
        x.ravel()[where] = np.nan
    check_jit(p_nan_reduce, x)
    check_jit(p_nan_reduce, x.astype(np.float32))


# -- control flow on the compiled path ------------------------------------------------


def p_branch_float(a, x):
    if a > 0.0:
        return x * a
    else:
        return x - a


def p_branch_red(x):
    if x.sum() > 0:
        return x * 2.0
    return -x


def p_while_var(x):
    s = x
    n = 0
    while s.sum() < 100.0:
        s = s * 2.0 + 1.0
        n = n + 1
    return s, n


def p_early_ret(x):
    for i in range(6):
        if x[i] > 0.5:
            return x * i
    return x


def p_rec(n, x):
    if n <= 0:
        return x
    return p_rec(n - 1, x * 1.5) + 1.0


def p_rec_float(a):
    if a < 1.0:
        return a
    return p_rec_float(a / 2.0) + 1.0


def p_nan_cond(x):
    if not (x.sum() > 0.0):
        return x * 0.0
    return x


def p_shortcircuit(a, b):
    if a > 0 and b > 0 or a < -1:
        return a * b
    return a - b if b > a else b - a


def p_nested(x, a):
    y = x * a
    if y.sum() > 1.0:
        if y.max() > 2.0:
            return (y * y).sum()
        return y.sum() * 3.0
    elif a > 0.5:
        return np.exp(y).sum()
    return np.tanh(y).mean()


def p_loop_branch(x):
    s = x
    k = 0
    while k < 5:
        if s.max() > 3.0:
            s = s * 0.5
        else:
            s = s + 1.0
        k = k + 1
    return s


ones3 = np.ones(3)
CONTROL_CASES = [
    (
        p_branch_float,
        [(1.0, ones3), (-1.0, ones3), (2.0, ones3), (-0.0, ones3), (float("nan"), ones3)],
    ),
    (p_branch_red, [(ones3,), (-ones3,), (ones3,), (np.zeros(3),)]),
    (p_while_var, [(ones3,), (ones3 * 50,), (ones3 * 0.01,), (ones3 * 200,), (ones3,)]),
    (
        p_early_ret,
        [
            (np.array([0, 0, 1.0, 0, 0, 0]),),
            (np.array([1.0, 0, 0, 0, 0, 0]),),
            (np.zeros(6),),
            (np.array([0, 0, 1.0, 0, 0, 0]),),
        ],
    ),
    (p_rec, [(3, ones3), (0, ones3), (5, ones3), (3, ones3 * 2)]),
    (p_rec_float, [(5.0,), (0.5,), (100.0,), (5.0,), (3.0,)]),
    (p_nan_cond, [(ones3,), (np.array([np.nan, 1.0, 1.0]),), (-ones3,), (ones3,)]),
    (p_shortcircuit, [(1.0, 1.0), (1.0, -1.0), (-2.0, 1.0), (-0.5, -0.5), (1.0, 1.0), (-2.0, 3.0)]),
    (
        p_nested,
        [
            (ones3, 1.0),
            (ones3 * 0.5, 1.0),
            (ones3 * 0.1, 1.0),
            (ones3 * 0.1, 0.2),
            (ones3, 1.0),
            (-ones3, 0.2),
        ],
    ),
    (
        p_loop_branch,
        [(ones3,), (ones3 * 2.5,), (np.array([0.0, 3.5, 1.0]),), (ones3 * 10,), (ones3,)],
    ),
]


@pytest.mark.parametrize("fn,argsets", CONTROL_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_control_flow_guards(fn, argsets):
    check_calls(fn, argsets)


# -- AD on the compiled path ----------------------------------------------------------


def l_branch(x):
    if x.sum() > 0:
        return (x * x).sum()
    return np.sin(x).sum()


def l_while(x):
    s = x
    while s.sum() < 100.0:
        s = s * 2.0 + 1.0
    return (s * s).mean()


def l_early(x):
    for i in range(6):
        if x[i] > 0.5:
            return (x * i).sum() + x[i] ** 3
    return np.tanh(x).sum()


def l_rec(x, n):
    return p_rec(n, x).sum()


def l_scalar(a, b):
    if a * b > 1.0:
        return math.sin(a) * b
    elif a < 0:
        return a * a * b
    return math.exp(a - b)


def l_layernorm(x):
    return (p_layernorm(x) * np.arange(x.shape[-1])).sum()


def l_softmax(x):
    p = p_softmax(x)
    return np.log(p[0, 1]) + (p * p).sum()


def l_lse(x):
    return np.log(np.exp(x).sum()) + np.log(1.0 + x * x).sum()


def l_var(x):
    mu = x.mean()
    return ((x - mu) ** 2).mean() + x.max() - x.min()


def l_big(x):
    y = np.exp(-x * x) + np.tanh(x) * x
    return y.sum() / y.max()


def l_f32(x, a):
    return (x * a + 1).sum() * 2


def l_pow(x):
    return (x**3).sum() + (np.abs(x) ** 0.5).sum() + (x**2.0).sum()


def l_where(x):
    return np.where(x > 0, x * x, -x).sum() + np.maximum(x, 0.1).sum() + np.clip(x, -0.5, 0.5).sum()


def l_gather(x, idx):
    return (x[idx] * np.arange(idx.shape[0])).sum()


def l_mm(a, b):
    return np.tanh(a @ b).sum()


def l_slice(x):
    return (x[::-1] * x[1:][::-1][0]).sum() + x[-2:0:-2].sum()


def l_red_axes(x):
    return (
        (x.sum(axis=(0, 2)) ** 2).sum() + x.max(axis=1, keepdims=True).mean() + x.mean(axis=0).sum()
    )


def l_while_n(x, n):
    i = 0
    s = x
    while i < n:
        s = np.sin(s) + x
        i = i + 1
    return s.sum()


def l_bcast(x, y):
    return (x * y + x / (1.0 + y * y)).sum()


def l_ties(x):
    return x.max() + x.min() * 2.0 + x.max(axis=0).sum()


def l_maximum(x, y):
    return (np.maximum(x, y) * 2.0 + np.minimum(x, y)).sum()


def l_kinks(x):
    return (np.abs(x) + np.sign(x) + np.sqrt(np.abs(x) + 1.0) + np.floor(x) * x).sum()


def l_builtin(a, b):
    return max(a, b) * 2.0 + min(a, b) + abs(a)


def l_loop_branch(x):
    return p_loop_branch(x).sum()


ties = np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 0.0]])
AD_CASES = [
    (l_branch, [(ones3,), (-ones3,), (ones3 * 2,), (-ones3 * 0.5,)], 0, None),
    (l_while, [(ones3,), (ones3 * 50,), (ones3 * 0.01,), (ones3 * 200,), (ones3,)], 0, None),
    (
        l_early,
        [
            (np.array([0, 0, 1.0, 0, 0, 0]),),
            (np.array([1.0, 0, 0, 0, 0, 0]),),
            (np.zeros(6),),
            (np.array([0, 0, 0.7, 0, 0, 0.9]),),
        ],
        0,
        None,
    ),
    (l_rec, [(ones3, 3), (ones3, 0), (ones3 * 0.5, 5)], 0, None),
    (l_scalar, [(2.0, 1.0), (-1.0, 2.0), (0.5, 0.5), (3.0, 3.0), (-2.0, -2.0)], (0, 1), None),
    (l_layernorm, [(f64(3, 5),), (f64(3, 5),)], 0, 1e-6),
    (l_layernorm, [(f32(3, 5),), (f32(3, 5),)], 0, 1e-4),
    (l_softmax, [(f64(3, 5),), (f64(3, 5) * 10,)], 0, 1e-6),
    (l_lse, [(f64(7),), (f64(7) * 100,)], 0, 1e-6),
    (l_var, [(f64(7),), (f64(7),)], 0, 1e-6),
    (l_big, [(f64(300, 300),), (f64(300, 300),)], 0, 1e-6),
    (l_big, [(f32(70000),), (f32(70000),)], 0, 1e-4),
    (l_f32, [(f32(5), 2.0), (f32(5), 3.0)], (0, 1), 1e-4),
    (l_pow, [(f64(6),), (f64(6),)], 0, 1e-6),
    (l_where, [(f64(6),), (f64(6),)], 0, 1e-6),
    (
        l_gather,
        [(f64(5), np.array([0, 0, 4, -1, 2, 2])), (f64(5), np.array([1, 1, 1, 1, 1, 1]))],
        0,
        1e-6,
    ),
    (l_mm, [(f64(3, 4), f64(4, 2)), (f64(3, 4), f64(4, 2))], (0, 1), 1e-6),
    (l_mm, [(f64(3, 4), f64(4))], (0, 1), 1e-6),
    (l_slice, [(f64(7),)], 0, 1e-6),
    (l_red_axes, [(f64(2, 3, 4),), (f64(20, 30, 40),)], 0, 1e-6),
    (l_while_n, [(f64(4), 3), (f64(4), 0), (f64(4), 7)], 0, 1e-6),
    (l_bcast, [(f64(3, 1), f64(4)), (f64(3, 1), f64(4))], (0, 1), 1e-6),
    (l_bcast, [(f64(3, 1), 2.0), (f64(1), np.array(2.0))], (0, 1), 1e-6),
    (l_ties, [(ties,), (np.ones((70, 1000)),), (f64(3, 4),)], 0, 1e-6),
    (
        l_maximum,
        [(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])), (np.ones(70000), np.ones(70000))],
        (0, 1),
        1e-6,
    ),
    (l_kinks, [(np.array([0.0, -0.0, 1.0, -2.0, 2.5]),)], 0, 1e-6),
    (l_builtin, [(1.0, 1.0), (2.0, 1.0), (0.0, 3.0), (-0.0, 0.0), (1.0, 2.0)], (0, 1), 1e-6),
    (
        l_loop_branch,
        [(ones3,), (ones3 * 2.5,), (np.array([0.0, 3.5, 1.0]),), (ones3 * 10,), (ones3,)],
        0,
        1e-6,
    ),
]


@pytest.mark.parametrize(
    "fn,argsets,argnums,rtol", AD_CASES, ids=lambda v: getattr(v, "__name__", None)
)
def test_value_and_grad(fn, argsets, argnums, rtol):
    check_vg(fn, argsets, argnums, rtol)


def f_tuple(x):
    y = np.exp(x)
    return y.sum(), y * 2.0


def f_arr32(x):
    return x * x * 0.1 + 1


@pytest.mark.parametrize(
    "fn,primals,tangent,cotangent",
    [
        (f_tuple, (f64(5),), (np.ones(5),), (1.0, np.ones(5))),
        (f_arr32, (f32(5),), (np.ones(5, np.float32),), np.ones(5, np.float32)),
        (p_nested, (ones3, 1.0), (ones3, 1.0), 1.0),
        (l_ties, (ties,), (np.ones((2, 3)),), 1.0),
        (p_softmax, (f64(3, 4),), (f64(3, 4),), f64(3, 4)),
        (p_layernorm, (f32(3, 4),), (f32(3, 4),), f32(3, 4)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_jvp_vjp(fn, primals, tangent, cotangent):
    fi = myc.jit(fn, backend="interp")
    for f in (fn, myc.jit(fn)):
        assert_same(
            myc.jvp(fi, primals, tangent),
            myc.jvp(f, primals, tangent),
            1e-6 if primals[0].dtype == np.float64 else 1e-4,
        )
        oi, pbi = myc.vjp(fi, *primals)
        oc, pbc = myc.vjp(f, *primals)
        rtol = 1e-6 if primals[0].dtype == np.float64 else 1e-4
        assert_same(oi, oc, rtol)
        assert_same(pbi(cotangent), pbc(cotangent), rtol)


def test_grad_result_kinds():
    x = f32(5)
    g = myc.grad(l_f32)(x, 2.0)
    assert g.dtype == np.float32
    assert type(myc.grad(l_builtin)(1.0, 2.0)) is float


def test_exceptions_agree_between_backends():
    """Errors raised at run time are the same kind of MycError on both paths."""

    for fn, args in [(p_maxmin, (np.zeros(0),)), (p_scalar_py, (float("nan"), 1.0))]:
        kinds = []
        for backend in ("interp", "cpu"):
            with pytest.raises(myc.MycError) as info:
                _call(myc.jit(fn, backend=backend), args)
            kinds.append(type(info.value))
        assert kinds[0] is kinds[1]


def p_argmax(x):
    return x.argmax(), x.argmin()


def test_argmax_empty_error_kind():
    kinds = []
    for backend in ("interp", "cpu"):
        with pytest.raises(myc.MycError) as info:
            _call(myc.jit(p_argmax, backend=backend), (np.zeros(0),))
        kinds.append(type(info.value))
    assert kinds[0] is kinds[1]


def test_argmax_ties_and_nans_large():
    big = np.zeros(100000)
    big[[7, 50000, 99999]] = 1.0
    check_jit(p_argmax, big)
    big[[60000, 70000]] = np.nan
    check_jit(p_argmax, big)


def p_math_domain(a):
    return math.sqrt(a), math.log(a)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize("a", [-1.0, 0.0])
def test_math_domain_error_like_cpython(backend, a):
    with pytest.raises(ValueError):
        p_math_domain(a)  # CPython
    with pytest.raises((ValueError, myc.MycError)):
        _call(myc.jit(p_math_domain, backend=backend), (a,))


# -- Hypothesis: random elementwise + reduction programs ------------------------------

UNARY_SAFE = [
    "np.tanh({})",
    "np.sin({})",
    "np.abs({})",
    "np.square(np.tanh({}))",
    "np.exp(np.tanh({}))",
    "np.sqrt(np.abs({}))",
    "np.log1p(np.abs({}))",
    "np.arctan({})",
    "np.cos({})",
    "-({})",
    "np.expm1(np.tanh({}))",
    "np.log(1.0 + {} * {})",
    "np.clip({}, -1, 2)",
    "np.clip({}, -0.5, 1.5)",
]
BINARY = [
    "({} + {})",
    "({} - {})",
    "({} * {})",
    "np.maximum({}, {})",
    "np.minimum({}, {})",
    "({} / (1.0 + {} * {}))",
]
INPUT_ONLY = [
    "({a} > {b}) * {c}",
    "np.where({a} > {b}, {c}, {d})",
    "np.floor({a})",
    "np.sign({a})",
    "({a} // 3)",
    "({a} % 3)",
    "(({a} <= {b}) + ({a} == {b}) * 1)",
    "np.where({a} < 0, {a}, 0)",
]
LITS = ["2", "(-3)", "0.5", "(-1.5)", "1", "0.1"]
REDS = ["sum", "mean", "max", "min"]

_tmpdir = Path(tempfile.mkdtemp(prefix="myc-adv-"))
_counter = itertools.count()


def _load(source):
    name = f"_myc_adv_{next(_counter)}"
    path = _tmpdir / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f, name


@st.composite
def programs(draw, ints=True):
    ndim = draw(st.integers(1, 3))
    xshape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    # y broadcasts against x: a suffix of x's shape with some dims set to 1, or 0-d
    k = draw(st.integers(0, ndim))
    yshape = tuple(d if draw(st.booleans()) else 1 for d in xshape[ndim - k :])
    dts = st.sampled_from(["float64", "float32", "int64"])
    xdt, ydt = draw(dts), draw(dts)
    lines = ["import numpy as np", "", "", "def f(x, y):"]
    vals = ["x", "y"]  # array-valued, broadcast-compatible
    nd = {"x": ndim, "y": k}
    lits = LITS if ints else [t for t in LITS if "." in t]
    ins = ["x", "y"] + lits
    for i in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["u", "b", "b", "i", "r"]))
        if kind == "u":
            e = draw(st.sampled_from(UNARY_SAFE))
            v = draw(st.sampled_from(vals))
            e = e.format(*([v] * e.count("{}")))
        elif kind == "b":
            e = draw(st.sampled_from(BINARY))
            ops = [draw(st.sampled_from(vals + lits)) for _ in range(e.count("{}"))]
            if e.startswith("({} / "):
                ops[2] = ops[1]
            e = e.format(*ops)
            e = f"np.clip({e}, -4, 4)"
        elif kind == "i":
            e = draw(st.sampled_from(INPUT_ONLY))
            e = e.format(**{c: draw(st.sampled_from(ins)) for c in "abcd"})
            if not ints:
                e = e.replace("* 1)", "* 1.0)").replace(", 0)", ", 0.0)")
            if not any(n in e for n in ("x", "y")):
                e = f"({e} + x)"
        else:
            r = draw(st.sampled_from(REDS))
            v = draw(st.sampled_from(vals))
            axes = (
                ["None"] + (["0", "-1"] if nd[v] >= 1 else []) + (["(0, -1)"] if nd[v] >= 2 else [])
            )
            axis = draw(st.sampled_from(axes))
            e = f"{v} + np.{r}({v}, axis={axis}, keepdims=True)"
        name = f"v{i}"
        nd[name] = max(
            [
                nd[n]
                for n in nd
                if n in e.replace("(", " ").replace(")", " ").replace(",", " ").split()
            ]
            + [0]
        )
        lines.append(f"    {name} = {e}")
        vals.append(name)
    last = vals[-1]
    r = draw(st.sampled_from(REDS))
    axis = draw(st.sampled_from(["None", "0", "-1"] if nd[last] else ["None"]))
    other = draw(st.sampled_from(vals))
    lines.append(f"    return {last}, {last}.{r}(axis={axis}), {other}.sum()")
    return "\n".join(lines) + "\n", xshape, xdt, yshape, ydt


def _array(draw, shape, dtype):
    if dtype == "int64":
        return draw(hnp.arrays(np.int64, shape, elements=st.integers(-5, 5)))
    width = 32 if dtype == "float32" else 64
    return draw(
        hnp.arrays(
            np.dtype(dtype), shape, elements=st.floats(-3, 3, width=width, allow_subnormal=False)
        )
    )


@settings(
    max_examples=int(os.environ.get("MYC_ADV_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_random_programs_cpu_vs_interp(data):
    source, xshape, xdt, yshape, ydt = data.draw(programs())
    if data.draw(st.booleans()) and len(xshape) == 2:  # large: multi-threaded kernels
        xshape = (300, 256)
        yshape = tuple(
            1 if d == 1 else xshape[len(xshape) - len(yshape) + i] for i, d in enumerate(yshape)
        )
        x = np.asarray(RNG.uniform(-3, 3, xshape)).astype(xdt)
        y = np.asarray(RNG.uniform(-3, 3, yshape)).astype(ydt)
    else:
        x = _array(data.draw, xshape, xdt)
        y = _array(data.draw, yshape, ydt)
    f, name = _load(source)
    try:
        try:
            want = _call(f, (x, y))
        except (TypeError, ValueError):  # CPython rejects it: so must both backends
            for backend in ("interp", "cpu"):
                with pytest.raises(myc.MycError):
                    _call(myc.jit(f, backend=backend), (x, y))
            return
        ref = _call(myc.jit(f, backend="interp"), (x, y))
        got = _call(myc.jit(f), (x, y))
        rtol = 2e-4 if np.float32 in (x.dtype, y.dtype) else 1e-7
        if x.size > 1000:
            rtol *= 100  # long float32 sums in a different order
        assert_same(want, ref, rtol)
        assert_same(ref, got, rtol)
    except BaseException:
        print(source, repr(x), repr(y), sep="\n")
        raise
    finally:
        sys.modules.pop(name, None)


@settings(
    max_examples=int(os.environ.get("MYC_ADV_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_random_programs_grad_cpu_vs_interp(data):
    # no integer-valued intermediates: see test_grad_through_int_max below
    source, xshape, _, yshape, _ = data.draw(programs(ints=False))
    big = data.draw(st.booleans()) and len(xshape) == 2
    if big:  # large enough for multi-threaded kernels
        xshape = (300, 256)
        yshape = tuple(
            1 if d == 1 else xshape[len(xshape) - len(yshape) + i] for i, d in enumerate(yshape)
        )
    dt = data.draw(st.sampled_from(["float64", "float32"]))
    x = np.asarray(RNG.uniform(-3, 3, xshape), dtype=dt) if big else _array(data.draw, xshape, dt)
    y = np.asarray(RNG.uniform(-3, 3, yshape), dtype=dt) if big else _array(data.draw, yshape, dt)
    source = source.replace("def f(x, y):", "def g(x, y):") + (
        "\n\ndef f(x, y):\n    a, b, c = g(x, y)\n    return (a * a).sum() + b.sum() * 2.0 + c\n"
    )
    f, name = _load(source)
    try:
        try:
            _call(f, (x, y))
        except (TypeError, ValueError):
            return
        ref = _call(myc.jit(myc.value_and_grad(f, (0, 1)), backend="interp"), (x, y))
        got = _call(myc.value_and_grad(f, (0, 1)), (x, y))
        got_j = _call(myc.jit(myc.value_and_grad(f, (0, 1))), (x, y))
        rtol = 1e-3 if dt == "float32" else 1e-6
        assert_same(ref, got, rtol)
        assert_same(ref, got_j, rtol)
    except BaseException:
        print(source, repr(x), repr(y), sep="\n")
        raise
    finally:
        sys.modules.pop(name, None)


def l_int_max_arg(x, i):
    return x.sum() + i.max() * 2.0


def l_int_max_inner(x):
    i = (x > 0) * 1
    return (x * i.max()).sum() + (x * i.min(axis=0)).sum()


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize(
    "fn,args",
    [
        (l_int_max_arg, (np.array([1.0, -2.0, 3.0]), np.array([1, 3, 3]))),
        (l_int_max_inner, (np.array([1.0, -2.0, 3.0]),)),
    ],
    ids=["int-arg", "int-intermediate"],
)
def test_grad_through_int_max(backend, fn, args):
    want = (
        _call(myc.value_and_grad(myc.jit(fn, backend="interp")), args) if backend == "cpu" else None
    )
    got = _call(myc.jit(myc.value_and_grad(fn), backend=backend), args)
    x = args[0]
    if fn is l_int_max_arg:
        np.testing.assert_allclose(got[1], np.ones_like(x))
    else:
        np.testing.assert_allclose(got[1], np.full_like(x, 1.0) * 1 + 0.0 * x + 0)
    if want is not None:
        assert_same(want, got, 1e-6)


def l_max_plus_clip(x):
    v0 = np.clip(x + x, -4, 4)
    return x.max() + v0.sum()


@pytest.mark.parametrize(
    "make",
    [myc.grad, myc.value_and_grad, lambda f: myc.jit(myc.grad(f))],
    ids=["grad", "value_and_grad", "jit-grad"],
)
def test_fusion_cycle_in_gradient_of_max_plus_clip(make):
    x = np.linspace(-3.0, 3.0, 4097)
    ref = _call(myc.jit(myc.grad(l_max_plus_clip), backend="interp"), (x,))
    got = _call(make(l_max_plus_clip), (x,))
    if isinstance(got, tuple):
        got = got[1]
    assert_same(ref, got, 1e-9)


def test_max_plus_clip_gradient_small_is_fine():
    x = np.linspace(-3.0, 3.0, 4096)
    assert_same(
        _call(myc.jit(myc.grad(l_max_plus_clip), backend="interp"), (x,)),
        _call(myc.grad(l_max_plus_clip), (x,)),
        1e-9,
    )
