"""Primitives that automatic differentiation emits.

Sensitivities are values like any other: arrays, scalars, tuples of sensitivities,
*environments* (a dict from a free variable's key to its sensitivity: the sensitivity
of a closure), and the symbolic ``ZERO``.  These primitives add, select and reshape
them; each has its own derivative rules so transforms compose to any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import MycTypeError
from myc.prims.containers import DictValue, Unsupported, is_container, is_object, like
from myc.prims.effects import is_rng
from myc.prims.registry import Primitive, register
from myc.prims.values import ZERO


def gadd(x, y):
    """Add two sensitivities of the same value (ZERO is the identity)."""
    if x is ZERO:
        return y
    if y is ZERO:
        return x
    if isinstance(x, tuple):
        return like(x if is_container(x) else y,
                    [gadd(a, b) for a, b in zip(x, y, strict=True)])
    if isinstance(x, dict):
        out = dict(x)
        for k, v in y.items():
            out[k] = gadd(out[k], v) if k in out else v
        return out
    return x + y


register("gadd", "x y", gadd, scalar="add")
register("is_zero", "x", lambda x: x is ZERO, differentiable=False)
register("mask_zero", "x d", lambda x, d: ZERO if x is ZERO else d,
         doc="``d`` unless ``x`` is ZERO: the sensitivity of an input that may be ZERO.")


def env_get(env, key):
    if env is ZERO:
        return ZERO
    return env.get(key, ZERO)


def env_add(env, key, value):
    if value is ZERO:
        return env
    out = {} if env is ZERO else dict(env)
    out[key] = gadd(out[key], value) if key in out else value
    return out


register("env_get", "env key", env_get)
register("env_add", "env key value", env_add)


def _dtype(x) -> np.dtype:
    """``x``'s dtype, without converting it (a CuPy array refuses to become NumPy's)."""
    dt = getattr(x, "dtype", None)
    return np.dtype(dt) if dt is not None else np.result_type(x)


def _is_float(x) -> bool:
    if x is None or isinstance(x, (bool, int, str)) or is_rng(x) or callable(x) or \
            getattr(x, "myc_static", False):
        return False  # (a generator, None, a string, a function: static, no gradient)
    return _dtype(x).kind == "f"


def cast_grad(d, x):
    """Sensitivity ``d`` in the dtype of primal ``x``; ZERO for integer/bool primals."""
    if d is ZERO or isinstance(x, tuple) or isinstance(x, dict):
        return d
    if isinstance(x, float):
        return d
    if not _is_float(x):
        return ZERO
    dt = _dtype(x)
    if isinstance(d, np.ndarray) or (hasattr(d, "astype") and not isinstance(d, np.generic)):
        return d.astype(dt, copy=False)  # (a CuPy array stays on the device)
    return dt.type(d)


register("cast_grad", "d x", cast_grad, fusible=True)


def not_float_attribute(b: Any) -> bool:
    """An attribute of an object passed to ``grad`` that gets no gradient (``None``): an
    int, bool, int array or an attribute compiled code cannot hold."""
    a = getattr(b, "abstract", None)  # a symbolic value (specialization)
    if a is not None:
        return a.dtype.kind != "f"
    if isinstance(b, Unsupported):
        return True
    if isinstance(b, tuple):
        return False
    return isinstance(b, (bool, int, np.bool_, np.integer)) or (
        isinstance(b, np.ndarray) and b.dtype.kind in "biu")


def grad_cast(d, x):
    """A gradient materialized in the structure and dtype of its argument ``x``."""
    if is_rng(x) or x is None or isinstance(x, (str, Primitive)) or \
            getattr(x, "myc_static", False):
        return None  # a generator, None, a string or a function: static, no gradient
    if isinstance(x, tuple):
        if d is ZERO:
            d = (ZERO,) * len(x)
        if is_object(x):  # an object's ints, bools and strings are its configuration
            return like(x, [None if not_float_attribute(b) else grad_cast(a, b)
                            for a, b in zip(d, x, strict=True)])
        return like(x, [grad_cast(a, b) for a, b in zip(d, x, strict=True)])
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, (int, np.integer))) or (
            isinstance(x, np.ndarray) and x.dtype.kind in "biu"):
        kind = f"array of dtype {x.dtype}" if isinstance(x, np.ndarray) else type(x).__name__
        raise MycTypeError("cannot differentiate with respect to an integer or bool argument "
                           f"(got {kind})",
                           hint="pass floats, or exclude it with argnums=")
    if isinstance(x, np.ndarray):
        if d is ZERO:
            return np.zeros_like(x)
        return np.array(np.broadcast_to(d, x.shape), dtype=x.dtype)
    if isinstance(x, np.generic):
        return x.dtype.type(0 if d is ZERO else d)
    return 0.0 if d is ZERO else float(d)


register("grad_cast", "d x", grad_cast, fusible=True)


def check_scalar_output(y):
    if isinstance(y, float) and not isinstance(y, bool):
        return y
    if isinstance(y, (np.floating, np.ndarray)) and np.ndim(y) == 0 and \
            np.result_type(y).kind == "f":
        return y
    if isinstance(y, np.ndarray):
        raise MycTypeError(f"grad needs a function returning a float scalar, but it returned "
                           f"an array of shape {y.shape}", hint="reduce it, e.g. with np.sum")
    raise MycTypeError(f"grad needs a function returning a float scalar, but it returned "
                       f"{type(y).__name__}")


register("check_scalar_output", "y", check_scalar_output)


def check_aux_output(out):
    """``grad(f, has_aux=True)``: ``f`` must return a pair ``(loss, aux)``."""
    if isinstance(out, tuple) and len(out) == 2:
        return out
    what = f"a tuple of {len(out)}" if isinstance(out, tuple) else type(out).__name__
    raise MycTypeError(f"has_aux=True needs a function returning a pair (loss, aux), but it "
                       f"returned {what}")


register("check_aux_output", "out", check_aux_output)
register("seed_like", "y", lambda y: np.ones_like(y)[()] if isinstance(y, (np.generic, np.ndarray))
         else 1.0, differentiable=False)


def expand_reduced(d, shape, axis, keepdims):
    """Broadcast a reduction's output sensitivity back to the reduced input's ``shape``."""
    shape = tuple(shape)
    if axis is not None and not keepdims:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(a % len(shape) for a in axes)
        d = np.expand_dims(d, axes)
    return np.broadcast_to(d, shape).copy() if np.ndim(d) or shape else d


register("expand_reduced", "d shape axis keepdims", expand_reduced, fusible=True)


def reduced_count(shape, axis):
    shape = tuple(shape)
    if axis is None:
        return int(np.prod(shape)) if shape else 1
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return int(np.prod([shape[a] for a in axes]))


register("reduced_count", "shape axis", reduced_count, differentiable=False)


def inverse_axes(axes, ndim):
    if axes is None:
        return None
    return tuple(int(i) for i in np.argsort([a % ndim for a in axes]))


register("inverse_axes", "axes ndim", inverse_axes, differentiable=False)
register("mT", "x", lambda x: np.swapaxes(x, -1, -2) if np.ndim(x) >= 2 else x,
         step_kind="matrix_transpose")  # the last two axes swapped


def getitem_grad(x, index, d):
    """Sensitivity of ``x`` from that of ``x[index]``: placed into a tuple, or scattered."""
    if isinstance(x, tuple):
        n = len(x)
        out = [ZERO] * n
        if isinstance(index, slice):
            for pos, v in zip(range(*index.indices(n)), d, strict=True):
                out[pos] = v
        elif isinstance(x, DictValue):  # d[key]: the key's position
            out[x.position(index)] = d
        else:
            out[index] = d
        return tuple(out)
    if not _is_float(x):
        return ZERO
    base = np.zeros(np.shape(x), dtype=np.result_type(x))
    np.add.at(base, _no_masks(index), d)
    return base


def _no_masks(index):
    """``index`` with each boolean mask as the integer arrays of its True positions:
    ``np.add.at`` reads a bool array as the integers 0 and 1, not as a mask."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(p, np.ndarray) and p.dtype == np.bool_ for p in parts):
        return index
    out: list = []
    for p in parts:
        if isinstance(p, np.ndarray) and p.dtype == np.bool_:
            out.extend(np.nonzero(p))
        else:
            out.append(p)
    return tuple(out)


# zeros of x's shape, d added at x[index]
register("getitem_grad", "x index d", getitem_grad, step_kind="scatter_add")


def unpack_grad(value, d):
    """The sensitivity of an unpacked value: a tuple, or an array's rows stacked back."""
    if isinstance(value, tuple) or d is ZERO:
        return d
    rows = [np.zeros(value.shape[1:], value.dtype) if r is ZERO else r for r in d]
    return np.stack(rows)


register("unpack_grad", "value d", unpack_grad)


def array_grad(obj, d):
    """The sensitivity of ``np.array(obj)``'s nested-tuple argument ``obj``."""
    if isinstance(obj, tuple):
        return tuple(array_grad(o, d[i]) for i, o in enumerate(obj))
    return d[()] if isinstance(d, np.ndarray) else d


register("array_grad", "obj d", array_grad)


def zeros_grad_like(x):
    """Materialized zero sensitivity for ``x`` (forward mode's seed for unused inputs)."""
    if isinstance(x, tuple):
        return like(x, [zeros_grad_like(v) for v in x])
    return ZERO


register("zeros_grad_like", "x", zeros_grad_like, differentiable=False)


def materialize(t, x):
    """A tangent usable in arithmetic: zeros shaped like ``x`` in place of ``ZERO``."""
    if isinstance(t, tuple) and isinstance(x, tuple):  # ZERO leaves inside, e.g. np.array([x, 1.0])
        return like(x, [materialize(a, b) for a, b in zip(t, x, strict=True)])
    if t is not ZERO:
        return t
    if isinstance(x, tuple):
        return like(x, [materialize(ZERO, v) for v in x])
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype if x.dtype.kind == "f" else np.float64)
    if isinstance(x, np.floating):
        return x.dtype.type(0)
    if isinstance(x, (bool, int, float, np.generic)):
        return 0.0
    return ZERO


register("materialize", "t x", materialize)
register("all_zero", "", lambda *ts: all(t is ZERO for t in ts), variadic=True,
         differentiable=False)


def tangent_out(t, y):
    """A jvp result in the structure and dtype of the primal output ``y``."""
    if isinstance(y, tuple):
        if t is ZERO:
            t = (ZERO,) * len(y)
        return like(y, [tangent_out(a, b) for a, b in zip(t, y, strict=True)])
    if isinstance(y, np.ndarray):
        if t is ZERO:
            return np.zeros(y.shape, y.dtype if y.dtype.kind == "f" else np.float64)
        dt = y.dtype if y.dtype.kind == "f" else np.result_type(t)
        return np.array(np.broadcast_to(t, y.shape), dtype=dt)
    if isinstance(y, np.floating):
        return y.dtype.type(0 if t is ZERO else t)
    if isinstance(y, (bool, int, float, np.generic)):
        return 0.0 if t is ZERO else (float(t) if np.ndim(t) == 0 else t)
    return t


register("tangent_out", "t y", tangent_out, fusible=True)

register("is_tuple", "x", lambda x: isinstance(x, tuple), differentiable=False)


def refuse(message):
    """Raise a MycTypeError from inside a rule (a derivative myc does not have)."""
    raise MycTypeError(message)


register("refuse", "message", refuse, differentiable=False)
register("is_float", "x",
         lambda x: isinstance(x, float) or (not isinstance(x, (bool, int, tuple, dict)) and
                                            np.result_type(x).kind == "f"),
         differentiable=False)
