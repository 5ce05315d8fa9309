"""Forward rules (jvps), one per differentiable primitive, in the myc subset.

``jvp_<name>(*inputs, *tangents, out)`` returns the tangent of ``<name>``'s output.
Numeric rules receive materialized tangents (zeros in place of the symbolic ``ZERO``)
and are only called when some input tangent is non-zero.  The *structural* rules
(tuples, environments, switch, gadd...) in ``STRUCTURAL`` receive raw tangents, ZERO
included, because those primitives route values rather than compute with them.
"""

# ruff: noqa: ARG001
from __future__ import annotations

import numpy as np

from myc.prims import ZERO, P

STRUCTURAL = frozenset({
    "gadd", "env_get", "env_add", "getitem", "switch", "mask_zero", "unpack",
    "check_defined", "cast_grad", "grad_cast", "check_scalar_output", "getitem_grad",
    "unpack_grad", "array_grad", "make_tuple", "materialize", "tangent_out",
    "default_if_undef", "check_math_domain", "alias_guard", "pack",
    "iter_seq",
})


# ---------------------------------------------------------------- structural
def jvp_gadd(x, y, tx, ty, out):
    return P.gadd(tx, ty)


def jvp_env_get(env, key, tenv, tkey, out):
    return P.env_get(tenv, key)


def jvp_env_add(env, key, value, tenv, tkey, tvalue, out):
    return P.env_add(tenv, key, tvalue)


def jvp_getitem(x, index, tx, tindex, out):
    return ZERO if P.is_zero(tx) else tx[index]


def jvp_switch(cond, x, y, tcond, tx, ty, out):
    return tx if cond else ty


def jvp_mask_zero(x, d, tx, td, out):
    return P.mask_zero(x, td)


def jvp_unpack(value, n, tvalue, tn, out):
    return ZERO if P.is_zero(tvalue) else P.unpack(tvalue, n)


def jvp_check_defined(value, name, tvalue, tname, out):
    return tvalue


def jvp_cast_grad(d, x, td, tx, out):
    return P.cast_grad(td, x)


def jvp_grad_cast(d, x, td, tx, out):
    return P.grad_cast(td, x)


def jvp_check_scalar_output(y, ty, out):
    return ty


def jvp_getitem_grad(x, index, d, tx, tindex, td, out):
    return ZERO if P.is_zero(td) else P.getitem_grad(x, index, td)


def jvp_unpack_grad(value, d, tvalue, td, out):
    return ZERO if P.is_zero(td) else P.unpack_grad(value, td)


def jvp_array_grad(obj, d, tobj, td, out):
    return ZERO if P.is_zero(td) else P.array_grad(obj, td)


def jvp_materialize(t, x, tt, tx, out):
    return P.materialize(tt, x)


def jvp_tangent_out(t, y, tt, ty, out):
    return P.tangent_out(tt, y)


# ---------------------------------------------------------------- arithmetic
def jvp_add(x, y, tx, ty, out):
    return tx + ty


def jvp_sub(x, y, tx, ty, out):
    return tx - ty


def jvp_mul(x, y, tx, ty, out):
    return tx * y + x * ty


def jvp_truediv(x, y, tx, ty, out):
    return (tx - out * ty) / y


def jvp_pow(x, y, tx, ty, out):
    # as bprop_pow: x ** 0 has derivative 0 also at x = 0
    return tx * y * np.where(y == 0, 1.0, x) ** (y - 1) + ty * out * np.log(np.where(x > 0, x, 1))


def jvp_floordiv(x, y, tx, ty, out):
    return ZERO


def jvp_mod(x, y, tx, ty, out):
    return tx - ty * np.floor(x / y)


def jvp_neg(x, tx, out):
    return -tx


def jvp_pos(x, tx, out):
    return tx


def jvp_matmul(x, y, tx, ty, out):
    return P.matmul(tx, y) + P.matmul(x, ty)


def jvp_dot(x, y, tx, ty, out):
    return np.dot(tx, y) + np.dot(x, ty)


def jvp_mT(x, tx, out):
    return P.mT(tx)


# ---------------------------------------------------------------- elementwise
def jvp_exp(x, tx, out):
    return tx * out


def jvp_log(x, tx, out):
    return tx / x


def jvp_log1p(x, tx, out):
    return tx / (1.0 + x)


def jvp_expm1(x, tx, out):
    return tx * (out + 1.0)


def jvp_sqrt(x, tx, out):
    return tx / (2.0 * out)


def jvp_square(x, tx, out):
    return tx * (2.0 * x)


def jvp_abs(x, tx, out):
    return tx * np.sign(x)


def jvp_sign(x, tx, out):
    return ZERO


def jvp_floor(x, tx, out):
    return ZERO


def jvp_ceil(x, tx, out):
    return ZERO


def jvp_sin(x, tx, out):
    return tx * np.cos(x)


def jvp_cos(x, tx, out):
    return -tx * np.sin(x)


def jvp_tan(x, tx, out):
    return tx * (1.0 + out * out)


def jvp_tanh(x, tx, out):
    return tx * (1.0 - out * out)


def jvp_arctan(x, tx, out):
    return tx / (1.0 + x * x)


def jvp_arctan2(y, x, ty, tx, out):
    return (x * ty - y * tx) / (x * x + y * y)


def jvp_maximum(x, y, tx, ty, out):
    return np.where(x > y, tx, np.where(x == y, 0.5 * (tx + ty), ty))


def jvp_minimum(x, y, tx, ty, out):
    return np.where(x < y, tx, np.where(x == y, 0.5 * (tx + ty), ty))


def jvp_clip(x, lo, hi, tx, tlo, thi, out):
    return np.where(x < lo, tlo, np.where(x > hi, thi, tx))


def jvp_where(cond, x, y, tcond, tx, ty, out):
    return np.where(cond, tx, ty)


def jvp_astype(x, dtype, tx, tdtype, out):
    return P.cast_grad(tx, out)


def jvp_to_weak(y, x, ty, tx, out):
    return ty


def jvp_receiver(x, method, tx, tmethod, out):
    return tx


def jvp_np_first(a, b, ta, tb, out):
    return P.cast_grad(ta, out)


def jvp_aug_assign(x, r, tx, tr, out):
    return P.aug_assign(out, tr)


def jvp_to_float(x, tx, out):
    return P.cast_grad(tx, out)


# ---------------------------------------------------------------- reductions, shapes
def jvp_sum(x, axis, keepdims, tx, taxis, tkeepdims, out):
    return np.sum(tx, axis=axis, keepdims=keepdims)


def jvp_mean(x, axis, keepdims, tx, taxis, tkeepdims, out):
    return np.mean(tx, axis=axis, keepdims=keepdims)


def _extremum_tangent(x, axis, keepdims, tx, out):
    hit = P.cast_grad(np.where(x == P.expand_reduced(out, np.shape(x), axis, keepdims),
                               1.0, 0.0), x)
    count = np.sum(hit, axis=axis, keepdims=keepdims)
    return np.sum(hit * tx, axis=axis, keepdims=keepdims) / count


def jvp_max(x, axis, keepdims, tx, taxis, tkeepdims, out):
    if not P.is_float(x):
        return ZERO
    return _extremum_tangent(x, axis, keepdims, tx, out)


def jvp_min(x, axis, keepdims, tx, taxis, tkeepdims, out):
    if not P.is_float(x):
        return ZERO
    return _extremum_tangent(x, axis, keepdims, tx, out)


def jvp_transpose(x, axes, tx, taxes, out):
    return P.transpose(tx, axes)


def jvp_reshape(x, shape, tx, tshape, out):
    return np.reshape(tx, shape)


def jvp_broadcast_to(x, shape, tx, tshape, out):
    return P.broadcast_to(tx, shape)


def jvp_sum_to(x, shape, tx, tshape, out):
    return P.sum_to(tx, shape)


def jvp_index_add(base, index, value, tbase, tindex, tvalue, out):
    return P.index_add(tbase, index, tvalue)


def jvp_full(shape, fill_value, dtype, tshape, tfill, tdtype, out):
    return P.cast_grad(P.full(shape, tfill, dtype), out)


def jvp_array(obj, dtype, tobj, tdtype, out):
    return P.cast_grad(P.array(tobj, dtype), out)


def jvp_linspace(start, stop, num, endpoint, dtype, tstart, tstop, tnum, tendpoint, tdtype,
                 out):
    div = (num - 1 if num > 1 else 1) if endpoint else num
    w = np.reshape(np.arange(num) / div, (num,) + (1,) * (np.ndim(out) - 1))
    return P.cast_grad(tstart * (1.0 - w) + tstop * w, out)


def jvp_expand_reduced(d, shape, axis, keepdims, td, tshape, taxis, tkeepdims, out):
    return P.expand_reduced(td, shape, axis, keepdims)


def jvp_default_if_undef(value, default, tvalue, tdefault, out):
    return tdefault if P.is_undef(value) else tvalue


def jvp_check_math_domain(y, x, ty, tx, out):
    return ty


def jvp_py_max(x, y, tx, ty, out):
    return ty if y > x else tx


def jvp_py_min(x, y, tx, ty, out):
    return ty if y < x else tx


def jvp_alias_guard(value, updated, message, tvalue, tupdated, tmessage, out):
    return tvalue


def jvp_concatenate(xs, axis, txs, taxis, out):
    return P.cast_grad(P.concatenate(txs, axis), out)


def jvp_concat_grad(xs, axis, d, txs, taxis, td, out):
    return P.concat_grad(xs, axis, td)


def jvp_cumsum(x, axis, tx, taxis, out):
    return P.cast_grad(np.cumsum(tx, axis), out)


# ---------------------------------------------------------------- lists, dicts, namedtuples
def jvp_pack(meta, values, tmeta, tvalues, out):
    # the tangent keeps the container's kind: it is indexed by the same keys
    return ZERO if P.is_zero(tvalues) else P.pack(meta, tvalues)


def jvp_iter_seq(x, tx, out):
    return ZERO if P.is_zero(tx) or P.container_kind(x) == "dict" else tx
