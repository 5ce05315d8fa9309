"""Reverse rules (bprops), one per differentiable primitive, in the myc subset.

``bprop_<name>(*inputs, out, dout)`` returns one sensitivity per input of ``<name>``;
``@reverse_rule(P.<name>)`` attaches it to the primitive (``P.<name>.bprop``), where
``myc.ad`` finds it.  A primitive declared in its own module (``myc/prims/special.py``)
carries its rule from its declaration instead.
They are parsed by myc's own frontend, so the rules are graphs like user code and can
themselves be differentiated (grad of grad).  ``ZERO`` is the symbolic zero.
Conventions: a broadcast input's sensitivity is summed back to its shape (``_unb``);
``maximum``/``minimum`` split the sensitivity evenly on ties (as JAX and PyTorch do);
``abs`` has derivative 0 at 0; ``sign``, ``floor`` and ``ceil`` have derivative zero.
"""

# ruff: noqa: ARG001
from __future__ import annotations

import numpy as np

from myc.prims.namespace import P
from myc.prims.registry import REGISTRY, reverse_rule
from myc.prims.values import ZERO


def _unb(d, x):
    return P.sum_to(d, np.shape(x))


@reverse_rule(P.add)
def bprop_add(x, y, out, dout):
    if P.is_tuple(x):  # tuple concatenation
        return (dout[:len(x)], dout[len(x):])
    return (_unb(dout, x), _unb(dout, y))


@reverse_rule(P.sub)
def bprop_sub(x, y, out, dout):
    return (_unb(dout, x), _unb(-dout, y))


def _repeat_sum(dout, n):
    """The sensitivity of ``xs`` in ``xs * k`` (``[np.eye(d)] * K``): the k chunks of
    ``n`` items of ``dout`` added."""
    acc = dout[:n]
    for start in range(n, len(dout), n):
        acc = P.gadd(acc, dout[start:start + n])
    return acc


@reverse_rule(P.mul)
def bprop_mul(x, y, out, dout):
    if P.is_tuple(x):  # sequence repetition: a list times an int
        return (_repeat_sum(dout, len(x)), ZERO)
    if P.is_tuple(y):
        return (ZERO, _repeat_sum(dout, len(y)))
    return (_unb(dout * y, x), _unb(dout * x, y))


@reverse_rule(P.truediv)
def bprop_truediv(x, y, out, dout):
    return (_unb(dout / y, x), _unb(-dout * out / y, y))


@reverse_rule(P.pow)
def bprop_pow(x, y, out, dout):
    # x ** 0 has derivative 0 also at x = 0, where y * x ** (y - 1) would be 0 * inf; the
    # base is replaced (not the result masked) so that the next order stays finite too
    dx = dout * y * np.where(y == 0, 1.0, x) ** (y - 1)
    dy = dout * out * np.log(np.where(x > 0, x, 1))
    return (_unb(dx, x), _unb(dy, y))


@reverse_rule(P.floordiv)
def bprop_floordiv(x, y, out, dout):
    return (ZERO, ZERO)


@reverse_rule(P.mod)
def bprop_mod(x, y, out, dout):
    return (_unb(dout, x), _unb(-dout * np.floor(x / y), y))


@reverse_rule(P.neg)
def bprop_neg(x, out, dout):
    return (-dout,)


@reverse_rule(P.pos)
def bprop_pos(x, out, dout):
    return (dout,)


@reverse_rule(P.matmul)
def bprop_matmul(x, y, out, dout):
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return (dout * y, dout * x)
    if np.ndim(x) >= 2 and np.ndim(y) >= 2:
        return (_unb(P.matmul(dout, P.mT(y)), x), _unb(P.matmul(P.mT(x), dout), y))
    # a 1-D operand is a row (x) or column (y) matrix, also against a batched operand
    x2 = P.reshape(x, (1, -1)) if np.ndim(x) == 1 else x
    y2 = P.reshape(y, (-1, 1)) if np.ndim(y) == 1 else y
    ds = np.shape(dout)
    d2 = P.reshape(dout, ds[:-1] + (1,) + ds[-1:]) if np.ndim(x) == 1 else P.reshape(
        dout, ds + (1,))
    dx = _unb(P.matmul(d2, P.mT(y2)), x2)
    dy = _unb(P.matmul(P.mT(x2), d2), y2)
    return (P.reshape(dx, np.shape(x)), P.reshape(dy, np.shape(y)))


@reverse_rule(P.dot)
def bprop_dot(x, y, out, dout):
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return bprop_mul(x, y, out, dout)
    if np.ndim(x) > 1 and np.ndim(y) > 2:  # np.dot then contracts unlike matmul
        return P.refuse("reverse-mode derivative of np.dot with a second operand of more "
                        "than 2 dimensions is not supported; use np.matmul (@)")
    return bprop_matmul(x, y, out, dout)


@reverse_rule(P.exp)
def bprop_exp(x, out, dout):
    return (dout * out,)


@reverse_rule(P.log)
def bprop_log(x, out, dout):
    return (dout / x,)


@reverse_rule(P.log1p)
def bprop_log1p(x, out, dout):
    return (dout / (1.0 + x),)


@reverse_rule(P.expm1)
def bprop_expm1(x, out, dout):
    return (dout * (out + 1.0),)


@reverse_rule(P.sqrt)
def bprop_sqrt(x, out, dout):
    return (dout / (2.0 * out),)


@reverse_rule(P.square)
def bprop_square(x, out, dout):
    return (dout * (2.0 * x),)


@reverse_rule(P.abs)
def bprop_abs(x, out, dout):
    return (dout * np.sign(x),)


@reverse_rule(P.sign)
def bprop_sign(x, out, dout):
    return (ZERO,)


@reverse_rule(P.floor)
def bprop_floor(x, out, dout):
    return (ZERO,)


@reverse_rule(P.ceil)
def bprop_ceil(x, out, dout):
    return (ZERO,)


@reverse_rule(P.sin)
def bprop_sin(x, out, dout):
    return (dout * np.cos(x),)


@reverse_rule(P.cos)
def bprop_cos(x, out, dout):
    return (-dout * np.sin(x),)


@reverse_rule(P.tan)
def bprop_tan(x, out, dout):
    return (dout * (1.0 + out * out),)


@reverse_rule(P.tanh)
def bprop_tanh(x, out, dout):
    return (dout * (1.0 - out * out),)


@reverse_rule(P.arctan)
def bprop_arctan(x, out, dout):
    return (dout / (1.0 + x * x),)


@reverse_rule(P.arctan2)
def bprop_arctan2(y, x, out, dout):
    r = x * x + y * y
    return (_unb(dout * x / r, y), _unb(-dout * y / r, x))


@reverse_rule(P.maximum)
def bprop_maximum(x, y, out, dout):
    zero = np.zeros_like(dout)
    dx = np.where(x > y, dout, np.where(x == y, 0.5 * dout, zero))
    dy = np.where(y > x, dout, np.where(x == y, 0.5 * dout, zero))
    return (_unb(dx, x), _unb(dy, y))


@reverse_rule(P.minimum)
def bprop_minimum(x, y, out, dout):
    zero = np.zeros_like(dout)
    dx = np.where(x < y, dout, np.where(x == y, 0.5 * dout, zero))
    dy = np.where(y < x, dout, np.where(x == y, 0.5 * dout, zero))
    return (_unb(dx, x), _unb(dy, y))


@reverse_rule(P.clip)
def bprop_clip(x, lo, hi, out, dout):
    zero = np.zeros_like(dout)
    dx = np.where((x >= lo) & (x <= hi), dout, zero)
    dlo = np.where(x < lo, dout, zero)
    dhi = np.where(x > hi, dout, zero)
    return (_unb(dx, x), _unb(dlo, lo), _unb(dhi, hi))


@reverse_rule(P.where)
def bprop_where(cond, x, y, out, dout):
    zero = np.zeros_like(dout)
    return (ZERO, _unb(np.where(cond, dout, zero), x), _unb(np.where(cond, zero, dout), y))


@reverse_rule(P.astype)
def bprop_astype(x, dtype, out, dout):
    return (P.cast_grad(P.cast_grad(dout, out), x), ZERO)


@reverse_rule(P.to_float)
def bprop_to_float(x, out, dout):
    return (P.cast_grad(dout, x),)


@reverse_rule(P.sum)
def bprop_sum(x, axis, keepdims, out, dout):
    return (P.expand_reduced(dout, np.shape(x), axis, keepdims), ZERO, ZERO)


@reverse_rule(P.mean)
def bprop_mean(x, axis, keepdims, out, dout):
    n = P.reduced_count(np.shape(x), axis)
    return (P.expand_reduced(dout, np.shape(x), axis, keepdims) / n, ZERO, ZERO)


def _extremum_grad(x, axis, keepdims, out, dout):
    hit = P.cast_grad(np.where(x == P.expand_reduced(out, np.shape(x), axis, keepdims),
                               1.0, 0.0), x)
    count = np.sum(hit, axis=axis, keepdims=keepdims)
    return hit * P.expand_reduced(dout / count, np.shape(x), axis, keepdims)


@reverse_rule(P.max)
def bprop_max(x, axis, keepdims, out, dout):
    if not P.is_float(x):  # an integer array has no gradient
        return (ZERO, ZERO, ZERO)
    return (_extremum_grad(x, axis, keepdims, out, dout), ZERO, ZERO)


@reverse_rule(P.min)
def bprop_min(x, axis, keepdims, out, dout):
    if not P.is_float(x):
        return (ZERO, ZERO, ZERO)
    return (_extremum_grad(x, axis, keepdims, out, dout), ZERO, ZERO)


@reverse_rule(P.transpose)
def bprop_transpose(x, axes, out, dout):
    return (P.transpose(dout, P.inverse_axes(axes, np.ndim(x))), ZERO)


@reverse_rule(P.mT)
def bprop_mT(x, out, dout):
    return (P.mT(dout),)


@reverse_rule(P.reshape)
def bprop_reshape(x, shape, out, dout):
    return (np.reshape(dout, np.shape(x)), ZERO)


@reverse_rule(P.broadcast_to)
def bprop_broadcast_to(x, shape, out, dout):
    return (P.sum_to(dout, np.shape(x)), ZERO)


@reverse_rule(P.sum_to)
def bprop_sum_to(x, shape, out, dout):
    return (P.broadcast_to(dout, np.shape(x)), ZERO)


@reverse_rule(P.getitem)
def bprop_getitem(x, index, out, dout):
    return (P.getitem_grad(x, index, dout), ZERO)


@reverse_rule(P.getitem_grad)
def bprop_getitem_grad(x, index, d, out, dout):
    return (ZERO, ZERO, dout[index])


@reverse_rule(P.mask_assign)
def bprop_mask_assign(x, key, value, out, dout):
    zero = np.zeros_like(dout)
    dx = np.where(key, zero, dout)
    if np.ndim(value) == 0:  # one value for every selected element
        dv = np.sum(np.where(key, dout, zero))
    else:  # one per selected element (x[m] = y[m]): a selection of the cotangent
        dv = dout[key]
    return (P.cast_grad(dx, x), ZERO, P.cast_grad(dv, value))


@reverse_rule(P.fill_unselected)
def bprop_fill_unselected(x, fill, out, dout):
    return (P.reselect(dout, x), ZERO)


@reverse_rule(P.reselect)
def bprop_reselect(d, x, out, dout):
    return (P.fill_unselected(dout, 0), ZERO)


@reverse_rule(P.index_add)
def bprop_index_add(base, index, value, out, dout):
    return (dout, ZERO, dout[index])


@reverse_rule(P.index_set)
def bprop_index_set(x, index, value, out, dout):
    # the element overwritten: x's cotangent zero there, value's the cotangent there
    if not P.is_float(x):  # an integer table has no gradient
        return (ZERO, ZERO, ZERO)
    return (P.index_set(dout, index, 0.0), ZERO, dout[index])


@reverse_rule(P.switch)
def bprop_switch(cond, x, y, out, dout):
    return (ZERO, dout if cond else ZERO, ZERO if cond else dout)


@reverse_rule(P.check_defined)
def bprop_check_defined(value, name, out, dout):
    return (dout, ZERO)


@reverse_rule(P.unpack)
def bprop_unpack(value, n, out, dout):
    return (P.unpack_grad(value, dout), ZERO)


@reverse_rule(P.unpack_grad)
def bprop_unpack_grad(value, d, out, dout):
    return (ZERO, P.unpack(dout, len(value)))


@reverse_rule(P.full)
def bprop_full(shape, fill_value, dtype, out, dout):
    return (ZERO, P.cast_grad(np.sum(dout), fill_value), ZERO)


@reverse_rule(P.array)
def bprop_array(obj, dtype, out, dout):
    return (P.array_grad(obj, dout), ZERO)


@reverse_rule(P.as_operand)
def bprop_as_operand(x, out, dout):
    # a list or tuple gets its pieces' cotangents; anything else is passed through
    return (P.array_grad(x, dout) if P.is_tuple(x) else dout,)


@reverse_rule(P.array_grad)
def bprop_array_grad(obj, d, out, dout):
    # array_grad reads d's elements into obj's nested tuples; its adjoint builds the array
    # back, with zeros where ``dout`` has ZERO leaves
    return (ZERO, P.array(P.grad_cast(dout, out), None))


def _linspace_weights(num, endpoint, nd):
    """Weight of ``stop`` in each sample, shaped to broadcast against ``nd``-D endpoints."""
    div = (num - 1 if num > 1 else 1) if endpoint else num
    return np.reshape(np.arange(num) / div, (num,) + (1,) * nd)


@reverse_rule(P.linspace)
def bprop_linspace(start, stop, num, endpoint, dtype, out, dout):
    w = _linspace_weights(num, endpoint, np.ndim(out) - 1)
    dstart = _unb(np.sum(dout * (1.0 - w), axis=0), start)
    dstop = _unb(np.sum(dout * w, axis=0), stop)
    return (P.cast_grad(dstart, start), P.cast_grad(dstop, stop), ZERO, ZERO, ZERO)


@reverse_rule(P.gadd)
def bprop_gadd(x, y, out, dout):
    return (P.mask_zero(x, dout), P.mask_zero(y, dout))


@reverse_rule(P.mask_zero)
def bprop_mask_zero(x, d, out, dout):
    return (ZERO, P.mask_zero(d, dout))


@reverse_rule(P.env_get)
def bprop_env_get(env, key, out, dout):
    return (P.env_add(ZERO, key, dout), ZERO)


@reverse_rule(P.env_add)
def bprop_env_add(env, key, value, out, dout):
    return (dout, ZERO, P.env_get(dout, key))


@reverse_rule(P.cast_grad)
def bprop_cast_grad(d, x, out, dout):
    return (P.cast_grad(dout, d), ZERO)


@reverse_rule(P.grad_cast)
def bprop_grad_cast(d, x, out, dout):
    return (P.mask_zero(d, dout), ZERO)


@reverse_rule(P.check_scalar_output)
def bprop_check_scalar_output(y, out, dout):
    return (dout,)


@reverse_rule(P.check_aux_output)
def bprop_check_aux_output(pair, out, dout):
    return (dout,)


@reverse_rule(P.expand_reduced)
def bprop_expand_reduced(d, shape, axis, keepdims, out, dout):
    return (np.sum(dout, axis=axis, keepdims=keepdims), ZERO, ZERO, ZERO)


@reverse_rule(P.materialize)
def bprop_materialize(t, x, out, dout):
    return (P.mask_zero(t, dout), ZERO)


@reverse_rule(P.tangent_out)
def bprop_tangent_out(t, y, out, dout):
    return (P.mask_zero(t, dout), ZERO)


@reverse_rule(P.to_weak)
def bprop_to_weak(y, x, out, dout):
    return (dout, ZERO)


@reverse_rule(P.receiver)
def bprop_receiver(x, method, out, dout):
    return (dout, ZERO)


@reverse_rule(P.np_first)
def bprop_np_first(a, b, out, dout):
    return (P.cast_grad(dout, a), ZERO)


@reverse_rule(P.aug_assign)
def bprop_aug_assign(x, r, out, dout):
    return (ZERO, P.cast_grad(P.sum_to(dout, np.shape(r)), r))


@reverse_rule(P.default_if_undef)
def bprop_default_if_undef(value, default, out, dout):
    if P.is_undef(value):
        return (ZERO, dout)
    return (dout, ZERO)


@reverse_rule(P.check_math_domain)
def bprop_check_math_domain(y, x, out, dout):
    return (dout, ZERO)


@reverse_rule(P.py_max)
def bprop_py_max(x, y, out, dout):
    if y > x:
        return (ZERO, dout)
    return (dout, ZERO)


@reverse_rule(P.py_min)
def bprop_py_min(x, y, out, dout):
    if y < x:
        return (ZERO, dout)
    return (dout, ZERO)


@reverse_rule(P.alias_guard)
def bprop_alias_guard(value, updated, message, out, dout):
    return (dout, ZERO, ZERO)


@reverse_rule(P.list_guard)
def bprop_list_guard(value, message, out, dout):
    return (dout, ZERO)


@reverse_rule(P.unchanged_by)
def bprop_unchanged_by(value, fn, where, message, out, dout):
    return (dout, ZERO, ZERO, ZERO)


@reverse_rule(P.concatenate)
def bprop_concatenate(xs, axis, out, dout):
    return (P.concat_grad(xs, axis, dout), ZERO)


@reverse_rule(P.concat_grad)
def bprop_concat_grad(xs, axis, d, out, dout):
    return (ZERO, ZERO, P.concatenate(P.grad_cast(dout, out), axis))


@reverse_rule(P.cumsum)
def bprop_cumsum(x, axis, out, dout):
    if not P.is_float(x):
        return (ZERO, ZERO)
    if P.is_none(axis):  # the running sums of the flattened array, reversed
        return (np.reshape(np.cumsum(dout[::-1])[::-1], np.shape(x)), ZERO)
    rev = P.reverse_index(np.ndim(dout), axis)
    return (np.cumsum(dout[rev], axis)[rev], ZERO)


def __getattr__(name: str):
    """``bprop_<name>`` of a primitive whose rule is declared with it elsewhere."""
    prim = REGISTRY.get(name[len("bprop_"):]) if name.startswith("bprop_") else None
    if prim is None or prim.bprop is None:
        raise AttributeError(name)
    return prim.bprop


# ---------------------------------------------------------------- lists, dicts, namedtuples
@reverse_rule(P.pack)
def bprop_pack(meta, values, out, dout):
    # a container's sensitivity is positional, as its values' tuple is
    return (ZERO, dout)


@reverse_rule(P.iter_seq)
def bprop_iter_seq(x, out, dout):
    if P.container_kind(x) == "dict":  # a dict's keys: nothing to differentiate
        return (ZERO,)
    return (dout,)
