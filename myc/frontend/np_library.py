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
    if P.is_none(axis):
        r = _prod_axis(np.reshape(a, (-1,)), 0)
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


def norm(x, ord=None, axis=None, keepdims=False):
    vector = P.is_int(axis) or (P.is_none(axis) and np.ndim(x) == 1)
    matrix = (P.is_none(axis) and np.ndim(x) == 2) or (P.is_tuple(axis) and len(axis) == 2)
    y = x * 1.0  # NumPy computes an integer array's norm in float64
    if P.is_none(ord) and (vector or matrix or P.is_none(axis)):
        return np.sqrt(np.sum(y * y, axis=axis, keepdims=keepdims))
    if vector:
        if ord == 2:
            return np.sqrt(np.sum(y * y, axis=axis, keepdims=keepdims))
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
        return np.sqrt(np.sum(y * y, axis=axis, keepdims=keepdims))
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
    return a[P.axis_index(nd, axis, P.roll_index(np.shape(a)[axis], shift))]


def cumsum(a, axis=None, dtype=None, out=None):
    if not (P.is_none(dtype) and P.is_none(out)):
        return P.lib_error("np.cumsum: dtype= and out= are not supported")
    return P.cumsum(a, axis)


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
