"""Shape/dtype rules: the abstract result of a primitive applied to abstract inputs.

``infer(prim, args)`` takes each argument either concrete (a Python/NumPy value) or
abstract (``AArray``/``AScalar``) and returns the result's abstract value.  Dtypes come
from NumPy itself, applied to one-element proxies of the right kind (so NumPy's
promotion, weak Python scalars included, is reproduced exactly); shapes from explicit
rules, so no rule ever touches data the size of the real arrays.  Errors are the same
Python exceptions NumPy raises; the caller turns them into located ``MycError``s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import MycTypeError
from myc.infer.masked import WHY as MASK_WHY
from myc.prims import REGISTRY, Primitive
from myc.prims.abstract import AArray, AScalar, as_abstract, proxy, result_abstract
from myc.prims.arrays import STATIC_ONLY

# declared ``elementwise`` in the primitive table: broadcast shapes, NumPy's dtype
ELEMENTWISE = frozenset(n for n, p in REGISTRY.items() if p.elementwise)
PY_EXTREMA = frozenset(["py_max", "py_min"])
SAME_AS_FIRST = frozenset(["check_math_domain"])
REDUCTIONS = frozenset("sum mean max min argmax argmin".split())


_abs = as_abstract  # (one definition: ``myc.prims.abstract``)


def _prox(v: Any) -> Any:
    """A proxy for an abstract value; concrete non-array values pass as themselves."""
    if isinstance(v, (AArray, AScalar)):
        return proxy(v)
    if isinstance(v, np.ndarray):
        return np.ones((1,) * v.ndim, v.dtype)
    if type(v) is int and not -(1 << 63) <= v < (1 << 63):
        return v  # beyond int64: NumPy raises OverflowError, or compares exactly
    if isinstance(v, (bool, int, float, np.generic)):
        return proxy(_abs(v))
    return v


def _axes(axis: Any, ndim: int, legacy_0d: bool = False) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if legacy_0d and ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return ()  # NumPy's ufunc reductions: a 0-d array reduces along "axis 0" to itself
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(int(a), ndim)
        out.append(int(a) % ndim)
    return tuple(out)


def _matmul_shape(a: tuple, b: tuple, name: str) -> tuple:
    if len(a) == 0 or len(b) == 0:
        raise ValueError("input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"shapes {a} and {b} not aligned: {a2[-1]} (dim "
                         f"{len(a) - 1}) != {b2[-2]} (dim {max(len(b) - 2, 0)}) -- "
                         "matmul dimension mismatch")
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return tuple(out)


def _dim(d: Any) -> int:
    """A reshape dimension as NumPy takes it: an integer, never a float or a bool."""
    if isinstance(d, (bool, np.bool_)):
        raise TypeError("an integer is required")
    if not isinstance(d, (int, np.integer)):
        raise TypeError(f"'{type(d).__name__}' object cannot be interpreted as an integer")
    return int(d)


def _reshape(shape: tuple, new: Any) -> tuple:
    new = (_dim(new),) if not isinstance(new, tuple) else tuple(_dim(d) for d in new)
    size = int(np.prod(shape)) if shape else 1
    unknown = [d for d in new if d < 0]  # NumPy: any negative size is the unknown one
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = int(np.prod([d for d in new if d >= 0])) if len(new) > 1 else 1
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {new}")
        new = tuple(size // known if d < 0 else d for d in new)
    if (int(np.prod(new)) if new else 1) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {new}")
    return new


def _index_proxy(index: Any) -> Any:
    """An index with abstract integer arrays replaced by zero arrays of their shape."""
    if isinstance(index, tuple):
        return tuple(_index_proxy(i) for i in index)
    if isinstance(index, AArray):
        if index.dtype == np.bool_ and index.shape:  # (its count of True is data)
            raise NotImplementedError(MASK_WHY)
        return np.zeros(index.shape, index.dtype)
    if isinstance(index, AScalar):
        return index.dtype.type(0)
    return index


def infer(prim: Primitive, args: list[Any]) -> AArray | AScalar:
    """The abstract result of ``prim(*args)`` (some args abstract)."""
    name = prim.name
    if prim.infer is not None:  # a rule kept with its primitive (myc/prims/linalg.py)
        return prim.infer(*args)
    if name in ELEMENTWISE:
        shapes = [_abs(a).shape for a in args if not isinstance(a, (type(None),))]
        shape = np.broadcast_shapes(*shapes)
        return result_abstract(prim.impl(*[_prox(a) for a in args]), shape)
    if name in SAME_AS_FIRST:
        return _abs(args[0])
    if name in PY_EXTREMA:  # the chosen operand itself: only known when both types agree
        a, b = _abs(args[0]), _abs(args[1])
        if a != b:
            raise NotImplementedError("max/min of operands of different types as a value")
        return a
    if name in REDUCTIONS:
        x, axis = _abs(args[0]), args[1]
        keepdims = args[2] if len(args) > 2 else False
        axes = _axes(axis, x.ndim, legacy_0d=name in ("sum", "max", "min"))
        if keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        if name in ("argmax", "argmin") and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"attempt to get {name} of an empty sequence")
        if name in ("max", "min") and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"zero-size array to reduction operation {name}imum which has "
                             "no identity")
        p = proxy(x)
        r = prim.impl(p, axis, keepdims) if len(args) > 2 else prim.impl(p, axis)
        return result_abstract(r, shape)
    if name in ("matmul", "dot"):
        a, b = _abs(args[0]), _abs(args[1])
        if name == "dot" and (a.ndim == 0 or b.ndim == 0):
            return infer(Primitive("mul", ("x", "y"), np.multiply), [a, b])
        if name == "dot" and (a.ndim > 2 or b.ndim > 2):
            raise NotImplementedError("np.dot of arrays with more than 2 dimensions")
        shape = _matmul_shape(a.shape, b.shape, name)
        r = np.matmul(np.ones(a.shape[-1:], a.dtype), np.ones(b.shape[-2:] if b.ndim > 1
                                                              else b.shape, b.dtype))
        dtype = np.result_type(r)
        return AArray(dtype, shape) if shape or not isinstance(r, np.generic) else \
            AScalar(dtype, False)
    if name == "matmul_acc":  # x @ y + c, c already of the product's type
        r = infer(REGISTRY["matmul"], args[:2])
        if r != _abs(args[2]):
            raise ValueError("matmul_acc: the accumulator is not of the product's type")
        return r
    if name == "mT":
        x = _abs(args[0])
        return AArray(x.dtype, x.shape[:-2] + x.shape[-2:][::-1]) if x.ndim >= 2 else x
    if name == "transpose":
        x, axes = _abs(args[0]), args[1]
        if isinstance(x, AScalar):
            return AArray(x.dtype, ())
        perm = tuple(reversed(range(x.ndim))) if axes is None else _axes(axes, x.ndim)
        if sorted(perm) != list(range(x.ndim)):
            raise ValueError(f"axes {axes} don't match array of {x.ndim} dimensions")
        return AArray(x.dtype, tuple(x.shape[p] for p in perm))
    if name == "reshape":
        x = _abs(args[0])
        return AArray(x.dtype, _reshape(x.shape, args[1]))
    if name == "broadcast_to":
        x, shape = _abs(args[0]), tuple(args[1])
        if np.broadcast_shapes(x.shape, shape) != shape:
            raise ValueError(f"cannot broadcast shape {x.shape} to {shape}")
        return AArray(x.dtype, shape)
    if name in ("sum_to",):
        x = _abs(args[0])
        return AArray(x.dtype, tuple(args[1])) if args[1] != () or x.ndim else x
    if name == "expand_reduced":
        d = _abs(args[0])
        shape = tuple(args[1])
        return AArray(d.dtype, shape) if shape or d.ndim else d
    if name in ("astype",):
        x = _abs(args[0])
        dt = np.dtype(prim.impl(proxy(AScalar(x.dtype, False)), args[1]).dtype)
        return AArray(dt, x.shape) if isinstance(x, AArray) else AScalar(dt, False)
    if name in ("to_float", "to_int", "to_bool"):
        x = _abs(args[0])
        if isinstance(x, AArray) and int(np.prod(x.shape)) != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return result_abstract(prim.impl(np.ones((), x.dtype)[()]), ())
    if name == "cast_grad":
        d, x = _abs(args[0]), args[1]
        r = prim.impl(_prox(d), _prox(x))
        return result_abstract(r, d.shape)
    if name == "getitem":
        x = _abs(args[0])
        base = np.broadcast_to(np.zeros((), x.dtype), x.shape)
        r = base[_index_proxy(args[1])]
        if isinstance(r, np.ndarray):
            return AArray(r.dtype, r.shape)
        return AScalar(np.dtype(type(r)) if isinstance(r, np.generic) else x.dtype, False)
    if name in ("index_add", "index_set"):
        return _abs(args[0])
    if name == "getitem_grad":
        x = _abs(args[0])
        return AArray(x.dtype, x.shape)
    if name in ("zeros", "ones"):
        shape = (args[0],) if isinstance(args[0], (int, np.integer)) else tuple(args[0])
        return AArray(np.dtype(args[1]) if args[1] is not None else np.dtype(np.float64),
                      shape)
    if name in ("zeros_like", "ones_like"):
        x, dtype = _abs(args[0]), args[1]
        return AArray(np.dtype(dtype) if dtype is not None else x.dtype, x.shape)
    if name == "full":
        shape = (args[0],) if isinstance(args[0], (int, np.integer)) else tuple(args[0])
        v = _abs(args[1])
        dt = np.dtype(args[2]) if args[2] is not None else np.full((), _prox(v)).dtype
        return AArray(dt, shape)
    if name == "array":
        obj = args[0]
        sample = np.array(_nested_proxy(obj), dtype=args[1])
        return AArray(sample.dtype, sample.shape)
    if name == "concatenate":
        return _concatenate(args[0], args[1])
    if name == "cumsum":
        x, axis = _abs(args[0]), args[1]
        shape = (int(np.prod(x.shape)),) if axis is None else x.shape
        if axis is not None:
            _axes(axis, x.ndim)
        dt = np.cumsum(np.ones((1,) * x.ndim, x.dtype)).dtype
        return AArray(dt, shape)
    if name == "argsort":  # NumPy's argsort, a host step: int64 indices
        x, axis = _abs(args[0]), args[1]
        small = np.argsort(np.zeros((1,) * x.ndim), axis=axis)  # NumPy checks the axis
        shape = x.shape if small.ndim == x.ndim else small.shape if x.ndim == 0 else (
            int(np.prod(x.shape)),)
        return AArray(np.dtype(np.int64), shape)
    if name in STATIC_ONLY:
        raise MycTypeError(STATIC_ONLY[name])
    if name == "select":
        a, b = _abs(args[1]), _abs(args[2])
        if a != b:
            raise NotImplementedError("select between values of different types")
        return a
    if name == "gadd":
        a, b = _abs(args[0]), _abs(args[1])
        return result_abstract(np.add(proxy(a), proxy(b)),
                               np.broadcast_shapes(a.shape, b.shape))
    raise NotImplementedError(f"no shape rule for primitive '{name}'")


def _concatenate(xs: Any, axis: Any) -> AArray:
    """``np.concatenate``'s result, its shape checked the way NumPy checks it."""
    if not isinstance(xs, tuple):
        raise TypeError("np.concatenate/np.stack take a tuple or list of arrays (an array "
                        "used as a sequence of rows is not supported)")
    if not xs:
        raise ValueError("need at least one array to concatenate")
    parts = [_abs(x) for x in xs]
    dtype = np.result_type(*[p.dtype for p in parts])
    if axis is None:
        return AArray(dtype, (sum(int(np.prod(p.shape)) for p in parts),))
    if any(p.ndim == 0 for p in parts):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    nd = parts[0].ndim
    ax = _axes(axis, nd)[0]
    for i, p in enumerate(parts[1:], 1):
        if p.ndim != nd:
            raise ValueError("all the input arrays must have same number of dimensions, but "
                             f"the array at index 0 has {nd} dimension(s) and the array at "
                             f"index {i} has {p.ndim} dimension(s)")
        for d in range(nd):
            if d != ax and p.shape[d] != parts[0].shape[d]:
                raise ValueError("all the input array dimensions except for the "
                                 "concatenation axis must match exactly, but along dimension "
                                 f"{d}, the array at index 0 has size {parts[0].shape[d]} "
                                 f"and the array at index {i} has size {p.shape[d]}")
    shape = list(parts[0].shape)
    shape[ax] = sum(p.shape[ax] for p in parts)
    return AArray(dtype, tuple(shape))


def _nested_proxy(obj: Any) -> Any:
    if isinstance(obj, tuple):
        return [_nested_proxy(o) for o in obj]
    if isinstance(obj, (AArray, AScalar)):
        return np.ones(obj.shape, obj.dtype) if isinstance(obj, AArray) else proxy(obj)
    return obj
