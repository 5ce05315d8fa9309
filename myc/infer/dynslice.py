"""Slices whose bounds are run-time ints but whose length is static: one program.

An int argument kept as a run-time scalar (``myc.infer.runtime_ints``) used to fall
back to one program per value as soon as it reached a slice bound: ``x[i * bs:(i + 1) *
bs]`` in a training loop compiled a program per batch.  JAX's rule is that a slice whose
*length* is static may start anywhere (``lax.dynamic_slice``); this module gives the
tracer that rule.

The tracer keeps an affine form ``c * base + d`` of every run-time int it derives by
``+``, ``-``, ``*`` by constants and unary ``-`` (``base``: an int parameter, or an
opaque run-time int made by ``%`` or ``//`` by a positive constant), with a bound on its
magnitude.  A slice ``start:stop`` (step 1) whose bounds share the base and the
coefficient has the static length ``d_stop - d_start``: it becomes ``dynamic_slice``
(``myc.prims.dynslice``) at the run-time start.  What NumPy does differently -- a start
past ``dim - length`` (the last, shorter batch) or below 0 (wrap-around) -- is a guard
of the program: such a call runs a program specialized on the int's value.  So is an
int parameter outside +-2**31: the bounds then keep every int64 computation of the
chain exact (``int64`` must not wrap where Python's ints grow).  Anything else -- a
length that depends on the int (``x[:i]``), a step, a slice inside a loop kept as a
loop -- falls back to the old rule: the int is specialized by value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.ir.nodes import Node
from myc.prims import ZERO, P
from myc.prims.abstract import AArray, AScalar, abstract_of

_LEAF_BOUND = 2**31  # |int parameter| the program is valid for (a guard)
_MAX_BOUND = 2**62  # no int in a chain may exceed this: int64 stays exact
_ARITH = frozenset(["add", "sub", "mul", "neg", "mod", "floordiv"])


class DynSlice:
    """``slice(start, start + size)`` with ``start`` a run-time int node."""

    __slots__ = ("start", "size", "chain", "leaves", "form")

    def __init__(self, start: Node, size: int, chain: frozenset[int],
                 leaves: frozenset[Node], form: tuple):
        self.start = start
        self.form = form  # the start's affine form
        self.size = size
        self.chain = chain  # the int nodes computing the start (and the stop)
        self.leaves = leaves  # the int parameters they read

    def __repr__(self) -> str:
        return f"DynSlice(%{self.start.id}, {self.size})"


def _is_int_const(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


class DynamicSlices:
    """The tracer's part: affine forms of run-time ints, and slices they bound."""

    # (base node or None, c, d, bound, chain ids, leaf params); None: the rule is off
    forms: dict[int, tuple] | None = None
    int_params: frozenset[int] = frozenset()
    int_ok: set[int]
    root_trace: Any = None
    pins: dict[int, int] | None = None
    pinned_count = 0  # slices pinned to this call's start

    def start_dynamic_slices(self, int_params: list[Node],
                             pins: list[int] | None = None) -> None:
        """Turn the rule on (a trace with run-time int parameters, not guarded).
        ``pins``: the call's values of those parameters, for a variant whose starts out
        of range are pinned to this call's (a guard of equality each) instead of being
        refused."""
        self.forms = {}
        self.int_params = frozenset(p.id for p in int_params)
        self.pins = None if pins is None else {p.id: int(v) for p, v in
                                               zip(int_params, pins, strict=True)}
        self.defs: dict[int, tuple] = {}  # opaque bases: (op, operand's form, divisor)
        self._opaque: dict[tuple, Node] = {}  # (op, operand's base, c, d, divisor) -> base
        self.int_ok = set()
        self.root_trace = self.trace
        self._slice_guards: dict[tuple, Node] = {}
        self._leaf_guards: set[int] = set()

    # -- affine forms --------------------------------------------------------------------
    def form(self, v: Any) -> tuple | None:
        if _is_int_const(v):
            return (None, 0, int(v), abs(int(v)), frozenset(), frozenset())
        if not isinstance(v, Node) or self.forms is None:
            return None
        f = self.forms.get(v.id)
        if f is not None:
            return f
        if v.id in self.int_params:
            return (v, 1, 0, _LEAF_BOUND, frozenset([v.id]), frozenset([v]))
        return None

    def note_int_arith(self, name: str, args: list[Any], node: Any) -> None:
        """Record ``node``'s affine form when it has one (``node = name(*args)``)."""
        if self.forms is None or name not in _ARITH or not isinstance(node, Node):
            return
        a = node.abstract
        if not (isinstance(a, AScalar) and a.dtype.kind == "i"):
            return
        fs = [self.form(x) for x in args[:2 if name != "neg" else 1]]
        if any(f is None for f in fs):
            return
        chain = frozenset().union(*(f[4] for f in fs)) | {node.id}
        leaves = frozenset().union(*(f[5] for f in fs))
        if name == "neg":
            b, c, d, bound = fs[0][:4]
            f = (b, -c, -d, bound)
        elif name in ("add", "sub"):
            (ba, ca, da, na), (bb, cb, db, nb) = fs[0][:4], fs[1][:4]
            if ba is not None and bb is not None and ba is not bb:
                return
            s = 1 if name == "add" else -1
            f = (ba if ba is not None else bb, ca + s * cb, da + s * db, na + nb)
        elif name == "mul":
            (ba, ca, da, na), (bb, cb, db, nb) = fs[0][:4], fs[1][:4]
            if ba is not None and bb is not None:
                return  # a product of run-time ints: not affine
            if ba is None:
                (ba, ca, da, na), (bb, cb, db, nb) = (bb, cb, db, nb), (ba, ca, da, na)
            f = (ba, ca * db, da * db, na * abs(db))
        else:  # mod, floordiv by a positive constant: an opaque base of known bound
            (_, _, _, na), (bb, _, m, _) = fs[0][:4], fs[1][:4]
            if bb is not None or m <= 0:
                return
            # the same expression computed twice (``i % n * b``, ``(i % n + 1) * b``) is
            # one base: its first node
            inner = fs[0]
            key = (name, None if inner[0] is None else inner[0].id, inner[1], inner[2], m)
            base = self._opaque.setdefault(key, node)
            f = (base, 1, 0, m if name == "mod" else na // m + 1)
            self.defs[base.id] = (name, inner, m)
        if f[3] > _MAX_BOUND:
            return
        self.forms[node.id] = (*f, chain, leaves)

    def pinned_value(self, f: tuple) -> int:
        """A form's value for the pinned call (Python's ints: exact)."""
        base, c, d = f[:3]
        if base is None:
            return d
        assert self.pins is not None
        if base.id in self.pins:
            v = self.pins[base.id]
        else:
            op, inner, m = self.defs[base.id]
            x = self.pinned_value(inner)
            v = x % m if op == "mod" else x // m
        return c * v + d

    # -- slices --------------------------------------------------------------------------
    def dynamic_slice_of(self, args: list[Any]) -> DynSlice | None:
        """``slice(start, stop, step)`` as a ``DynSlice`` when its length is static."""
        if self.forms is None or self.trace is not self.root_trace or self.path is not None:
            return None
        start, stop, step = args
        if not (step is None or (_is_int_const(step) and step == 1)):
            return None
        fs, ft = self.form(start), self.form(stop)
        if fs is None or ft is None or not isinstance(start, Node):
            return None
        if fs[1] != ft[1] or (fs[0] is not ft[0] and fs[1] != 0):
            return None  # the length depends on the int
        size = ft[2] - fs[2]
        if size <= 0:
            return None
        return DynSlice(start, size, fs[4] | ft[4], fs[5] | ft[5], fs)

    def _split_index(self, x: Any, index: Any) -> tuple | None:
        """For an index holding one ``DynSlice`` among basic components: (the index with
        it as ``:``, whether that index does nothing, the axis of its result it slices,
        the ``DynSlice``)."""
        comps = index if type(index) is tuple else (index,)
        where = [k for k, c in enumerate(comps) if isinstance(c, DynSlice)]
        if len(where) != 1 or sum(c is Ellipsis for c in comps) > 1:
            return None
        for c in comps:
            if not (c is None or c is Ellipsis or isinstance(c, DynSlice)
                    or (isinstance(c, slice) and not any(isinstance(b, Node) for b in
                                                         (c.start, c.stop, c.step)))
                    or _is_int_const(c)):
                return None
        a = x.abstract if isinstance(x, Node) else abstract_of(x)
        if not isinstance(a, AArray):
            return None
        k = where[0]
        consumed = sum(1 for c in comps if c is not None and c is not Ellipsis)
        if consumed > len(a.shape):
            return None
        ellipsis = len(a.shape) - consumed
        out_axis = 0
        for c in comps[:k]:
            if c is Ellipsis:
                out_axis += ellipsis
            elif c is None or isinstance(c, slice):
                out_axis += 1
        static = comps[:k] + (slice(None),) + comps[k + 1:]
        trivial = all(c is Ellipsis or c == slice(None) for c in static)
        return (static if type(index) is tuple else static[0]), trivial, out_axis, comps[k]

    def _guard(self, ds: DynSlice, dim: int, loc: Any) -> int | None:
        """The program holds only for a start in [0, dim - size] and int parameters in
        +-2**31 (each guard once).  A pinned variant whose start is out of range holds
        for that start only: its value is returned (None: the window is dynamic)."""
        for leaf in ds.leaves:
            if leaf.id not in self._leaf_guards:
                self._leaf_guards.add(leaf.id)
                self._in_range(leaf, -_LEAF_BOUND, _LEAF_BOUND, loc)
        self.int_ok.update(ds.chain)
        if self.pins is not None:
            s = self.pinned_value(ds.form)
            if not 0 <= s <= dim - ds.size:
                key = (ds.start.id, "eq", s)
                self.pinned_count += 1
                if key not in self._slice_guards:
                    eq = self.emit(P.eq, [ds.start, s], loc)
                    self.int_ok.add(eq.id)
                    self.guards.append(("truth", eq, True))
                    self._slice_guards[key] = eq
                return s
        key = (ds.start.id, dim - ds.size)
        if key not in self._slice_guards:
            self._slice_guards[key] = self._in_range(ds.start, 0, dim - ds.size, loc)
        return None

    @staticmethod
    def _pinned_index(index: Any, ds: DynSlice, s: int) -> Any:
        """``index`` with ``ds`` as the constant slice of the pinned start ``s``."""
        sl = slice(s, s + ds.size)
        if type(index) is not tuple:
            return sl
        return tuple(sl if c is ds else c for c in index)

    def _in_range(self, v: Node, lo: int, hi: int, loc: Any) -> Node:
        ge = self.emit(P.ge, [v, lo], loc)
        le = self.emit(P.le, [v, hi], loc)
        ok = self.emit(P.and_, [ge, le], loc)
        self.int_ok.update((ge.id, le.id, ok.id))
        self.guards.append(("truth", ok, True))
        return ok

    def dynamic_getitem(self, x: Any, index: Any, loc: Any) -> Any:
        """``x[index]`` with a ``DynSlice`` in the index, or None (the old rule)."""
        split = self._split_index(x, index)
        if split is None:
            return None
        static, trivial, axis, ds = split
        y = x if trivial else self.call_prim(P.getitem, [x, static], loc)
        a = y.abstract if isinstance(y, Node) else abstract_of(y)
        if not isinstance(a, AArray) or ds.size > a.shape[axis]:
            return None
        pinned = self._guard(ds, a.shape[axis], loc)
        if pinned is not None:  # NumPy's slice at this start, a static one
            return self.call_prim(P.getitem, [x, self._pinned_index(index, ds, pinned)],
                                  loc)
        out = self.emit(P.dynamic_slice, [y, ds.start, axis, ds.size], loc)
        self.int_ok.add(out.id)
        return out

    def dynamic_getitem_grad(self, x: Any, index: Any, d: Any, loc: Any) -> Any:
        """The adjoint of ``x[index]`` with a ``DynSlice`` in the index (or None)."""
        split = self._split_index(x, index)
        if split is None:
            return None
        static, trivial, axis, ds = split
        xa = x.abstract if isinstance(x, Node) else abstract_of(x)
        base = np.broadcast_to(np.zeros((), xa.dtype), xa.shape)
        dim = base[static].shape[axis]
        if ds.size > dim:
            return None
        pinned = self._guard(ds, dim, loc)
        if pinned is not None:
            return self.call_prim(P.getitem_grad,
                                  [x, self._pinned_index(index, ds, pinned), d], loc)
        if d is ZERO:
            return ZERO
        g = self.emit(P.dynamic_slice_grad, [d, ds.start, axis, dim], loc)
        self.int_ok.add(g.id)
        return g if trivial else self.call_prim(P.getitem_grad, [x, static, g], loc)


def holds_dynamic_slice(v: Any) -> bool:
    if isinstance(v, DynSlice):
        return True
    return isinstance(v, tuple) and any(holds_dynamic_slice(x) for x in v)

