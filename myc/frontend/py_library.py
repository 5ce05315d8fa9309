"""Python's list and dict operations and sequence builtins, written in the myc subset.

Parsed by the frontend like user code (as ``np_library`` is for NumPy), so AD and every
backend see them as compositions of ``getitem``, tuple concatenation and ``pack``:
gradients through ``d.values()``, ``zip`` or ``sum`` need no rules of their own.  The
loops here run over static structures (a list's length, a dict's keys), so
specialization unrolls them.  Lists are ``ListValue``s and dicts ``DictValue``s
(``myc.prims.containers``); a mutation returns the new value, which the frontend binds
to the mutated variable.
"""

# ruff: noqa: SIM108 - the subset has no conditional assignment shortcuts to prefer
from __future__ import annotations

import numpy as np

from myc.prims import P


def dict_values(d):
    out = []
    for k in P.dict_keys(d):
        out.append(d[k])
    return out


def dict_items(d):
    out = []
    for k in P.dict_keys(d):
        out.append((k, d[k]))
    return out


def dict_get(d, key, default=None):
    if P.container_kind(d) != "dict":
        return P.fail(d, "'{kind}' object has no attribute 'get'")
    if key in d:
        return d[key]
    return default


def setitem(x, key, value):
    """``x[key] = value`` as a new value: a dict gets the key (new keys go last), a
    list the item; anything else is refused (arrays are values in myc)."""
    kind = P.container_kind(x)
    if kind == "dict":
        keys = P.keys_with(x, key)
        vals = ()
        for k in keys:
            if k == key:
                vals = vals + (value,)
            else:
                vals = vals + (x[k],)
        return P.pack(keys, vals)
    if kind == "list":
        if not P.is_int(key):
            return P.fail(x, "list slice assignment (xs[a:b] = ...) is not supported|hint|"
                             "build the new list: xs = xs[:a] + ys + xs[b:]")
        n = len(x)
        i = key
        if key < 0:
            i = key + n
        if i < 0 or i >= n:
            return P.fail(x, "list assignment index out of range")
        out = []
        for j in range(n):
            if j == i:
                out.append(value)
            else:
                out.append(x[j])
        return out
    if kind == "other" and P.is_mask_of(key, x):  # x[mask] = v: np.where(mask, v, x)
        return P.mask_assign(x, key, value)
    if kind == "other" and np.ndim(x) > 0:
        return array_setitem(x, key, value)
    return P.fail(x, "item assignment (x[i] = ...) is not supported on a value of kind "
                     "'{kind}': arrays and tuples are immutable in myc|hint|build a new "
                     "array, e.g. with np.where (lists and dicts take item assignment)")


def array_setitem(x, key, value):
    """``x[key] = value`` on an array (ints, slices, ``None``, ``...``; run-time ints
    too) as a new array, as JAX's ``x.at[key].set(value)``: ``value`` broadcast to
    ``x[key]``'s shape in ``x``'s dtype, placed where ``x[key]`` reads and ``x`` kept
    elsewhere.  An element or a row at a run-time place (``R[i, j] = v`` in a loop
    node, dynamic programming's write; ``H[t] = h``) is ``P.index_set``: a copy and a
    store, whose adjoint reads the cotangent there and zeroes it (not a scatter and a
    select over the whole table, per write); one element at a static place, a ``where``
    by a constant mask (it fuses with its neighbours, and ahead-of-time libraries take
    it).  Several elements are placed
    by the scatter that is ``getitem``'s adjoint, so their gradients (``x``'s cotangent
    zero where it was overwritten, ``value``'s the cotangent at ``key``) need no rule of
    their own.  With index arrays (``dx[np.arange(N), y] -= 1``), ``_indexed_setitem``."""
    if not P.basic_index(key):
        return _indexed_setitem(x, key, value)
    new = np.broadcast_to(np.asarray(value), np.shape(x[key]))
    if P.computed_index(key):
        # an element or a row at a run-time place (a table's cell, a preallocated
        # array's row ``H[t] = h``, a column ``H[:, t]``, by a loop's counter): a copy and
        # a store, any dtype -- in a native loop the store goes into the state's buffer
        # in place (``lower.placement.Placement._rows_in_place``), so a loop writing a row per
        # iteration is linear in its trip count
        return P.index_set(x, key, new.astype(x.dtype))
    if np.ndim(new) == 0:  # at a static place: selected by a constant mask (fusible)
        hit = P.getitem_grad(np.zeros(np.shape(x)), key, 1.0)
        return np.where(hit != 0, new.astype(x.dtype), x)
    if P.float_dtype(x.dtype):
        new = new.astype(x.dtype)
        hit = P.getitem_grad(x, key, np.ones_like(new))
        return np.where(hit != 0, P.getitem_grad(x, key, new), x)
    # rows of ints and bools are placed through float64 (the scatter is a gradient's:
    # floats only); exact for the values |v| < 2**53 that tables of counts and indices hold
    xf = x.astype(np.float64)
    newf = new.astype(x.dtype).astype(np.float64)
    hit = P.getitem_grad(xf, key, np.ones_like(newf))
    return np.where(hit != 0, P.getitem_grad(xf, key, newf).astype(x.dtype), x)


def _indexed_setitem(x, key, value):
    """``x[key] = value`` where ``key`` has integer index arrays (CS231n's
    ``dx[np.arange(N), y] -= 1``), NumPy's meaning: where ``key`` names an element twice
    the last write wins.  The flat place of each element of ``x[key]`` is read through
    the same index (a gather of ``arange``); a stable argsort of the places puts the
    writes to one element side by side, in order, and only the last of each run is
    scattered (the scatter is ``getitem``'s adjoint: the value's gradient is the
    cotangent at the places that won, ``x``'s is zero where it was overwritten)."""
    places = np.reshape(np.reshape(np.arange(np.size(x)), np.shape(x))[key], (-1,))
    n = np.shape(places)[0]
    if n == 0:
        return x
    new = np.reshape(np.broadcast_to(np.asarray(value), np.shape(x[key])), (-1,))
    order = np.argsort(places, kind="stable")
    s = places[order]
    last = np.concatenate([s[1:] != s[:-1], np.ones(1, dtype=bool)])
    flat = np.reshape(x, (-1,))
    if P.float_dtype(x.dtype):
        hit = P.getitem_grad(flat, s, np.where(last, 1.0, 0.0).astype(x.dtype))
        placed = P.getitem_grad(flat, s, np.where(last, new.astype(x.dtype)[order], 0.0))
        return np.reshape(np.where(hit != 0, placed, flat), np.shape(x))
    # ints and bools through float64, as array_setitem's rows (exact below 2**53)
    ff = flat.astype(np.float64)
    hit = P.getitem_grad(ff, s, np.where(last, 1.0, 0.0))
    newf = new.astype(x.dtype).astype(np.float64)[order]
    placed = P.getitem_grad(ff, s, np.where(last, newf, 0.0)).astype(x.dtype)
    return np.reshape(np.where(hit != 0, placed, flat), np.shape(x))


def choice_from_uniform(a, u, p):
    """``rng.choice(a, size, p=p)`` given the uniform draw ``u`` of ``size``: NumPy's
    algorithm (``cdf = p.cumsum(); cdf /= cdf[-1]; cdf.searchsorted(u, side="right")``),
    the search as a count of the cdf's values at or below each draw; ``a`` an int (the
    index is the choice) or a 1-d array (its element)."""
    cdf = np.cumsum(p)
    cdf = cdf / cdf[-1]
    idx = np.sum(cdf <= np.expand_dims(np.asarray(u), -1), axis=-1)
    if P.is_int(a):
        return idx
    return np.asarray(a)[idx]


def choice_population(a):
    """How many items ``rng.choice(a)`` picks among: ``a`` itself for an int, else the
    length of the 1-d array or list (NumPy's ValueError for another shape)."""
    if P.is_int(a):
        return a
    if np.ndim(a) != 1:
        raise ValueError("a must be 1-dimensional or an integer")
    return len(a)


def permutation_length(x):
    """How many items ``rng.permutation(x)`` shuffles: ``x`` for an int, else the
    array's first dimension."""
    if np.ndim(x) == 0:  # an int (one computed from data: refused by the draw)
        return x
    return np.shape(x)[0]


def choice_pick(a, idx):
    """``rng.choice(a)``'s result given the drawn index: the index for an int ``a``."""
    if P.is_int(a):
        return idx
    return np.asarray(a)[idx]


def setattr_value(obj, name, value):
    """``obj.name = value`` as a new object (objects of the user's classes are values in
    myc, as lists and dicts are): the frontend rebinds the variable holding it."""
    layout = P.with_attribute(obj, name)
    vals = ()
    for i in layout[1]:
        if i < 0:
            vals = vals + (value,)
        else:
            vals = vals + (obj[i],)
    return P.pack(layout[0], vals)


def array_to_copy(x):
    """The receiver of ``x.copy()``, which must be an array: a list's or dict's copy is
    written ``list(xs)`` / ``dict(d)`` in compiled code."""
    kind = P.container_kind(x)
    if kind == "dict" or kind == "list":
        return P.fail(x, "'{kind}.copy()' is not supported in compiled code|hint|make "
                         "the copy with dict(d) or list(xs)")
    return x


def append(x, value):
    if P.container_kind(x) != "list":
        return P.fail(x, "'{kind}' object has no attribute 'append'")
    return x + [value]


def extend(x, values):
    if P.container_kind(x) != "list":
        return P.fail(x, "'{kind}' object has no attribute 'extend'")
    out = x
    for v in values:
        out = out + [v]
    return out


def insert(x, index, value):
    if P.container_kind(x) != "list":
        return P.fail(x, "'{kind}' object has no attribute 'insert'")
    n = len(x)
    i = index
    if index < 0:
        i = max(index + n, 0)
    i = min(i, n)
    return x[:i] + [value] + x[i:]


def to_list(x):
    out = []
    for v in x:
        out.append(v)
    return out


def star_unpack(x, before, after):
    """``a, *rest, z = x``: the targets' values, ``rest`` a list (as in Python)."""
    items = to_list(x)
    n = len(items)
    if n < before + after:
        P.unpack(x, before + after)  # the error Python gives: too few values
    out = ()
    for i in range(before):
        out = out + (items[i],)
    out = out + (items[before:n - after],)
    for i in range(n - after, n):
        out = out + (items[i],)
    return out


def to_tuple(x):
    out = ()
    for v in x:
        out = out + (v,)
    return out


def py_sum(xs, start=0):
    acc = start
    for v in xs:
        acc = acc + v
    return acc


def py_zip(seqs):
    n = len(seqs[0])
    for s in seqs:
        n = min(n, len(s))
    out = []
    for i in range(n):
        row = ()
        for s in seqs:
            row = row + (P.iter_seq(s)[i],)
        out.append(row)
    return out


def py_enumerate(seq, start=0):
    out = []
    i = start
    for v in seq:
        out.append((i, v))
        i = i + 1
    return out


def py_divmod(a, b):
    """``divmod(a, b)``: Python's floor quotient and remainder (a grid index's row and
    column, ``r, c = divmod(state, COLS)``)."""
    return a // b, a % b


def py_reversed(seq):
    n = len(seq)
    out = []
    for i in range(n):
        out.append(P.iter_seq(seq)[n - 1 - i])
    return out


def py_range(start, stop, step):
    out = []
    for i in range(start, stop, step):
        out.append(i)
    return out


def seq_max(xs):
    acc = xs[0]
    for v in xs:
        acc = max(acc, v)
    return acc


def seq_min(xs):
    acc = xs[0]
    for v in xs:
        acc = min(acc, v)
    return acc


def seq_eq(a, b):
    # tuple equality as Python's ((r, c) == GOAL with r, c from data): the same length
    # and each pair of items equal
    if len(a) != len(b):
        return False
    for k in range(len(a)):
        x = a[k]
        y = b[k]
        if P.is_tuple(x) and P.is_tuple(y):
            if not seq_eq(x, y):
                return False
        elif not x == y:
            return False
    return True


def to_dict(x):
    """``dict(x)``: a dict's copy (a value already), or a dict of (key, value) pairs."""
    if P.container_kind(x) == "dict":
        return x
    out = {}
    for k, v in x:
        out[k] = v
    return out


def dict_merge(a, b):
    """``{**a, **b}`` / ``f(**a, **b)``: ``b``'s keys after ``a``'s."""
    if P.container_kind(b) != "dict":
        return P.fail(b, "argument after ** must be a dict, not {kind}")
    out = a
    for k in b:
        out[k] = b[k]
    return out


def bind_args(fname, names, npos, has_default, defaults, varargs, varkw, pos, kw):
    """The parameters of ``fname`` from a call's positional tuple and keyword dict,
    as Python binds them (the graph's order: ``names``, then ``*args``, ``**kw``)."""
    out = ()
    for i in range(len(names)):
        name = names[i]
        if i < npos and i < len(pos):
            if name in kw:
                return P.fail(fname, "{kind}() got multiple values for an argument")
            out = out + (pos[i],)
        elif name in kw:
            out = out + (kw[name],)
        elif has_default[i]:
            out = out + (defaults[i],)
        else:
            return P.fail(fname, "{kind}() missing a required argument")
    if varargs:
        out = out + (pos[npos:],)
    elif len(pos) > npos:
        return P.fail(fname, "{kind}() got too many positional arguments")
    extra = {}
    for k in kw:
        if k not in names:
            extra[k] = kw[k]
    if varkw:
        out = out + (extra,)
    elif len(extra) > 0:
        return P.fail(fname, "{kind}() got an unexpected keyword argument")
    return out


def py_isinstance(x, kinds):
    """``isinstance(x, list)`` (``tuple``, ``dict``, a user's class, a tuple of them):
    the frontend has turned the builtin classes into the container kinds they admit."""
    return P.instance_of(x, kinds)


def call_star(f, args):
    """``f(a, *rest)`` with ``f`` a function value (a parameter holding a function passed
    in, a variable): ``args`` (the positional arguments as one tuple) has a length known
    when the program specializes, which picks the call of that many arguments."""
    n = len(args)
    if n == 0:
        return f()
    elif n == 1:
        return f(args[0])
    elif n == 2:
        return f(args[0], args[1])
    elif n == 3:
        return f(args[0], args[1], args[2])
    elif n == 4:
        return f(args[0], args[1], args[2], args[3])
    elif n == 5:
        return f(args[0], args[1], args[2], args[3], args[4])
    elif n == 6:
        return f(args[0], args[1], args[2], args[3], args[4], args[5])
    elif n == 7:
        return f(args[0], args[1], args[2], args[3], args[4], args[5], args[6])
    elif n == 8:
        return f(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7])
    elif n == 9:
        return f(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8])
    elif n == 10:
        return f(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7],
                 args[8], args[9])
    return P.fail(args, "a call with more than 10 arguments through *args of a "
                  "function passed as a value is not supported")


def call_bound(fn, pos, kw):
    """``obj.m(a, *rest, k=v)`` on an object whose class is known only when the program
    specializes, or ``f(x)`` with ``f`` a function value (a parameter, a closure another
    function returned): the arguments bound by the function's signature then (defaults,
    ``*args``, keywords), as a call of a function known where it is called is."""
    sig = P.signature_of(fn)
    if sig is None:
        if len(kw) > 0:
            return P.fail(fn, "keyword arguments in a call of a function value are not "
                              "supported|hint|pass the arguments by position")
        return call_star(fn, pos)
    if sig[7] and len(kw) == 0:  # plain parameters: bound positionally, defaults filled
        return call_star(fn, pos)  # in by the call (those computed when the def ran too)
    return call_star(fn, bind_args(sig[0], sig[1], sig[2], sig[3], sig[4], sig[5], sig[6],
                                   pos, kw))


def py_map(f, seqs):
    """``map(f, xs, ...)`` computed at once, as a list (a static structure)."""
    out = []
    if len(seqs) == 1:
        for a in seqs[0]:
            out.append(f(a))
    elif len(seqs) == 2:
        for a, b in py_zip(seqs):
            out.append(f(a, b))
    elif len(seqs) == 3:
        for a, b, c in py_zip(seqs):
            out.append(f(a, b, c))
    else:
        return P.fail(seqs, "map() over more than 3 sequences is not supported")
    return out


def _misc_leaves(value):
    kind = P.container_kind(value)
    out = []
    if kind == "dict":
        for k in P.sorted_keys(value):
            out = out + _misc_leaves(value[k])
        return out
    if kind == "other":
        return [np.ravel(value)]
    for v in value:
        out = out + _misc_leaves(v)
    return out


def _misc_unflatten(vector):
    return P.fail(vector, "the unflatten function myc.misc.flatten returns cannot be "
                          "called inside a compiled function|hint|call flatten outside "
                          "it, or index the flat vector yourself")


def misc_flatten(value):
    """``myc.misc.flatten`` (autograd's ``flatten``) inside compiled code: every leaf
    raveled and concatenated, dict keys sorted."""
    return np.concatenate(_misc_leaves(value)), _misc_unflatten


def kept_if_number(new, old):
    """The caller's value after a call that ran ``a += v`` on the parameter it passed
    ``old`` to: an array is changed in place (the caller sees ``new``), a number is
    rebound inside the callee (the caller keeps ``old``)."""
    if np.ndim(old) > 0:
        return new
    return old
