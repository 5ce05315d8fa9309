"""Adversarial frontend-semantics tests: programs in DESIGN.md's subset run through
``myc.jit`` (cpu and interp backends) and compared with plain CPython: structure,
scalar kind (Python float ~ np.float64, bool ~ np.bool_, int ~ np.int64), array dtype
and shape, and values (NaN-aware).  Exceptions: where CPython raises, myc must raise a
``myc.MycError`` (never a non-MycError crash, never a silent inf).

Discrepancies are kept as minimal reproducers marked ``xfail(strict=True)``.
"""

# ruff: noqa: E701, E702, E731, E741

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import myc
from tests.adversarial.common import assert_compiled
from tests.backends import BACKENDS

# -- comparison helpers ---------------------------------------------------------------


def _kind(v):
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)) and not isinstance(v, np.ndarray):
        return "float"
    if isinstance(v, np.ndarray):
        return "array"
    if v is None:
        return "none"
    if isinstance(v, tuple):
        return "tuple"
    return type(v).__name__


def assert_same(ref, got, path="out"):
    kr, kg = _kind(ref), _kind(got)
    assert kr == kg, f"{path}: kind {kr} ({ref!r}) vs {kg} ({got!r})"
    if kr == "tuple":
        assert len(got) == len(ref), f"{path}: len {len(ref)} vs {len(got)}"
        for i, (r, g) in enumerate(zip(ref, got)):
            assert_same(r, g, f"{path}[{i}]")
        return
    if kr == "none":
        return
    if kr in ("bool", "int"):
        assert got == ref, f"{path}: {ref!r} vs {got!r}"
        return
    if kr == "float":
        if isinstance(ref, np.floating) or isinstance(got, np.floating):
            rd = np.asarray(ref).dtype if isinstance(ref, np.floating) else np.dtype("float64")
            gd = np.asarray(got).dtype if isinstance(got, np.floating) else np.dtype("float64")
            assert rd == gd, f"{path}: dtype {rd} vs {gd}"
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=path)
        return
    assert got.dtype == ref.dtype, f"{path}: dtype {ref.dtype} vs {got.dtype}"
    assert got.shape == ref.shape, f"{path}: shape {ref.shape} vs {got.shape}"
    if ref.dtype.kind in "biu":
        np.testing.assert_array_equal(got, ref, err_msg=path)
    else:
        tol = 1e-5 if ref.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, equal_nan=True, err_msg=path)


def _py(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def check(fn, *args, backends=BACKENDS):
    try:
        ref = _py(fn, args)
        ref_exc = None
    except Exception as e:  # noqa: BLE001
        ref, ref_exc = None, e
    for be in backends:
        jf = myc.jit(fn, backend=be)
        if ref_exc is not None:
            with pytest.raises(myc.MycError):
                _py(jf, args)
            continue
        try:
            got = _py(jf, args)
        except myc.MycError as e:
            raise AssertionError(f"[{be}] raised {e!r}; CPython returned {ref!r}") from e
        try:
            assert_same(ref, got, path=f"[{be}] out")
        except AssertionError as e:
            raise AssertionError(f"{e}\n  CPython: {ref!r}\n  myc:     {got!r}") from None
        assert_compiled(jf)


# -- module-level state read by programs -----------------------------------------------

CONST_T = (1, 2.5, 3)
CONST_F = 0.25
CONST_A = np.array([[1.0, 2.0], [3.0, 4.0]])
CONST_I = 7

# -- programs ----------------------------------------------------------------------


def helper_kw(a, b=2, c=(1.0, 2.0)):
    return a * b + c[0] - c[1]


def p_kwargs_module(x):
    return helper_kw(x), helper_kw(x, c=(3.0, 0.5)), helper_kw(b=3, a=x), helper_kw(x, 4, (0.0, 1))


def p_nested_def_defaults(x):
    def g(u, v=1.5, w=0):
        if w == 0:
            return u + v
        return u * w

    return g(x), g(x, w=2), g(x, 2), g(v=0, u=x)


def p_lambda_defaults(x):
    f = lambda a, b=3: a - b  # noqa: E731
    return f(x), f(x, b=1), f(b=x, a=1)


def p_default_array(x, w=np.ones(3), k=(2, (0.5,))):
    return x * w * k[1][0] + k[0]


def p_default_tuple(x, t=(1, 2.0)):
    a, b = t
    return x + a, x * b


def p_return_none(x):
    if x > 0:
        return
    return None


def p_nested_tuple(x, a):
    return (x, (a, (1, 2.0)), (a.sum(), True))


def p_unpack_rows(a):
    r0, r1 = a
    (p, q), (s, t) = a
    return r0 + r1, p * t - q * s


def p_nested_unpack(x):
    (a, (b, c)), d = (x, (2, 3.0)), 4
    return a + b + c + d


def p_aug_tuple(x):
    t = (x,)
    for i in range(3):
        t += (i,)
    t = t + (1.5,)
    return t, len(t)


def p_chained_cmp(x, a):
    return 0 < x < 3.5 <= 4, a.sum() > x > -1, 1 < 2 > 0 == 0, x == x != 0.0


def p_and_or(x, y):
    return x or 0.0, y and 2, x and y, (x > 1) or y, 0 or y, 0.0 or 0


def p_not_int(n):
    return not n, not (n - 3), not 0.0, not n and n


def p_nested_ifexp(x):
    return (1 if x > 2 else 2.5) if x > 0 else (-1 if x > -5 else -2)


def p_while_else(n):
    i = 0
    s = 0
    while i < n:
        if i == 3:
            break
        s += i
        i += 1
    else:
        s = -100
    return s, i


def p_for_else(n):
    s = 0.0
    for i in range(n):
        s += i
        if s > 5:
            break
    else:
        s = -1.0
    return s


def sq(v):
    return v * v


def p_for_over_functions(x):
    acc = 0.0
    for f in (sq, abs, math.exp, np.tanh, float):
        acc = acc + f(x)
    return acc


def p_range_steps(n):
    a = 0
    for i in range(0):
        a += 100
    for i in range(5, 0, -2):
        a = a * 10 + i
    for i in range(n, -n, -3):
        a += i
    for i in range(2, 2):
        a += 1000
    return a


def p_rows_2d(a):
    s = np.zeros(a.shape[1])
    k = 0
    for row in a:
        s = s + row * k
        k += 1
    return s, k


def p_empty_tuple(x):
    n = 0
    for _e in ():
        n += 1
    return x + n


def p_continue_last(n):
    s = 0
    for i in range(n):
        if i % 2:
            s += i
            continue
        s -= 1
        continue
    return s


def p_loop_never_runs(x):
    y = x * 2
    for i in range(0):
        y = i
    k = 5
    while k < 0:
        k -= 1
        y = 0
    return y, k


def rec_tuple(n):
    if n == 0:
        return 0, 1.0
    a, b = rec_tuple(n - 1)
    return a + n, b * 2


def p_rec_tuple(n):
    return rec_tuple(n)


def is_even(n, depth=0):
    if n == 0:
        return True, depth
    return is_odd(n=n - 1, depth=depth + 1)


def is_odd(n, depth=0):
    if n == 0:
        return False, depth
    return is_even(n - 1, depth=depth + 1)


def p_mutual(n):
    return is_even(n), is_odd(n)


def p_closure_in_loop(x):
    s = 0.0
    for i in range(3):
        def g(v):
            return v * i

        s = s + g(x)
    return s


def apply(f, v):
    return f(v)


def p_funcs_as_values(x):
    return apply(abs, -x), apply(float, 3), apply(math.exp, 0), apply(np.tanh, x), apply(len, (1, 2, 3))


def p_min_max(x, n):
    return min(x, n), max(n, x), min(1, 2), max(1.0, 2), min(3, 3.0), max(3.0, 3), max(-1, 0.5)


def p_int_float(x):
    return int(-2.7), int(x), float(True), float(3), int(-0.5), float(-7), int(True)


def p_len_shape(a, t):
    n, m = a.shape
    return len(a), len(t), a.shape, a.shape[-1], n * m, a.ndim, a.T.shape, a[0].T.shape


def p_np_array_dtype(x):
    a = np.array([[1, 2], [3, 4.5]])
    b = np.array([1, 2, 3])
    c = np.array((True, False))
    d = np.array([[1, 2]])
    return a, b, c, d


def p_zeros_int(x):
    z = np.zeros((2, 3), dtype=np.int64)
    o = np.ones(3, dtype=bool)
    f = np.full((2,), 3)
    g = np.full((2,), 3.0)
    return z, o, f, g, z + 1


def p_arange(x):
    return np.arange(0.0, 1.0, 0.25), np.arange(5), np.arange(1, 7, 2), np.arange(3.0), np.arange(5, 0, -1)


def p_linspace(x):
    return np.linspace(0, 1, 5), np.linspace(0.0, 1.0, 4, endpoint=False), np.linspace(2, 3, 1)


def p_astype_bool(a):
    b = a.astype(bool)
    return b, b.astype(np.int64), a.astype(np.int64), a.astype(np.float32)


def p_int_index_neg(a):
    idx = np.array([0, -1, 1, -2])
    return a[idx], a[-1], a[-2:], a[::-1], a[1::2], a[None], a[:, None].shape, a[::-2]


def p_index_2d(a):
    return a[..., 0], a[-1, -1], a[:, ::-1], a[None].shape, a[1:, :1], a[::2, 1], a[:-1]


def p_bool_ops(a, b):
    return a & b, a | b, ~a, a ^ b, ~(a & b) | a


def p_py_int_cmp(m, n):
    return m < n, m == n, m != n, m >= n, m < n < m + 2 != n


def p_floordiv_mod(a, b):
    return a // b, a % b, -a // b, -a % b, a // -b, a % -b


def p_floordiv_mod_float(x, y):
    return x // y, x % y, -x // y, -x % y, x // -y, x % -y


def p_pow_neg(n):
    return n ** -2, 2 ** -1, n ** 2, 2.0 ** -1, (-2) ** 3, n ** 0


def p_big_int(n):
    return n * 1000003, n * n * n, 2 ** 40 + n


def p_div_zero_int(n):
    return 1 / n


def p_floordiv_zero(n):
    return 7 // n


def p_mod_zero(n):
    return 7 % n


def p_div_zero_float(x):
    return 1.0 / x


def p_fmod_zero_float(x):
    return 2.5 % x


def p_module_consts(x):
    a, b, c = CONST_T
    return x * CONST_F + a + b + c, CONST_A @ np.ones(2) * x, CONST_I // 2, CONST_T


def p_reduce_kwargs(a):
    return a.sum(axis=0), a.mean(axis=-1, keepdims=True), np.max(a, axis=1), a.min(), np.sum(a, 0)


def p_true_div_ints(m, n):
    return m / n, m // n, m % n, divmod_like(m, n)


def divmod_like(m, n):
    return m // n, m - (m // n) * n


def p_abs_kinds(n, x, a):
    return abs(n), abs(x), abs(a), abs(-3), abs(True)


def p_bool_arith(b, n):
    return b + n, b * 2.5, True + True, -True


def p_int_array_ops(a):
    return a // 2, a % 3, a / 2, a * 2, -a, a ** 2


def p_mixed_scalar_array(a):
    return a + 1, a * 2.5, 1 - a, a > 0, (a > 0).sum(), (a > 0).astype(np.float32)


def p_while_return_inside(n):
    i = 0
    while True:
        i += 1
        if i * i > n:
            return i
    return -1


def p_early_return_loop(a):
    for row in a:
        if row.sum() > 0:
            return row
    return a[0] * 0


def p_compose(x):
    def compose(f, g):
        return lambda v: f(g(v))

    h = compose(math.sin, sq)
    k = compose(np.exp, compose(abs, float))
    return h(x), k(-2)


def p_returns_func_value(x):
    def pick(flag):
        if flag:
            return sq
        return abs

    return pick(x > 0)(x) + pick(x < 0)(x)


def p_math_funcs(x):
    return math.floor(x), math.ceil(-x), math.sqrt(4), math.log(x * x + 1), math.pi, math.fabs(-x)


def p_float32_scalars(a):
    s = a.sum()
    return s, s * 2, s + 1.5, a * 2.0, a.mean()


def p_transpose_1d(v):
    return v.T, np.transpose(v), v.reshape(1, -1).T, v.reshape((2, -1))


def p_where_maxmin(a):
    return np.where(a > 0, a, 0), np.maximum(a, 0), np.minimum(a, 0.5), np.clip(a, -1, 1)


def p_if_array_scalar(a):
    if a.sum() > 0 and a.max() < 10:
        return 1
    elif a.min() < -10 or not a.mean():
        return 2
    return 3


def p_shadow_builtin(x):
    abs_ = abs
    y = abs_(-x)
    max_ = max
    return max_(y, 1.5)


def p_default_evaluated_once(x, t=CONST_T):
    return x + t[1]


def p_ifexp_mixed_types(n):
    return (n if n > 0 else 0.5), (1.0 if n > 0 else n)


def p_unpack_shape_loop(a):
    h, w = a.shape
    total = 0
    for i in range(h):
        for j in range(w):
            total += i * j
    return total


def p_neg_zero(x):
    return -0.0 * x, 0.0 * -1, x * 0


def p_swap(x, y):
    x, y = y, x
    a = b = x
    return x, y, a + b


CASES = [
    (p_kwargs_module, (1.5,)),
    (p_kwargs_module, (2,)),
    (p_nested_def_defaults, (2.0,)),
    (p_lambda_defaults, (4,)),
    (p_default_array, (np.arange(3.0),)),
    (p_default_tuple, (2,)),
    (p_default_tuple, (np.array([1.0, 2.0]),)),
    (p_return_none, (1.0,)),
    (p_return_none, (-1.0,)),
    (p_nested_tuple, (3, np.ones((2, 2)))),
    (p_unpack_rows, (np.array([[1.0, 2.0], [3.0, 4.0]]),)),
    (p_nested_unpack, (1.0,)),
    (p_aug_tuple, (0.5,)),
    (p_chained_cmp, (2.0, np.ones(3))),
    (p_chained_cmp, (3.5, np.ones(3))),
    (p_and_or, (0.0, 3)),
    (p_and_or, (2.5, 0)),
    (p_not_int, (3,)),
    (p_not_int, (0,)),
    (p_nested_ifexp, (3.0,)),
    (p_nested_ifexp, (1.0,)),
    (p_nested_ifexp, (-7.0,)),
    (p_while_else, (2,)),
    (p_while_else, (10,)),
    (p_for_else, (2,)),
    (p_for_else, (10,)),
    (p_for_over_functions, (0.5,)),
    (p_range_steps, (4,)),
    (p_range_steps, (0,)),
    (p_rows_2d, (np.arange(6.0).reshape(3, 2),)),
    (p_rows_2d, (np.arange(6, dtype=np.float32).reshape(2, 3),)),
    (p_empty_tuple, (1.0,)),
    (p_continue_last, (7,)),
    (p_loop_never_runs, (1.5,)),
    (p_rec_tuple, (4,)),
    (p_mutual, (5,)),
    (p_closure_in_loop, (2.0,)),
    (p_funcs_as_values, (1.25,)),
    (p_min_max, (2.5, 2)),
    (p_min_max, (1.0, 2)),
    (p_int_float, (-3.9,)),
    (p_len_shape, (np.ones((2, 3)), (1, 2.0))),
    (p_np_array_dtype, (0,)),
    (p_zeros_int, (0,)),
    (p_arange, (0,)),
    (p_linspace, (0,)),
    (p_astype_bool, (np.array([0.0, 1.5, -2.0, 0.0]),)),
    (p_int_index_neg, (np.arange(5.0),)),
    (p_index_2d, (np.arange(12.0).reshape(3, 4),)),
    (p_bool_ops, (np.array([True, False, True]), np.array([True, True, False]))),
    (p_py_int_cmp, (3, 4)),
    (p_floordiv_mod, (7, 2)),
    (p_floordiv_mod, (-7, 3)),
    (p_floordiv_mod_float, (7.5, 2.0)),
    (p_floordiv_mod_float, (-7.5, 2.25)),
    (p_pow_neg, (3,)),
    (p_big_int, (123456,)),
    (p_div_zero_int, (0,)),
    (p_floordiv_zero, (0,)),
    (p_mod_zero, (0,)),
    (p_div_zero_float, (0.0,)),
    (p_fmod_zero_float, (0.0,)),
    (p_module_consts, (2.0,)),
    (p_reduce_kwargs, (np.arange(6.0).reshape(2, 3),)),
    (p_true_div_ints, (7, 2)),
    (p_true_div_ints, (-7, 2)),
    (p_abs_kinds, (-3, -2.5, np.array([-1, 2]))),
    (p_bool_arith, (True, 3)),
    (p_int_array_ops, (np.array([-7, -1, 0, 5]),)),
    (p_mixed_scalar_array, (np.array([-1.0, 2.0], dtype=np.float32),)),
    (p_mixed_scalar_array, (np.array([-1, 2]),)),
    (p_while_return_inside, (10,)),
    (p_early_return_loop, (np.array([[-1.0, 0.0], [2.0, 3.0]]),)),
    (p_early_return_loop, (np.array([[-1.0, 0.0], [-2.0, 0.0]]),)),
    (p_compose, (0.7,)),
    (p_returns_func_value, (-2.0,)),
    (p_math_funcs, (2.5,)),
    (p_float32_scalars, (np.array([1.0, 2.0, 3.5], dtype=np.float32),)),
    (p_transpose_1d, (np.arange(4.0),)),
    (p_where_maxmin, (np.array([-2.0, 0.25, 3.0]),)),
    (p_where_maxmin, (np.array([-2, 0, 3]),)),
    (p_if_array_scalar, (np.array([1.0, 2.0]),)),
    (p_if_array_scalar, (np.array([-1.0, 1.0]),)),
    (p_shadow_builtin, (-0.5,)),
    (p_default_evaluated_once, (1,)),
    (p_ifexp_mixed_types, (3,)),
    (p_ifexp_mixed_types, (-3,)),
    (p_unpack_shape_loop, (np.ones((3, 4)),)),
    (p_neg_zero, (2.0,)),
    (p_swap, (1, 2.0)),
]


@pytest.mark.parametrize(
    "fn,args", CASES, ids=[f"{fn.__name__}-{i}" for i, (fn, _a) in enumerate(CASES)]
)
def test_matches_cpython(fn, args):
    check(fn, *args)


# -- second batch (compact one-liners) ------------------------------------------------

def q_pow_runtime(m): return 2 ** m, m ** m


def q_zero_pow_neg(n): return 0 ** n


def q_fzero_pow_neg(x): return x ** -1


def q_float_pow_overflow(x): return x ** 400


def q_math_exp_overflow(x): return math.exp(x)


def q_math_consts(x): return math.pi * x, math.e, math.inf > x, math.tau


def q_int_big(x): return int(x)


def q_int_nan(x): return int(x)


def q_mixed_floor(m): return 7 // 2.0, -7 // 2.0, m / 2, True / 2, m // 2.5, m % 2.5


def q_minmax_np(a): return max(a.sum(), 0), min(a.sum(), 0), max(True, False), min(True, 0), max(0, a.max())


def q_loop_type_change(n):
    s = 0
    for i in range(n): s = s + 0.5
    return s


def q_while_type_change(n):
    s = 0
    while n > 0:
        s += 1.5; n -= 1
    return s


def q_after_empty_loop(n):
    for i in range(n): pass
    return i


def q_branch_unbound(x):
    if x > 0: y = 1
    return y


def q_implicit_none(x):
    if x > 0: return x


def q_chain_array(x, a): return 0 < x < a


def q_and_array(x, a): return x and a


def q_iter_1d(v):
    s = 0
    for e in v: s = s + e
    return s


def q_iter_1d_int(v):
    t = ()
    for e in v: t = t + (e,)
    return t


def q_hetero_tuple_loop(x):
    s = 0
    for e in (1, 2.5, np.ones(2), True): s = s + e
    return s


def q_tuple_unpack_loop(x):
    s = 0
    for a, b in ((1, 2), (3, 4.5)): s = s + a * b + x
    return s


def q_unpack_vec(v):
    a, b, c = v
    return a, b * c


def q_unpack_bad(v):
    a, b = v
    return a


def q_nested_break(n):
    c = 0
    for i in range(n):
        for j in range(n):
            if j > i: break
            c += 1
    return c


def q_ret_in_nested(n):
    i = 0
    while i < 10:
        for j in range(n):
            if i * j > 6: return i, j
        i += 1
    return -1, -1


def q_tuple_slice(x):
    t = (1, 2.5, x, 4)
    return t[1:3], t[-1], t[::-1], t[:0], len(t[1:])


def q_tuple_idx_var(x):
    t = (1.0, 2.0, x)
    s = 0.0
    for i in range(len(t)): s = s + t[i]
    return s, t[-3]


def q_index_oob(a): return a[5]


def q_gather_oob(a): return a[np.array([0, 7])]


def q_slices(a): return a[3:0:-1], a[-1:-4:-1], a[5:100], a[-100:2], a[::-3], a[4:1], a[None, :, None]


def q_range_float(x):
    s = 0
    for i in range(x): s += i
    return s


def q_int_array_div0(a): return a // 0, a % 0


def q_float_array_div0(a): return a / 0, 1.0 / a


def q_nep50(a, b): return a + b.sum(), a * np.float64(2.0), a + 1, a * b.max()


def q_np_array_lits(x): return np.array([True, 2]), np.array([[True]]), np.array(3.0), np.array([1, 2.0, True]), np.array(((1, 2), (3, 4)))


def q_np_empty(x): return np.array([])


def q_creation(x): return np.zeros(3, dtype=np.float32), np.full((2, 2), True), np.full(2, 1, dtype=np.float32), np.arange(1, 1.3, 0.1), np.arange(5, dtype=np.float32), np.linspace(0, 1, 0), np.zeros_like(np.array([1, 2])), np.ones_like(np.array([True]))


def q_reductions(a, b): return a.mean(), b.sum(), b.max(), np.sum(a, axis=(0, 1)), a.sum(-1), np.mean(b, axis=0)


def q_npfuncs_int(a): return np.square(a), np.sqrt(a), np.floor(a), np.ceil(3), np.exp(1), np.abs(-3), np.sign(-2.5), np.tanh(2), np.clip(a, 0.5, 1), np.where(a > 0, 1, 0), np.where(a > 0, 1, 0.5), np.maximum(a, 0.5), np.power(a, 2)


def q_np_power_neg(a): return np.power(a, -1)


def q_dot(v, m): return np.dot(v, v), v @ m, m @ m, np.matmul(m, v)


def q_kw_builtin(a): return np.sum(a, axis=0), np.clip(a, a_min=0, a_max=1), np.linspace(0, 1, num=3), a.astype(dtype=np.float32), np.zeros(shape=3), a.sum(axis=1, keepdims=True)


def q_float_int_npscalar(a): return float(a.sum()), int(a.max()), float(a[0]), int(-a[1])


def q_lambda_default_loop(x):
    fs = ()
    for i in range(3): fs = fs + (lambda v, i=i: v * i,)
    s = 0
    for f in fs: s = s + f(x)
    return s


def q_nested_rec(n):
    def fib(k):
        if k < 2: return k
        return fib(k - 1) + fib(k - 2)
    return fib(n)


def q_apply_np_sum(a):
    def app(f, v): return f(v)
    return app(np.sum, a), app(len, a), app(np.exp, 0.0), app(int, -2.5)


def q_float_overflow_mul(x): return x * 1e308 * 10


def q_fdiv_zero(x): return 5.0 // x


def q_bool_cmp(b): return b == 1, True == 1.0, b < 2, -b


def q_shape_ops(a): return len(a.shape), a.size, a.shape[0] * 1.5, a.reshape(a.shape[1], -1).shape


def q_int_of_bool_arr(b): return b.sum(), b.astype(np.int64).sum(), (b & True), ~b.astype(bool)


def q_ifexp_array(x, a): return a if x > 0 else a * 2


def q_unary(x, n): return -x, +n, -(-n), ~n, not x


W0 = np.array([1.0, -1.0])


def r_default_modarr(x, w=W0): return x * w


def r_inner_none(x):
    def g(v):
        if v > 0: return
        return v
    return g(x), g(-x)


def r_abs_value(n):
    f = abs
    return f(n), f(-2.5)


def r_float_value(n):
    f = float
    g = int
    return f(n), g(-2.7), g(n)


def r_neg_exp_value(n):
    p = lambda a, b: a ** b
    return p(2, n), p(n, 2)


def r_recur_kw(n, acc=(0,)):
    if n <= 0: return acc
    return r_recur_kw(n - 1, acc=acc + (n,))


def r_ifexp_none(x): return None if x > 0 else x


def r_mixed_return(n):
    if n > 0: return 1
    elif n < 0: return 2.5
    return True


def r_mixed_return_tuple(n):
    if n > 0: return (1, np.ones(2))
    return (2.5, np.zeros(2))


def r_while_else_break(n):
    while n > 0:
        n -= 1
        if n == 2: break
    else:
        return -1
    return n


def r_int_float_loopvar(n):
    x = 1
    for i in range(n): x = x * 2
    return x


def r_loopvar_reassign(n):
    for i in range(n):
        i = i * 10
    return i


def r_range_neg_large(n):
    s = 0
    for i in range(-n, n, 3): s += i
    return s


def r_range_expr(n):
    t = ()
    for i in range(n * 2 - 1, -1, -n): t += (i,)
    return t


def r_or_mix(x, n): return (x or n), (n or x), (x and n or 0.5)


def r_not_kind(a): return not a.sum(), not 0, not True, not 0.0


def r_aug_slice_like(a):
    t = (a, a)
    t += (a.sum(),)
    x, y, z = t
    return z, len(t)


def r_func_tuple_call(x):
    fs = (math.exp, np.exp, abs, lambda v: -v, float)
    return tuple_apply(fs, x)


def tuple_apply(fs, x):
    out = ()
    for f in fs: out = out + (f(x),)
    return out


def r_closure_nested(x):
    def outer(a):
        def inner(b): return a + b
        return inner
    return outer(x)(1), outer(1)(x)


def r_pow_int_float(n, x): return n ** x, x ** n, n ** 0.5, (-n) ** 2, (-n) ** 3


def r_int_div_exact(m, n): return m / n, (m * 3) / n


def r_int_neg_floor(n): return int(-n / 2), -n // 2, math.floor(-n / 2), round_ish(-n)


def round_ish(v): return int(v + 0.5) if v > 0 else -int(-v + 0.5)


def r_float_cmp_int(x, n): return x == n, x < n, n <= x <= n + 1


def r_shape_unpack3(a):
    n, = a.shape[:1]
    return n, a.shape[1:], a.shape[::-1]


def r_ndim_T(a, v): return a.T, v.T, a.T.T, a.ndim + v.ndim, a.T.shape[0]


def r_arr_bool(a, b): return (a > 0) & (b < 1), (a > 0) | ~(b > 0), ~(a > 0), (a > 0) != (b > 0)


def r_zero_div_float(x, y): return x / y


def r_mod_neg_int(m, n): return m % n, m // n


def r_int_conv_neg(x): return int(x), int(-x)


def r_pow_zero_zero(n): return n ** 0, 0 ** n, 0.0 ** n


CASES2 = [
    (q_pow_runtime, (-1,)),
    (q_pow_runtime, (3,)),
    (q_zero_pow_neg, (-1,)),
    (q_fzero_pow_neg, (0.0,)),
    (q_float_pow_overflow, (10.0,)),
    (q_math_exp_overflow, (1000.0,)),
    (q_math_consts, (1.0,)),
    (q_int_big, (1e20,)),
    (q_int_nan, (float('nan'),)),
    (q_int_nan, (float('inf'),)),
    (q_mixed_floor, (7,)),
    (q_minmax_np, (np.array([-1.0,-2.0]),)),
    (q_minmax_np, (np.array([1.0,2.0]),)),
    (q_loop_type_change, (0,)),
    (q_loop_type_change, (2,)),
    (q_while_type_change, (0,)),
    (q_after_empty_loop, (0,)),
    (q_after_empty_loop, (3,)),
    (q_branch_unbound, (-1.0,)),
    (q_branch_unbound, (1.0,)),
    (q_implicit_none, (-1.0,)),
    (q_implicit_none, (1.0,)),
    (q_chain_array, (1.0,np.array([0.5,2.0]))),
    (q_chain_array, (-1.0,np.array([0.5,2.0]))),
    (q_and_array, (0.0,np.ones(2))),
    (q_and_array, (1.0,np.ones(2))),
    (q_iter_1d, (np.array([1.0,2.0]),)),
    (q_iter_1d, (np.array([],dtype=np.float64),)),
    (q_iter_1d_int, (np.array([1,2]),)),
    (q_hetero_tuple_loop, (0,)),
    (q_tuple_unpack_loop, (1,)),
    (q_unpack_vec, (np.array([1.0,2.0,3.0]),)),
    (q_unpack_bad, (np.array([1.0,2.0,3.0]),)),
    (q_nested_break, (4,)),
    (q_ret_in_nested, (4,)),
    (q_ret_in_nested, (0,)),
    (q_tuple_slice, (3.0,)),
    (q_tuple_idx_var, (3.0,)),
    (q_index_oob, (np.arange(3.0),)),
    (q_gather_oob, (np.arange(3.0),)),
    (q_slices, (np.arange(6.0),)),
    (q_range_float, (3.0,)),
    (q_int_array_div0, (np.array([3,-3,0]),)),
    (q_float_array_div0, (np.array([3.0,-3.0,0.0]),)),
    (q_nep50, (np.ones(2,dtype=np.float32),np.ones(2))),
    (q_np_array_lits, (0,)),
    (q_np_empty, (0,)),
    (q_creation, (0,)),
    (q_reductions, (np.arange(6).reshape(2,3),np.array([[True,False],[True,True]]))),
    (q_npfuncs_int, (np.array([-2,0,3]),)),
    (q_np_power_neg, (np.array([2,3]),)),
    (q_dot, (np.arange(2.0),np.arange(4.0).reshape(2,2))),
    (q_dot, (np.arange(2),np.arange(4).reshape(2,2))),
    (q_kw_builtin, (np.arange(6.0).reshape(2,3),)),
    (q_float_int_npscalar, (np.array([1.5,-2.5]),)),
    (q_lambda_default_loop, (2.0,)),
    (q_nested_rec, (10,)),
    (q_apply_np_sum, (np.arange(3.0),)),
    (q_float_overflow_mul, (1.0,)),
    (q_fdiv_zero, (0.0,)),
    (q_bool_cmp, (True,)),
    (q_shape_ops, (np.ones((2,3)))),
    (q_int_of_bool_arr, (np.array([True,False]),)),
    (q_ifexp_array, (1.0,np.ones(2))),
    (q_unary, (1.5,3)),
    (r_default_modarr, (2.0,)),
    (r_inner_none, (1.0,)),
    (r_abs_value, (-3,)),
    (r_float_value, (3,)),
    (r_neg_exp_value, (-2,)),
    (r_neg_exp_value, (2,)),
    (r_recur_kw, (3,)),
    (r_ifexp_none, (1.0,)),
    (r_ifexp_none, (-1.0,)),
    (r_mixed_return, (1,)),
    (r_mixed_return, (-1,)),
    (r_mixed_return, (0,)),
    (r_mixed_return_tuple, (1,)),
    (r_mixed_return_tuple, (-1,)),
    (r_while_else_break, (5,)),
    (r_while_else_break, (1,)),
    (r_int_float_loopvar, (3,)),
    (r_loopvar_reassign, (3,)),
    (r_range_neg_large, (7,)),
    (r_range_expr, (3,)),
    (r_or_mix, (0.0,2)),
    (r_or_mix, (1.5,0)),
    (r_not_kind, (np.zeros(2),)),
    (r_aug_slice_like, (np.ones(2),)),
    (r_func_tuple_call, (-0.5,)),
    (r_closure_nested, (2.0,)),
    (r_pow_int_float, (3,0.5)),
    (r_int_div_exact, (7,7)),
    (r_int_div_exact, (2**52+1,1)),
    (r_int_neg_floor, (5,)),
    (r_float_cmp_int, (2.0,2)),
    (r_shape_unpack3, (np.ones((2,3)))),
    (r_ndim_T, (np.arange(6.0).reshape(2,3),np.arange(3.0))),
    (r_arr_bool, (np.array([-1.0,2.0]),np.array([0.5,3.0]))),
    (r_zero_div_float, (0.0,0.0)),
    (r_zero_div_float, (1,0)),
    (r_mod_neg_int, (-7,-2)),
    (r_mod_neg_int, (7,-2)),
    (r_int_conv_neg, (2.0**62,)),
    (r_pow_zero_zero, (0,)),
    (r_pow_zero_zero, (3,)),
]


@pytest.mark.parametrize(
    "fn,args", CASES2, ids=[f"{fn.__name__}-{i}" for i, (fn, _a) in enumerate(CASES2)]
)
def test_matches_cpython_more(fn, args):
    check(fn, *args)


# -- discrepancies found (minimal reproducers, strict xfail) ---------------------------


def x_aug_alias(x):
    b = np.zeros(2)
    c = b
    c += x  # CPython: in-place, b sees it
    return b


def x_aug_alias_loop(n):
    acc = np.zeros(2)
    keep = acc
    for _i in range(n):
        acc += 1.0
    return keep


def x_aug_alias_row(x):
    m = np.zeros((2, 2))
    r = m[0]
    r += x  # CPython: r is a view of m
    return m


def x_aug_fancy_copy(x, a):
    v = x[np.array([0, 0, 1])]  # advanced indexing copies: x is not shared
    v += a
    w = x[x > 0.5]
    w += a
    return v, w, x


def test_aug_assign_on_an_advanced_index_copy_is_allowed():
    # found by tests/unit/test_random_programs.py: x[int_array] was taken for a view
    check(x_aug_fancy_copy, np.array([0.25, 0.75, 1.0]), 2.0)


def test_aug_assign_on_a_shared_array_is_refused():
    """CPython updates the array in place (aliases and views see it); myc arrays are
    values, so reading the other name afterwards is refused rather than silently stale."""
    for fn in (x_aug_alias, x_aug_alias_row):
        for backend in ("cpu", "interp"):
            with pytest.raises(myc.MycError, match="updated in place"):
                myc.jit(fn, backend=backend)(1.0)


@pytest.mark.xfail(
    strict=True,
    reason="an alias made before a loop whose body updates the array in place is not "
    "detected (the loop's phi hides it): the old value is returned silently",
)
def test_xfail_aug_assign_alias_across_a_loop():
    check(x_aug_alias_loop, 3)


def x_log_base(x, b):
    return math.log(x, b)


@pytest.mark.parametrize("args", [(-1.0, 2.0), (2.0, 0.0), (1.0, 1.0)])
def test_math_log_base_domain(args):
    check(x_log_base, *args)


def x_max_as_value(x):
    m = max
    return m(x, 1)


def x_min_passed(x, n):
    def app(f, a, b):
        return f(a, b)

    return app(min, n, x)


@pytest.mark.parametrize("fn,args", [(x_max_as_value, (0.5,)), (x_min_passed, (2.5, 1))])
def test_minmax_as_value_kind(fn, args):
    check(fn, *args)


def x_neg_float_sqrt_pow(x):
    return x ** 0.5


@pytest.mark.xfail(
    strict=True,
    reason="(-2.0) ** 0.5 is complex in CPython; interp raises MycError, "
    "cpu silently returns nan",
)
def test_xfail_negative_base_fractional_pow_cpu():
    with pytest.raises(myc.MycError):
        myc.jit(x_neg_float_sqrt_pow)(-2.0)


def test_negative_base_fractional_pow_interp_raises():
    with pytest.raises(myc.MycError):
        myc.jit(x_neg_float_sqrt_pow, backend="interp")(-2.0)


def x_kw_through_value(x):
    def g(a, b=1.0):
        return a - b

    def call(f, v):
        return f(v, b=3)

    return call(g, x)


def test_kwargs_through_function_value():
    # (an xfail until the seventh corpus: a call through a function value now binds
    # its keywords by the function's signature when the program specializes)
    check(x_kw_through_value, 5.0)


def x_m_log2(x):
    return math.log2(x)


def x_m_log10(x):
    return math.log10(x)


def x_m_sinh(x):
    return math.sinh(x)


def x_m_trunc(x):
    return math.trunc(x)


def x_m_isnan(x):
    return math.isnan(x)


def x_m_copysign(x):
    return math.copysign(1.0, x)


def x_m_fmod(x):
    return math.fmod(x, 1.5)


def x_m_degrees(x):
    return math.degrees(x)


@pytest.mark.parametrize("fn", [x_m_log2, x_m_log10, x_m_sinh, x_m_trunc, x_m_degrees])
def test_math_functions_composed_from_primitives(fn):
    check(fn, 2.5)


@pytest.mark.xfail(
    strict=True,
    reason="math functions still rejected as unsupported: asin acos asinh acosh atanh cbrt "
    "isnan isinf isfinite copysign fmod remainder ldexp erf erfc gamma lgamma exp2 isclose "
    "nextafter",
)
@pytest.mark.parametrize("fn", [x_m_isnan, x_m_copysign, x_m_fmod])
def test_xfail_math_functions_missing(fn):
    check(fn, 2.5)


def test_negative_integer_powers_raise_for_big_arrays_too():
    # fused kernels must not compute what NumPy refuses (ints to negative powers)
    a = np.arange(1, 400)
    with pytest.raises(ValueError):
        q_np_power_neg(a)
    for backend in ("cpu", "interp"):
        with pytest.raises(myc.MycError):
            myc.jit(q_np_power_neg, backend=backend)(a)
