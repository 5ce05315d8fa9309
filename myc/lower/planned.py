"""The optimized typed graph as a planned host program (``myc.lower.hostplan``).

Every fusion group becomes a kernel launch, and so does a lone elementwise op or
reduction (as a group of one); a matrix product becomes a GEMM step, a transpose a
permuting copy (or an alias, when it permutes nothing), a reshape an alias; the
data-dependent control flow -- loops, their tapes, selects, guards -- is lowered by
``planned_loops``.  Every value is a buffer of a dtype and a static (or, by
``myc.aot.dynamic``, symbolic) shape.

What the plan may contain is the caller's :class:`Policy`: ``myc.aot`` asks for no
BLAS, no Python at run time (an operation only Python can run is refused with a
:class:`myc.MycError` naming it and its line) and the dtypes of its C ABI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from myc.errors import MycError
from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Constant, Graph, Node, Parameter
from myc.lower.groups import (
    GroupKernel,
    Unfusable,
    build_kernel,
    group_kernels,
    stored_members,
)
from myc.lower.hostplan import Alias, HostPlan, KernelOp, Permute, Value, gemm_op
from myc.lower.planned_loops import CONTROL, unguard_safe
from myc.lower.program import prim_of_name, schedule_units
from myc.opt.fusion import ELEMENTWISE, REDUCTIONS, FusionGroup, fuse
from myc.opt.selects import selects_as_where
from myc.prims import P


@dataclass(frozen=True)
class Policy:
    """What a plan may hold and how a refusal is worded: ``who`` starts every error
    message, ``dtypes`` are the buffer dtypes allowed, ``when`` and ``entry_points``
    name the compilation in messages ("not supported ahead of time")."""

    who: str
    dtypes: frozenset[str]
    when: str = "ahead of time"
    entry_points: str = "ahead-of-time entry points"


def lower_plan(typed: Graph, template: Any, names: list[str], entry: str,
               policy: Policy) -> HostPlan:
    """The host plan of the optimized typed graph ``typed`` (``names``: its inputs',
    ``entry``: the entry point's)."""
    return PlannedLowering(typed, template, names, policy).run(entry)


class PlannedLowering:
    """The optimized typed graph as steps over planned ``Value`` s, under ``policy``."""

    def __init__(self, typed: Graph, template: Any, names: list[str], policy: Policy):
        self.typed = typed
        self.template = template
        self.names = names
        self.policy = policy

    def run(self, entry: str) -> HostPlan:
        typed = self.typed
        who = self.policy.who
        self.val: dict[int, Value] = {}
        inputs = []
        for i, p in enumerate(typed.parameters):
            a = p.abstract
            if not hasattr(a, "shape") or str(np.dtype(a.dtype)) not in self.policy.dtypes:
                raise MycError(f"{who}: input {i} has type {a}; not supported")
            v = Value(str(np.dtype(a.dtype)), tuple(a.shape),
                      self.names[i] if len(self.names) == len(typed.parameters) else p.name)
            self.val[p.id] = v
            inputs.append(v)
        self.ops: list = []
        self.loops: dict[int, Any] = {}  # loop node id -> its LoopOp (planned_loops)
        leaves = self.lower_graph(typed)
        # gathers kept only for their bounds check (``typed.flags["checks"]``): computed,
        # not returned
        leaves = leaves[:len(leaves) - typed.flags.get("checks", 0)]
        self.check_template(self.template)
        outputs = [self.value(n) for n in leaves]
        if not outputs:
            raise MycError(f"{who}: the function returns no array or number")
        return HostPlan(entry, inputs, self.ops, outputs)

    def lower_graph(self, g: Graph) -> list:
        """Append the operations of the typed graph ``g`` (the program, or a loop body
        whose parameters are already bound) to ``self.ops``; its output's leaf nodes."""
        unguard_safe(g)
        selects_as_where(g)
        order = schedule(g, Manager(g).owned.get(g, []))
        out = g.output
        for unit in self.units(g, order):
            if isinstance(unit, GroupKernel):
                self.kernel(unit.plan, unit.members)
                continue
            if unit is out and self.prim(unit) == "make_tuple":
                continue
            self.primitive(unit)
        if isinstance(out, Apply) and out.inputs[0].value is P.make_tuple:
            return list(out.inputs[1:])
        if isinstance(out, (Apply, Parameter, Constant)):
            return [out]
        return []

    def check_template(self, t) -> None:
        if isinstance(t, tuple):
            for x in t:
                self.check_template(x)
        elif not isinstance(t, Node):
            raise MycError(f"{self.policy.who}: the function returns a value known at "
                           f"compile time ({t!r}); {self.policy.entry_points} return arrays "
                           "only")

    @staticmethod
    def prim(n) -> str:
        return prim_of_name(n)

    def value(self, n):
        if isinstance(n, Constant):
            arr = np.asarray(n.value)
            if str(arr.dtype) not in self.policy.dtypes:
                raise MycError(f"{self.policy.who}: constant of type {type(n.value).__name__} "
                               f"({arr.dtype}) is not supported")
            return Value(str(arr.dtype), arr.shape, "const", const=arr)
        return self.val[n.id]

    def new(self, n):

        a = n.abstract
        dt = str(np.dtype(getattr(a, "dtype", "O")))
        if not hasattr(a, "shape") or dt not in self.policy.dtypes:
            self.reject(n, f"its result type {a} is not an array or number")
        v = self.val[n.id] = Value(dt, tuple(a.shape), f"v{n.id}")
        return v

    def reject(self, n, why: str = ""):
        loc = getattr(n, "loc", None)
        where = f" at line {loc.line}" if loc is not None and getattr(loc, "line", None) \
            else ""
        raise MycError(f"{self.policy.who}: operation '{self.prim(n) or n}'{where} is not "
                       f"supported {self.policy.when}{': ' + why if why else ''}")

    def units(self, g, order):
        """Scheduled nodes and fusion groups (as ``GroupKernel`` s), inputs first.

        Every fusion group becomes a kernel, and so does a lone elementwise or reduction
        node (as a group of one)."""
        # kernel names are unique in the library: a loop body's groups are numbered
        # from 0 again, so each graph's kernels get their own prefix
        self.n_graphs = getattr(self, "n_graphs", 0) + 1
        prefix = "" if self.n_graphs == 1 else f"b{self.n_graphs - 1}_"
        groups: dict[int, Any] = {}
        for grp, plan in group_kernels(fuse(g, min_size=1), f"{prefix}k"):  # every group
            unit = GroupKernel(plan, grp.members)
            for m in stored_members(grp):
                groups[m.id] = unit
        nid = 10_000
        for n in order:
            p = self.prim(n)
            if n.id in groups or (p not in ELEMENTWISE and p not in REDUCTIONS):
                continue
            a = n.abstract
            if p in REDUCTIONS:
                domain = tuple(getattr(n.inputs[1].abstract, "shape", ()))
            else:
                domain = tuple(getattr(a, "shape", ()))
            nid += 1
            grp = FusionGroup(nid, domain, [n], [n])
            try:
                plan = build_kernel(grp, f"{prefix}k{nid}")
            except (Unfusable, AssertionError) as exc:
                self.reject(n, str(exc))
            groups[n.id] = GroupKernel(plan, [n])
        return schedule_units(order, groups)

    def kernel(self, plan, members) -> None:

        ins = [self.value(n) for n in plan.inputs]
        outs, divs = [], []
        for n, post in zip(plan.outputs, plan.post, strict=True):
            v = self.new(n)
            if post.divide_by is not None and v.dtype not in ("float32", "float64"):
                self.reject(n, "an integer mean")
            outs.append(v)
            divs.append(post.divide_by)
        self.ops.append(KernelOp(plan.kernel, ins, outs, divs))

    def primitive(self, n) -> None:
        p = self.prim(n)
        args = n.inputs[1:]
        if p in ("matmul", "dot", "matmul_acc"):
            a, b = (self.value(x) for x in args[:2])
            out = self.new(n)
            if not (a.dtype == b.dtype == out.dtype and a.dtype in ("float32", "float64")):
                self.reject(n, f"matmul of {a.describe()} and {b.describe()}: only float "
                            "operands of one dtype")
            if not (1 <= len(a.shape) <= 2 and 1 <= len(b.shape) <= 2):
                self.reject(n, f"matmul of {a.describe()} and {b.describe()}: only 1-D and "
                            "2-D operands")
            acc = self.value(args[2]) if p == "matmul_acc" else None  # acc + alpha * a @ b
            if acc is not None and (acc.dtype, acc.shape) != (out.dtype, out.shape):
                self.reject(n, "a product accumulated into a value of another type")
            op = gemm_op(a, b, out, acc, float(args[3].value) if acc is not None else 1.0)
            assert op is not None  # (the types were checked)
            self.ops.append(op)
        elif p in ("mT", "transpose"):
            src = self.value(args[0])
            nd = len(src.shape)
            if p == "mT":
                perm = tuple(range(nd - 2)) + (nd - 1, nd - 2) if nd >= 2 else tuple(range(nd))
            else:
                axes = args[1].value if len(args) > 1 and isinstance(args[1], Constant) \
                    else None
                if len(args) > 1 and not isinstance(args[1], Constant):
                    self.reject(n, "axes not known at compile time")
                perm = tuple(reversed(range(nd))) if axes is None else \
                    tuple(int(x) % nd for x in axes)
            out = self.new(n)
            if perm == tuple(range(nd)):
                self.ops.append(Alias(src, out))
            else:
                self.ops.append(Permute(src, out, perm))
        elif p in ("reshape", "squeeze", "expand_dims"):
            src = self.value(args[0])
            out = self.new(n)
            self.ops.append(Alias(src, out))
        elif p in CONTROL:
            CONTROL[p](self, n)
        else:
            self.reject(n)
