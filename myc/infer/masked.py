"""Boolean-mask selections ``x[mask]`` whose mask is data: compiled as masked reductions.

``x[mask]`` has as many elements as ``mask`` has True values, so its shape is data and no
static program can hold it.  But most code reduces the selection right away --
``np.sum(x[x > 0])``, ``np.mean(err[valid])``, ``len(x[m])``, ``np.max(x[m] ** 2)`` --
and every such reduction is a reduction over the *whole* array of the selection's
identity where the mask is False: ``sum(where(m, f(x), 0))``, mean as that sum over the
count of True, ``max(where(m, x, -inf))``.  So the tracer keeps ``x[mask]`` unselected,
as a ``Masked`` value (the full-shape values and the mask), carries elementwise work on
it in full shape, and writes a reduction of it as the masked reduction.  The gradient
follows: reverse mode's rules on a ``Masked`` value produce ``Masked`` cotangents (a
broadcast of the reduction's cotangent, elementwise products), and ``getitem``'s rule
scatters them back as ``where(mask, d, 0)``: zero outside the mask.

Everything else a selection can meet -- returned, indexed, its length used as a shape
or trip count, stored in a loop's state -- is a ``GraphBreak`` with the reason it always
had: that signature runs on the reference evaluator, with a warning.

An empty selection reduces as NumPy's does for ``sum`` (0), ``mean`` (nan) and ``len``
(0); its ``max``/``min``, where NumPy raises, is nan in compiled code (float arrays
only: an integer array's ``max``/``min`` of a selection is left to the evaluator).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import Location
from myc.infer.signature import GraphBreak
from myc.ir.nodes import Apply, Constant, Node
from myc.prims import ZERO, P, Primitive
from myc.prims.abstract import AArray, AScalar, abstract_of
from myc.prims.arrays import STATIC_ONLY
from myc.prims.containers import like

WHY = ("boolean-mask indexing x[mask] with a mask computed from data: the result's shape "
       "depends on the data (compiled where the selection is only reduced -- sum, mean, "
       "max, min, len, elementwise work before them; np.where(mask, x, 0) keeps shapes "
       "static)")


class Masked:
    """``values[mask]``, unselected: ``values`` has the mask's shape."""

    __slots__ = ("values", "mask")

    def __init__(self, values: Any, mask: Node):
        self.values = values
        self.mask = mask

    def __repr__(self) -> str:
        return f"Masked({self.values!r}, %{self.mask.id})"


class MaskedLen:
    """A selection's length (``x[m].shape[0]``): the count of True, made a node only
    where it is used as a number."""

    __slots__ = ("mask",)

    def __init__(self, mask: Node):
        self.mask = mask


def is_masked(v: Any) -> bool:
    return isinstance(v, (Masked, MaskedLen))


def holds_masked(v: Any) -> bool:
    if isinstance(v, (Masked, MaskedLen)):
        return True
    return isinstance(v, tuple) and any(holds_masked(x) for x in v)


def same_mask(a: Any, b: Any) -> bool:
    """The same mask node, or the same operation on the same operands (``x[x > 0] *
    y[x > 0]``: the optimizer's CSE would merge them, but only after tracing)."""
    if a is b:
        return True
    if not (isinstance(a, Apply) and isinstance(b, Apply) and len(a.inputs) == len(b.inputs)):
        return False
    for u, v in zip(a.inputs, b.inputs, strict=True):
        if u is v or (isinstance(u, Constant) and isinstance(v, Constant) and
                      u.value is v.value):
            continue
        if not (isinstance(u, Constant) and isinstance(v, Constant) and
                type(u.value) is type(v.value) and
                isinstance(u.value, (int, float, bool, np.generic)) and u.value == v.value):
            return False
    return True


def _abstract(v: Any) -> Any:
    return v.abstract if isinstance(v, Node) else abstract_of(v)


def _small(v: Any) -> bool:
    """An operand that broadcasts against a selection without fixing its length."""
    a = _abstract(v)
    return isinstance(a, AScalar) or (isinstance(a, AArray) and a.ndim <= 1 and
                                      int(np.prod(a.shape)) == 1)


_REDUCE = frozenset(["sum", "mean", "max", "min"])
_QUERIES = frozenset(["ndim", "dtype", "is_float", "seed_like"])


class MaskedSelections:
    """The tracer's part (mixed into ``Tracer``): selections made and reduced."""

    selections = False  # made one yet? (until then no primitive's operands are searched)

    def masked_getitem(self, x: Any, index: Any) -> Masked | None:
        """``x[index]`` as a ``Masked`` value, when ``index`` is a data mask of ``x``'s
        shape (a mask over leading axes only, or guarded tracing, keeps the old rule)."""
        if getattr(self, "concrete", False) or not isinstance(index, Node):
            return None
        ai, ax = index.abstract, _abstract(x)
        if not (isinstance(ai, AArray) and ai.dtype == np.bool_ and ai.ndim >= 1 and
                isinstance(ax, AArray) and ax.shape == ai.shape):
            return None
        self.selections = True
        return Masked(x, index)

    def p_is_mask_of(self, args: list[Any], loc: Location | None) -> bool:
        ak, ax = _abstract(args[0]), _abstract(args[1])
        return isinstance(ak, AArray) and ak.dtype == np.bool_ and ak.ndim >= 1 and \
            isinstance(ax, AArray) and ax.shape == ak.shape

    def p_mask_assign(self, args: list[Any], loc: Location | None) -> Any:
        """``x[mask] = value`` on a local array: ``np.where(mask, value, x)`` in ``x``'s
        dtype (a value per selected element: a selection by the same mask)."""
        x, key, value = args
        if isinstance(value, Masked) and same_mask(value.mask, key):
            value = value.values
        elif not _small(value):
            raise GraphBreak(WHY + "; x[mask] = value with a value that is not a scalar "
                             "or a selection by the same mask", loc)
        r = self.call_prim(P.where, [key, value, x], loc)
        dt = _abstract(x).dtype
        return r if _abstract(r).dtype == dt else self.call_prim(P.astype, [r, dt], loc)

    def p_fill_unselected(self, args: list[Any], loc: Location | None) -> Any:
        return args[0]  # not a selection: nothing to fill

    def p_reselect(self, args: list[Any], loc: Location | None) -> Any:
        return args[0]

    # -- numbers made from a selection -----------------------------------------------------
    def masked_count(self, mask: Node, loc: Location | None, weak: bool = True) -> Any:
        """The count of True in ``mask``: a Python int (``len``), or NumPy's int64."""
        n = self.call_prim(P.sum, [mask, None, False], loc)
        return self.call_prim(P.to_int, [n], loc) if weak else n

    def _resolve(self, v: Any, loc: Location | None) -> Any:
        if isinstance(v, MaskedLen):
            return self.masked_count(v.mask, loc)
        if isinstance(v, tuple) and holds_masked(v):
            return like(v, [self._resolve(x, loc) for x in v])
        return v

    def result_lengths(self, out: Any) -> Any:
        """A program's result with selections' lengths as counts; a selection there
        cannot be a static program's output."""
        if isinstance(out, MaskedLen):
            return self.masked_count(out.mask, None)
        if isinstance(out, Masked):
            raise GraphBreak(WHY + "; the selection is a result")
        if isinstance(out, tuple):
            return like(out, [self.result_lengths(v) for v in out])
        return out

    def _full(self, v: Any, mask: Node, loc: Location | None) -> Any:
        """``v`` broadcast to the mask's shape (so NumPy's array promotion applies)."""
        if _abstract(v) == AArray(_abstract(v).dtype, mask.abstract.shape):
            return v
        return self.call_prim(P.broadcast_to, [v, mask.abstract.shape], loc)

    def _masked_reduce(self, name: str, m: Masked, loc: Location | None) -> Any:
        v = m.values
        dt = _abstract(v).dtype
        if name in ("max", "min"):
            if dt.kind != "f":
                raise GraphBreak(WHY + f"; np.{name} of a selection of a {dt} array", loc)
            fill = dt.type(-np.inf if name == "max" else np.inf)
        else:
            fill = dt.type(0)
        full = self.call_prim(P.where, [m.mask, v, fill], loc)
        r = self.call_prim(getattr(P, "sum" if name == "mean" else name),
                           [full, None, False], loc)
        if name == "mean":
            return self.call_prim(P.truediv, [r, self.masked_count(m.mask, loc)], loc)
        if name in ("max", "min"):  # NumPy raises on an empty selection: nan here
            some = self.call_prim(P.gt, [self.masked_count(m.mask, loc, weak=False), 0], loc)
            r = self.call_prim(P.where, [some, r, dt.type(np.nan)], loc)
            return self.call_prim(P.getitem, [r, ()], loc)  # NumPy's scalar, not 0-d
        return r

    def _is_len_shape(self, shape: Any, m: Any) -> bool:
        return isinstance(shape, tuple) and len(shape) == 1 and \
            isinstance(shape[0], MaskedLen)

    # -- the rules -----------------------------------------------------------------------
    def masked_call(self, prim: Primitive, args: list[Any], loc: Location | None) -> Any:
        """``prim(*args)`` where an argument is (or holds) a selection."""
        name = prim.name
        sel = [a for a in args if isinstance(a, Masked)]
        mask = sel[0].mask if sel else None
        if any(not same_mask(a.mask, mask) for a in sel):
            raise GraphBreak(WHY + "; two selections by different masks", loc)
        if name in ("getitem", "getitem_grad") and isinstance(args[0], tuple):  # .shape[0]
            from myc.ir.evaluator import Interpreter

            return Interpreter.call_prim(prim, args, loc)
        if name == "mask_assign" and args[0] not in sel:  # y[m] = x[m] ** 2
            return self.p_mask_assign(args, loc)
        if name in ("gadd", "env_add"):  # sensitivities summed (closures' environments)
            return getattr(self, f"p_{name}")(args, loc)
        if name == "fill_unselected" and sel:
            v = sel[0].values
            return self.call_prim(P.where, [mask, v, args[1]], loc)
        if name == "reselect" and sel and args[1] is sel[0]:
            return Masked(args[0], mask)
        if name in ("len", "size") and sel:
            return self.masked_count(mask, loc)
        if name == "shape" and sel:
            return (MaskedLen(mask),)
        if name == "receiver" and sel:  # x[m].sum(): the method's receiver
            return args[0]
        if name in _QUERIES and sel:
            a = _abstract(sel[0].values)
            return self.call_prim(prim, [np.zeros((0,), a.dtype), *args[1:]], loc)
        if name in _REDUCE and sel and args[0] is sel[0]:
            axis, keepdims = args[1], args[2] if len(args) > 2 else False
            if axis not in (None, 0, -1, (0,), (-1,)):
                raise GraphBreak(WHY, loc)
            r = self._masked_reduce(name, sel[0], loc)
            return self.call_prim(P.reshape, [r, (1,)], loc) if keepdims else r
        if name in ("dot", "matmul", "vdot", "inner") and len(sel) == 2 and len(args) == 2:
            prod = self.call_prim(P.mul, [sel[0].values, sel[1].values], loc)
            return self._masked_reduce("sum", Masked(prod, mask), loc)
        if name in ("sum_to", "broadcast_to") and sel and args[0] is sel[0] and \
                self._is_len_shape(args[1], None):
            return sel[0]
        if name == "sum_to" and sel and args[0] is sel[0]:
            if args[1] == ():
                return self._masked_reduce("sum", sel[0], loc)
        if name in ("expand_reduced", "broadcast_to") and self._is_len_shape(args[1], None) \
                and _small(args[0]):
            m = args[1][0].mask
            return Masked(self._full(args[0], m, loc), m)
        if name in ("reduced_count", "reduced_size") and self._is_len_shape(args[0], None):
            return self.masked_count(args[0][0].mask, loc)
        if name == "reshape" and sel and args[0] is sel[0] and (
                args[1] in (-1, (-1,)) or self._is_len_shape(args[1], None)):
            return sel[0]
        if name == "getitem_grad" and len(sel) == 1 and args[2] is sel[0] and \
                same_mask(args[1], mask):  # x[m]'s cotangent back in x's shape: zero off the mask
            d = sel[0].values
            return self.call_prim(P.where, [mask, d, _abstract(d).dtype.type(0)], loc)
        if name == "materialize" and sel and args[0] is not ZERO:  # a tangent already
            return args[0]
        if name == "materialize" and sel and args[0] is ZERO:
            v = sel[0].values
            a = _abstract(v)
            return Masked(self.call_prim(P.zeros_like, [v], loc) if a.dtype.kind == "f" else
                          self.call_prim(P.astype, [self.call_prim(P.zeros_like, [v], loc),
                                                    np.float64], loc), mask)
        if (prim.elementwise or name in ("cast_grad", "astype", "zeros_like", "ones_like",
                                         "full_like", "aug_assign")) and sel:
            new = []
            for a in args:
                if isinstance(a, Masked):
                    new.append(a.values)
                elif isinstance(a, MaskedLen):
                    new.append(self.masked_count(a.mask, loc))
                elif a is None or isinstance(a, (str, np.dtype, type)) or _small(a):
                    new.append(a)
                else:
                    raise GraphBreak(WHY + "; a selection combined with a whole array", loc)
            if name == "aug_assign":  # s = x[m]; s += 1: the update's own dtype rule
                new[0] = sel[0].values if args[0] is sel[0] else new[0]
            r = self.call_prim(prim, new, loc)
            ar = _abstract(r)
            if not (isinstance(ar, AArray) and ar.shape == mask.abstract.shape):
                raise GraphBreak(WHY, loc)
            return Masked(r, mask)
        if not sel and name not in STATIC_ONLY:  # a selection's length: a number from here
            resolved = [self._resolve(a, loc) for a in args]
            if not any(holds_masked(a) for a in resolved):
                return self.call_prim(prim, resolved, loc)
        raise GraphBreak(WHY, loc)
