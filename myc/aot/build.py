"""Ahead-of-time compilation: a statically shaped program as a shared library + C header.

``aot(fn, "f32[64,4], f32[4]", "libname.so")`` specializes ``fn`` on zero arrays of
those shapes exactly as the JIT does (a named size such as ``N`` is dynamic: see
:mod:`myc.aot.dynamic`) (trace, optimize, fusion groups as kernels), turns
the optimized program into native operations (fused kernels, our own blocked GEMM,
transpose copies, reshapes) and writes, through LLVM, one object file that ``cc -shared``
links into ``libname.so``; ``libname.h`` declares the entry point.  See ``docs/aot.md``.

Data-dependent loops, if-converted branches and gradients through loops are lowered by
:mod:`myc.aot.loops`.  Anything the library could not run natively (gathers, recursion
whose depth depends on data, control flow the JIT can only guard, structure that changes
with a dynamic size...) is rejected with a :class:`myc.MycError` naming it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import Any

import numpy as np

from myc.aot.loops import CONTROL, refusal, selects_as_where, unguard_safe
from myc.aot.signature import DTYPES, signature_specs
from myc.backends.cpu.aot_names import check_name
from myc.errors import MycError


def _entry_name(fn: Any, graph) -> str:
    name = getattr(fn, "__name__", None) or graph.name or "myc_fn"
    name = re.sub(r"\W+", "_", str(name)).strip("_") or "myc_fn"
    return name if not name[0].isdigit() else f"f_{name}"


def build_program(fn: Any, signature: Any, name: str | None = None):
    """The host program as data (``myc.lower.hostplan.HostPlan``) of ``fn`` on ``signature``.

    With dynamic sizes (``"f32[N,4]"``) the program is built at several sample sizes
    and generalized (:mod:`myc.aot.dynamic`): one program for every size from a lower
    bound on, or a :class:`MycError` when its structure depends on the size."""
    if name is not None:
        check_name(name)
    specs = signature_specs(signature)
    symbols = sorted({d for _, shape in specs for d in shape if isinstance(d, str)})
    if symbols:
        from myc.aot.dynamic import generalize

        return generalize(lambda examples: program_at(fn, examples, name), specs, symbols,
                          _fn_name(fn))
    return program_at(fn, [example(dt, shape) for dt, shape in specs], name)


def example(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A zero array of ``shape`` to specialize on: a broadcast view of one zero, so a
    signature for a 4 TiB array compiles without allocating it (only its type is read)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def _fn_name(fn: Any) -> str:
    return getattr(getattr(fn, "__myc_function__", fn), "__name__", None) or "function"


def program_at(fn: Any, examples: list[np.ndarray], name: str | None = None):
    """The native program of ``fn`` specialized on arrays shaped like ``examples``
    (``myc.pipeline`` 's stages, as the JIT runs them, then AOT's own lowering)."""
    from myc import pipeline
    from myc.infer.trace import GraphBreak
    from myc.lower.hostplan import HostPlan
    from myc.prims import P
    from myc.runtime.args import check_args
    from myc.runtime.specialize import Binding

    target = getattr(fn, "__myc_function__", fn)  # a jitted function: what it wraps
    graph = pipeline.parsed(pipeline.graph_of(target))
    names = [p.name for p in graph.parameters]
    args = check_args(names, tuple(Binding.of(graph).bind(tuple(examples), {})))
    try:
        # as the JIT specializes: data-dependent loops become loop nodes, a gradient
        # through them a typed adjoint (taped loop + backward loop)
        typed, template, brk = pipeline.specialize(graph, args)
    except GraphBreak as brk:
        where = f" at {brk.loc}" if brk.loc else ""
        raise MycError(f"myc.aot: {graph.name} has control flow that depends on the data "
                       f"in a way the compiler cannot express ({brk.reason}{where}); "
                       "the JIT runs it on the reference evaluator, a library cannot") \
            from None
    if typed.flags.get("guards") or (brk is not None and typed.flags.get("route")
                                      != "adjoint"):
        where = f" at {brk.loc}" if brk is not None and brk.loc else ""
        why = f" ({brk.reason}{where})" if brk is not None else ""
        raise MycError(f"myc.aot: {graph.name} has data-dependent control flow that "
                       f"specialization could only guard{why}: the JIT re-checks its "
                       "decisions on every call, a library cannot; not supported ahead "
                       "of time")
    unsupported = [n for n in typed_nodes(typed) if getattr(n.inputs[0], "value", None)
                   is P.invoke]
    if unsupported:
        raise MycError(refusal(unsupported[0], graph.name))
    effects = [n for n in typed_nodes(typed)
               if not getattr(getattr(n.inputs[0], "value", None), "pure", True)]
    if effects:  # (myc/prims/effects.py) they call Python objects when the program runs
        raise MycError(f"myc.aot: {graph.name}: '{effects[0].inputs[0].value.name}' (a random "
                       f"draw or print) at line {getattr(effects[0].loc, 'line', '?')} is "
                       "not supported ahead of time: it calls Python when it runs; use myc.jit")
    pipeline.optimized(typed)
    entry = check_name(name or _entry_name(fn, graph))
    prog = _Lowering(typed, template, names).run(entry)
    return HostPlan(entry, prog[0], prog[1], prog[2])


class _Lowering:
    """The optimized typed graph as native operations over static ``Value`` s."""

    def __init__(self, typed, template, names: list[str]):
        self.typed = typed
        self.template = template
        self.names = names

    def run(self, entry: str):
        from myc.lower.hostplan import Value

        typed = self.typed
        self.val: dict[int, Value] = {}
        inputs = []
        for i, p in enumerate(typed.parameters):
            a = p.abstract
            if not hasattr(a, "shape") or str(np.dtype(a.dtype)) not in DTYPES.values():
                raise MycError(f"myc.aot: input {i} has type {a}; not supported")
            v = Value(str(np.dtype(a.dtype)), tuple(a.shape),
                      self.names[i] if len(self.names) == len(typed.parameters) else p.name)
            self.val[p.id] = v
            inputs.append(v)
        self.ops: list = []
        self.loops: dict[int, Any] = {}  # loop node id -> its LoopOp (aot_loops)
        leaves = self.lower_graph(typed)
        # gathers kept only for their bounds check (``typed.flags["checks"]``): computed,
        # not returned
        leaves = leaves[:len(leaves) - typed.flags.get("checks", 0)]
        self.check_template(self.template)
        outputs = [self.value(n) for n in leaves]
        if not outputs:
            raise MycError("myc.aot: the function returns no array or number")
        return inputs, self.ops, outputs

    def lower_graph(self, g) -> list:
        """Append the operations of the typed graph ``g`` (the program, or a loop body
        whose parameters are already bound) to ``self.ops``; its output's leaf nodes."""
        from myc.ir.manager import Manager, schedule
        from myc.ir.nodes import Apply, Constant, Parameter
        from myc.prims import P

        unguard_safe(g)
        selects_as_where(g)
        order = schedule(g, Manager(g).owned.get(g, []))
        out = g.output
        for unit in self.units(g, order):
            if isinstance(unit, tuple):
                self.kernel(*unit)
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
        from myc.ir.nodes import Node

        if isinstance(t, tuple):
            for x in t:
                self.check_template(x)
        elif not isinstance(t, Node):
            raise MycError(f"myc.aot: the function returns a value known at compile time "
                           f"({t!r}); ahead-of-time entry points return arrays only")

    @staticmethod
    def prim(n) -> str:
        from myc.lower.program import prim_of_name

        return prim_of_name(n)

    def value(self, n):
        from myc.ir.nodes import Constant
        from myc.lower.hostplan import Value

        if isinstance(n, Constant):
            arr = np.asarray(n.value)
            if str(arr.dtype) not in DTYPES.values():
                raise MycError(f"myc.aot: constant of type {type(n.value).__name__} "
                               f"({arr.dtype}) is not supported")
            return Value(str(arr.dtype), arr.shape, "const", const=arr)
        return self.val[n.id]

    def new(self, n):
        from myc.lower.hostplan import Value

        a = n.abstract
        dt = str(np.dtype(getattr(a, "dtype", "O")))
        if not hasattr(a, "shape") or dt not in DTYPES.values():
            self.reject(n, f"its result type {a} is not an array or number")
        v = self.val[n.id] = Value(dt, tuple(a.shape), f"v{n.id}")
        return v

    def reject(self, n, why: str = ""):
        loc = getattr(n, "loc", None)
        where = f" at line {loc.line}" if loc is not None and getattr(loc, "line", None) \
            else ""
        raise MycError(f"myc.aot: operation '{self.prim(n) or n}'{where} is not supported "
                       f"ahead of time{': ' + why if why else ''}")

    def units(self, g, order):
        """Scheduled nodes and fusion groups (as ``(plan, members)``), inputs first.

        Every fusion group becomes a kernel, and so does a lone elementwise or reduction
        node (as a group of one)."""
        from myc.lower.groups import Unfusable, build_kernel
        from myc.lower.program import schedule_units
        from myc.opt.fusion import ELEMENTWISE, REDUCTIONS, FusionGroup, fuse

        # kernel names are unique in the library: a loop body's groups are numbered
        # from 0 again, so each graph's kernels get their own prefix
        self.n_graphs = getattr(self, "n_graphs", 0) + 1
        prefix = "" if self.n_graphs == 1 else f"b{self.n_graphs - 1}_"
        groups: dict[int, Any] = {}
        for grp in fuse(g, min_size=1):  # everything is a kernel here
            try:
                plan = build_kernel(grp, f"{prefix}k{grp.id}")
            except Unfusable:
                continue
            unit = (plan, grp.members)
            borrowed = getattr(grp, "borrowed", ())  # recomputed copies of other groups'
            for m in grp.members:
                if m.id not in borrowed:
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
            groups[n.id] = (plan, [n])
        return schedule_units(order, groups)

    def kernel(self, plan, members) -> None:
        from myc.lower.hostplan import KernelOp

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
        from myc.ir.nodes import Constant
        from myc.lower.hostplan import Alias, Gemm, Permute

        p = self.prim(n)
        args = n.inputs[1:]
        if p in ("matmul", "dot"):
            a, b = (self.value(x) for x in args)
            out = self.new(n)
            if not (a.dtype == b.dtype == out.dtype and a.dtype in ("float32", "float64")):
                self.reject(n, f"matmul of {a.describe()} and {b.describe()}: only float "
                            "operands of one dtype")
            if not (1 <= len(a.shape) <= 2 and 1 <= len(b.shape) <= 2):
                self.reject(n, f"matmul of {a.describe()} and {b.describe()}: only 1-D and "
                            "2-D operands")
            m = a.shape[0] if len(a.shape) == 2 else 1
            k = a.shape[-1]
            nn = b.shape[1] if len(b.shape) == 2 else 1
            assert b.shape[0] == k
            self.ops.append(Gemm(a, b, out, m, nn, k))
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


def typed_nodes(g):
    from myc.ir.manager import Manager

    return [n for n in Manager(g).owned.get(g, []) if hasattr(n, "inputs") and n.inputs]


def aot(fn: Any, signature: Any, output: str, name: str | None = None) -> tuple[str, str]:
    """Compile ``fn`` for ``signature`` into the shared library ``output`` and a C header
    next to it (``libname.so`` -> ``libname.h``); returns ``(so_path, header_path)``.

    The library exports ``int NAME(const myc_array *inputs, int n_inputs, myc_array
    *outputs, int n_outputs)`` (``NAME``: ``name``, else the function's name; a C
    identifier that clashes with no C keyword or libc/libm symbol, see
    :mod:`myc.backends.cpu.aot_names`), plus ``NAME_last_error`` and ``NAME_free``.  Outputs are the
    function's results flattened depth-first (``value_and_grad``: the value, then each
    gradient).
    """
    from myc.backends.cpu.aot_codegen import build_object
    from myc.backends.cpu.aot_header import header

    cc = os.environ.get("CC") or shutil.which("cc")
    if not cc or not shutil.which(cc):
        raise MycError("myc.aot: no C compiler found ('cc'; set CC) to link the library")
    if not isinstance(output, (str, os.PathLike)):
        raise MycError("myc.aot: output is the path of the library to write, e.g. 'libf.so'")
    prog = build_program(fn, signature, name)
    so_path = os.path.abspath(os.fspath(output))
    base = so_path[:-3] if so_path.endswith(".so") else so_path
    h_path = base + ".h"
    obj = build_object(prog)
    with tempfile.TemporaryDirectory(prefix="myc-aot-") as tmp:
        obj_path = os.path.join(tmp, "lib.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        res = subprocess.run([cc, "-shared", "-pthread", "-o", so_path, obj_path, "-lm"],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise MycError(f"myc.aot: linking {so_path} failed: {res.stderr.strip()}")
    guard = re.sub(r"\W", "_", os.path.basename(h_path)).upper()
    with open(h_path, "w") as f:
        f.write(header(prog, f"MYC_{guard}"))
    return so_path, h_path
