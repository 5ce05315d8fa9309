"""NumPy functions written in the myc subset itself.

Each function here stands for the NumPy function of the same name (the table
``NP_LIBRARY`` in ``myc/frontend/builtins.py`` maps NumPy's names to these): a call
``np.logaddexp(a, b)`` in a program is a call of this Python function, parsed like user
code.  So reverse and forward mode, fusion and every backend handle it as the composition
of primitives it is, with no rules of its own.  Shapes, axes and counts are static while a
program is specialized, so the ``P.*_shape``/``P.*_index`` helpers (``myc/prims/arrays.py``)
compute index tuples and shapes in Python; they refuse array or float data with a message
that names the NumPy function.  Errors raised in here are reported at the user's call.

Each function follows NumPy's own definition where that matters for the result's dtype,
Python type (NumPy scalar vs 0-d array) and special values.
"""

# ruff: noqa: A001, ARG001 - NumPy's names and signatures (unused out=/dtype= refused)
import numpy as np

from myc.prims import P


def _scalar_if_0d(r):
    """A ufunc's 0-d result is a NumPy scalar, as NumPy's ufuncs return."""
    if np.ndim(r) == 0:
        return r[()]
    return r


# ---------------------------------------------------------------- elementwise


def logaddexp(x1, x2):
    # log(exp(x1) + exp(x2)) without overflow; where both are the same infinity the
    # difference is nan and the maximum is the answer
    m = np.maximum(x1, x2)
    d = x1 - x2
    return _scalar_if_0d(np.where(d == d, m + np.log1p(np.exp(-np.abs(d))), m))


# ---------------------------------------------------------------- shapes


def expand_dims(a, axis):
    return np.reshape(a, P.expand_dims_shape(np.shape(a), axis))


def squeeze(a, axis=None):
    return np.reshape(a, P.squeeze_shape(np.shape(a), axis))


def ravel(a, order="C"):
    if order != "C":
        return P.lib_error("np.ravel: only order='C' is supported")
    return np.reshape(a, (-1,))


def flatten(a, order="C"):
    if order != "C":
        return P.lib_error("ndarray.flatten: only order='C' is supported")
    return np.reshape(a, (-1,)).copy()


def item(a):
    """``x.item()``: the one element of a size-1 array (NumPy's ValueError otherwise)."""
    if np.size(a) != 1:
        return P.lib_error("ndarray.item(): can only convert an array of size 1 to a "
                           "Python scalar")
    return np.reshape(a, ())[()]


def atleast_1d(a):
    if np.ndim(a) == 0:
        return np.reshape(a, (1,))
    return a


def atleast_2d(a):
    if np.ndim(a) == 0:
        return np.reshape(a, (1, 1))
    if np.ndim(a) == 1:
        return np.reshape(a, (1, -1))
    return a


# ---------------------------------------------------------------- stacking


def stack(arrays, axis=0):
    parts = ()
    for a in arrays:
        parts = parts + (np.reshape(a, P.expand_dims_shape(np.shape(a), axis)),)
    return np.concatenate(parts, axis)


def hstack(tup):
    parts = ()
    for a in tup:
        parts = parts + (atleast_1d(a),)
    if len(parts) > 0 and np.ndim(parts[0]) == 1:
        return np.concatenate(parts, 0)
    return np.concatenate(parts, 1)


def vstack(tup):
    parts = ()
    for a in tup:
        parts = parts + (atleast_2d(a),)
    return np.concatenate(parts, 0)


def index_r(tup):
    """``np.r_[a, b, ...]`` of arrays, lists and numbers: joined along the first axis
    (numbers and 0-d arrays as length-1 rows), as NumPy's ``r_`` does without its
    slice and string directives (the frontend refuses those at the line)."""
    parts = ()
    for a in tup:
        parts = parts + (np.atleast_1d(np.asarray(a)),)
    return np.concatenate(parts, 0)


def index_c(tup):
    """``np.c_[a, b, ...]``: 1-D arrays as columns, numbers as 1x1, 2-D and more as
    they are, joined along the last axis (NumPy's ``c_``, ``r_['-1,2,0', ...]``)."""
    parts = ()
    for a in tup:
        a = np.asarray(a)
        if np.ndim(a) == 0:
            a = np.reshape(a, (1, 1))
        elif np.ndim(a) == 1:
            a = np.reshape(a, (-1, 1))
        parts = parts + (a,)
    return np.concatenate(parts, -1)


def column_stack(tup):
    parts = ()
    for a in tup:
        if np.ndim(a) < 2:
            parts = parts + (np.reshape(a, (-1, 1)),)
        else:
            parts = parts + (a,)
    return np.concatenate(parts, 1)


# ---------------------------------------------------------------- statistics


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error("np.var/np.std: dtype= and out= are not supported")
    # NumPy's definition: mean of squared deviations, divided by max(n - ddof, 0)
    d = a - np.mean(a, axis=axis, keepdims=True)
    n = P.reduced_size(np.shape(a), axis)
    return np.sum(d * d, axis=axis, keepdims=keepdims) / max(n - ddof, 0)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return np.sqrt(var(a, axis, dtype, out, ddof, keepdims))


def _cov_rows(a, rowvar, dtype):
    # NumPy: ``array(a, ndmin=2, dtype=result_type(a, float64))``, variables in rows
    x = atleast_2d(np.asarray(a, dtype=np.float64 if P.is_none(dtype) else dtype))
    if not rowvar and np.shape(x)[0] != 1:
        x = np.transpose(x)
    return x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    if not (P.is_none(fweights) and P.is_none(aweights)):
        return P.lib_error("np.cov: fweights= and aweights= are not supported")
    x = _cov_rows(m, rowvar, dtype)
    if not P.is_none(y):
        x = np.concatenate((x, _cov_rows(y, rowvar, dtype)), axis=0)
    if P.is_none(ddof):
        ddof = 0 if bias else 1
    d = x - np.mean(x, axis=1, keepdims=True)
    # NumPy divides by n - ddof, clipped at 0 (with a warning): inf/nan, as here
    c = (d @ np.transpose(d)) * (1.0 / max(np.shape(x)[1] - ddof, 0))
    return np.squeeze(c)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if np.ndim(c) == 0:
        return c / c
    s = np.sqrt(diag(c))
    return np.clip(c / np.reshape(s, (-1, 1)) / np.reshape(s, (1, -1)), -1, 1)


def _prod_axis(x, ax):
    """The product along ``ax`` of ``x`` (kept as a length-1 axis): pairs multiplied in
    halving rounds, so ``log2(n)`` elementwise steps whose derivative is exact at zeros."""
    nd = np.ndim(x)
    n = np.shape(x)[ax]
    if n == 0:  # the empty product, in the sum's dtype
        return np.sum(x, axis=ax, keepdims=True) + 1
    # the sum's dtype (int64 for bools) is the product's too
    one = np.sum(np.ones_like(x[P.axis_slice(nd, ax, 0, 1, 1)]), axis=ax, keepdims=True)
    x = x * one
    extra = one
    while n > 1:
        h = n // 2
        if n % 2 == 1:
            extra = extra * x[P.axis_slice(nd, ax, n - 1, n, 1)]
        x = x[P.axis_slice(nd, ax, 0, 2 * h, 2)] * x[P.axis_slice(nd, ax, 1, 2 * h, 2)]
        n = h
    return x * extra


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error("np.prod: dtype= and out= are not supported")
    if np.ndim(a) == 0:
        x = np.reshape(a, (1,))
        r = _prod_axis(x, 0)
        if keepdims:
            return np.reshape(r, ())
        return r[0]
    if P.is_none(axis):  # (x[mask] of a data mask: x whole, 1 off the mask)
        r = _prod_axis(np.reshape(P.fill_unselected(a, 1), (-1,)), 0)
        if keepdims:
            return np.reshape(r, (1,) * np.ndim(a))
        return r[0]
    axes = P.reduced_axes(np.ndim(a), axis)
    r = a
    for ax in axes:
        r = _prod_axis(r, ax)
    if keepdims:
        return r
    return _scalar_if_0d(np.reshape(r, P.squeeze_shape(np.shape(r), axes)))


# ---------------------------------------------------------------- linear algebra


def outer(a, b, out=None):
    if not P.is_none(out):
        return P.lib_error("np.outer: out= is not supported")
    return np.reshape(a, (-1, 1)) * np.reshape(b, (1, -1))


def eye(N, M=None, k=0, dtype=None, order="C"):
    # dtype None is float64, as dtype=float
    cols = N if P.is_none(M) else M
    mask = np.reshape(np.arange(N), (-1, 1)) + k == np.reshape(np.arange(cols), (1, -1))
    return mask.astype(dtype)


def _array_method(a, name):
    # ``xs.sort()`` on a list or dict: myc's containers are values, not arrays
    kind = P.container_kind(a)
    if kind != "other":
        return P.lib_error(f"{kind}.{name}() is not supported: myc's lists and dicts are "
                           f"values; make an array (np.array(xs)) and call .{name}() on it")
    return None


def fill_value(a, value):
    """``a.fill(value)``'s effect as a value (the frontend rebinds ``a`` to it):
    ``value`` cast to ``a``'s dtype everywhere."""
    if not P.is_none(_array_method(a, "fill")):
        return a
    if np.ndim(value) != 0:
        return P.lib_error("ndarray.fill: the value must be a scalar")
    return full_like(a, value)


def sort_value(a, axis=-1, kind=None, order=None):
    """``a.sort(axis)``'s effect as a value: the sorted array ``a`` is rebound to."""
    if not P.is_none(_array_method(a, "sort")):
        return a
    if P.is_none(axis):
        return P.lib_error("ndarray.sort: axis=None is not supported (NumPy refuses it "
                           "too); use np.sort(a, axis=None)")
    return sort(a, axis, kind, order)


def copyto_value(dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src)``'s effect as a value: ``src`` broadcast to ``dst``'s shape
    and cast to its dtype under ``casting``, written where ``where`` holds."""
    if casting == "same_kind":
        new = P.aug_assign(dst, src)
    elif casting == "unsafe":
        new = np.broadcast_to(np.asarray(src), np.shape(dst)).astype(P.dtype(dst))
    else:
        return P.lib_error("np.copyto: casting='same_kind' and 'unsafe' are supported")
    return np.where(where, new, dst)


def fill_diagonal_value(a, val, wrap=False):
    """``np.fill_diagonal(a, val)``'s effect as a value: ``a`` with its diagonal set (the
    frontend rebinds ``a`` to it, as for ``a[mask] = v``); ``val`` a scalar or repeated
    along the diagonal, cast to ``a``'s dtype."""
    if np.ndim(a) != 2:
        return P.lib_error("np.fill_diagonal: only 2-d arrays are supported")
    if wrap and np.shape(a)[0] > np.shape(a)[1] + 1:
        return P.lib_error("np.fill_diagonal: wrap=True is not supported")
    rows = np.reshape(np.arange(np.shape(a)[0]), (-1, 1))
    mask = rows == np.reshape(np.arange(np.shape(a)[1]), (1, -1))
    v = np.asarray(val)
    if np.ndim(v) == 0:
        return np.where(mask, v, a).astype(a.dtype)
    v = np.ravel(v)
    per_row = np.reshape(v[np.arange(np.shape(a)[0]) % np.shape(v)[0]], (-1, 1))
    return np.where(mask, per_row, a).astype(a.dtype)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def _tri_mask(shape, k, upper):
    rows = np.reshape(np.arange(shape[-2]), (-1, 1))
    cols = np.reshape(np.arange(shape[-1]), (1, -1))
    if upper:
        return cols - rows >= k
    return cols - rows <= k


def triu(m, k=0):
    if np.ndim(m) < 2:
        return P.lib_error("np.triu: arrays of fewer than 2 dimensions are not supported")
    return np.where(_tri_mask(np.shape(m), k, True), m, np.zeros_like(m))


def tril(m, k=0):
    if np.ndim(m) < 2:
        return P.lib_error("np.tril: arrays of fewer than 2 dimensions are not supported")
    return np.where(_tri_mask(np.shape(m), k, False), m, np.zeros_like(m))


def diag(v, k=0):
    if np.ndim(v) == 1:
        n = np.shape(v)[0] + abs(k)
        rows = np.reshape(np.arange(n), (-1, 1))
        cols = np.reshape(np.arange(n), (1, -1))
        # the value of row i (k >= 0) or column j (k < 0): v padded with |k| zeros
        if np.shape(v)[0] == 0:  # zeros in v's dtype (the sum's, for small ints)
            return np.broadcast_to(np.sum(v), (n, n))
        padded = v
        if k != 0:  # |k| zeros in v's dtype
            padded = np.concatenate((v, np.zeros_like(np.repeat(v[:1], abs(k)))))
        if k >= 0:
            vals = np.reshape(padded, (-1, 1))
        else:
            vals = np.reshape(padded, (1, -1))
        return np.where(cols - rows == k, vals, np.zeros_like(vals))
    if np.ndim(v) == 2:
        rows, cols = np.shape(v)
        if k >= 0:
            n = max(0, min(rows, cols - k))
            i = np.arange(n)
            return v[i, i + k]
        n = max(0, min(rows + k, cols))
        i = np.arange(n)
        return v[i - k, i]
    return P.lib_error("np.diag: the input must be 1-d or 2-d")


def _norm2(y, axis, keepdims):
    # sqrt(sum(y * y)), whose gradient at the zero vector is 0 (a subgradient, as
    # PyTorch's) rather than 0 * inf = nan: pairwise distances ``norm(x[:, None] - x,
    # axis=-1)`` have zero vectors on their diagonal, and a program that then uses only
    # ``dist ** 2`` or masks the diagonal has a finite derivative there.  The square root
    # is taken of 1 where the sum is 0 and the sum itself returned (same value, nan kept)
    s = np.sum(y * y, axis=axis, keepdims=keepdims)
    pos = s > 0
    return _scalar_if_0d(np.where(pos, np.sqrt(np.where(pos, s, 1.0)), s))


def norm(x, ord=None, axis=None, keepdims=False):
    vector = P.is_int(axis) or (P.is_none(axis) and np.ndim(x) == 1)
    matrix = (P.is_none(axis) and np.ndim(x) == 2) or (P.is_tuple(axis) and len(axis) == 2)
    y = x * 1.0  # NumPy computes an integer array's norm in float64
    if P.is_none(ord) and (vector or matrix or P.is_none(axis)):
        return _norm2(y, axis, keepdims)
    if vector:
        if ord == 2:
            return _norm2(y, axis, keepdims)
        if P.is_tuple(ord) or ord == "fro" or ord == "nuc":
            return P.lib_error("np.linalg.norm: ord='fro' and 'nuc' are for matrices, not "
                               "vectors")
        a = np.abs(y)
        if ord == np.inf:
            return np.max(a, axis=axis, keepdims=keepdims)
        if ord == -np.inf:
            return np.min(a, axis=axis, keepdims=keepdims)
        if ord == 0:  # the number of nonzero elements, in the norm's dtype
            return np.sum(np.where(y != 0, np.ones_like(y), np.zeros_like(y)), axis=axis,
                          keepdims=keepdims)
        if ord == 1:
            return np.sum(a, axis=axis, keepdims=keepdims)
        return np.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)
    if not matrix:
        return P.lib_error("np.linalg.norm: an axis must be None, an int or a pair of ints")
    if ord == "fro":
        return _norm2(y, axis, keepdims)
    if ord == 2 or ord == -2 or ord == "nuc":
        return P.lib_error("np.linalg.norm: the matrix norms ord=2, -2 and 'nuc' need "
                           "singular values, which myc does not compute; supported for "
                           "matrices: None, 'fro', 1, -1, inf, -inf")
    nd = np.ndim(x)
    pair = (0, 1) if P.is_none(axis) else axis
    r = pair[0] % nd
    c = pair[1] % nd
    a = np.abs(y)
    if ord == 1 or ord == -1:  # the largest (smallest) column sum
        sums = np.sum(a, axis=r, keepdims=True)
    elif ord == np.inf or ord == -np.inf:  # the largest (smallest) row sum
        sums = np.sum(a, axis=c, keepdims=True)
    else:
        return P.lib_error("np.linalg.norm: this ord is not a matrix norm (None, 'fro', 1, "
                           "-1, inf, -inf are supported)")
    if ord == 1 or ord == np.inf:
        ret = np.max(sums, axis=(r, c), keepdims=True)
    else:
        ret = np.min(sums, axis=(r, c), keepdims=True)
    if keepdims:
        return ret
    return _scalar_if_0d(np.reshape(ret, P.squeeze_shape(np.shape(ret), (r, c))))


# ---------------------------------------------------------------- rearranging


def repeat(a, repeats, axis=None):
    if P.is_none(axis):
        flat = np.reshape(a, (-1,))
        return flat[P.repeat_index(np.shape(flat)[0], repeats)]
    nd = np.ndim(a)
    return a[P.axis_index(nd, axis, P.repeat_index(np.shape(a)[axis], repeats))]


def roll(a, shift, axis=None):
    if P.is_none(axis):
        flat = np.reshape(a, (-1,))
        return np.reshape(flat[P.roll_index(np.shape(flat)[0], shift)], np.shape(a))
    if not P.is_int(axis):
        return P.lib_error("np.roll: only an int axis (or None) is supported")
    nd = np.ndim(a)
    n = np.shape(a)[axis]
    k = P.roll_index(n, shift)[0] if n > 0 else 0  # the element that comes first
    if k == 0:
        return a
    # two slices joined (a gather with a slice before the index array, x[:, idx], is
    # not covered by native programs; slices and a concatenation are)
    return np.concatenate((a[P.axis_slice(nd, axis, k, n, 1)],
                           a[P.axis_slice(nd, axis, 0, k, 1)]), axis=axis)


def cumsum(a, axis=None, dtype=None, out=None):
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error("np.cumsum: dtype= and out= are not supported")
    return P.cumsum(a, axis)


def _ufunc2(name, x, y):
    """The binary ufunc ``np.<name>`` of the scans below (a static name)."""
    if name == "logaddexp":
        return logaddexp(x, y)
    if name == "logaddexp2":
        m = np.maximum(x, y)
        return m + np.log2(1.0 + np.exp2(-np.abs(x - y)))
    if name == "maximum":
        return np.maximum(x, y)
    if name == "minimum":
        return np.minimum(x, y)
    if name == "add":
        return x + y
    if name == "multiply":
        return x * y
    return P.lib_error(f"np.{name}.accumulate/reduce: not supported (np.add, multiply, "
                       "maximum, minimum, logaddexp and logaddexp2 are)")


def ufunc_accumulate(name, array, axis=0, dtype=None, out=None):
    """``np.<name>.accumulate(array, axis)``: a running ``name`` along ``axis`` in NumPy's
    order (each result the ufunc of the previous one and the next element)."""
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error(f"np.{name}.accumulate: dtype= and out= are not supported")
    a = np.asarray(array)
    if np.ndim(a) == 0:
        return P.lib_error(f"np.{name}.accumulate: cannot accumulate a 0-d array")
    if name == "add":
        return np.cumsum(a, axis=axis)
    if name == "multiply":
        return np.cumprod(a, axis=axis)
    a = np.moveaxis(a, axis, 0)
    acc = a[0]
    parts = [acc]
    for i in range(1, np.shape(a)[0]):
        acc = _ufunc2(name, acc, a[i])
        parts.append(acc)
    if np.shape(a)[0] == 0:
        return np.moveaxis(a, 0, axis)
    return np.moveaxis(np.stack(parts), 0, axis)


def ufunc_reduce(name, array, axis=0, dtype=None, out=None, keepdims=False):
    """``np.<name>.reduce(array, axis, keepdims=)`` (an int axis)."""
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error(f"np.{name}.reduce: dtype= and out= are not supported")
    if P.is_none(axis):
        return P.lib_error(f"np.{name}.reduce: axis=None is not supported (an int axis is)")
    if name == "add":
        return np.sum(array, axis=axis, keepdims=keepdims)
    if name == "multiply":
        return np.prod(array, axis=axis, keepdims=keepdims)
    if name == "maximum":
        return np.max(array, axis=axis, keepdims=keepdims)
    if name == "minimum":
        return np.min(array, axis=axis, keepdims=keepdims)
    r = np.take(ufunc_accumulate(name, array, axis), -1, axis=axis)
    if keepdims:
        return np.expand_dims(r, axis)
    return _scalar_if_0d(r)


def flip(m, axis=None):
    return m[P.flip_index(np.ndim(m), axis)]


def fliplr(m):
    if np.ndim(m) < 2:
        return P.lib_error("np.fliplr: the input must be at least 2-d")
    return m[:, ::-1]


def flipud(m):
    if np.ndim(m) < 1:
        return P.lib_error("np.flipud: the input must be at least 1-d")
    return m[::-1]


def swapaxes(a, axis1, axis2):
    return np.transpose(a, P.swap_perm(np.ndim(a), axis1, axis2))


def moveaxis(a, source, destination):
    return np.transpose(a, P.move_perm(np.ndim(a), source, destination))


def take(a, indices, axis=None):
    if P.is_none(axis):
        return np.reshape(a, (-1,))[indices]
    return a[P.axis_prefix(np.ndim(a), axis) + (indices,)]


def tile(A, reps):
    inter, wide, final = P.tile_shapes(np.shape(A), reps)
    return np.reshape(np.broadcast_to(np.reshape(A, inter), wide), final)


def trace(a, offset=0):
    if np.ndim(a) != 2:
        return P.lib_error("np.trace: only 2-d arrays are supported")
    return np.sum(diag(a, offset))


def meshgrid(x1, x2, indexing="xy", sparse=False, copy=True):
    a = np.reshape(x1, (-1,))
    b = np.reshape(x2, (-1,))
    if indexing == "xy":
        xa = np.reshape(a, (1, -1))
        xb = np.reshape(b, (-1, 1))
    elif indexing == "ij":
        xa = np.reshape(a, (-1, 1))
        xb = np.reshape(b, (1, -1))
    else:
        return P.lib_error("np.meshgrid: indexing must be 'xy' or 'ij'")
    if sparse:
        return (xa, xb)
    shape = (np.shape(xa)[0] * np.shape(xb)[0], np.shape(xa)[1] * np.shape(xb)[1])
    return (np.broadcast_to(xa, shape), np.broadcast_to(xb, shape))


# ---------------------------------------------------------------- einsum


def _sum_out(x, axes):
    if len(axes) == 0:
        return x
    return np.sum(x, axis=axes)


def einsum(subscripts, op0, op1=None, op2=None, op3=None, op4=None, out=None,
           optimize=False):
    # up to five operands (the subset has no *args); the plan is made from the static
    # subscripts and shapes (myc/prims/einsum_plan.py)
    if not P.is_none(out):
        return P.lib_error("np.einsum: out= is not supported")
    ops = (op0,)
    for o in (op1, op2, op3, op4):
        if not P.is_none(o):
            ops = ops + (o,)
    shapes = ()
    for o in ops:
        shapes = shapes + (np.shape(o),)
    diagonals, first, steps, last = P.einsum_plan(subscripts, shapes)
    ready = ()
    i = 0
    for o in ops:  # a label repeated within an operand: its diagonal, gathered
        for d in diagonals[i]:
            o = np.transpose(o, d[0])[..., np.arange(d[1]), np.arange(d[1])]
        ready = ready + (o,)
        i = i + 1
    r = _sum_out(ready[0], first)
    i = 1
    for s in steps:
        a = np.reshape(np.transpose(_sum_out(r, s[0]), s[1]), s[2])
        b = np.reshape(np.transpose(_sum_out(ready[i], s[3]), s[4]), s[5])
        if s[6]:
            r = np.reshape(np.matmul(a, b), s[7])
        else:
            r = np.reshape(a * b, s[7])
        i = i + 1
    return _scalar_if_0d(np.transpose(_sum_out(r, last[0]), last[1]))


# ---------------------------------------------------------------- sorting


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    if not (P.is_none(order) and P.is_none(stable)):
        return P.lib_error("np.argsort: order= and stable= are not supported")
    return P.argsort(a, axis, kind)


def sort(a, axis=-1, kind=None, order=None, stable=None):
    # a gather by NumPy's own permutation: the gradient scatters back through it
    if not (P.is_none(order) and P.is_none(stable)):
        return P.lib_error("np.sort: order= and stable= are not supported")
    if P.is_none(axis):
        flat = np.reshape(a, (-1,))
        return flat[P.argsort(flat, 0, kind)]
    if np.ndim(a) == 0:
        return P.lib_error("np.sort: a 0-d array cannot be sorted along an axis")
    before, after = P.along_axis_grid(np.shape(a), axis)
    return a[before + (P.argsort(a, axis, kind),) + after]


# ---------------------------------------------------------------- more elementwise math
# (compositions chosen for accuracy: expm1/log1p near zero, no overflow in the squares
# of large arguments -- the branch a `where` does not take still gets a safe input, so its
# gradient is never nan)

_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046


def sinh(x):
    return _scalar_if_0d(0.5 * (np.expm1(x) - np.expm1(-x)))


def cosh(x):
    return _scalar_if_0d(0.5 * (np.exp(x) + np.exp(-x)))


def _asinh_pos(a):
    big = a > 1e18  # (s * s below overflows past 1e154, in float32 past 1.8e19)
    s = np.where(big, 1.0, a)
    return np.where(big, np.log(np.where(big, a, 1.0)) + _LN2,
                    np.log1p(s + s * s / (1.0 + np.sqrt(1.0 + s * s))))


def arcsinh(x):
    neg = x < 0
    r = _asinh_pos(np.where(neg, -x, x))
    return _scalar_if_0d(np.where(neg, -r, r))


def arccosh(x):
    big = x > 1e18
    s = np.where(big, 2.0, x)
    return _scalar_if_0d(np.where(big, np.log(np.where(big, x, 1.0)) + _LN2,
                                  np.log(s + np.sqrt(s - 1.0) * np.sqrt(s + 1.0))))


def arctanh(x):
    return _scalar_if_0d(0.5 * (np.log1p(x) - np.log1p(-x)))


def arcsin(x):
    return _scalar_if_0d(np.arctan2(x, np.sqrt((1.0 - x) * (1.0 + x))))


def arccos(x):
    return _scalar_if_0d(np.arctan2(np.sqrt((1.0 - x) * (1.0 + x)), x))


def log2(x):
    return _scalar_if_0d(np.log(x) / _LN2)


def log10(x):
    return _scalar_if_0d(np.log(x) / _LN10)


def exp2(x):
    return _scalar_if_0d(np.power(2.0, x))


def hypot(x1, x2):
    a = np.abs(x1)
    b = np.abs(x2)
    m = np.maximum(a, b)
    n = np.minimum(a, b)
    zero = m == 0
    inf = (a == np.inf) | (b == np.inf)
    safe = np.where(zero | inf, 1.0, m)
    q = np.where(zero | inf, 0.0, n) / safe
    r = np.where(zero, 0.0, safe * np.sqrt(1.0 + q * q))
    return _scalar_if_0d(np.where(inf, np.inf, r))


def reciprocal(x):
    if not P.float_dtype(x.dtype):
        return P.lib_error("np.reciprocal: only float arrays are supported (NumPy's "
                           "integer reciprocal truncates)")
    return _scalar_if_0d(1.0 / x)


def cbrt(x):
    y = np.sign(x) * np.abs(x) ** (1.0 / 3.0)
    ok = (y != 0) & (np.abs(y) != np.inf)
    s = np.where(ok, y, 1.0)
    # one Newton step, written so no intermediate is subnormal (flushed to zero)
    return _scalar_if_0d(np.where(ok, s - (s - x / (s * s)) / 3.0, y))


def sinc(x):
    z = x == 0
    y = np.pi * np.where(z, 1.0, x)
    return _scalar_if_0d(np.where(z, 1.0, np.sin(y) / y))


def deg2rad(x):
    return _scalar_if_0d(x * (np.pi / 180.0))


def rad2deg(x):
    return _scalar_if_0d(x * (180.0 / np.pi))


def fmax(x1, x2):
    return _scalar_if_0d(np.where(x2 != x2, x1, np.where(x1 != x1, x2, np.maximum(x1, x2))))


def fmin(x1, x2):
    return _scalar_if_0d(np.where(x2 != x2, x1, np.where(x1 != x1, x2, np.minimum(x1, x2))))


def heaviside(x1, x2):
    at0 = np.zeros_like(x1) + x2  # (in the dtype NumPy gives: x1's and x2's)
    return _scalar_if_0d(np.where(x1 != x1, x1,
                                  np.where(x1 < 0, 0.0, np.where(x1 > 0, 1.0, at0))))


def _rint(x):
    # round half to even, exactly: x - floor(x) is exact for every float
    r = np.floor(x)
    d = x - r
    up = (d > 0.5) | ((d == 0.5) & (np.mod(r, 2.0) != 0))
    return np.where(up, r + 1.0, r)


def around(a, decimals=0, out=None):
    if not P.is_none(out):
        return P.lib_error("np.round: out= is not supported")
    if not P.float_dtype(a.dtype):
        return a * 1
    if decimals == 0:
        return _scalar_if_0d(_rint(a))
    if decimals > 0:
        s = 10.0 ** decimals
        return _scalar_if_0d(_rint(a * s) / s)
    s = 10.0 ** (-decimals)
    return _scalar_if_0d(_rint(a / s) * s)


# ---------------------------------------------------------------- tests of values


def isnan(x):
    return _scalar_if_0d(x != x)


def isinf(x):
    return _scalar_if_0d(np.abs(x) == np.inf)


def isfinite(x):
    return _scalar_if_0d(~((x != x) | (np.abs(x) == np.inf)))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not P.float_dtype(x.dtype):
        return x * 1
    big = P.finfo_max(x.dtype)
    hi = big if P.is_none(posinf) else posinf
    lo = -big if P.is_none(neginf) else neginf
    r = np.where(x != x, nan, np.where(x == np.inf, hi, np.where(x == -np.inf, lo, x)))
    return _scalar_if_0d(r.astype(x.dtype))


def logical_and(x1, x2):
    return _scalar_if_0d((x1 != 0) & (x2 != 0))


def logical_or(x1, x2):
    return _scalar_if_0d((x1 != 0) | (x2 != 0))


def logical_xor(x1, x2):
    return _scalar_if_0d((x1 != 0) ^ (x2 != 0))


def logical_not(x):
    return _scalar_if_0d(x == 0)


def all(a, axis=None, out=None, keepdims=False):
    if not P.is_none(out):
        return P.lib_error("np.all: out= is not supported")
    return np.sum(a == 0, axis=axis, keepdims=keepdims) == 0


def any(a, axis=None, out=None, keepdims=False):
    if not P.is_none(out):
        return P.lib_error("np.any: out= is not supported")
    return np.sum(a != 0, axis=axis, keepdims=keepdims) > 0


# ---------------------------------------------------------------- making arrays


def full_like(a, fill_value, dtype=None):
    dt = P.dtype(a) if P.is_none(dtype) else dtype
    return (np.zeros(np.shape(a)) + fill_value).astype(dt)


def empty_like(prototype, dtype=None):
    return np.zeros_like(prototype, dtype=dtype)


def empty(shape, dtype=None):
    return np.zeros(shape, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    cols = N if P.is_none(M) else M
    mask = np.reshape(np.arange(N), (-1, 1)) + k >= np.reshape(np.arange(cols), (1, -1))
    return mask.astype(dtype)


def convolve(a, v, mode="full"):
    # the full convolution as a product of a's sliding windows (a constant gather of the
    # zero-padded signal) with v reversed: one GEMV, and its gradient a GEMV and a
    # scatter-add; 'valid' and 'same' are slices of it, as NumPy defines them
    a = np.ravel(np.asarray(a))
    v = np.ravel(np.asarray(v))
    n = np.shape(a)[0]
    m = np.shape(v)[0]
    if n == 0 or m == 0:
        return P.lib_error("np.convolve: both inputs must be non-empty")
    if mode != "full" and mode != "valid" and mode != "same":
        return P.lib_error("np.convolve: mode must be 'full', 'valid' or 'same'")
    if m > n:  # the shorter one slides (convolution commutes)
        a, v, n, m = v, a, m, n
    zeros = np.zeros_like(a[:1]) * np.zeros_like(v[:1])
    pad = np.repeat(zeros, m - 1)
    padded = np.concatenate((pad, a * np.ones_like(zeros), pad))
    windows = padded[np.reshape(np.arange(n + m - 1), (-1, 1)) + np.reshape(np.arange(m),
                                                                          (1, -1))]
    full = windows @ v[::-1]
    if mode == "valid":
        return full[m - 1:n]
    if mode == "same":
        return full[(m - 1) // 2:(m - 1) // 2 + n]
    return full


def correlate(a, v, mode="valid"):
    return convolve(a, np.ravel(np.asarray(v))[::-1], mode)


def copy(a):
    return np.asarray(a).copy()


def logspace(start, stop, num=50, endpoint=True, base=10.0):
    return np.power(base, np.linspace(start, stop, num, endpoint=endpoint))


# ---------------------------------------------------------------- reductions and scans


def nansum(a, axis=None, keepdims=False):
    return np.sum(np.where(a != a, 0, a), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, keepdims=False):
    ok = a == a
    return np.sum(np.where(ok, a, 0), axis=axis, keepdims=keepdims) / np.sum(
        ok, axis=axis, keepdims=keepdims)


def _nan_result(a, r, axis, keepdims):
    # NumPy's nanmax/nanmin: an all-nan slice is nan (an int array has none)
    some = np.any(a == a, axis=axis, keepdims=keepdims)
    return _scalar_if_0d(np.where(some, r, np.nan).astype(r.dtype))


def nanmax(a, axis=None, out=None, keepdims=False):
    r = np.max(np.where(a == a, a, -np.inf).astype(a.dtype), axis=axis, keepdims=keepdims)
    return _nan_result(a, r, axis, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    r = np.min(np.where(a == a, a, np.inf).astype(a.dtype), axis=axis, keepdims=keepdims)
    return _nan_result(a, r, axis, keepdims)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if returned:
        return P.lib_error("np.average: returned=True is not supported")
    if P.is_none(weights):
        return np.mean(a, axis=axis, keepdims=keepdims)
    w = weights
    if np.ndim(w) != np.ndim(a):
        if np.ndim(w) != 1 or P.is_none(axis):
            return P.lib_error("np.average: weights must have a's shape, or be 1-d along "
                               "the given axis")
        ax = P.reduced_axes(np.ndim(a), axis)[0]
        w = np.reshape(w, P.axis_resized((1,) * np.ndim(a), ax, np.shape(w)[0]))
    return np.sum(a * w, axis=axis, keepdims=keepdims) / np.sum(
        w * np.ones_like(a), axis=axis, keepdims=keepdims)


def cumprod(a, axis=None, dtype=None, out=None):
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error("np.cumprod: dtype= and out= are not supported")
    if P.is_none(axis):
        a = np.reshape(a, (-1,))
        axis = 0
    nd = np.ndim(a)
    ax = P.reduced_axes(nd, axis)[0]
    n = np.shape(a)[ax]
    x = a * 1
    s = 1
    while s < n:  # prefix products in log2(n) rounds (exact gradients at zeros)
        head = np.ones_like(x[P.axis_slice(nd, ax, 0, s, 1)])
        x = x * np.concatenate((head, x[P.axis_slice(nd, ax, 0, n - s, 1)]), ax)
        s = s * 2
    return x


def diff(a, n=1, axis=-1, prepend=None, append=None):
    if not (P.is_none(prepend) and P.is_none(append)):
        return P.lib_error("np.diff: prepend= and append= are not supported")
    nd = np.ndim(a)
    ax = P.reduced_axes(nd, axis)[0]
    for _ in range(n):
        m = np.shape(a)[ax]
        a = a[P.axis_slice(nd, ax, 1, m, 1)] - a[P.axis_slice(nd, ax, 0, m - 1, 1)]
    return a


def median(a, axis=None, keepdims=False):
    if P.is_none(axis):
        s = np.sort(np.reshape(a, (-1,)))
        ax = 0
    else:
        ax = P.reduced_axes(np.ndim(a), axis)[0]
        s = np.sort(a, axis=ax)
    nd = np.ndim(s)
    n = np.shape(s)[ax]
    h = n // 2
    if n % 2 == 1:
        m = s[P.axis_slice(nd, ax, h, h + 1, 1)]
    else:
        m = 0.5 * (s[P.axis_slice(nd, ax, h - 1, h, 1)] + s[P.axis_slice(nd, ax, h, h + 1, 1)])
    m = np.where(np.sum(s != s, axis=ax, keepdims=True) > 0, np.nan, m)
    if keepdims:
        if P.is_none(axis):
            return np.reshape(m, (1,) * np.ndim(a))
        return m
    return _scalar_if_0d(np.reshape(m, P.squeeze_shape(np.shape(m), ax)) * 1.0)


# ---------------------------------------------------------------- products


def tensordot(a, b, axes=2):
    pa, sa, pb, sb, so = P.tensordot_plan(np.shape(a), np.shape(b), axes)
    am = np.reshape(np.transpose(a, pa), sa)
    bm = np.reshape(np.transpose(b, pb), sb)
    return np.reshape(am @ bm, so)


def dot(a, b):
    # a matrix product (the primitive) up to 2-d; beyond, NumPy's dot sums over a's last
    # axis and b's second-to-last (its last when 1-d), unlike matmul's broadcasting
    if np.ndim(a) == 0 or np.ndim(b) == 0 or (np.ndim(a) <= 2 and np.ndim(b) <= 2):
        return P.dot(a, b)
    if np.ndim(b) == 1:
        return tensordot(a, b, ((-1,), (0,)))
    return tensordot(a, b, ((-1,), (-2,)))


def inner(a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return a * b
    return tensordot(a, b, ((-1,), (-1,)))


def vdot(a, b):
    return np.sum(np.reshape(a, (-1,)) * np.reshape(b, (-1,)))


def kron(a, b):
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return np.reshape(np.reshape(a, (-1, 1)) * np.reshape(b, (1, -1)), (-1,))
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        return P.lib_error("np.kron: only arrays of at most 2 dimensions are supported")
    a2 = atleast_2d(a)
    b2 = atleast_2d(b)
    m, n = np.shape(a2)
    p, q = np.shape(b2)
    r = np.reshape(a2, (m, 1, n, 1)) * np.reshape(b2, (1, p, 1, q))
    return np.reshape(r, (m * p, n * q))


# ---------------------------------------------------------------- pieces and padding


def dstack(tup):
    parts = ()
    for a in tup:
        if np.ndim(a) == 0:
            parts = parts + (np.reshape(a, (1, 1, 1)),)
        elif np.ndim(a) == 1:
            parts = parts + (np.reshape(a, (1, -1, 1)),)
        elif np.ndim(a) == 2:
            parts = parts + (np.reshape(a, np.shape(a) + (1,)),)
        else:
            parts = parts + (a,)
    return np.concatenate(parts, 2)


def _split(ary, indices_or_sections, axis, strict):
    nd = np.ndim(ary)
    ax = P.reduced_axes(nd, axis)[0]
    out = []
    for start, stop in P.split_bounds(np.shape(ary)[ax], indices_or_sections, strict):
        out.append(ary[P.axis_slice(nd, ax, start, stop, 1)])
    return out


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, False)


def _pad_index(n, before, after, mode):
    """Where each place of an axis padded by ``mode`` reads the array (NumPy's periodic
    extensions: 'reflect' does not repeat the edge, 'symmetric' does)."""
    i = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "symmetric":
        j = i % (2 * n)
        return np.where(j >= n, 2 * n - 1 - j, j)
    if n == 1:  # reflect of one element: itself
        return i * 0
    j = np.abs(i) % (2 * n - 2)
    return np.where(j >= n, 2 * n - 2 - j, j)


def pad(array, pad_width, mode="constant", constant_values=0):
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        x = np.asarray(array)
        ax = 0
        for before, after in P.pad_widths(np.ndim(x), pad_width):
            if before > 0 or after > 0:
                if np.shape(x)[ax] == 0:
                    return P.lib_error(f"np.pad: can't extend an empty axis with mode={mode!r}")
                x = np.take(x, _pad_index(np.shape(x)[ax], before, after, mode), axis=ax)
            ax = ax + 1
        return x
    if mode != "constant":
        return P.lib_error("np.pad: the supported modes are 'constant', 'edge', 'wrap', "
                           "'reflect' and 'symmetric'")
    x = np.asarray(array)
    nd = np.ndim(x)
    ax = 0
    for before, after in P.pad_widths(nd, pad_width):
        shape = np.shape(x)
        parts = (x,)
        if before > 0:
            fill = np.zeros(P.axis_resized(shape, ax, before)) + constant_values
            parts = (fill.astype(x.dtype),) + parts
        if after > 0:
            fill = np.zeros(P.axis_resized(shape, ax, after)) + constant_values
            parts = parts + (fill.astype(x.dtype),)
        if len(parts) > 1:
            x = np.concatenate(parts, ax)
        ax = ax + 1
    return x


def hsplit(ary, indices_or_sections):
    if np.ndim(ary) == 0:
        return P.lib_error("np.hsplit only works on arrays of 1 or more dimensions")
    if np.ndim(ary) > 1:
        return _split(ary, indices_or_sections, 1, True)
    return _split(ary, indices_or_sections, 0, True)


def vsplit(ary, indices_or_sections):
    if np.ndim(ary) < 2:
        return P.lib_error("np.vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, True)


def dsplit(ary, indices_or_sections):
    if np.ndim(ary) < 3:
        return P.lib_error("np.dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, True)


# ---------------------------------------------------------------- products and gathers


def clip(a, a_min=None, a_max=None, out=None, min=None, max=None):
    # NumPy's np.clip: either bound may be None (np.clip(r, None, 1.0) is np.minimum)
    lo = min if P.is_none(a_min) else a_min
    hi = max if P.is_none(a_max) else a_max
    if P.is_none(lo):
        if P.is_none(hi):
            return P.lib_error("np.clip: one of max or min must be given")
        r = np.minimum(a, hi)
    elif P.is_none(hi):
        r = np.maximum(a, lo)
    else:
        r = P.clip(a, lo, hi)
    if P.is_none(out):
        return r
    return ufunc_out("clip", r, out)


def ufunc_out(name, r, out):
    # a ufunc's out=: the result written into the given array (cast to its dtype under
    # NumPy's 'same_kind' rule, broadcast to its shape), which is what the call returns
    out[...] = P.aug_assign(out, r)
    return out


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # NumPy's definition on the vectors along axisa/axisb (2 or 3 components; a missing
    # third one is zero; two 2-vectors give the z component alone)
    if not P.is_none(axis):
        axisa = axis
        axisb = axis
        axisc = axis
    u = np.moveaxis(a, axisa, -1)
    v = np.moveaxis(b, axisb, -1)
    nu = np.shape(u)[-1]
    nv = np.shape(v)[-1]
    if nu not in (2, 3) or nv not in (2, 3):
        return P.lib_error("np.cross: incompatible dimensions for cross product "
                           "(dimension must be 2 or 3)")
    u0 = u[..., 0]
    u1 = u[..., 1]
    v0 = v[..., 0]
    v1 = v[..., 1]
    if nu == 2 and nv == 2:
        return u0 * v1 - u1 * v0
    if nu == 3 and nv == 3:
        u2 = u[..., 2]
        v2 = v[..., 2]
        c = np.stack([u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0], axis=-1)
    elif nu == 3:
        u2 = u[..., 2]
        c = np.stack([-u2 * v1, u2 * v0, u0 * v1 - u1 * v0], axis=-1)
    else:
        v2 = v[..., 2]
        c = np.stack([u1 * v2, -u0 * v2, u0 * v1 - u1 * v0], axis=-1)
    return np.moveaxis(c, -1, axisc)


def take_along_axis(arr, indices, axis=-1):
    # arr[i0, ..., indices[...], ..., in]: an integer-array gather whose other axes are
    # aranges broadcast against the indices (its gradient a scatter-add)
    if P.is_none(axis):
        return np.reshape(arr, (-1,))[indices]
    nd = np.ndim(arr)
    if np.ndim(indices) != nd:
        return P.lib_error("np.take_along_axis: indices and arr must have the same number "
                           "of dimensions")
    ax = P.reduced_axes(nd, axis)[0]
    key = ()
    for d in range(nd):
        if d == ax:
            key = key + (indices,)
        else:
            n = np.shape(arr)[d]
            key = key + (np.reshape(np.arange(n), (1,) * d + (n,) + (1,) * (nd - d - 1)),)
    return arr[key]


def vander(x, N=None, increasing=False):
    # NumPy's order of products: column k is ((x * x) * x)... k times (exact as NumPy's)
    v = x
    if np.ndim(v) != 1:
        return P.lib_error("np.vander: x must be a one-dimensional array or sequence")
    n = np.shape(v)[0] if P.is_none(N) else N
    if n == 0:
        return np.zeros((np.shape(v)[0], 0), v.dtype)
    cols = [np.ones_like(v)]
    for _ in range(n - 1):
        cols.append(cols[-1] * v)
    out = np.stack(cols, axis=1)
    if increasing:
        return out
    return out[:, ::-1]
