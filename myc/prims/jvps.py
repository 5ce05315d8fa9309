"""Forward rules (jvps), one per differentiable primitive, in the myc subset.

``jvp_<name>(*inputs, *tangents, out)`` returns the tangent of ``<name>``'s output.
Numeric rules receive materialized tangents (zeros in place of the symbolic ``ZERO``)
and are only called when some input tangent is non-zero.  The *structural* rules
(tuples, environments, switch, gadd...) in ``STRUCTURAL`` receive raw tangents, ZERO
included, because those primitives route values rather than compute with them
(``@forward_rule(P.<name>, structural=True)``).  ``@forward_rule`` attaches a rule to
its primitive (``P.<name>.jvp``), where ``myc.ad`` finds it.
"""

# ruff: noqa: ARG001
from __future__ import annotations

import numpy as np

from myc.prims.namespace import P
from myc.prims.registry import REGISTRY, forward_rule
from myc.prims.values import ZERO


# ---------------------------------------------------------------- structural
@forward_rule(P.gadd, structural=True)
def jvp_gadd(x, y, tx, ty, out):
    return P.gadd(tx, ty)


@forward_rule(P.env_get, structural=True)
def jvp_env_get(env, key, tenv, tkey, out):
    return P.env_get(tenv, key)


@forward_rule(P.env_add, structural=True)
def jvp_env_add(env, key, value, tenv, tkey, tvalue, out):
    return P.env_add(tenv, key, tvalue)


@forward_rule(P.getitem, structural=True)
def jvp_getitem(x, index, tx, tindex, out):
    return ZERO if P.is_zero(tx) else tx[index]


@forward_rule(P.switch, structural=True)
def jvp_switch(cond, x, y, tcond, tx, ty, out):
    return tx if cond else ty


@forward_rule(P.mask_zero, structural=True)
def jvp_mask_zero(x, d, tx, td, out):
    return P.mask_zero(x, td)


@forward_rule(P.unpack, structural=True)
def jvp_unpack(value, n, tvalue, tn, out):
    return ZERO if P.is_zero(tvalue) else P.unpack(tvalue, n)


@forward_rule(P.check_defined, structural=True)
def jvp_check_defined(value, name, tvalue, tname, out):
    return tvalue


@forward_rule(P.cast_grad, structural=True)
def jvp_cast_grad(d, x, td, tx, out):
    return P.cast_grad(td, x)


@forward_rule(P.grad_cast, structural=True)
def jvp_grad_cast(d, x, td, tx, out):
    return P.grad_cast(td, x)


@forward_rule(P.check_scalar_output, structural=True)
def jvp_check_scalar_output(y, ty, out):
    return ty


@forward_rule(P.check_aux_output, structural=True)
def jvp_check_aux_output(pair, tpair, out):
    return tpair


@forward_rule(P.getitem_grad, structural=True)
def jvp_getitem_grad(x, index, d, tx, tindex, td, out):
    return ZERO if P.is_zero(td) else P.getitem_grad(x, index, td)


@forward_rule(P.unpack_grad, structural=True)
def jvp_unpack_grad(value, d, tvalue, td, out):
    return ZERO if P.is_zero(td) else P.unpack_grad(value, td)


@forward_rule(P.array_grad, structural=True)
def jvp_array_grad(obj, d, tobj, td, out):
    return ZERO if P.is_zero(td) else P.array_grad(obj, td)


@forward_rule(P.materialize, structural=True)
def jvp_materialize(t, x, tt, tx, out):
    return P.materialize(tt, x)


@forward_rule(P.tangent_out, structural=True)
def jvp_tangent_out(t, y, tt, ty, out):
    return P.tangent_out(tt, y)


# ---------------------------------------------------------------- arithmetic
@forward_rule(P.add)
def jvp_add(x, y, tx, ty, out):
    return tx + ty


@forward_rule(P.sub)
def jvp_sub(x, y, tx, ty, out):
    return tx - ty


@forward_rule(P.mul)
def jvp_mul(x, y, tx, ty, out):
    if P.is_tuple(x):  # sequence repetition: the tangents repeated
        return tx * y
    if P.is_tuple(y):
        return x * ty
    return tx * y + x * ty


@forward_rule(P.truediv)
def jvp_truediv(x, y, tx, ty, out):
    return (tx - out * ty) / y


@forward_rule(P.pow)
def jvp_pow(x, y, tx, ty, out):
    # as bprop_pow: x ** 0 has derivative 0 also at x = 0
    return tx * y * np.where(y == 0, 1.0, x) ** (y - 1) + ty * out * np.log(np.where(x > 0, x, 1))


@forward_rule(P.floordiv)
def jvp_floordiv(x, y, tx, ty, out):
    return ZERO


@forward_rule(P.mod)
def jvp_mod(x, y, tx, ty, out):
    return tx - ty * np.floor(x / y)


@forward_rule(P.neg)
def jvp_neg(x, tx, out):
    return -tx


@forward_rule(P.pos)
def jvp_pos(x, tx, out):
    return tx


@forward_rule(P.matmul)
def jvp_matmul(x, y, tx, ty, out):
    return P.matmul(tx, y) + P.matmul(x, ty)


@forward_rule(P.dot)
def jvp_dot(x, y, tx, ty, out):
    return P.dot(tx, y) + P.dot(x, ty)


@forward_rule(P.mT)
def jvp_mT(x, tx, out):
    return P.mT(tx)


# ---------------------------------------------------------------- elementwise
@forward_rule(P.exp)
def jvp_exp(x, tx, out):
    return tx * out


@forward_rule(P.log)
def jvp_log(x, tx, out):
    return tx / x


@forward_rule(P.log1p)
def jvp_log1p(x, tx, out):
    return tx / (1.0 + x)


@forward_rule(P.expm1)
def jvp_expm1(x, tx, out):
    return tx * (out + 1.0)


@forward_rule(P.sqrt)
def jvp_sqrt(x, tx, out):
    return tx / (2.0 * out)


@forward_rule(P.square)
def jvp_square(x, tx, out):
    return tx * (2.0 * x)


@forward_rule(P.abs)
def jvp_abs(x, tx, out):
    return tx * np.sign(x)


@forward_rule(P.sign)
def jvp_sign(x, tx, out):
    return ZERO


@forward_rule(P.floor)
def jvp_floor(x, tx, out):
    return ZERO


@forward_rule(P.ceil)
def jvp_ceil(x, tx, out):
    return ZERO


@forward_rule(P.sin)
def jvp_sin(x, tx, out):
    return tx * np.cos(x)


@forward_rule(P.cos)
def jvp_cos(x, tx, out):
    return -tx * np.sin(x)


@forward_rule(P.tan)
def jvp_tan(x, tx, out):
    return tx * (1.0 + out * out)


@forward_rule(P.tanh)
def jvp_tanh(x, tx, out):
    return tx * (1.0 - out * out)


@forward_rule(P.arctan)
def jvp_arctan(x, tx, out):
    return tx / (1.0 + x * x)


@forward_rule(P.arctan2)
def jvp_arctan2(y, x, ty, tx, out):
    return (x * ty - y * tx) / (x * x + y * y)


@forward_rule(P.maximum)
def jvp_maximum(x, y, tx, ty, out):
    return np.where(x > y, tx, np.where(x == y, 0.5 * (tx + ty), ty))


@forward_rule(P.minimum)
def jvp_minimum(x, y, tx, ty, out):
    return np.where(x < y, tx, np.where(x == y, 0.5 * (tx + ty), ty))


@forward_rule(P.clip)
def jvp_clip(x, lo, hi, tx, tlo, thi, out):
    return np.where(x < lo, tlo, np.where(x > hi, thi, tx))


@forward_rule(P.where)
def jvp_where(cond, x, y, tcond, tx, ty, out):
    return np.where(cond, tx, ty)


@forward_rule(P.astype)
def jvp_astype(x, dtype, tx, tdtype, out):
    return P.cast_grad(tx, out)


@forward_rule(P.to_weak)
def jvp_to_weak(y, x, ty, tx, out):
    return ty


@forward_rule(P.receiver)
def jvp_receiver(x, method, tx, tmethod, out):
    return tx


@forward_rule(P.np_first)
def jvp_np_first(a, b, ta, tb, out):
    return P.cast_grad(ta, out)


@forward_rule(P.aug_assign)
def jvp_aug_assign(x, r, tx, tr, out):
    return P.aug_assign(out, tr)


@forward_rule(P.to_float)
def jvp_to_float(x, tx, out):
    return P.cast_grad(tx, out)


# ---------------------------------------------------------------- reductions, shapes
@forward_rule(P.sum)
def jvp_sum(x, axis, keepdims, tx, taxis, tkeepdims, out):
    return np.sum(tx, axis=axis, keepdims=keepdims)


@forward_rule(P.mean)
def jvp_mean(x, axis, keepdims, tx, taxis, tkeepdims, out):
    return np.mean(tx, axis=axis, keepdims=keepdims)


def _extremum_tangent(x, axis, keepdims, tx, out):
    hit = P.cast_grad(np.where(x == P.expand_reduced(out, np.shape(x), axis, keepdims),
                               1.0, 0.0), x)
    count = np.sum(hit, axis=axis, keepdims=keepdims)
    return np.sum(hit * tx, axis=axis, keepdims=keepdims) / count


@forward_rule(P.max)
def jvp_max(x, axis, keepdims, tx, taxis, tkeepdims, out):
    if not P.is_float(x):
        return ZERO
    return _extremum_tangent(x, axis, keepdims, tx, out)


@forward_rule(P.min)
def jvp_min(x, axis, keepdims, tx, taxis, tkeepdims, out):
    if not P.is_float(x):
        return ZERO
    return _extremum_tangent(x, axis, keepdims, tx, out)


@forward_rule(P.transpose)
def jvp_transpose(x, axes, tx, taxes, out):
    return P.transpose(tx, axes)


@forward_rule(P.reshape)
def jvp_reshape(x, shape, tx, tshape, out):
    return np.reshape(tx, shape)


@forward_rule(P.broadcast_to)
def jvp_broadcast_to(x, shape, tx, tshape, out):
    return P.broadcast_to(tx, shape)


@forward_rule(P.sum_to)
def jvp_sum_to(x, shape, tx, tshape, out):
    return P.sum_to(tx, shape)


@forward_rule(P.index_set)
def jvp_index_set(x, index, value, tx, tindex, tvalue, out):
    return P.index_set(tx, index, tvalue)


@forward_rule(P.index_add)
def jvp_index_add(base, index, value, tbase, tindex, tvalue, out):
    return P.index_add(tbase, index, tvalue)


@forward_rule(P.mask_assign)
def jvp_mask_assign(x, key, value, tx, tkey, tvalue, out):
    return P.mask_assign(tx, key, tvalue)


@forward_rule(P.fill_unselected)
def jvp_fill_unselected(x, fill, tx, tfill, out):
    return P.fill_unselected(tx, 0)


@forward_rule(P.reselect)
def jvp_reselect(d, x, td, tx, out):
    return P.reselect(td, x)


@forward_rule(P.full)
def jvp_full(shape, fill_value, dtype, tshape, tfill, tdtype, out):
    return P.cast_grad(P.full(shape, tfill, dtype), out)


@forward_rule(P.array)
def jvp_array(obj, dtype, tobj, tdtype, out):
    return P.cast_grad(P.array(tobj, dtype), out)


@forward_rule(P.as_operand)
def jvp_as_operand(x, tx, out):
    return P.cast_grad(P.as_operand(tx), out)


@forward_rule(P.linspace)
def jvp_linspace(start, stop, num, endpoint, dtype, tstart, tstop, tnum, tendpoint, tdtype,
                 out):
    div = (num - 1 if num > 1 else 1) if endpoint else num
    w = np.reshape(np.arange(num) / div, (num,) + (1,) * (np.ndim(out) - 1))
    return P.cast_grad(tstart * (1.0 - w) + tstop * w, out)


@forward_rule(P.expand_reduced)
def jvp_expand_reduced(d, shape, axis, keepdims, td, tshape, taxis, tkeepdims, out):
    return P.expand_reduced(td, shape, axis, keepdims)


@forward_rule(P.default_if_undef, structural=True)
def jvp_default_if_undef(value, default, tvalue, tdefault, out):
    return tdefault if P.is_undef(value) else tvalue


@forward_rule(P.check_math_domain, structural=True)
def jvp_check_math_domain(y, x, ty, tx, out):
    return ty


@forward_rule(P.py_max)
def jvp_py_max(x, y, tx, ty, out):
    return ty if y > x else tx


@forward_rule(P.py_min)
def jvp_py_min(x, y, tx, ty, out):
    return ty if y < x else tx


@forward_rule(P.alias_guard, structural=True)
def jvp_alias_guard(value, updated, message, tvalue, tupdated, tmessage, out):
    return tvalue


@forward_rule(P.list_guard, structural=True)
def jvp_list_guard(value, message, tvalue, tmessage, out):
    return tvalue


@forward_rule(P.unchanged_by, structural=True)
def jvp_unchanged_by(value, fn, where, message, tvalue, tfn, twhere, tmessage, out):
    return tvalue


@forward_rule(P.concatenate)
def jvp_concatenate(xs, axis, txs, taxis, out):
    return P.cast_grad(P.concatenate(txs, axis), out)


@forward_rule(P.concat_grad)
def jvp_concat_grad(xs, axis, d, txs, taxis, td, out):
    return P.concat_grad(xs, axis, td)


@forward_rule(P.cumsum)
def jvp_cumsum(x, axis, tx, taxis, out):
    return P.cast_grad(np.cumsum(tx, axis), out)


def __getattr__(name: str):
    """``jvp_<name>`` of a primitive whose rule is declared with it elsewhere."""
    prim = REGISTRY.get(name[len("jvp_"):]) if name.startswith("jvp_") else None
    if prim is None or prim.jvp is None:
        raise AttributeError(name)
    return prim.jvp


# ---------------------------------------------------------------- lists, dicts, namedtuples
@forward_rule(P.pack, structural=True)
def jvp_pack(meta, values, tmeta, tvalues, out):
    # the tangent keeps the container's kind: it is indexed by the same keys
    return ZERO if P.is_zero(tvalues) else P.pack(meta, tvalues)


@forward_rule(P.iter_seq, structural=True)
def jvp_iter_seq(x, tx, out):
    return ZERO if P.is_zero(tx) or P.container_kind(x) == "dict" else tx
