"""Fusion groups of the typed graph as kernel IR.

Every member of a group becomes a scalar expression over the group's domain; values
from outside the group are kernel inputs read with broadcasting; members needed outside
become ``Store`` s and reductions ``Reduce`` s.  NumPy's dtype semantics are made
explicit: each operation's operands are cast to the dtype NumPy would compute in (the
typed graph knows every result dtype; comparisons use the operands' promoted dtype).
Steps the kernel IR does not express (the division of a ``mean``, the reshape after a
``sum_to``, turning a 0-d result into a scalar) are post-processing of the outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from myc.ir.nodes import Apply, Constant, Node
from myc.lower import kernel as K
from myc.lower.post import Post
from myc.opt.fusion import FusionGroup, row_reduction
from myc.opt.rewrite import prim_of
from myc.prims import REGISTRY
from myc.prims.abstract import AArray, AScalar

# primitive -> its kernel-IR op, from the primitive table
_SCALAR = {n: p.scalar for n, p in REGISTRY.items() if p.scalar is not None}
_BINARY = {n: op.name for n, op in _SCALAR.items() if op.arity == 2 and not op.promote}
_COMPARE = {n: op.name for n, op in _SCALAR.items() if op.arity == 2 and op.promote}
_UNARY = {n: op.name for n, op in _SCALAR.items() if op.arity == 1}
_CASTS = ("astype", "cast_grad", "grad_cast", "tangent_out", "to_weak", "pos")


class Unfusable(Exception):  # noqa: N818 - a control signal
    """A group member the kernel IR cannot express; the group runs op by op instead."""


@dataclass
class KernelPlan:
    kernel: K.Kernel
    inputs: list[Node]  # graph nodes (or constants) feeding the kernel, in order
    outputs: list[Apply]  # graph nodes the kernel's outputs are, in out_index order
    post: list[Post] = field(default_factory=list)


_DT_NAMES: dict[Any, str] = {}


def _dt(a: Any) -> str:
    """``a``'s dtype name (memoized: NumPy's ``str(dtype)`` runs Python code, and a long
    program asks thousands of times)."""
    name = _DT_NAMES.get(a.dtype)
    if name is None:
        name = _DT_NAMES[a.dtype] = str(np.dtype(a.dtype))
    return name


def _const_dtype_probe(v: Any) -> Any:
    return v  # Python scalars are weak in NumPy's promotion: they probe as themselves


def build_kernel(group: FusionGroup, name: str) -> KernelPlan:
    members = {m.id for m in group.members}
    reds = {m.id for m in group.members if prim_of(m).name in
            ("sum", "max", "min", "mean", "sum_to")}
    inputs: list[Node] = []
    buf_of: dict[Any, int] = {}
    exprs: dict[int, K.Expr] = {}
    rows: dict[int, K.Expr] = {}  # row reductions, as members over the domain read them
    domain = group.domain

    def buffer(n: Node) -> int:
        key = n.id if not isinstance(n, Constant) else ("c", id(n.value))
        if key not in buf_of:
            buf_of[key] = len(inputs)
            inputs.append(n)
        return buf_of[key]

    def load(n: Node, axes: tuple[int, ...] | None = None) -> K.Expr:
        if isinstance(n, Constant):
            v = n.value
            if isinstance(v, (bool, int, float, np.generic)) and np.ndim(v) == 0:
                dt = np.result_type(v) if isinstance(v, np.generic) else \
                    {bool: np.bool_, int: np.int64, float: np.float64}[type(v)]
                if str(np.dtype(dt)) not in K.DTYPES:  # a float16/int8 scalar: NumPy's step
                    raise Unfusable(f"constant of dtype {np.dtype(dt)}")
                if type(v) is int and not -(1 << 63) <= v < (1 << 63):
                    raise Unfusable("a Python int beyond int64")  # NumPy decides: exact or error
                return K.Const(v.item() if isinstance(v, np.generic) else v, str(np.dtype(dt)))
            if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
                arr_dt = str(v.dtype) if str(v.dtype) in K.DTYPES else None
                if arr_dt is None:
                    raise Unfusable(f"constant of dtype {v.dtype}")
                return K.Load(buffer(n), arr_dt, axes)
            raise Unfusable(f"constant {type(v).__name__}")
        if n.id in rows:
            if axes is not None:
                raise Unfusable("re-indexed row reduction")
            return rows[n.id]
        if n.id in members and n.id not in reds:
            if axes is not None:
                raise Unfusable("re-indexed member")
            return exprs[n.id]
        a = n.abstract
        if not isinstance(a, (AArray, AScalar)) or _dt(a) not in K.DTYPES:
            raise Unfusable(f"input of type {a}")
        return K.Load(buffer(n), _dt(a), axes)

    def probe(n: Node) -> Any:
        if isinstance(n, Constant):
            return n.value
        a = n.abstract
        if isinstance(a, AScalar) and a.weak:
            return {"f": 1.0, "i": 1, "b": True}[a.dtype.kind]
        return np.ones((), a.dtype)

    def cast(e: K.Expr, dt: str) -> K.Expr:
        return e if e.dtype == dt else K.Cast(e, dt)

    outputs: list[K.Output] = []
    out_nodes: list[Apply] = []
    posts: list[Post] = []
    for m in group.members:
        p = prim_of(m).name
        args = m.inputs[1:]
        a = m.abstract
        rdt = _dt(a)
        if rdt not in K.DTYPES:
            raise Unfusable(f"dtype {rdt}")
        if p in _BINARY:
            if p == "pow" and K.kind(rdt) == "f" and False:
                pass
            e = K.Binary(_BINARY[p], cast(load(args[0]), rdt), cast(load(args[1]), rdt))
        elif p in _COMPARE:
            odt = str(np.result_type(probe(args[0]), probe(args[1])))
            if odt not in K.DTYPES:
                raise Unfusable(odt)
            e = K.Binary(_COMPARE[p], cast(load(args[0]), odt), cast(load(args[1]), odt))
        elif p in _UNARY:
            x = cast(load(args[0]), rdt)
            # floor, ceil and abs of a bool are the bool itself (NumPy keeps the dtype)
            e = x if rdt == "bool" and _UNARY[p] in ("floor", "ceil", "abs") else \
                K.Unary(_UNARY[p], x)
        elif p == "where":
            e = K.Select(cast(load(args[0]), "bool"), cast(load(args[1]), rdt),
                         cast(load(args[2]), rdt))
        elif p == "clip":
            x = cast(load(args[0]), rdt)
            lo = None if isinstance(args[1], Constant) and args[1].value is None else args[1]
            hi = None if isinstance(args[2], Constant) and args[2].value is None else args[2]
            if lo is not None:
                x = K.Binary("maximum", x, cast(load(lo), rdt))
            if hi is not None:
                x = K.Binary("minimum", x, cast(load(hi), rdt))
            e = x
        elif p in _CASTS:
            e = cast(load(args[0]), rdt)
        elif p == "broadcast_to":
            e = cast(load(args[0]), rdt)
        elif p == "expand_reduced":
            d, axis, keepdims = args[0], args[2].value, args[3].value
            nd = len(domain)
            src = d.abstract.shape if not isinstance(d, Constant) else np.shape(d.value)
            if axis is not None and not keepdims and len(src) < nd:
                axes_red = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
                axes_red = {int(x) % nd for x in axes_red}
                keep = tuple(i for i in range(nd) if i not in axes_red)
                e = cast(load(d, keep if src else None), rdt)
            else:
                e = cast(load(d), rdt)
        elif p in ("sum", "max", "min", "mean", "sum_to"):
            x = args[0]
            xd = x.abstract.shape if not isinstance(x, Constant) else np.shape(x.value)
            nd = len(xd)
            post = Post()
            if p == "sum_to":
                target = tuple(args[1].value)
                lead = nd - len(target)
                axes = tuple(range(lead)) + tuple(i + lead for i, t in enumerate(target)
                                                  if t == 1 and xd[i + lead] != 1)
                keepdims = True
                post.reshape = target
                op = "sum"
            else:
                axis, keepdims = args[1].value, bool(args[2].value)
                axes = tuple(range(nd)) if axis is None or nd == 0 else tuple(
                    int(x_) % nd for x_ in ((axis,) if isinstance(axis, (int, np.integer))
                                            else axis))  # (a 0-d array: NumPy's axis 0)
                op = "sum" if p == "mean" else p
                if p == "mean":
                    count = 1
                    for ax in axes:
                        count *= xd[ax]
                    post.divide_by = count
            edt = rdt if p != "mean" else rdt
            src = load(x)
            if op == "sum" and src.dtype == "bool":
                src = cast(src, "int64")
            e_in = cast(src, edt) if op == "sum" else src
            if e_in.dtype != edt and op != "sum":
                e_in = cast(e_in, edt)
            if isinstance(a, AScalar):
                post.scalar = a
            if row_reduction(m) and len(domain) >= 2:
                r = K.RowReduce(op, e_in)
                rows[m.id] = r if post.divide_by is None else \
                    K.Binary("div", r, K.Const(post.divide_by, r.dtype))
            outputs.append(K.Reduce(len(outputs), op, e_in, axes, keepdims))
            out_nodes.append(m)
            posts.append(post)
            continue
        else:
            raise Unfusable(p)
        exprs[m.id] = e
        if tuple(a.shape) != tuple(domain) and isinstance(a, AArray):
            # computed once per row from row reductions: constant along the last axis
            rows[m.id] = e
            if m in group.outputs:
                outputs.append(K.Reduce(len(outputs), "max", e, (len(domain) - 1,), True))
                out_nodes.append(m)
                posts.append(Post())
            continue
        if m in group.outputs:
            outputs.append(K.Store(len(outputs), e))
            out_nodes.append(m)
            posts.append(Post(scalar=a if isinstance(a, AScalar) else None))
    bufs = []
    for i, n in enumerate(inputs):
        if isinstance(n, Constant):
            v = np.asarray(n.value)
            bufs.append(K.Buffer(f"c{i}", str(v.dtype), v.shape))
        else:
            bufs.append(K.Buffer(f"in{i}", _dt(n.abstract), tuple(n.abstract.shape)))
    kern = K.Kernel(name, tuple(domain), tuple(bufs), tuple(outputs))
    return KernelPlan(kern, inputs, out_nodes, posts)


@dataclass
class GroupKernel:
    """A fusion group's kernel as a unit of a lowering's schedule, not yet compiled (the
    planned lowering's; the JIT's units are its compiled ``program.KernelUnit`` s)."""

    plan: KernelPlan
    members: list[Apply]


def group_kernels(groups: list[FusionGroup], prefix: str,
                  keep: Callable[[FusionGroup], bool] | None = None
                  ) -> Iterator[tuple[FusionGroup, KernelPlan]]:
    """Each fusion group that is one kernel, with its kernel (named ``prefix`` + the
    group's id): what both host-program lowerings -- the JIT's (``program``) and the
    planned one (``planned``) -- make of fusion.  ``keep``: which groups are worth a
    kernel; a group the kernel IR cannot express (``Unfusable``) is left to the caller's
    other steps."""
    for grp in groups:
        if keep is not None and not keep(grp):
            continue
        try:
            plan = build_kernel(grp, f"{prefix}{grp.id}")
        except Unfusable:
            continue
        yield grp, plan


def stored_members(grp: FusionGroup) -> list[Apply]:
    """The members whose values ``grp`` 's kernel gives the program: not those it only
    recomputes from another group's (``borrowed``)."""
    return [m for m in grp.members if m.id not in grp.borrowed]
