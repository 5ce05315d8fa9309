"""Every differentiable primitive's reverse rule (bprop) and forward rule (jvp), checked
against central differences with ``tests/gradcheck.py`` over hypothesis-drawn shapes and
values (away from kinks and domain edges), plus the documented conventions at kinks.

``CASES`` maps each differentiable primitive to the wrapper functions (``prim_fns.py``)
that exercise it and a strategy drawing their arguments; a test fails when a
differentiable primitive has no case here, no bprop or no jvp rule.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import myc
from myc.prims import REGISTRY, bprops, jvps

from . import prim_fns as F

try:
    from tests.gradcheck import check_grad_elementwise, check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grad_elementwise, check_grads

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ------------------------------------------------------------------ value strategies


def _rng(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def _raw(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    if kind == "any":
        return rng.uniform(-2.0, 2.0, shape)
    if kind == "pos":  # log, sqrt, pow base
        return rng.uniform(0.3, 3.0, shape)
    if kind == "nonzero":  # abs, sign, division, arctan2
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)
    if kind == "gamma":  # positive, and negative away from the poles (integers)
        neg = -rng.integers(0, 3, shape) - rng.uniform(0.2, 0.8, shape)
        return np.where(rng.random(shape) < 0.5, rng.uniform(0.3, 4.0, shape), neg)
    if kind == "tan":
        return rng.uniform(-1.2, 1.2, shape)
    if kind == "grid_a":  # never equal to a grid_b value: no ties for maximum/minimum/clip
        return rng.integers(-6, 6, shape) * 0.5 + 0.25
    if kind == "grid_b":
        return rng.integers(-6, 6, shape) * 0.5
    if kind == "distinct":  # distinct values: no ties inside max/min reductions
        n = int(np.prod(shape)) if shape else 1
        return (rng.permutation(n) * 0.37 + rng.uniform(-1.0, 1.0)).reshape(shape)
    raise ValueError(kind)


@st.composite
def value(draw, shape: tuple[int, ...], kind: str = "any", scalar_forms: bool = True):
    """A float64 array of ``shape``; for ``()`` a Python float, NumPy scalar or 0-d array."""
    v = _raw(_rng(draw), shape, kind)
    if shape == () and scalar_forms:
        form = draw(st.sampled_from(["float", "np", "0d"]))
        if form == "float":
            return float(v)
        if form == "np":
            return np.float64(v)
    return np.asarray(v, np.float64)


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
ND_SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)
BROADCAST2 = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
BROADCAST3 = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=4)


def unary(kind: str = "any", scalar_forms: bool = True):
    return SHAPES.flatmap(lambda s: st.tuples(value(s, kind, scalar_forms)))


def binary(kind_x: str = "any", kind_y: str = "any"):
    return BROADCAST2.flatmap(lambda b: st.tuples(value(b.input_shapes[0], kind_x),
                                                  value(b.input_shapes[1], kind_y)))


@st.composite
def clip_args(draw):
    b = draw(BROADCAST3)
    x = draw(value(b.input_shapes[0], "grid_a", False))
    lo = draw(value(b.input_shapes[1], "grid_b", False))
    hi = lo + draw(value(b.input_shapes[2], "pos", False)).round() * 0.5 + 0.5
    return (x, lo, hi)


@st.composite
def where_args(draw):
    b = draw(BROADCAST3)
    cond = _rng(draw).random(b.input_shapes[0]) < 0.5
    return (cond, draw(value(b.input_shapes[1])), draw(value(b.input_shapes[2])))


@st.composite
def matmul_args(draw, dot: bool = False, scalars: bool = True):
    n, k, m, b = (draw(st.integers(1, 4)) for _ in range(4))
    pairs = [((k,), (k,)), ((n, k), (k,)), ((k,), (k, m)), ((n, k), (k, m))]
    if not dot:  # batched: np.dot and matmul differ beyond 2-D
        pairs += [((b, n, k), (b, k, m)), ((b, n, k), (k, m)), ((k,), (b, k, m)),
                  ((1, n, k), (b, k, m)), ((b, n, k), (k,))]
    else:  # np.dot: scalars, and N-D against 1-D/2-D (where it agrees with matmul)
        pairs += [((b, n, k), (k, m)), ((b, n, k), (k,)), ((k,), (b, k, m))]
        if scalars and draw(st.booleans()):
            pairs = [((), (n, k)), ((n, k), ())]
    sx, sy = draw(st.sampled_from(pairs))
    return (draw(value(sx, scalar_forms=False)), draw(value(sy, scalar_forms=False)))


@st.composite
def reduce_args(draw, kind: str = "any", tuple_axes: bool = True):
    shape = draw(ND_SHAPES)
    nd = len(shape)
    choices = [st.integers(-nd, nd - 1)]
    if tuple_axes:
        choices.append(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)
                       .map(lambda ax: tuple(a - nd if i % 2 else a for i, a in enumerate(ax))))
    axis = draw(st.one_of(*choices))
    return (draw(value(shape, kind)), axis)


@st.composite
def transpose_args(draw):
    shape = draw(ND_SHAPES)
    nd = len(shape)
    perm = draw(st.permutations(range(nd)))
    axes = tuple(a - nd if draw(st.booleans()) else a for a in perm)
    return (draw(value(shape)), axes)


@st.composite
def reshape_args(draw):
    shape = draw(ND_SHAPES)
    size = int(np.prod(shape))
    target = draw(st.sampled_from([(size,), (-1,), tuple(reversed(shape)), (1, size),
                                   (shape[0], -1), (size, 1)]))
    return (draw(value(shape)), target)


@st.composite
def broadcast_to_args(draw):
    b = draw(BROADCAST2)
    return (draw(value(b.input_shapes[0], scalar_forms=False)), b.result_shape)


@st.composite
def sum_to_args(draw):
    b = draw(BROADCAST2)
    return (draw(value(b.result_shape, scalar_forms=False)), b.input_shapes[0])


@st.composite
def vector(draw, min_size=3, kind="any"):
    n = draw(st.integers(min_size, 6))
    return draw(value((n,), kind))


@st.composite
def matrix(draw, min_rows=2, min_cols=1):
    shape = (draw(st.integers(min_rows, 4)), draw(st.integers(min_cols, 4)))
    return draw(value(shape))


@st.composite
def gather_args(draw, rows: bool = False):
    x = draw(matrix(2, 2)) if rows else draw(vector(2))
    rng = _rng(draw)
    k = draw(st.integers(2, 6))
    idx = rng.integers(-x.shape[0], x.shape[0], k)
    idx[-1] = idx[0]  # a repeated index: the adjoint must accumulate
    return (x, idx.astype(np.int64))


@st.composite
def pairs_gather_args(draw):
    x = draw(matrix(2, 2))
    rng = _rng(draw)
    k = draw(st.integers(2, 6))
    rows = rng.integers(0, x.shape[0], k)
    cols = rng.integers(0, x.shape[1], k)
    rows[-1], cols[-1] = rows[0], cols[0]
    return (x, rows.astype(np.int64), cols.astype(np.int64))


@st.composite
def mask_args(draw, with_value: bool = False):
    x = draw(vector(3))
    mask = _rng(draw).uniform(size=x.shape) < 0.5  # (empty and full masks included)
    return (x, mask, draw(value(()))) if with_value else (x, mask)


@st.composite
def labels_args(draw):
    x = draw(matrix(2, 2))
    labels = _rng(draw).integers(0, x.shape[1], x.shape[0])
    return (x, labels.astype(np.int64))


@st.composite
def index_add_args(draw):
    base = draw(vector(3))
    rng = _rng(draw)
    k = draw(st.integers(2, 5))
    idx = rng.integers(0, base.shape[0], k)
    idx[-1] = idx[0]
    return (base, idx.astype(np.int64), draw(value((k,))))


@st.composite
def index_set_args(draw):
    x = draw(matrix(3, 4))
    rng = _rng(draw)
    i, j = int(rng.integers(-3, 3)), int(rng.integers(-4, 4))  # negatives count from the end
    return (x, i, j, draw(value(())))


@st.composite
def index_set_row_args(draw):
    x = draw(matrix(3, 4))
    i = int(_rng(draw).integers(-x.shape[0], x.shape[0]))
    return (x, i, draw(value((x.shape[1],))))


@st.composite
def getitem_grad_args(draw):
    x, idx = draw(gather_args())
    return (x, idx, draw(value((len(idx),))))


@st.composite
def expand_reduced_args(draw):
    x, axis = draw(reduce_args())
    keepdims = draw(st.booleans())
    d = np.sum(x, axis=axis, keepdims=keepdims)
    return (draw(value(np.shape(d))), np.shape(x), axis, keepdims)


@st.composite
def scalars(draw, n: int = 1, kind: str = "any"):
    return tuple(draw(value((), kind)) for _ in range(n))


@st.composite
def same_shape(draw, n: int = 2, kind: str = "any"):
    shape = draw(SHAPES)
    return tuple(draw(value(shape, kind, scalar_forms=False)) for _ in range(n))


@st.composite
def square(draw, rhs: bool = False):
    """A well-conditioned square matrix (or a stack of two), and a right-hand side (a
    vector or matrices) when ``rhs``."""
    n = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,)]))
    a = _raw(_rng(draw), batch + (n, n), "any") + 3.0 * n * np.eye(n)
    if not rhs:
        return (a,)
    shape = draw(st.sampled_from([(n,), (n, 2), batch + (n, 1)]))
    return (a, draw(value(shape, scalar_forms=False)))


# ------------------------------------------------------------------ the cases


@dataclass
class Case:
    fn: Any
    args: Any  # a strategy drawing the argument tuple
    argnums: Any = None
    reference: str = "python"  # "myc" for wrappers calling AD-only primitives via P
    kw: dict = field(default_factory=dict)  # extra check_grads options


def _const(*args):
    return st.just(args)


_F32_KW = {"eps": 1e-2, "rtol": 1e-3, "atol": 1e-4, "identity_rtol": 1e-5}
ARRAY = unary(scalar_forms=False)  # .astype needs a NumPy value

CASES: dict[str, list[Case]] = {
    "add": [Case(F.add, binary())],
    "sub": [Case(F.sub, binary())],
    "mul": [Case(F.mul, binary())],
    "truediv": [Case(F.truediv, binary("any", "nonzero"))],
    "pow": [Case(F.pow_, binary("pos", "any")), Case(F.np_power, binary("pos", "any")),
            Case(F.pow_int_exponent, unary()), Case(F.pow_float_exponent, unary("pos"))],
    "floordiv": [Case(F.floordiv, binary("any", "nonzero"))],
    "mod": [Case(F.mod, binary("any", "nonzero"))],
    "neg": [Case(F.neg, unary())],
    "pos": [Case(F.pos, unary())],
    "j_lift": [Case(F.j_lift, unary())],  # (grad of grad: tests/ad/test_ad_programs.py)
    "f_lift": [Case(F.f_lift, unary())],
    "matmul": [Case(F.matmul, matmul_args()), Case(F.np_matmul, matmul_args())],
    "dot": [Case(F.dot, matmul_args(dot=True)), Case(F.dot_method, matmul_args(dot=True, scalars=False))],
    "exp": [Case(F.exp, unary())],
    "erf": [Case(F.erf, unary())],
    "gammaln": [Case(F.gammaln, unary("gamma"))],
    "digamma": [Case(F.digamma, unary("gamma"))],
    "trigamma": [Case(F.trigamma, unary("gamma"))],
    "log": [Case(F.log, unary("pos"))],
    "log1p": [Case(F.log1p, unary("pos"))],
    "expm1": [Case(F.expm1, unary())],
    "sqrt": [Case(F.sqrt, unary("pos"))],
    "square": [Case(F.square, unary())],
    "abs": [Case(F.abs_, unary("nonzero")), Case(F.builtin_abs, unary("nonzero"))],
    "sign": [Case(F.sign, unary("nonzero"))],
    "sin": [Case(F.sin, unary())],
    "cos": [Case(F.cos, unary())],
    "tan": [Case(F.tan, unary("tan"))],
    "tanh": [Case(F.tanh, unary())],
    "arctan": [Case(F.arctan, unary())],
    "floor": [Case(F.floor, unary())],
    "ceil": [Case(F.ceil, unary())],
    "arctan2": [Case(F.arctan2, binary("nonzero", "nonzero")),
                Case(F.math_atan2, scalars(2, "nonzero"))],
    "maximum": [Case(F.maximum, binary("grid_a", "grid_b")),
                Case(F.builtin_max, st.tuples(value((), "grid_a"), value((), "grid_b")))],
    "minimum": [Case(F.minimum, binary("grid_b", "grid_a")),
                Case(F.builtin_min, st.tuples(value((), "grid_b"), value((), "grid_a")))],
    "clip": [Case(F.clip, clip_args()), Case(F.clip_method, clip_args())],
    "where": [Case(F.where, where_args(), argnums=(1, 2))],
    "astype": [Case(F.astype_f32, ARRAY, kw=_F32_KW),
               Case(F.astype_f64, SHAPES.flatmap(lambda s: value(s, scalar_forms=False)).map(
                   lambda x: (x.astype(np.float32),)), kw={**_F32_KW, "convert": False}),
               Case(F.astype_roundtrip, ARRAY, kw=_F32_KW),
               Case(F.astype_int_arg, SHAPES.flatmap(lambda s: st.tuples(
                   value(s, scalar_forms=False), st.just(np.arange(int(np.prod(s))).reshape(s)
                                                         .astype(np.int64)))), argnums=0)],
    "to_float": [Case(F.to_float, scalars(1))],
    "to_weak": [Case(F.to_weak, scalars(2), argnums=0, reference="myc"),
                Case(F.builtin_abs, scalars(1, "nonzero"))],
    "sum": [Case(F.sum_all, unary()), Case(F.sum_axis, reduce_args(), argnums=0),
            Case(F.sum_axis_keep, reduce_args(), argnums=0),
            Case(F.sum_method, reduce_args(tuple_axes=False), argnums=0)],
    "mean": [Case(F.mean_all, unary()), Case(F.mean_axis, reduce_args(), argnums=0),
             Case(F.mean_axis_keep, reduce_args(), argnums=0)],
    "max": [Case(F.max_all, ND_SHAPES.flatmap(lambda s: st.tuples(value(s, "distinct")))),
            Case(F.max_axis, reduce_args("distinct"), argnums=0),
            Case(F.max_axis_keep, reduce_args("distinct"), argnums=0)],
    "min": [Case(F.min_all, ND_SHAPES.flatmap(lambda s: st.tuples(value(s, "distinct")))),
            Case(F.min_axis, reduce_args("distinct"), argnums=0),
            Case(F.min_axis_keep, reduce_args("distinct"), argnums=0)],
    "transpose": [Case(F.transpose, ND_SHAPES.flatmap(lambda s: st.tuples(value(s)))),
                  Case(F.transpose_T, ND_SHAPES.flatmap(lambda s: st.tuples(value(s)))),
                  Case(F.transpose_axes, transpose_args(), argnums=0)],
    "mT": [Case(F.mT, ND_SHAPES.flatmap(lambda s: st.tuples(value(s))), reference="myc")],
    "reshape": [Case(F.reshape, reshape_args(), argnums=0),
                Case(F.reshape_method, ND_SHAPES.flatmap(lambda s: st.tuples(value(s)))),
                Case(F.reshape_method_args, st.integers(1, 4).flatmap(
                    lambda n: st.tuples(value((2, n)))))],
    "broadcast_to": [Case(F.broadcast_to, broadcast_to_args(), argnums=0)],
    "receiver": [Case(F.method_sum, SHAPES.flatmap(lambda s: st.tuples(
        value(s, scalar_forms=False))))],
    "np_first": [Case(F.np_ops_scalars, scalars(2))],
    "aug_assign": [Case(F.aug_add, SHAPES.flatmap(lambda s: st.tuples(
                       value(s, scalar_forms=False), value(s, scalar_forms=False)))),
                   Case(F.aug_mul_scalar, SHAPES.flatmap(lambda s: st.tuples(
                       value(s, scalar_forms=False), value(()))))],
    "sum_to": [Case(F.sum_to, sum_to_args(), argnums=0, reference="myc")],
    "getitem": [
        Case(F.getitem_int, vector(2).map(lambda x: (x,))),
        Case(F.getitem_neg, vector(1).map(lambda x: (x,))),
        Case(F.getitem_dynamic, vector(3).flatmap(
            lambda x: st.tuples(st.just(x), st.integers(-len(x), len(x) - 1))), argnums=0),
        Case(F.getitem_slice, vector(3).map(lambda x: (x,))),
        Case(F.getitem_neg_slice, vector(3).map(lambda x: (x,))),
        Case(F.getitem_step, vector(2).map(lambda x: (x,))),
        Case(F.getitem_reverse, vector(1).map(lambda x: (x,))),
        Case(F.getitem_tuple2, matrix(2, 1).map(lambda x: (x,))),
        Case(F.getitem_row_slice, matrix(2, 1).map(lambda x: (x,))),
        Case(F.getitem_col, matrix(1, 1).map(lambda x: (x,))),
        Case(F.getitem_gather, gather_args(), argnums=0),
        Case(F.getitem_gather_rows, gather_args(rows=True), argnums=0),
        Case(F.getitem_pairs, pairs_gather_args(), argnums=0),
        Case(F.getitem_arange_labels, labels_args(), argnums=0),
        Case(F.getitem_tuple_arg, st.tuples(vector(2), value(()), vector(2)).map(
            lambda t: ((t[0], t[1], t[0] * 0.5 + 1.0),))),
    ],
    "index_add": [Case(F.index_add, index_add_args(), argnums=(0, 2), reference="myc")],
    "index_set": [Case(F.index_set, index_set_args(), argnums=(0, 3), reference="myc"),
                  Case(F.index_set_row, index_set_row_args(), argnums=(0, 2),
                       reference="myc")],
    "mask_assign": [Case(F.mask_assign, mask_args(with_value=True), argnums=(0, 2),
                         reference="myc")],
    "fill_unselected": [Case(F.prod_selected, mask_args(), argnums=0)],
    "reselect": [Case(F.prod_selected, mask_args(), argnums=0, kw={"order": 2})],
    "getitem_grad": [Case(F.getitem_grad, getitem_grad_args(), argnums=2, reference="myc")],
    # starts out of range included: the primitives clamp them (the program guards them)
    "dynamic_slice": [
        Case(F.dynamic_slice_rows, matrix(2, 1).flatmap(
            lambda x: st.tuples(st.just(x), st.integers(-1, len(x)))), argnums=0,
            reference="myc"),
        Case(F.dynamic_slice_cols, matrix(1, 1).flatmap(
            lambda x: st.tuples(st.just(x), st.integers(-1, x.shape[1]))), argnums=0,
            reference="myc")],
    "dynamic_slice_grad": [Case(F.dynamic_slice_grad, matrix(2, 1).flatmap(
        lambda d: st.tuples(st.just(d), st.integers(-1, 6))), argnums=0, reference="myc")],
    "full": [Case(F.full, scalars(1))],
    "linspace": [Case(F.linspace, scalars(2)), Case(F.linspace_open, scalars(2)),
                 Case(F.linspace_arrays, binary())],
    "array": [Case(F.array_flat, scalars(2)), Case(F.array_nested, scalars(2))],
    "as_operand": [Case(F.operand_list, scalars(2)), Case(F.operand_array, binary())],
    "array_grad": [Case(F.array_grad, st.tuples(scalars(2), value((2,), scalar_forms=False)),
                        argnums=1, reference="myc")],
    "make_tuple": [Case(F.make_tuple, binary())],
    "concatenate": [Case(F.concatenate_rows, ND_SHAPES.flatmap(
                        lambda s: st.tuples(value(s), value(s)))),
                    Case(F.concatenate_last, ND_SHAPES.flatmap(
                        lambda s: st.tuples(value(s), value(s[:-1] + (2,))))),
                    Case(F.concatenate_flat, st.tuples(value((2, 3)), value(())))],
    "concat_grad": [Case(F.concat_grad, st.tuples(matrix(2, 1), matrix(2, 1)).flatmap(
        lambda t: st.tuples(st.just(t[0]), st.just(t[0][:, :1].copy()),
                            value((t[0].shape[0], t[0].shape[1] + 1)))),
                         argnums=2, reference="myc")],
    "cumsum": [Case(F.cumsum_flat, unary()), Case(F.cumsum_last, ND_SHAPES.flatmap(
        lambda s: st.tuples(value(s))))],
    "cholesky": [Case(F.cholesky_spd, square())],
    "linsolve": [Case(F.linsolve, square(rhs=True))],
    "solve_triangular": [Case(F.solve_triangular_lower, square(rhs=True).filter(
                             lambda t: np.ndim(t[1]) >= 2)),
                         Case(F.solve_triangular_upper_t, square(rhs=True).filter(
                             lambda t: np.ndim(t[1]) >= 2))],
    "inv": [Case(F.inv, square())],
    "det": [Case(F.det, square())],
    "logabsdet": [Case(F.logabsdet, square())],
    "eigh_values": [Case(F.eigh_values_sep, square())],
    "eigh_vectors": [Case(F.eigh_vectors_sep, square())],
    "svd_s": [Case(F.svd_s_sep, square())],
    "svd_u": [Case(F.svd_u_sep, square())],
    "svd_vt": [Case(F.svd_vt_sep, square())],
    "after": [Case(F.after_value, unary())],
    "checked": [Case(F.checked_value, ND_SHAPES.flatmap(
        lambda s: st.tuples(value(s))))],
    "switch": [Case(F.switch, st.tuples(st.booleans(), value((3,)), value((3,))),
                    argnums=(1, 2), reference="myc"),
               Case(F.if_expr, st.tuples(st.booleans(), value(()), value(())), argnums=(1, 2))],
    "check_defined": [Case(F.check_defined, st.tuples(value((2,)), st.just(True)), argnums=0)],
    "default_if_undef": [Case(F.default_through_value, st.tuples(value((2,)), value((2,))),
                              argnums=(0, 1))],
    "alias_guard": [Case(F.alias_guarded_scalar, st.tuples(st.floats(-2.0, 2.0)))],
    "list_guard": [Case(F.list_guarded, st.tuples(value((3,))))],
    "unchanged_by": [Case(F.read_after_a_call_through_a_value, st.tuples(value((3,))))],
    "py_max": [Case(F.py_max_value, st.tuples(st.floats(-3.0, -0.1), st.floats(0.1, 3.0)),
                    argnums=(0, 1))],
    "py_min": [Case(F.py_min_value, st.tuples(st.floats(-3.0, -0.1), st.floats(0.1, 3.0)),
                    argnums=(0, 1))],
    "check_math_domain": [Case(F.math_domain_checked,
                               st.tuples(st.floats(0.5, 3.0)), argnums=0)],
    "unpack": [Case(F.unpack_rows, st.integers(1, 4).flatmap(lambda n: st.tuples(value((2, n))))),
               Case(F.unpack_tuple, st.tuples(st.tuples(value((3,)), value(()))))],
    "gadd": [Case(F.gadd, same_shape(2), reference="myc"),
             Case(F.gadd_tuple, same_shape(2), reference="myc")],
    "mask_zero": [Case(F.mask_zero, same_shape(2), reference="myc")],
    "env_get": [Case(F.env_roundtrip, unary(), reference="myc")],
    "env_add": [Case(F.env_accumulate, same_shape(2), reference="myc")],
    "cast_grad": [Case(F.cast_grad, same_shape(2), argnums=0, reference="myc")],
    "grad_cast": [Case(F.grad_cast, same_shape(2), argnums=0, reference="myc")],
    "check_scalar_output": [Case(F.check_scalar_output, scalars(1), reference="myc")],
    "check_aux_output": [Case(F.check_aux_output, scalars(1), reference="myc")],
    "expand_reduced": [Case(F.expand_reduced, expand_reduced_args(), argnums=0,
                            reference="myc")],
    "unpack_grad": [Case(F.unpack_grad, st.integers(1, 4).flatmap(
        lambda n: st.tuples(value((2, n)), st.tuples(value((n,)), value((n,))))),
        argnums=1, reference="myc")],
    "materialize": [Case(F.materialize, same_shape(2), argnums=0, reference="myc")],
    "tangent_out": [Case(F.tangent_out, same_shape(2), argnums=0, reference="myc")],
    "pack": [Case(F.pack_list, same_shape(2)), Case(F.pack_dict, same_shape(2))],
    "iter_seq": [Case(F.iter_rows, st.tuples(value((3, 2)), value((2,))))],
}

# Primitives whose rules J and F apply themselves (variadic: one sensitivity per input).
STRUCTURAL_ONLY = {"make_tuple"}

PARAMS = [pytest.param(name, i, id=f"{name}-{case.fn.__name__}")
          for name, cases in CASES.items() for i, case in enumerate(cases)]


def _differentiable() -> list[str]:
    return sorted(n for n, p in REGISTRY.items() if p.differentiable)


# ------------------------------------------------------------------ completeness


def test_every_differentiable_primitive_has_a_bprop_rule():
    missing = [n for n in _differentiable()
               if n not in STRUCTURAL_ONLY and not inspect.isfunction(
                   getattr(bprops, f"bprop_{n}", None))]
    assert not missing, f"differentiable primitives without bprop_<name> in bprops.py: {missing}"


def test_every_differentiable_primitive_has_a_jvp_rule():
    missing = [n for n in _differentiable()
               if n not in STRUCTURAL_ONLY and not inspect.isfunction(
                   getattr(jvps, f"jvp_{n}", None))]
    assert not missing, f"differentiable primitives without jvp_<name> in jvps.py: {missing}"


def test_every_rule_names_a_differentiable_primitive():
    for module, prefix in ((bprops, "bprop_"), (jvps, "jvp_")):
        stray = [n for n in dir(module) if n.startswith(prefix)
                 and (n[len(prefix):] not in REGISTRY
                      or not REGISTRY[n[len(prefix):]].differentiable)]
        assert not stray, f"{module.__name__}: rules for unknown/non-differentiable prims {stray}"


def test_every_differentiable_primitive_is_checked_here():
    missing = [n for n in _differentiable() if n not in CASES]
    assert not missing, f"add a rule check in tests/ad/test_prim_rules.py for: {missing}"


# ------------------------------------------------------------------ rule checks


@pytest.mark.parametrize("name, index", PARAMS)
@SETTINGS
@given(data=st.data())
def test_rule(name, index, data):
    case = CASES[name][index]
    args = data.draw(case.args, label="args")
    check_grads(case.fn, args, argnums=case.argnums, reference=case.reference, **case.kw)


# Second order on one fixed point per elementwise/binary primitive: differentiates the
# rules themselves (bprop of bprop, jvp of bprop).
_X = np.array([0.7, -1.3, 0.4])
_P = np.array([0.6, 1.7, 2.2])
_Y = np.array([[1.1], [-0.37]])
SECOND_ORDER = [
    (F.add, (_X, _Y)), (F.sub, (_X, _Y)), (F.mul, (_X, _Y)), (F.truediv, (_X, _Y)),
    (F.pow_, (_P, _Y)), (F.pow_int_exponent, (_X,)), (F.mod, (_X, _Y)),
    (F.matmul, (np.ones((2, 3)) + _X, _X[:, None] * _Y.T)), (F.dot, (_X, _P)),
    (F.exp, (_X,)), (F.erf, (_X,)), (F.gammaln, (_X,)), (F.digamma, (_X,)),
    (F.trigamma, (_X,)), (F.log, (_P,)), (F.log1p, (_P,)), (F.expm1, (_X,)), (F.sqrt, (_P,)),
    (F.square, (_X,)), (F.abs_, (_X,)), (F.sin, (_X,)), (F.cos, (_X,)), (F.tan, (_X,)),
    (F.tanh, (_X,)), (F.arctan, (_X,)), (F.arctan2, (_X, _Y)), (F.maximum, (_X, _Y + 0.01)),
    (F.minimum, (_X, _Y + 0.01)), (F.clip, (_X * 2.0, -1.0, 1.0)),
    (F.where, (_X > 0, _X, _Y)), (F.sum_axis, (_X * _Y, 0)), (F.mean_axis_keep, (_X * _Y, 1)),
    (F.max_axis, (_X * _Y, 1)), (F.min_all, (_X * _Y,)), (F.transpose_axes, (_X * _Y, (1, 0))),
    (F.reshape, (_X * _Y, (3, 2))), (F.broadcast_to, (_X, (2, 3))),
    (F.getitem_gather, (_X, np.array([0, 2, 0]))), (F.getitem_col, (_X * _Y,)),
    (F.linspace, (0.3, 1.9)), (F.array_nested, (0.3, 1.9)), (F.full, (0.7,)),
    (F.astype_roundtrip, (_X,)), (F.to_float, (0.8,)), (F.unpack_rows, (_X * _Y,)),
]


@pytest.mark.parametrize("fn, args", [pytest.param(f, a, id=f.__name__) for f, a in SECOND_ORDER])
def test_rule_second_order(fn, args):
    argnums = tuple(i for i, a in enumerate(args)
                    if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
    kw = _F32_KW if fn is F.astype_roundtrip else {}
    check_grads(fn, args, argnums=argnums, order=2, **kw)


@pytest.mark.parametrize("shape_x, shape_y", [((3, 1), (4,)), ((), (2, 3)), ((2, 1, 3), (4, 1)),
                                              ((1,), (3, 2)), ((3, 4), (3, 1))])
@pytest.mark.parametrize("fn", [F.add, F.sub, F.mul, F.truediv, F.arctan2, F.maximum])
def test_broadcasting_pairs_elementwise(fn, shape_x, shape_y):
    rng = np.random.default_rng(0)
    x = rng.integers(1, 5, shape_x) * 0.5 + 0.25
    y = rng.integers(1, 5, shape_y) * 0.5
    check_grad_elementwise(fn, (x, y))


# ------------------------------------------------------------------ conventions at kinks


def test_max_reduction_ties_split_evenly():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_array_equal(myc.grad(F.max_all)(x), [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(myc.grad(F.min_all)(-x), [0.0, 0.5, 0.5, 0.0])
    m = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    w = np.array([1.0, 2.0])
    _, pullback = myc.vjp(F.max_axis1, m)
    np.testing.assert_allclose(pullback(w)[0], [[0, 0.5, 0.5], [2 / 3, 2 / 3, 2 / 3]])
    _, t = myc.jvp(F.max_all, (x,), (np.array([1.0, 10.0, 20.0, 5.0]),))
    assert t == pytest.approx(15.0)


def test_maximum_minimum_ties_split_evenly():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 0.0, 3.0])
    for fn, expect_x, expect_y in [(F.maximum, [0.5, 1.0, 0.5], [0.5, 0.0, 0.5]),
                                   (F.minimum, [0.5, 0.0, 0.5], [0.5, 1.0, 0.5])]:
        _, pullback = myc.vjp(fn, x, y)
        dx, dy = pullback(np.ones(3))
        np.testing.assert_array_equal(dx, expect_x)
        np.testing.assert_array_equal(dy, expect_y)
        _, t = myc.jvp(fn, (x, y), (np.ones(3), np.zeros(3)))
        np.testing.assert_array_equal(t, expect_x)


def test_abs_sign_floor_ceil_derivatives_at_kinks():
    z = np.array([0.0, 1.0, -2.0])
    _, pb = myc.vjp(F.abs_, z)
    np.testing.assert_array_equal(pb(np.ones(3))[0], [0.0, 1.0, -1.0])
    for fn in (F.sign, F.floor, F.ceil):
        _, pb = myc.vjp(fn, z)
        assert np.all(np.isfinite(pb(np.ones(3))[0]))
    _, pb = myc.vjp(lambda x: np.floor(x) + np.ceil(x) + np.sign(x), z)
    np.testing.assert_array_equal(pb(np.ones(3))[0], [0.0, 0.0, 0.0])


def test_dot_nd_second_operand_differentiates_as_numpy_contracts():
    """np.dot with a 3-D operand contracts differently from matmul (a's last axis with
    b's second-to-last): it is a tensordot, and its gradient is that of NumPy's sum."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3, 2))
    ga, gb = myc.grad(lambda u, v: np.sum(F.dot(u, v)), argnums=(0, 1))(a, b)
    # d/da sum_ijk a[i,l] b[j,l,k] = sum_jk b[j,l,k]; d/db = sum_i a[i,l]
    np.testing.assert_allclose(ga, np.broadcast_to(b.sum(axis=(0, 2)), a.shape), rtol=1e-12)
    np.testing.assert_allclose(gb, np.broadcast_to(a.sum(axis=0)[None, :, None], b.shape),
                               rtol=1e-12)


def test_pow_derivatives_at_zero_base():
    z = np.array([0.0, 1.5])
    expected = [1.0, 1.0 + 3.0]  # d/dx (3 x^0 + x + x^2) = 1 + 2x, also at x = 0
    np.testing.assert_array_equal(myc.grad(F.pow_zero_exponent)(z), expected)
    _, t = myc.jvp(F.pow_zero_exponent, (z,), (np.array([1.0, 0.0]),))
    assert t == 1.0
    np.testing.assert_array_equal(myc.grad(lambda v: np.sum(myc.grad(F.pow_zero_exponent)(v)))(z),
                                  [2.0, 2.0])
