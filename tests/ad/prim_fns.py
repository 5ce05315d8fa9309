"""Small subset functions, one or more per differentiable primitive, for the rule checks.

myc reads source, so the wrappers live in a file.  Each calls its primitive the way user
code does (operators, NumPy functions, methods) or, for the primitives only AD emits,
through ``P.<name>``.
"""

# ruff: noqa: E741
import math

import numpy as np

from myc.ad.forward import F_LIFT
from myc.ad.reverse import J_LIFT
from myc.prims import ZERO, P

# ---------------------------------------------------------------- arithmetic


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def truediv(x, y):
    return x / y


def pow_(x, y):
    return x**y


def np_power(x, y):
    return np.power(x, y)


def pow_int_exponent(x):
    return x**3


def pow_float_exponent(x):
    return x**2.5


def floordiv(x, y):
    return x // y + x * 0.5


def mod(x, y):
    return x % y


def neg(x):
    return -x


def pos(x):
    return +x


def matmul(x, y):
    return x @ y


def np_matmul(x, y):
    return np.matmul(x, y)


def dot(x, y):
    return np.dot(x, y)


def dot_method(x, y):
    return x.dot(y)


# ---------------------------------------------------------------- elementwise


def exp(x):
    return np.exp(x)


def log(x):
    return np.log(x)


def erf(x):
    return P.erf(x)


def gammaln(x):
    return P.gammaln(x)


def digamma(x):
    return P.digamma(x)


def trigamma(x):
    return P.trigamma(x)


def log1p(x):
    return np.log1p(x)


def expm1(x):
    return np.expm1(x)


def sqrt(x):
    return np.sqrt(x)


def square(x):
    return np.square(x)


def abs_(x):
    return np.abs(x)


def builtin_abs(x):
    return abs(x)


def sign(x):
    return np.sign(x) * x


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def tan(x):
    return np.tan(x)


def tanh(x):
    return np.tanh(x)


def arctan(x):
    return np.arctan(x)


def floor(x):
    return np.floor(x) + x * x


def ceil(x):
    return np.ceil(x) * x


def arctan2(y, x):
    return np.arctan2(y, x)


def math_atan2(y, x):
    return math.atan2(y, x)


def maximum(x, y):
    return np.maximum(x, y)


def minimum(x, y):
    return np.minimum(x, y)


def builtin_max(x, y):
    return max(x, y)


def builtin_min(x, y):
    return min(x, y)


def clip(x, lo, hi):
    return np.clip(x, lo, hi)


def clip_method(x, lo, hi):
    return x.clip(lo, hi)


def where(c, x, y):
    return np.where(c, x, y)


# ---------------------------------------------------------------- casts


def astype_f32(x):
    return x.astype(np.float32) * 3.0


def astype_f64(x):
    return x.astype(np.float64) * 3.0


def astype_roundtrip(x):
    return x.astype(np.float32).astype(np.float64)


def astype_int_arg(x, n):
    return x * n.astype(np.float64)


def to_float(x):
    return float(x) * 2.0


# ---------------------------------------------------------------- reductions


def sum_all(x):
    return np.sum(x)


def sum_axis(x, axis):
    return np.sum(x, axis=axis)


def sum_axis_keep(x, axis):
    return np.sum(x, axis=axis, keepdims=True)


def sum_method(x, axis):
    return x.sum(axis)


def mean_all(x):
    return np.mean(x)


def mean_axis(x, axis):
    return np.mean(x, axis=axis)


def mean_axis_keep(x, axis):
    return x.mean(axis=axis, keepdims=True)


def max_all(x):
    return np.max(x)


def max_axis(x, axis):
    return np.max(x, axis=axis)


def max_axis_keep(x, axis):
    return x.max(axis=axis, keepdims=True)


def min_all(x):
    return x.min()


def min_axis(x, axis):
    return np.min(x, axis=axis)


def min_axis_keep(x, axis):
    return np.min(x, axis=axis, keepdims=True)


# ---------------------------------------------------------------- shapes


def transpose(x):
    return np.transpose(x)


def transpose_T(x):
    return x.T


def transpose_axes(x, axes):
    return np.transpose(x, axes)


def reshape(x, shape):
    return np.reshape(x, shape)


def reshape_method(x):
    return x.reshape(-1)


def reshape_method_args(x):
    return x.reshape(2, -1)


def broadcast_to(x, shape):
    return np.broadcast_to(x, shape)


def sum_to(x, shape):
    return P.sum_to(x, shape)


def mT(x):
    return P.mT(x)


# ---------------------------------------------------------------- indexing


def getitem_int(x):
    return x[1]


def getitem_neg(x):
    return x[-1]


def getitem_dynamic(x, i):
    return x[i]


def getitem_slice(x):
    return x[1:3]


def getitem_neg_slice(x):
    return x[-3:-1]


def getitem_step(x):
    return x[::2]


def getitem_reverse(x):
    return x[::-1]


def getitem_tuple2(x):
    return x[1, -1]


def getitem_row_slice(x):
    return x[1:, 0]


def getitem_col(x):
    return x[:, -1]


def getitem_gather(x, idx):
    return x[idx]


def getitem_gather_rows(x, idx):
    return x[idx] * 2.0


def getitem_pairs(x, rows, cols):
    return x[rows, cols]


def getitem_arange_labels(x, labels):
    return x[np.arange(x.shape[0]), labels]


def getitem_tuple_arg(t):
    return t[0] * t[2]


def index_add(base, idx, value):
    return P.index_add(base, idx, value)


def index_set(x, i, j, v):
    return P.index_set(x, (i, j), v)  # one element, at ints given at run time


def index_set_row(x, i, v):
    return P.index_set(x, i, v)  # a row at an int given at run time (a stacked append)


def mask_assign(x, mask, v):
    return P.mask_assign(x, mask, v)


def prod_selected(x, mask):  # fill_unselected and reselect (myc.infer.masked)
    return np.prod(x[mask] + 1.0)


def getitem_grad(x, idx, d):
    return P.getitem_grad(x, idx, d)


def dynamic_slice_rows(x, start):
    return P.dynamic_slice(x, start, 0, 2)


def dynamic_slice_cols(x, start):
    return P.dynamic_slice(x, start, 1, 1)


def dynamic_slice_grad(d, start):
    return P.dynamic_slice_grad(d, start, 0, 6)


# ---------------------------------------------------------------- creation


def full(v):
    return np.full((2, 3), v) * np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def linspace(a, b):
    return np.linspace(a, b, 5) * np.array([1.0, -2.0, 3.0, 0.5, 2.0])


def linspace_open(a, b):
    return np.linspace(a, b, 4, endpoint=False) ** 2


def array_flat(x, y):
    return np.array([x, y, x * y])


def array_nested(x, y):
    return np.array([[x, y], [y * y, 1.0]])


def operand_list(x, y):
    # np.mean of a list: its operand made an array (as_operand), the pieces' gradients
    return np.mean([x, y * y, x * y]) + np.max([x, y])


def operand_array(x, y):
    return np.exp(x) * np.sum(y)  # arrays passed through as_operand unchanged


# ---------------------------------------------------------------- structure and control


def make_tuple(x, y):
    return (x * y, x + y)


def switch(c, x, y):
    return P.switch(c, x, y) * 2.0


def if_expr(c, x, y):
    return x * 3.0 if c else y * y


def check_defined(x, c):
    if c:
        y = x * 2.0
    return y


def unpack_rows(x):
    a, b = x
    return a * b


def unpack_tuple(t):
    a, b = t
    return a * b


# ---------------------------------------------------------------- AD helper primitives


def gadd(x, y):
    return P.gadd(x, y)


def gadd_tuple(x, y):
    return P.gadd((x, y), (y, x))[0]


def mask_zero(x, d):
    return P.mask_zero(x, d)


def env_roundtrip(x):
    return P.env_get(P.env_add(ZERO, 3, x), 3)


def env_accumulate(x, y):
    return P.env_get(P.env_add(P.env_add(ZERO, 3, x), 3, y), 3) * P.env_get(
        P.env_add(ZERO, 5, y), 5)


def cast_grad(d, x):
    return P.cast_grad(d, x)


def grad_cast(d, x):
    return P.grad_cast(d, x)


def check_scalar_output(y):
    return P.check_scalar_output(y)


def check_aux_output(y):
    loss, aux = P.check_aux_output((y * 2.0, y * y))
    return loss * aux


def expand_reduced(d, shape, axis, keepdims):
    return P.expand_reduced(d, shape, axis, keepdims)


def unpack_grad(value, d):
    return P.unpack_grad(value, d)


def array_grad(obj, d):
    return P.array_grad(obj, d)


def materialize(t, x):
    return P.materialize(t, x)


def tangent_out(t, y):
    return P.tangent_out(t, y)


def to_weak(y, x):
    return P.to_weak(y, x) * 2.0


def max_axis1(x):
    return np.max(x, axis=1)


def pow_zero_exponent(x):
    return np.sum(x**0 * 3.0 + x**1 + x**2)


def linspace_arrays(a, b):
    return np.linspace(a, b, 4) * 1.5


def default_through_value(x, y):
    g = lambda t, k=y * 2.0: t * k  # a default computed when the lambda is created
    return _call_one(g, x) + g(x, y)


def _call_one(fn, v):
    return fn(v)


def math_domain_checked(x):
    return math.sqrt(x) + math.log(x) + math.exp(0.1 * x)


def py_max_value(x, y):
    m = max
    return m(x, y) * 2.0 + min(x, y)


def py_min_value(x, y):
    m = min
    return m(x, y) * 3.0


def list_guarded(x):
    v = x * 2.0
    table = {"k": [v]}
    table["k"].append(x)  # the table's lists appended to: v (an array) still readable
    return v * table["k"][1]


def alias_guarded_scalar(x):
    a = x * 2.0
    b = a
    a += 1.0  # a float: rebinding; b keeps the old value, as in CPython
    return a * b


def aug_add(x, y):
    x = x * 1.0
    x += y  # an in-place update: x keeps its dtype and shape
    return x * x


def aug_mul_scalar(x, s):
    x = x * 1.0
    x *= s
    return x


def np_ops_scalars(a, b):
    return np.multiply(a, b) + np.power(a, 2.0) - np.divide(b, 3.0)


def method_sum(x):
    return (x * x).sum() + x.mean()


def concatenate_rows(x, y):
    return np.concatenate((x, y * x, y), axis=0)


def concatenate_last(x, y):
    return np.concatenate([x, np.exp(y)], axis=-1)


def concatenate_flat(x, y):
    return np.concatenate((x, y), axis=None)


def concat_grad(x, y, d):
    return P.concat_grad((x, y), 1, d)


def cumsum_flat(x):
    return np.cumsum(x)


def cumsum_last(x):
    return np.cumsum(x * x, axis=-1)


def cholesky_spd(a):
    n = a.shape[-1]
    return np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


def linsolve(a, b):
    return np.linalg.solve(a, b)


def solve_triangular_lower(a, b):
    return P.solve_triangular(a, b, True, 0)


def solve_triangular_upper_t(a, b):
    return P.solve_triangular(a, b, False, 1)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def logabsdet(a):
    return np.linalg.slogdet(a)[1]


def _separated(a, scale):
    """``a`` made symmetric-positive (eigh) or kept square (svd) around a diagonal of
    well-separated values: derivatives of eigen- and singular vectors need gaps."""
    n = a.shape[-1]
    return np.eye(n) * np.arange(1.0, 1.0 + 3.0 * n, 3.0) + scale * a


def eigh_values_sep(a):
    return np.linalg.eigvalsh(_separated(0.01 * (a @ np.swapaxes(a, -1, -2)), 1.0))


def eigh_vectors_sep(a):
    return np.linalg.eigh(_separated(0.01 * (a @ np.swapaxes(a, -1, -2)), 1.0))[1] ** 2


def svd_s_sep(a):
    return np.linalg.svd(_separated(a, 0.05), compute_uv=False)


def svd_u_sep(a):
    return np.linalg.svd(_separated(a, 0.05))[0] ** 2


def svd_vt_sep(a):
    return np.linalg.svd(_separated(a, 0.05))[2] ** 2


def after_value(x):
    return P.after(0, x * x)


def checked_value(x):
    return P.checked((x[0], x * 2.0), x * x)


# ---------------------------------------------------------------- pack (lists, dicts)
def pack_list(x, y):
    xs = [x, y * 2.0]
    xs.append(x * y)
    return xs[0] * xs[2] + xs[-2]


def pack_dict(x, y):
    d = {"a": x, "b": np.sin(y)}
    d["c"] = d["a"] * d["b"]
    return [d["c"], d["a"] + 1.0]


def iter_rows(x, y):
    acc = 0.0
    for row in x:
        acc = acc + np.sum(row * y)
    for v in (x, y):
        acc = acc + np.sum(v)
    return acc


# ---------------------------------------------------------------- j_lift, f_lift
def j_lift(x):  # a parameter of grad(f) passes through j_lift: its gradient, grad of grad
    return J_LIFT(np.sin(x) * x, None, None) * 2.0


def f_lift(x):
    return F_LIFT(np.sin(x) * x) * 2.0


def _tripled(a):
    return a * 3.0


def _called_with(f, x):
    y = x * 1.0
    f(y)  # through a value: y is read afterwards through ``unchanged_by``
    return y * f(y)


def read_after_a_call_through_a_value(x):
    return _called_with(_tripled, x)
