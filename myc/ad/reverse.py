"""Reverse mode as a graph transform J, in continuation-passing style.

For every primal graph ``g(x1..xn)`` J builds ``J(g)(K, x1..xn)`` returning
``(y, B)``: the primal value and a *backpropagator* closure ``B(dy)``.  ``K`` is the
continuation of the backward pass: ``B`` ends by tail-calling ``K(env, dx1..dxn)``,
where ``env`` holds the sensitivities of ``g``'s free variables (a closure's
sensitivity is such an environment).  Ordinary calls pass ``K = make_tuple``, so their
backpropagator simply returns ``(env, dx1..dxn)``.  A *tail* call ``g -> k(z)`` instead
passes ``k`` a continuation that runs ``g``'s own backward pass and then calls ``g``'s
``K``; so loops (tail-recursive graphs) stay loops in both directions: the forward pass
runs in constant stack and so does the backward pass -- the chain of continuations is
the tape, linear in the trip count, and nothing else is.

Worked example: for ``g(x) = h(sin(x))`` with a non-tail ``sin`` and a tail call to
``h``, J emits::

    graph J:g($K, x)
      %1 = J:sin(make_tuple, x)        # (sin x, B_sin)
      %2 = getitem(%1, 0)              # sin x
      %3 = getitem(%1, 1)              # B_sin
      return J:h(@B:g, %2)             # tail call; h's backward continues in B:g
    graph B:g(d_h, d_z) parent=J:g     # d_h: env of h's closure, d_z: sens of sin x
      %4 = %3(d_z)                     # (ZERO, dx)
      %5 = getitem(%4, 1)
      return $K(ZERO, %5)              # tail call to g's continuation

Sensitivities are accumulated per primal node with ``gadd``; the symbolic ``ZERO``
stands for inputs an output does not depend on, and a primitive's backpropagator skips
its rule entirely when handed ``ZERO``.
"""

from __future__ import annotations

import weakref

from myc.ad.graphmap import GraphTransform
from myc.ad.rules import reverse_rule_graph
from myc.errors import MycTypeError
from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.prims import ZERO, P, Primitive
from myc.prims.registry import register
from myc.timings import timed

_JPRIM: dict[tuple[str, int], Graph] = {}


def jprim(prim: Primitive, arity: int | None = None) -> Graph:
    """``J(prim)``: ``(K, *xs) -> (prim(*xs), B)`` with ``B`` applying the prim's bprop."""
    n = arity if prim.variadic else len(prim.params)
    key = (prim.name, n)
    if key in _JPRIM:
        return _JPRIM[key]
    rule = None
    if prim.differentiable and not prim.variadic:
        rule = reverse_rule_graph(prim)
        if rule is None:
            raise MycTypeError(f"primitive '{prim.name}' has no derivative rule")
    jg = Graph(f"J:{prim.name}")
    jg.flags["lifted"] = prim  # (a cast passed as a dtype= value: myc/prims/ops.py _dt)
    k = jg.add_parameter("$K")
    names = prim.params if not prim.variadic else tuple(f"x{i}" for i in range(n))
    xs = [jg.add_parameter(nm) for nm in names]
    if not prim.variadic and prim.defaults:
        jg.flags["defaults"] = [prim.defaults[p] for p in prim.params if p in prim.defaults]
    y = jg.apply(prim, *xs)
    bg = Graph(f"B:{prim.name}", jg)
    bg.kind = "bprop"
    dout = bg.add_parameter("dout")
    zeros = [Constant(ZERO)] * n
    if not prim.differentiable:
        bg.output = bg.apply(k, ZERO, *zeros)
    else:
        zero_b = Graph(f"B:{prim.name}:zero", bg)
        zero_b.output = zero_b.apply(k, ZERO, *zeros)
        real_b = Graph(f"B:{prim.name}:rule", bg)
        if prim.variadic:
            ds = [real_b.apply(P.getitem, dout, i) for i in range(n)]
        else:
            d = real_b.apply(rule, *xs, y, dout)
            ds = [real_b.apply(P.getitem, d, i) for i in range(n)]
        real_b.output = real_b.apply(k, ZERO, *ds)
        sw = bg.apply(P.switch, bg.apply(P.is_zero, dout), zero_b, real_b)
        bg.output = bg.apply(sw)
    jg.output = jg.apply(P.make_tuple, y, Constant(bg))
    return _JPRIM.setdefault(key, jg)  # complete before it is shared


_TUPLE_K: dict[int, Graph] = {}


def tuple_k(n: int) -> Graph:
    """The continuation of a non-tail call with ``n - 1`` arguments: ``(env, *ds) -> tuple``.

    A fixed-arity graph rather than the variadic ``make_tuple`` primitive, so that a
    second application of J sees an ordinary graph.
    """
    g = _TUPLE_K.get(n)
    if g is None:
        g = Graph(f"tuple{n}")
        # a callee whose omitted defaults were filled in returns more sensitivities than
        # the call site passed arguments: those belong to the defaults and are dropped
        g.flags["drop_extra"] = True
        xs = [g.add_parameter(f"d{i}") for i in range(n)]
        g.output = g.apply(P.make_tuple, *xs)
        g = _TUPLE_K.setdefault(n, g)  # complete before it is shared
    return g


class ReverseAD(GraphTransform):
    """One run of J over every graph reachable from ``root``."""

    prefix = "J"

    def __init__(self, root: Graph):
        super().__init__(root)
        self.nmap: dict[int, Node] = {}
        self.bp: dict[int, Node] = {}

    def j_const(self, c: Constant, arity: int) -> Node:
        v = c.value
        if isinstance(v, Graph):
            return Constant(self.image(v), c.loc)
        if isinstance(v, Primitive):
            return Constant(jprim(v, arity), c.loc)
        return c

    def jnode(self, n: Node, arity: int = 0) -> Node:
        if isinstance(n, Constant):
            return self.j_const(n, arity)
        if n.graph in self.outside:
            return n
        return self.nmap[n.id]

    def order(self, g: Graph) -> list[Apply]:
        """``g``'s applies, each after its inputs and after the values its closures capture."""
        mine = [n for n in self.mng.owned.get(g, []) if isinstance(n, Apply)]
        ids = {n.id for n in mine}
        done: set[int] = set()
        out: list[Apply] = []

        def deps(n: Apply) -> list[Node]:
            ds = []
            for i in n.inputs:
                if isinstance(i, Constant) and isinstance(i.value, Graph):
                    ds += [f for f in self.mng.free_variables(i.value) if f.id in ids]
                elif i.id in ids:
                    ds.append(i)
            return ds

        roots = sorted(mine, key=lambda n: n.id)
        if isinstance(g.output, Apply) and g.output.id in ids:
            roots.append(g.output)
        for r in roots:
            stack = [(r, False)]
            while stack:
                n, expanded = stack.pop()
                if n.id in done:
                    continue
                if expanded:
                    done.add(n.id)
                    out.append(n)
                    continue
                stack.append((n, True))
                stack += [(d, False) for d in reversed(deps(n)) if d.id not in done]
        return out

    def build_graph(self, g: Graph, jg: Graph) -> None:
        k = jg.add_parameter("$K")
        for p in g.parameters:
            self.nmap[p.id] = jg.add_parameter(p.name, p.loc)
        if "defaults" in g.flags:
            jg.flags["defaults"] = g.flags["defaults"]
        sig = g.flags.get("primal_signature") or g.flags.get("signature")
        if sig is not None:  # how a call binds to it (``signature_of``), as to g
            jg.flags["primal_signature"] = sig
        if "param_writes" in g.flags:  # what it changes in place (``unchanged_by``)
            jg.flags["param_writes"] = g.flags["param_writes"]
        if "returns_self" in g.flags:  # a method returning its changed self
            jg.flags["returns_self"] = g.flags["returns_self"]
        order = self.order(g)
        out = g.output
        tail = isinstance(out, Apply) and out.graph is g and not self.mng.users.get(out)
        body = [n for n in order if n is not out] if tail else order
        for n in body:
            fn = self.jnode(n.inputs[0], len(n.inputs) - 1)
            k_call = Constant(tuple_k(len(n.inputs)))
            r = jg.apply(fn, k_call, *[self.jnode(i) for i in n.inputs[1:]], loc=n.loc)
            self.nmap[n.id] = jg.apply(P.getitem, r, 0, loc=n.loc)
            self.bp[n.id] = jg.apply(P.getitem, r, 1, loc=n.loc)
        bg = Graph(f"B:{g.name}", jg, g.loc)
        bg.kind = "bprop"
        sens: dict[int, list[Node]] = {}
        fvs = self.mng.free_variables(g)
        fv_ids = {f.id for f in fvs}

        def contrib(inp: Node, c: Node) -> None:
            if isinstance(inp, Constant):
                if isinstance(inp.value, Graph):
                    for f in self.mng.free_variables(inp.value):
                        contrib(f, bg.apply(P.env_get, c, f.id, loc=inp.loc))
                return
            assert inp.graph is g or inp.id in fv_ids, f"unexpected sensitivity for {inp}"
            sens.setdefault(inp.id, []).append(c)

        def total(node_id: int) -> Node:
            cs = sens.get(node_id)
            if not cs:
                return Constant(ZERO)
            acc = cs[0]
            for c in cs[1:]:
                acc = bg.apply(P.gadd, acc, c)
            return acc

        if tail:
            assert isinstance(out, Apply)
            bg.flags["drop_extra"] = True  # a callee that filled in omitted defaults
            ds = [bg.add_parameter(f"d{i}") for i in range(len(out.inputs))]
            for inp, d in zip(out.inputs, ds, strict=True):
                contrib(inp, d)
            fn = self.jnode(out.inputs[0], len(out.inputs) - 1)
            jg.output = jg.apply(fn, Constant(bg), *[self.jnode(i) for i in out.inputs[1:]],
                                 loc=out.loc)
        else:
            dout = bg.add_parameter("dout")
            contrib(out, dout)
            jg.output = jg.apply(P.make_tuple, self.jnode(out), Constant(bg), loc=g.loc)
        for n in reversed(body):
            if n.id not in sens:
                continue
            d = bg.apply(self.bp[n.id], total(n.id), loc=n.loc)
            for i, inp in enumerate(n.inputs):
                if isinstance(inp, Constant) and not isinstance(inp.value, Graph):
                    continue
                contrib(inp, bg.apply(P.getitem, d, i, loc=n.loc))
        env: Node = Constant(ZERO)
        for f in fvs:
            if f.id in sens:
                env = bg.apply(P.env_add, env, f.id, total(f.id))
        bg.output = bg.apply(k, env, *[total(p.id) for p in g.parameters])


# weak: a transformed program lives as long as the program it came from
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _j_lift(x: object, default: object, image: object) -> object:
    """A parameter of ``grad(f)`` with a function default (``def loss(w, X,
    act=np.tanh)``) enters ``J(f)`` as that function's ``J`` image ``image`` (built with
    the gradient's graph: a function constant inside ``f`` is lifted the same way,
    ``ReverseAD.j_const``); any other function passed in is lifted likewise
    (``myc.ad.passed``)."""
    from myc.ir.nodes import Closure

    same = x is default or (isinstance(x, Closure) and isinstance(default, Closure) and
                            x.graph is default.graph)
    if same:
        return image
    from myc.ad.passed import lift

    return lift(x, reverse_transform, jprim)


def _bprop_j_lift(x, default, image, out, dout):  # noqa: ARG001 - the rule's signature
    return (dout, ZERO, ZERO)  # data passes through (grad of grad differentiates it)


def _jvp_j_lift(x, default, image, tx, tdefault, timage, out):  # noqa: ARG001
    return tx


J_LIFT = register("j_lift", "x default image", _j_lift, bprop=_bprop_j_lift, jvp=_jvp_j_lift,
                  doc="A parameter of grad(f): the functions it holds (a default's, "
                      "or passed in) as their J images.")


@timed("ad")
def reverse_transform(g: Graph) -> Graph:
    """``J(g)``: the graph ``(K, *args) -> (value, backpropagator)``."""
    jg = _CACHE.get(g)
    if jg is None:
        # (two threads that built it at once agree on the first one stored)
        jg = _CACHE.setdefault(g, ReverseAD(g).transform(g))
    return jg
