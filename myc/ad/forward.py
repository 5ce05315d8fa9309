"""Forward mode as a graph transform F.

``F(g)(x1..xn, t1..tn)`` returns ``(y, ty)``: the primal output and its tangent.  Each
primal node gets a primal and a tangent node in ``F(g)``; function values are their
``F`` images and carry no tangent (a closure's captured tangents are free variables
of its ``F`` graph, just as its captured values are).  A tail call stays a tail call,
so loops stay loops.  Primitives use their forward rule (``prim.jvp``, ``myc.ad.rules``),
skipped entirely when every input tangent is ``ZERO``.
"""

from __future__ import annotations

import weakref

from myc.ad.graphmap import GraphTransform
from myc.ad.rules import forward_rule_graph
from myc.ir.manager import schedule
from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.prims import UNDEF, ZERO, P, Primitive
from myc.prims.registry import register
from myc.timings import timed

_FPRIM: dict[tuple[str, int], Graph] = {}


def emit_prim(g: Graph, prim: Primitive, xs: list[Node], ts: list[Node], loc) -> tuple:
    """Primal and tangent nodes of ``prim(*xs)`` built inside ``g``."""
    y = g.apply(prim, *xs, loc=loc)
    if not prim.differentiable or all(isinstance(t, Constant) and t.value is ZERO
                                      for t in ts):
        return y, Constant(ZERO)
    if prim.variadic:
        return y, g.apply(P.make_tuple, *ts, loc=loc)
    rule = forward_rule_graph(prim)
    if prim.structural_jvp:
        return y, g.apply(rule, *xs, *ts, y, loc=loc)
    zero_g = Graph(f"F:{prim.name}:zero", g)
    zero_g.output = Constant(ZERO)
    rule_g = Graph(f"F:{prim.name}:rule", g)
    mts = [rule_g.apply(P.materialize, t, x, loc=loc) for t, x in zip(ts, xs, strict=True)]
    rule_g.output = rule_g.apply(rule, *xs, *mts, y, loc=loc)
    sw = g.apply(P.switch, g.apply(P.all_zero, *ts, loc=loc), zero_g, rule_g, loc=loc)
    return y, g.apply(sw, loc=loc)


def fprim(prim: Primitive, arity: int) -> Graph:
    """``F(prim)`` as a graph, for primitives used as values (``compose(np.sin, f)``)."""
    n = arity if prim.variadic else len(prim.params)
    key = (prim.name, n)
    if key not in _FPRIM:
        g = Graph(f"F:{prim.name}")
        g.flags["lifted"] = prim  # (a cast passed as a dtype= value: myc/prims/ops.py _dt)
        names = prim.params if not prim.variadic else tuple(f"x{i}" for i in range(n))
        xs, ts = [], []
        for nm in names:  # interleaved: (x1, t1, x2, t2, ...)
            xs.append(g.add_parameter(nm))
            ts.append(g.add_parameter(f"t_{nm}"))
        y, ty = emit_prim(g, prim, list(xs), list(ts), None)
        g.output = g.apply(P.make_tuple, y, ty)
        return _FPRIM.setdefault(key, g)  # complete before it is shared
    return _FPRIM[key]


class ForwardAD(GraphTransform):
    prefix = "F"

    def __init__(self, root: Graph):
        super().__init__(root)
        self.nmap: dict[int, Node] = {}
        self.tmap: dict[int, Node] = {}

    def primal(self, n: Node, arity: int = 0) -> Node:
        if isinstance(n, Constant):
            v = n.value
            if isinstance(v, Graph):
                return Constant(self.image(v), n.loc)
            if isinstance(v, Primitive):
                return Constant(fprim(v, arity), n.loc)
            return n
        if n.graph in self.outside:
            return n
        return self.nmap[n.id]

    def tangent(self, n: Node) -> Node:
        if isinstance(n, Constant) or n.graph in self.outside:
            return Constant(ZERO)
        return self.tmap[n.id]

    def build_graph(self, g: Graph, fg: Graph) -> None:
        # parameters interleaved (x1, t1, x2, t2, ...): a call through a function value
        # that omits trailing defaults omits whole pairs, padded like the primal's
        for p in g.parameters:
            self.nmap[p.id] = fg.add_parameter(p.name, p.loc)
            self.tmap[p.id] = fg.add_parameter(f"t_{p.name}", p.loc)
        sig = g.flags.get("primal_signature") or g.flags.get("signature")
        if sig is not None:  # how a call binds to it (``signature_of``), as to g
            fg.flags["primal_signature"] = sig
        if "param_writes" in g.flags:  # what it changes in place (``unchanged_by``)
            fg.flags["param_writes"] = g.flags["param_writes"]
        if "returns_self" in g.flags:  # a method returning its changed self
            fg.flags["returns_self"] = g.flags["returns_self"]
        if "defaults" in g.flags:
            fg.flags["defaults"] = [v for d in g.flags["defaults"] for v in (d, UNDEF if
                                                                           d is UNDEF
                                                                           else ZERO)]
        order = schedule(g, self.mng.owned.get(g, []))
        out = g.output
        tail = isinstance(out, Apply) and out.graph is g and not self.mng.users.get(out)
        for n in order:
            if tail and n is out:
                continue
            y, ty = self.emit(fg, n)
            self.nmap[n.id], self.tmap[n.id] = y, ty
        if tail:
            assert isinstance(out, Apply)
            fn = out.inputs[0]
            if isinstance(fn, Constant) and isinstance(fn.value, Primitive):
                y, ty = self.emit(fg, out)
                fg.output = fg.apply(P.make_tuple, y, ty)
            else:
                args = out.inputs[1:]
                fg.output = fg.apply(self.primal(fn, len(args)),
                                     *_interleave([self.primal(a) for a in args],
                                                  [self.tangent(a) for a in args]),
                                     loc=out.loc)
        else:
            fg.output = fg.apply(P.make_tuple, self.primal(out), self.tangent(out), loc=g.loc)

    def emit(self, fg: Graph, n: Apply) -> tuple[Node, Node]:
        fn, args = n.inputs[0], n.inputs[1:]
        xs = [self.primal(a) for a in args]
        ts = [self.tangent(a) for a in args]
        if isinstance(fn, Constant) and isinstance(fn.value, Primitive):
            prim = fn.value
            full = prim.fill_args(xs) if not prim.variadic else xs
            if full is not None and len(full) > len(xs):
                xs = [x if isinstance(x, Node) else Constant(x) for x in full]
                ts = ts + [Constant(ZERO)] * (len(xs) - len(ts))
            return emit_prim(fg, prim, xs, ts, n.loc)
        r = fg.apply(self.primal(fn, len(args)), *_interleave(xs, ts), loc=n.loc)
        return (fg.apply(P.getitem, r, 0, loc=n.loc), fg.apply(P.getitem, r, 1, loc=n.loc))


def _interleave(xs: list, ts: list) -> list:
    return [v for pair in zip(xs, ts, strict=True) for v in pair]


def _f_lift(x: object) -> object:
    """A function passed as an argument (``myc.ad.passed``), as ``F`` lifts a function
    constant."""
    from myc.ad.passed import lift

    return lift(x, forward_transform, lambda p: fprim(p, len(p.params)))


def _bprop_f_lift(x, out, dout):  # noqa: ARG001 - the rule's signature
    return (dout,)  # data passes through (a gradient of a jvp differentiates it)


def _jvp_f_lift(x, tx, out):  # noqa: ARG001
    return tx


F_LIFT = register("f_lift", "x", _f_lift, bprop=_bprop_f_lift, jvp=_jvp_f_lift,
                  doc="A parameter of jvp(f) holding functions, as their F images.")


# weak: a transformed program lives as long as the program it came from
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def forward_transform(g: Graph) -> Graph:
    fg = _CACHE.get(g)
    if fg is None:
        # (two threads that built it at once agree on the first one stored)
        fg = _CACHE.setdefault(g, ForwardAD(g).transform(g))
    return fg


@timed("ad")
def jvp_graph(f: Graph) -> Graph:
    """``(primals_tuple, tangents_tuple) -> (out, tangent_out)`` as a graph."""
    fg = forward_transform(f)
    g = Graph(f"jvp({f.name})", f.parent, f.loc)
    prim = g.add_parameter("primals")
    tan = g.add_parameter("tangents")
    n = len(f.parameters)
    defaults = tuple(f.flags.get("defaults") or ())
    if defaults:  # parameters left out take their defaults, with zero tangents
        skip = g.apply(P.sub, g.apply(P.len, prim), n - len(defaults))
        rest = g.apply(P.make_slice, skip, None, None)
        zeros = tuple(0.0 if isinstance(d, float) else d * 0 if hasattr(d, "dtype") else d
                      for d in defaults)
        prim = g.apply(P.add, prim, g.apply(P.getitem, defaults, rest))
        tan = g.apply(P.add, tan, g.apply(P.getitem, zeros, rest))
    xs = [g.apply(P.getitem, g.apply(P.unpack, prim, n), i) for i in range(n)]
    ts = [g.apply(P.getitem, g.apply(P.unpack, tan, n), i) for i in range(n)]
    ts = [g.apply(P.cast_grad, t, x) for t, x in zip(ts, xs, strict=True)]
    r = g.apply(Constant(fg), *_interleave([g.apply(F_LIFT, x) for x in xs], ts))
    y = g.apply(P.getitem, r, 0)
    g.output = g.apply(P.make_tuple, y, g.apply(P.tangent_out, g.apply(P.getitem, r, 1), y))
    return g
