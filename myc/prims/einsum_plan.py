"""``np.einsum`` planned while a program is specialized.

The subscripts and the operands' shapes are static, so how an ``einsum`` becomes
primitives is decided here, in Python: operands are contracted left to right, each pair
as one batched matrix product (``transpose`` and ``reshape`` of each side to
``(batch..., M, K)`` and ``(batch..., K, N)``), or as a broadcast product where nothing
is contracted; a label that only one side carries and nothing later needs is summed out
first.  The library function ``einsum`` (``myc/frontend/np_library.py``) applies the plan;
reverse and forward mode see transposes, reshapes, sums and matmuls.
"""

from __future__ import annotations

from myc.errors import MycShapeError, MycTypeError, MycValueError
from myc.prims.arrays import STATIC_ONLY
from myc.prims.registry import register

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse(subscripts: str, shapes: tuple) -> tuple[list[str], str]:
    """Each operand's labels and the output's, with ``...`` expanded to fresh labels."""
    if not isinstance(subscripts, str):
        raise MycTypeError("np.einsum: the subscripts must be a string constant")
    spec = subscripts.replace(" ", "")
    explicit = "->" in spec
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise MycValueError(f"np.einsum: {len(terms)} operand subscripts for {len(shapes)} "
                         "operands")
    used = set(c for c in spec if c.isalpha())
    fresh = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, s in zip(terms, shapes, strict=True):
        if "..." in t:
            n_ell = max(n_ell, len(s) - (len(t) - 3))
    ell = "".join(fresh[:n_ell])
    labels = []
    for t, s in zip(terms, shapes, strict=True):
        for c in t.replace("...", ""):
            if not c.isalpha():
                raise MycValueError(f"np.einsum: invalid subscript '{c}' in '{subscripts}'")
        if "..." in t:
            k = len(s) - (len(t) - 3)
            if k < 0:
                raise MycShapeError(f"np.einsum: operand has {len(s)} dimensions, fewer than "
                                 f"its subscripts '{t}'")
            t = t.replace("...", ell[n_ell - k:])
        if len(t) != len(s):
            raise MycShapeError(f"np.einsum: operand subscripts '{t}' do not match its "
                             f"{len(s)} dimensions")
        labels.append(t)
    if explicit:
        out = output.replace("...", ell)
    else:
        once = sorted(c for c in used if sum(t.count(c) for t in terms) == 1)
        out = ell + "".join(once)
    for c in out:
        if not any(c in t for t in labels):
            raise MycValueError(f"np.einsum: output label '{c}' is in no operand")
    if len(set(out)) != len(out):
        raise MycValueError(f"np.einsum: output label repeated in '{subscripts}'")
    return labels, out


def _sizes(labels: list[str], shapes: tuple) -> None:
    size: dict[str, int] = {}
    for t, s in zip(labels, shapes, strict=True):
        for c, d in zip(t, s, strict=True):
            d = int(d)
            if c in size and size[c] != d and 1 not in (size[c], d):
                raise MycShapeError(f"np.einsum: label '{c}' has sizes {size[c]} and {d}")
            size[c] = max(size.get(c, 1), d)


def _diagonals(t: str, shape: list[int]) -> tuple[tuple, str, list[int]]:
    """A label repeated within one operand (``'ii'``) takes a diagonal: each step
    ``(perm, n)`` moves the two axes last and gathers their diagonal (length ``n``)."""
    steps = []
    while len(set(t)) != len(t):
        c = next(c for c in t if t.count(c) > 1)
        i = t.index(c)
        j = t.index(c, i + 1)
        if shape[i] != shape[j]:
            raise MycShapeError(f"np.einsum: label '{c}' repeated within one operand has sizes "
                             f"{shape[i]} and {shape[j]}")
        rest = [k for k in range(len(t)) if k not in (i, j)]
        steps.append((tuple(rest) + (i, j), shape[i]))
        t = "".join(t[k] for k in rest) + c
        shape = [shape[k] for k in rest] + [shape[i]]
    return tuple(steps), t, shape


def einsum_plan(subscripts: str, shapes: tuple) -> tuple:
    """``(diagonals, first, steps, last)``: ``diagonals[i]`` the diagonal steps of
    operand ``i`` (``_diagonals``); ``first`` sums ``axes`` out of operand 0; each step
    ``(x_axes, x_perm, x_shape, y_axes, y_perm, y_shape, matmul, out_shape)`` sums and
    lays out the running result ``x`` and the next operand ``y`` and multiplies them;
    ``last`` is ``(axes, perm)``: a final sum and the output's order."""
    shapes = tuple(tuple(s) for s in shapes)
    labels, out = _parse(subscripts, shapes)
    _sizes(labels, shapes)  # the sizes of each label agree
    diagonals = []
    reduced = []
    for k, t in enumerate(labels):
        d, labels[k], shape = _diagonals(t, [int(n) for n in shapes[k]])
        diagonals.append(d)
        reduced.append(tuple(shape))
    shapes = tuple(reduced)

    def needed_after(i: int) -> set[str]:
        need = set(out)
        for t in labels[i:]:
            need.update(t)
        return need

    cur = labels[0]
    need = needed_after(1)
    drop = tuple(k for k, c in enumerate(cur) if c not in need)
    cur = "".join(c for c in cur if c in need)
    first = drop
    cur_shape = [d for c, d in zip(labels[0], shapes[0], strict=True) if c in need]
    steps = []
    for i in range(1, len(labels)):
        y = labels[i]
        y_shape = [int(d) for d in shapes[i]]
        need = needed_after(i + 1)
        y_drop = tuple(k for k, c in enumerate(y) if c not in need and c not in cur)
        y = "".join(c for k, c in enumerate(y) if k not in y_drop)
        y_shape = [d for k, d in enumerate(y_shape) if k not in y_drop]
        x_drop = tuple(k for k, c in enumerate(cur) if c not in need and c not in y)
        x = "".join(c for k, c in enumerate(cur) if k not in x_drop)
        x_shape = [d for k, d in enumerate(cur_shape) if k not in x_drop]
        xs = dict(zip(x, x_shape, strict=True))
        ys = dict(zip(y, y_shape, strict=True))
        batch = [c for c in x if c in y and c in need]
        contract = [c for c in x if c in y and c not in need]
        x_free = [c for c in x if c not in y]
        y_free = [c for c in y if c not in x]
        m = 1
        for c in x_free:
            m *= xs[c]
        n = 1
        for c in y_free:
            n *= ys[c]
        kx = 1
        for c in contract:
            kx *= xs[c]
        ky = 1
        for c in contract:
            ky *= ys[c]
        if kx != ky:
            raise MycShapeError("np.einsum: contracted labels have different sizes")
        x_perm = tuple(x.index(c) for c in batch + x_free + contract)
        y_perm = tuple(y.index(c) for c in batch + contract + y_free)
        x_new = tuple(xs[c] for c in batch) + (m, kx)
        y_new = tuple(ys[c] for c in batch) + (ky, n)
        res = batch + x_free + y_free
        out_shape = tuple(max(xs[c], ys[c]) for c in batch) + \
            tuple(xs[c] for c in x_free) + tuple(ys[c] for c in y_free)
        # nothing contracted: a broadcast product (..., M, 1) * (..., 1, N), not a GEMM
        steps.append((x_drop, x_perm, x_new, y_drop, y_perm, y_new, bool(contract),
                      out_shape))
        cur = "".join(res)
        cur_shape = list(out_shape)
    drop = tuple(k for k, c in enumerate(cur) if c not in out)
    rest = "".join(c for c in cur if c in out)
    last = (drop, tuple(rest.index(c) for c in out))
    return tuple(diagonals), first, tuple(steps), last


register("einsum_plan", ("subscripts", "shapes"), einsum_plan, differentiable=False)
STATIC_ONLY["einsum_plan"] = ("np.einsum: the subscripts must be a string constant and the "
                              "operands arrays of known shapes")
