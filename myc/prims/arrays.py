"""Array-assembly primitives behind NumPy's stacking functions and ``np.cumsum``, and the
static shape helpers the NumPy library functions (``myc/frontend/np_library.py``) use.

``concatenate`` takes a *tuple* of arrays, as ``np.array`` of computed values does: the
tuple is plumbing (a ``make_tuple`` in the typed program), the primitive a host step.
Its sensitivity ``concat_grad`` is the tuple of the cotangent's slices.

The helpers compute index tuples and shapes from static values (shapes, axes, counts)
while a program is specialized; a helper reached with array or float data raises the
message in ``STATIC_ONLY`` instead (the shape rules use it), at the user's line.
"""

from __future__ import annotations

import numpy as np

from myc.errors import MycValueError
from myc.prims.registry import register


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(int(axis), ndim)
    return int(axis) % ndim


def _concat_bounds(xs: tuple, axis) -> list[tuple[int, int]]:
    """Each piece's [start, stop) along the concatenation axis (flat when ``axis`` is None)."""
    bounds, pos = [], 0
    for x in xs:
        n = int(np.size(x)) if axis is None else int(np.shape(x)[_axis(axis, np.ndim(x))])
        bounds.append((pos, pos + n))
        pos += n
    return bounds


def concat_index(ndim: int, axis: int, start: int, stop: int, step: int | None = None) -> tuple:
    """The basic index selecting ``start:stop:step`` along ``axis`` of an ``ndim``-d array."""
    return (slice(None),) * _axis(axis, ndim) + (slice(start, stop, step),)


def concat_grad(xs, axis, d):
    """The sensitivities of ``np.concatenate(xs, axis)``'s pieces: slices of ``d``."""
    out = []
    for x, (a, b) in zip(xs, _concat_bounds(xs, axis), strict=True):
        if axis is None:
            out.append(np.reshape(d[a:b], np.shape(x)))
        else:
            out.append(d[concat_index(np.ndim(d), axis, a, b)])
    return tuple(out)


def _concatenate(xs, axis):
    if not isinstance(xs, tuple):
        raise TypeError("np.concatenate/np.stack take a tuple or list of arrays (an array "
                        "used as a sequence of rows is not supported)")
    return np.concatenate(xs, axis=axis)


register("concatenate", "xs axis", _concatenate, defaults={"axis": 0},
         names=("np.concatenate",), step_kind="concatenate")
register("concat_grad", "xs axis d", concat_grad)
register("cumsum", "x axis", lambda x, axis: np.cumsum(x, axis=axis), defaults={"axis": None},
         names=("np.cumsum",))

# ---------------------------------------------------------------- static helpers

STATIC_ONLY = {
    "expand_dims_shape": "np.expand_dims: the axis must be an int or a tuple of ints",
    "squeeze_shape": "np.squeeze: the axis must be an int, a tuple of ints or None",
    "reduced_size": "the axis must be an int, a tuple of ints or None",
    "axis_index": "an axis must be an int known when the program is compiled",
    "reverse_index": "an axis must be an int known when the program is compiled",
    "repeat_index": "np.repeat: the number of repeats must be an int (or a constant "
                    "sequence of ints) known when the program is compiled, not computed "
                    "from array or float data",
    "roll_index": "np.roll: the shift must be an int known when the program is compiled, "
                  "not computed from array or float data",
    "axis_slice": "a slice bound must be an int known when the program is compiled",
    "reduced_axes": "the axis must be an int or a tuple of ints",
    "lib_error": "unsupported argument",
}


def _axes(axis, ndim: int) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_axis(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return out


def expand_dims_shape(shape: tuple, axis) -> tuple:
    nd = len(shape) + (1 if isinstance(axis, (int, np.integer)) else len(tuple(axis)))
    axes = _axes(axis, nd)
    it = iter(shape)
    return tuple(1 if i in axes else next(it) for i in range(nd))


def squeeze_shape(shape: tuple, axis) -> tuple:
    if axis is None:
        return tuple(d for d in shape if d != 1)
    axes = _axes(axis, len(shape))
    for a in axes:
        if shape[a] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduced_size(shape: tuple, axis) -> int:
    """How many elements a reduction over ``axis`` combines into each result."""
    axes = range(len(shape)) if axis is None else _axes(axis, len(shape))
    return int(np.prod([shape[a] for a in axes])) if len(shape) else 1


def axis_index(ndim: int, axis: int, index) -> tuple:
    """``index`` applied along ``axis`` (full slices before it)."""
    return (slice(None),) * _axis(axis, ndim) + (index,)


def reverse_index(ndim: int, axis: int) -> tuple:
    return axis_index(ndim, axis, slice(None, None, -1))


def repeat_index(n: int, repeats) -> np.ndarray:
    """The gather index of ``np.repeat`` along an axis of length ``n``."""
    if isinstance(repeats, (bool, np.bool_)) or (
            isinstance(repeats, (float, np.floating))):
        raise TypeError(f"np.repeat: repeats must be integers, got {type(repeats).__name__}")
    return np.repeat(np.arange(n), repeats)


def roll_index(n: int, shift) -> np.ndarray:
    """The gather index of ``np.roll`` along an axis of length ``n``."""
    if not isinstance(shift, (int, np.integer)) or isinstance(shift, (bool, np.bool_)):
        raise TypeError(f"np.roll: the shift must be an int, got {type(shift).__name__}")
    return (np.arange(n) - int(shift)) % max(n, 1)


def _lib_error(message: str):
    raise MycValueError(message)


register("expand_dims_shape", "shape axis", expand_dims_shape, differentiable=False)
register("squeeze_shape", "shape axis", squeeze_shape, differentiable=False)
register("reduced_size", "shape axis", reduced_size, differentiable=False)
register("axis_index", "ndim axis index", axis_index, differentiable=False)
register("reverse_index", "ndim axis", reverse_index, differentiable=False)
register("repeat_index", "n repeats", repeat_index, differentiable=False)
register("roll_index", "n shift", roll_index, differentiable=False)
register("lib_error", "message", _lib_error, differentiable=False)
register("axis_slice", "ndim axis start stop step", concat_index, differentiable=False)


def reduced_axes(ndim: int, axis) -> tuple[int, ...]:
    """``axis`` (an int or a tuple) as sorted non-negative axes of an ``ndim``-d array."""
    return tuple(sorted(_axes(axis, ndim)))


register("reduced_axes", "ndim axis", reduced_axes, differentiable=False)
# tests on static arguments: a symbolic value (an array) is neither None nor an int
register("is_none", "x", lambda x: x is None, differentiable=False)
register("is_int", "x", lambda x: isinstance(x, (int, np.integer)) and not isinstance(
    x, (bool, np.bool_)), differentiable=False)


def _computed_index(key) -> bool:
    """Does ``key`` hold an int known only at run time (a loop's counter, a run-time int
    argument)?  Static parts are Python/NumPy ints, slices, None and ``...``; the tracer
    passes a computed one as its node (``myc.infer.trace``'s plumbing)."""
    parts = key if isinstance(key, tuple) else (key,)
    return not all(isinstance(p, (int, np.integer, slice, type(None), type(Ellipsis)))
                   for p in parts)


register("computed_index", "key", _computed_index, differentiable=False)


def _is_mask_of(key, x) -> bool:
    return isinstance(key, np.ndarray) and key.dtype == np.bool_ and key.ndim >= 1 and \
        key.shape == np.shape(x)


def _mask_assign(x, key, value):
    out = np.array(x, copy=True)
    out[key] = value
    return out


def _basic_index(key) -> bool:
    """Is ``key`` an index of ints, slices, ``None`` and ``...`` only (each element of
    ``x[key]`` a distinct element of ``x``)?  ``x[key] = v`` writes through it."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(p is None or p is Ellipsis or isinstance(p, slice) or (
        isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)))
        for p in parts)


register("basic_index", "key", _basic_index, differentiable=False,
         doc="Is ``key`` ints, slices, None and ... only (``x[key] = v`` takes it)?")
register("is_mask_of", "key x", _is_mask_of, differentiable=False,
         doc="Is ``key`` a boolean mask of ``x``'s shape (``x[key] = v`` takes it)?")
register("mask_assign", "x key value", _mask_assign,
         doc="``x[mask] = value`` as a new array (compiled as ``np.where``).")
# A selection x[mask] the tracer keeps unselected (myc.infer.masked) reduced by code that
# reads every element (np.prod's pairwise products): the unselected places filled with
# the reduction's identity, and the cotangent of that filled array made a selection
# again.  On concrete values (the evaluator) a selection is already selected: both are
# the identity.
register("fill_unselected", "x fill", lambda x, fill: x,
         doc="A selection ``x[mask]`` whole, ``fill`` off the mask (compiled code only).")
register("reselect", "d x", lambda d, x: d,
         doc="A filled selection's cotangent ``d`` as the selection ``x``'s.")


def axis_prefix(ndim: int, axis: int) -> tuple:
    """The full slices before ``axis``: ``prefix + (index,)`` indexes along ``axis``."""
    return (slice(None),) * _axis(axis, ndim)


def flip_index(ndim: int, axis) -> tuple:
    """The basic index reversing ``axis`` (an int, a tuple, or None: every axis)."""
    axes = range(ndim) if axis is None else _axes(axis, ndim)
    return tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim))


def swap_perm(ndim: int, axis1: int, axis2: int) -> tuple[int, ...]:
    perm = list(range(ndim))
    a, b = _axis(axis1, ndim), _axis(axis2, ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


def move_perm(ndim: int, source, destination) -> tuple[int, ...]:
    src = _axes(source, ndim)
    dst = _axes(destination, ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return tuple(order)


def tile_shapes(shape: tuple, reps) -> tuple[tuple, tuple, tuple]:
    """``np.tile`` as reshape -> broadcast -> reshape: the three shapes."""
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    if any(isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer))
           for r in reps):
        raise TypeError("np.tile: reps must be ints known when the program is compiled")
    nd = max(len(shape), len(reps))
    shape = (1,) * (nd - len(shape)) + tuple(shape)
    reps = (1,) * (nd - len(reps)) + tuple(int(r) for r in reps)
    inter = tuple(d for s in shape for d in (1, s))
    wide = tuple(d for r, s in zip(reps, shape, strict=True) for d in (r, s))
    return inter, wide, tuple(r * s for r, s in zip(reps, shape, strict=True))


for _name, _fn in [("axis_prefix", axis_prefix), ("flip_index", flip_index),
                   ("swap_perm", swap_perm), ("move_perm", move_perm),
                   ("tile_shapes", tile_shapes)]:
    register(_name, _fn.__code__.co_varnames[:_fn.__code__.co_argcount], _fn,
             differentiable=False)
    STATIC_ONLY[_name] = "axes, shifts and repetitions must be ints known when the " \
                         "program is compiled, not computed from array or float data"


def tensordot_plan(shape_a: tuple, shape_b: tuple, axes) -> tuple:
    """``np.tensordot`` as transpose -> reshape -> matmul -> reshape: ``a``'s contracted
    axes moved last and ``b``'s first, each flattened to a matrix; the five shapes."""
    na, nb = len(shape_a), len(shape_b)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        n = int(axes)
        if n < 0 or n > min(na, nb):
            raise ValueError("np.tensordot: axes exceeds the arrays' dimensions")
        ax_a, ax_b = tuple(range(na - n, na)), tuple(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
        ax_a = tuple(_axis(a, na) for a in ax_a)
        ax_b = tuple(_axis(b, nb) for b in ax_b)
    if len(ax_a) != len(ax_b) or any(shape_a[i] != shape_b[j]
                                     for i, j in zip(ax_a, ax_b, strict=True)):
        raise ValueError("np.tensordot: shape-mismatch for sum")
    free_a = tuple(i for i in range(na) if i not in ax_a)
    free_b = tuple(j for j in range(nb) if j not in ax_b)
    k = int(np.prod([shape_a[i] for i in ax_a])) if ax_a else 1
    m = int(np.prod([shape_a[i] for i in free_a])) if free_a else 1
    n = int(np.prod([shape_b[j] for j in free_b])) if free_b else 1
    out = tuple(shape_a[i] for i in free_a) + tuple(shape_b[j] for j in free_b)
    return free_a + ax_a, (m, k), ax_b + free_b, (k, n), out


def split_bounds(n: int, sections, strict: bool) -> tuple:
    """``np.split``/``np.array_split``'s pieces of an axis of length ``n``: (start, stop)
    pairs, from a number of sections or a list of split points."""
    if isinstance(sections, (int, np.integer)) and not isinstance(sections, (bool, np.bool_)):
        k = int(sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % k:
            raise ValueError("array split does not result in an equal division")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        cuts = [0]
        for s in sizes:
            cuts.append(cuts[-1] + s)
    else:
        cuts = [0, *(min(max(int(c) if c >= 0 else n + int(c), 0), n) for c in sections), n]
    return tuple((a, max(a, b)) for a, b in zip(cuts[:-1], cuts[1:], strict=True))


def pad_widths(ndim: int, pad_width) -> tuple:
    """``np.pad``'s ``pad_width`` as one (before, after) pair per axis."""
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu" or np.any(pw < 0):
        raise ValueError("np.pad: pad_width must be non-negative ints")
    return tuple((int(b), int(a)) for b, a in np.broadcast_to(pw, (ndim, 2)))


for _name, _fn in [("tensordot_plan", tensordot_plan), ("split_bounds", split_bounds),
                   ("pad_widths", pad_widths)]:
    register(_name, _fn.__code__.co_varnames[:_fn.__code__.co_argcount], _fn,
             differentiable=False)
    STATIC_ONLY[_name] = "axes, sections and widths must be ints known when the program " \
                         "is compiled, not computed from array or float data"


def axis_resized(shape: tuple, axis: int, n: int) -> tuple:
    """``shape`` with length ``n`` along ``axis``."""
    shape = tuple(shape)
    ax = _axis(axis, len(shape))
    return shape[:ax] + (int(n),) + shape[ax + 1:]


register("axis_resized", "shape axis n", axis_resized, differentiable=False)
STATIC_ONLY["axis_resized"] = STATIC_ONLY["pad_widths"]
register("finfo_max", "dtype", lambda dtype: float(np.finfo(dtype).max), differentiable=False)
STATIC_ONLY["finfo_max"] = "np.nan_to_num: the array's dtype must be known when compiled"
register("float_dtype", "dtype", lambda dtype: np.dtype(dtype).kind == "f",
         differentiable=False)
STATIC_ONLY["float_dtype"] = "the array's dtype must be known when compiled"
