"""Reverse mode over *typed* programs: gradients through data-dependent loops.

``grad`` is normally a graph transform (``myc.ad``) applied before specialization, and
its continuation-passing backpropagators vanish when the tracer flattens them.  Through
a loop whose trip count depends on data that cannot work: the chain of backpropagators
is as long as the run.  For those signatures ``typed_grad`` goes the other way round:
specialize the primal program first (its loops become ``loop`` nodes), then sweep the
typed program backwards, applying each primitive's reverse rule (``prim.bprop``, as a
graph from ``myc.ad.rules``: the very rules the graph transform ``myc.ad.reverse`` uses)
through the tracer, so the adjoint ops are emitted into the same typed program.  (This
module stays in ``myc.infer``: it drives the tracer, and ``ad`` comes before ``infer`` in
the stage order.)

A ``loop`` node's adjoint keeps only what it must: the loop is run once more with a
*tape* of its carried state at the start of every iteration (one entry per iteration,
the state only -- never the body's intermediates), and a second loop walks the tape
backwards, recomputing one iteration's body from its state and sweeping it backwards
(checkpointing per iteration).  Both are ordinary ``loop`` nodes of the typed program.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.ad.rules import reverse_rule_graph
from myc.infer.calls import ACALL, applies
from myc.infer.control import ALOOP, Fork, Jump, LoopBody, Tree, _zeros_of, lift_free_nodes
from myc.infer.row_merge import read_row, row_of_stores, zeroed_row
from myc.infer.signature import GraphBreak
from myc.infer.undo_log import undo_body, undo_inits, undo_states
from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Closure, Constant, Graph, Node, Parameter
from myc.prims import ZERO, P
from myc.prims.abstract import AArray, AScalar, ATape
from myc.prims.containers import like

ATAPE = ATape()
_INT = AScalar(np.dtype(np.int64), True)


def _effectful(g: Graph) -> bool:
    """Does typed program ``g`` (or a loop or function it runs) draw or print?"""
    seen: set[int] = set()
    todo = [g]
    while todo:
        h = todo.pop()
        if id(h) in seen:
            continue
        seen.add(id(h))
        for n in Manager(h).owned.get(h, []):
            if not isinstance(n, Apply) or not isinstance(n.inputs[0], Constant):
                continue
            p = n.inputs[0].value
            if p is P.guarded:
                p = n.inputs[2].value
            if not getattr(p, "pure", True):
                return True
            if p in (P.loop, P.invoke):
                todo.append(n.inputs[1].value.graph)
    return False


# a mask (``Adjoint.masks``) that holds on every path: one empty conjunction
ALWAYS: tuple = ((),)
# alternatives kept in a mask before it is widened to the conditions they share
MAX_PATHS = 8


# primitives whose derivative can be infinite where their result is finite (sqrt and
# log at 0, a power with an exponent below 1, a division by 0): with a cotangent that is
# zero, their rule must give 0, not NaN (``Adjoint.zero_safe``)
_SINGULAR = frozenset(("sqrt", "log", "log1p", "pow", "truediv"))


def _always(mask: tuple) -> bool:
    return any(not conj for conj in mask)


def _and(mask: tuple, cond: Any, side: bool) -> tuple:
    """``mask`` on the ``side`` of the branch on ``cond``."""
    return tuple((*conj, (cond, side)) for conj in mask)


def _same(p: tuple, q: tuple) -> bool:
    return len(p) == len(q) and all(
        any(a[0] is b[0] and a[1] == b[1] for b in q) for a in p)


def _either(held: tuple, new: tuple) -> tuple:
    """The disjunction of two masks: where either holds."""
    if _always(held) or _always(new):
        return ALWAYS
    alts = list(held) + [c for c in new if not any(_same(c, h) for h in held)]
    if len(alts) <= MAX_PATHS:
        return tuple(alts)
    common = tuple(m for m in alts[0] if all(
        any(m[0] is k[0] and m[1] == k[1] for k in c) for c in alts[1:]))
    return (common,)  # a weaker mask: the conditions every alternative shares


def _is_float(a: Any) -> bool:
    return isinstance(a, (AArray, AScalar)) and a.dtype.kind == "f"


def _value(i: Node) -> Any:
    return i.value if isinstance(i, Constant) else i


def _is_tuple_node(i: Node) -> bool:
    return isinstance(i, Apply) and isinstance(i.inputs[0], Constant) and \
        i.inputs[0].value is P.make_tuple


def _structured(i: Node) -> Any:
    """An input as a rule sees it: a ``make_tuple`` node (the nested lists of
    ``np.array([[1.0, dt], [-w * dt, 1.0]])``) as the tuple of its pieces, recursively --
    ``array_grad`` and ``concat_grad`` give one cotangent per piece only for a tuple
    (given the node they gave the whole array, which no piece took: the gradient of
    every scalar in the literal was lost)."""
    if _is_tuple_node(i):
        return tuple(_structured(x) for x in i.inputs[1:])
    return _value(i)


class Adjoint:
    """Emits the reverse sweep of typed nodes into the tracer's current program."""

    def __init__(self, tracer):
        self.t = tracer
        # node id -> the paths under which its cotangent can be nonzero, a disjunction of
        # conjunctions of branch conditions (``(((cond, side), ...), ...)``; ``ALWAYS``
        # where nothing is known): it only flows through the sides of if-converted
        # branches, and through a loop's exit values only on the iteration that exits
        self.masks: dict[int, tuple] = {}
        # nodes of the primal program that no differentiated argument reaches: their
        # cotangents are never read, so none is summed (a loop would carry them as state:
        # an RNN's ``xs`` got a (steps, batch, input) accumulator and a matrix product
        # per iteration)
        self.inactive: set[int] = set()
        self.taped: dict[int, Apply] = {}  # a loop node's id -> its taped rerun
        # a loop node's id -> (its states, the states its taped rerun adds before its
        # exit values: an undo log's, ``myc.infer.undo_log``)
        self.shifted: dict[int, tuple[int, int]] = {}
        # nodes whose cotangent may be a zero known only at run time: one a loop's or a
        # call's adjoint handed back (an accumulator never added to), and everything it
        # flows into.  A rule whose derivative can be infinite (sqrt at 0) gives 0 there,
        # as the symbolic zero of the graph transform does, not 0 * inf = NaN.
        self.maybe_zero: set[int] = set()

    def add(self, cts: dict[int, Any], node: Node, d: Any, loc, mask: tuple = ALWAYS) -> None:
        if d is ZERO or d is None or not isinstance(node, (Apply, Parameter)) or \
                node.id in self.inactive:
            return
        old = cts.get(node.id)
        if old is None:
            cts[node.id] = d
            self.masks[node.id] = mask
        else:
            cts[node.id] = self.t.p_gadd([old, d], loc)
            # nonzero where either is.  (Keeping only the conditions common to both lost
            # everything when a value reached two selects on different conditions -- a
            # loop's state and its exit value -- and sqrt's rule, unmasked, gave 0 * inf
            # = NaN for a side not taken.)
            self.masks[node.id] = _either(self.masks.get(node.id, ALWAYS), mask)

    def side_path(self, mask: tuple, path: Any, loc) -> Any:
        """The condition under which the cotangent of a node with ``mask`` can be nonzero
        (and ``path``); None where it always can."""
        if _always(mask):
            return path
        b = AScalar(np.dtype(bool), False)
        alts = []
        for conj in mask:
            here = None
            for c, side in conj:
                cond = c if side else self.t.emit(P.eq, [c, False], loc, abstract=b)
                here = cond if here is None else self.t.emit(P.and_, [here, cond], loc,
                                                             abstract=b)
            alts.append(here)
        either = alts[0]
        for a in alts[1:]:
            either = self.t.emit(P.or_, [either, a], loc, abstract=b)
        return either if path is None else self.t.emit(P.and_, [path, either], loc,
                                                       abstract=b)

    def sweep(self, nodes: list[Apply], cts: dict[int, Any]) -> None:
        """Propagate ``cts`` (node id -> cotangent) from outputs to inputs, in place."""
        loop_cts: dict[int, dict[int, Any]] = {}
        for n in reversed(nodes):
            prim = n.inputs[0].value
            loc = n.loc
            if prim in (P.loop, P.invoke) and any(
                    v is not ZERO for v in loop_cts.get(n.id, {}).values()) and \
                    _effectful(n.inputs[1].value.graph):
                # its adjoint would recompute the body: draw again, print again
                raise GraphBreak("the gradient of a data-dependent loop or recursion with "
                                 "random draws or prints", n.loc)
            if prim is P.loop:
                self.loop(n, loop_cts.pop(n.id, {}), cts)
                continue
            if prim is P.invoke:
                self.invoke(n, loop_cts.pop(n.id, {}), cts)
                continue
            ct = cts.pop(n.id, None)
            if ct is None or ct is ZERO:
                continue
            if prim is P.loop_out:
                per = loop_cts.setdefault(n.inputs[1].id, {})
                k = n.inputs[2].value
                per[k] = ct if k not in per else self.t.p_gadd([per[k], ct], loc)
                continue
            mask = self.masks.pop(n.id, ALWAYS)
            if n.id in self.maybe_zero:
                self.maybe_zero.update(i.id for i in n.inputs[1:]
                                       if isinstance(i, (Apply, Parameter)))
            if prim in (P.getitem, P.guarded) and self.row_read(n, ct, mask, cts, loc):
                continue
            if prim is P.select:
                c, x, y = n.inputs[1:]
                z = _zeros_of(n.abstract)
                self.add(cts, x, self.t.emit(P.select, [c, ct, z], loc, n.abstract), loc,
                         _and(mask, c, True))
                self.add(cts, y, self.t.emit(P.select, [c, z, ct], loc, n.abstract), loc,
                         _and(mask, c, False))
                continue
            if prim is P.assert_defined:
                self.add(cts, n.inputs[2], ct, loc, mask)
                continue
            args = [_structured(i) for i in n.inputs[1:]]
            inputs = n.inputs[1:]
            path = None
            if prim is P.guarded:  # the rule too runs only where the operation's path holds
                path, prim, args, inputs = args[0], args[1], args[3:], inputs[3:]
                if prim is P.assert_defined:
                    self.add(cts, inputs[1], ct, loc, mask)
                    continue
            if not prim.differentiable or not _is_float(n.abstract):
                continue
            rule = reverse_rule_graph(prim)
            if rule is None:
                raise GraphBreak(f"no derivative rule for {prim.name}", loc)
            self.t.add_graphs(rule)
            # On a side of an if-converted branch, the rule runs on that side's values
            # even where the side was not taken: its operations that can fail run only
            # on the side's path, and its results are selected there (a zero cotangent
            # times an infinite derivative -- sqrt at 0, log of a negative -- is NaN).
            side = self.side_path(mask, None, loc)
            saved, self.t.path = self.t.path, (path if side is None else
                                               self.side_path(mask, path, loc))
            try:
                res = self.t.call(Closure(rule, None), [*args, n, ct], loc)
            finally:
                self.t.path = saved
            todo = list(zip(inputs, res, strict=False))
            while todo:
                i, d = todo.pop()
                if _is_tuple_node(i) and isinstance(d, tuple):  # pieces held in one node
                    todo.extend(zip(i.inputs[1:], d, strict=True))
                    continue
                if isinstance(i, (Apply, Parameter)) and _is_float(i.abstract) and \
                        not isinstance(d, tuple):
                    if prim.name in _SINGULAR and n.id in self.maybe_zero:
                        d = self.zero_safe(d, ct, loc)
                    if side is not None and d is not ZERO and d is not None:
                        a = getattr(d, "abstract", None) or i.abstract
                        d = self.t.emit(P.select, [side, d, _zeros_of(a)], loc, a)
                    self.add(cts, i, d, loc, mask)

    def row_read(self, n: Apply, ct: Any, mask: tuple, cts: dict[int, Any], loc) -> bool:
        """The adjoint of a row read ``x[i]`` whose array's cotangent so far is that of
        ``x`` with row ``i`` overwritten (``index_set``'s adjoint zeroed it: ``H[t] +=
        v``, or ``if c: H[t] = h`` merged as a row store, ``myc.infer.row_merge``): the
        row's cotangent is stored there -- one row, not a scatter into zeros summed over
        the whole array per iteration, and nothing of ``x`` read (so a taped loop does
        not store ``x``).  False where the pattern does not hold (the generic rule)."""
        found = read_row(n)
        if found is None:
            return False
        path, x, index = found
        if not isinstance(x, (Apply, Parameter)) or x.id in self.inactive or \
                not _is_float(x.abstract) or getattr(ct, "abstract", None) != n.abstract:
            return False
        old = cts.get(x.id)
        base = None if old is None else zeroed_row(old, path, index)
        if base is None:
            return old is not None and self.row_add(n, ct, mask, cts, loc)
        side = self.side_path(mask, None, loc)
        if side is not None:
            ct = self.t.emit(P.select, [side, ct, _zeros_of(n.abstract)], loc, n.abstract)
        saved, self.t.path = self.t.path, None
        try:  # (guarded as the read was: its index may be out of range off its path)
            cts[x.id] = self.t.emit(P.index_set, [base, _value(index), ct], loc,
                                    x.abstract) if path is None else \
                self.t.emit(P.guarded, [path, P.index_set, x.abstract, base,
                                        _value(index), ct], loc, x.abstract)
        finally:
            self.t.path = saved
        self.masks[x.id] = _either(self.masks.get(x.id, ALWAYS), mask)
        return True

    def row_add(self, n: Apply, ct: Any, mask: tuple, cts: dict[int, Any], loc) -> bool:
        """The adjoint of a row read ``x[i]`` whose array's cotangent so far is a chain of
        row stores (``index_set``'s adjoint zeroed the row the primal overwrote: ``H[t +
        1] = f(H[t])``): the row's cotangent added into row ``i``, one more row store
        (``myc.infer.row_merge.row_of_stores``) -- not a scatter into zeros summed over
        the whole array, a pass over it per iteration.  False where the pattern does not
        hold (the generic rule)."""
        path, x, index = read_row(n)
        old = cts[x.id]
        t = self.t
        if not _is_float(n.abstract) or isinstance(index, Apply) and _is_tuple_node(index):
            return False
        index = _value(index)
        side = self.side_path(mask, path, loc)  # where the row's cotangent can be nonzero
        at = index if path is None else t.emit(P.select, [path, index, 0], loc,
                                                abstract=index.abstract)
        saved, t.path = t.path, None
        try:
            row = row_of_stores(t, old, at, n.abstract, loc)
            if row is None:
                return False
            if side is not None:
                ct = t.emit(P.select, [side, ct, _zeros_of(n.abstract)], loc, n.abstract)
            total = t.emit(P.add, [row, ct], loc, abstract=n.abstract)
            cts[x.id] = t.emit(P.index_set, [old, at, total], loc, x.abstract)
        finally:
            t.path = saved
        self.masks[x.id] = _either(self.masks.get(x.id, ALWAYS), mask)
        return True

    def zero_safe(self, d: Any, ct: Any, loc) -> Any:
        """``d`` where ``ct`` is nonzero, else 0 (elementwise, where their shapes agree)."""
        a, c = getattr(d, "abstract", None), getattr(ct, "abstract", None)
        if d is ZERO or d is None or not isinstance(a, AArray | AScalar) or a != c:
            return d
        b = AArray(np.dtype(bool), a.shape) if isinstance(a, AArray) else \
            AScalar(np.dtype(bool), False)
        is_zero = self.t.emit(P.eq, [ct, 0.0], loc, abstract=b)
        return self.t.emit(P.select if isinstance(a, AScalar) else P.where,
                           [is_zero, _zeros_of(a), d], loc, a)

    def inline(self, g: Graph, args: list[Any]) -> tuple[list[Apply], dict[int, Any]]:
        """``g``'s nodes re-emitted on ``args``: the new nodes, and old id -> new value."""
        m: dict[int, Any] = {p.id: a for p, a in zip(g.parameters, args, strict=True)}
        new: list[Apply] = []
        for n in schedule(g, Manager(g).owned.get(g, [])):
            if n is g.output and n.inputs[0].value is P.make_tuple:
                continue
            prim = n.inputs[0].value
            ins = [m[i.id] if i.id in m else _value(i) for i in n.inputs[1:]]
            if prim is P.make_tuple:
                # pieces held in one node (``np.array([a, b, c])`` of a body's scalars):
                # no abstract of its own, re-made as the tracer makes it
                r = self.t.as_node(tuple(ins), n.loc)
                if not isinstance(r, Apply):  # every piece constant: no node at all
                    m[n.id] = tuple(ins)
                    continue
            else:
                r = self.t.emit(prim, ins, n.loc, abstract=n.abstract)
            m[n.id] = r
            new.append(r)
        return new, m

    def loop(self, n: Apply, out_cts: dict[int, Any], cts: dict[int, Any]) -> None:
        """The adjoint of a ``loop`` node: a taped rerun, then a loop over the tape."""
        body: LoopBody = n.inputs[1].value
        g, ns = body.graph, body.nstate
        outs = g.output.inputs[1:]
        nexit = len(outs) - 1 - ns
        ct_exit = {k - 1 - ns: v for k, v in out_cts.items() if v is not ZERO}
        if not ct_exit:
            return
        loc = n.loc
        t = self.t
        enabled = _value(n.inputs[2])
        init = n.inputs[3:3 + ns]
        invs = n.inputs[3 + ns:]
        states = [p.abstract for p in g.parameters[:ns]]
        # arrays the body updates a row per iteration and reads: an undo log of the
        # rows overwritten is taped instead of the arrays (``myc.infer.undo_log``)
        undos = undo_states(g, ns)
        u = len(undos)
        log0: tuple[list[Any], list[Any]] = ([], [])
        if undos:
            taped_body = LoopBody(undo_body(t, self, g, ns, undos, loc), ns + 2 * u,
                                  tape=True)
            log0 = undo_inits(undos)
        else:
            taped_body = LoopBody(g, ns, tape=True)
        ns2, nexit2 = ns + 2 * u, nexit + 3 * u
        taped = t.emit(P.loop, [taped_body, enabled, *[_value(i) for i in init],
                                *log0[0], *log0[1], *[_value(i) for i in invs]],
                       loc, abstract=ALOOP)
        self.taped[n.id] = taped
        self.shifted[n.id] = (ns, 2 * u)
        tape = t.emit(P.loop_out, [taped, 1 + ns2 + nexit2], loc, abstract=ATAPE)
        count = t.emit(P.loop_out, [taped, 2 + ns2 + nexit2], loc, abstract=_INT)
        carried = [j for j in range(ns) if _is_float(states[j])]
        accum = [k for k, i in enumerate(invs) if isinstance(i, (Apply, Parameter))
                 and _is_float(i.abstract) and i.id not in self.inactive]
        # where every exit value with a cotangent is a carried state as the last run
        # found it (a ``for`` loop's variables after it), the last run -- which only
        # tests that the loop is done -- is not swept: the exits' cotangents start the
        # backward loop as its state's, which walks the iterations before it
        # (``_exit_states``).  No ``last`` select then feeds the sweep, so a state
        # updated in place (a stacked list's buffer; its cotangent's rows zeroed one an
        # iteration) stays so in the backward loop.
        from_exits: dict[int, Any] | None = None
        exit_cts = _exit_states(g, ns, ct_exit, carried)
        if exit_cts is not None:
            from_exits = {}
            for j, ds in exit_cts.items():
                from_exits[j] = ds[0]
                for d in ds[1:]:
                    from_exits[j] = t.p_gadd([from_exits[j], d], loc)
        # the backward loop's body: iteration k of the primal, recomputed and swept
        bw = Graph(f"{g.name}:adjoint", None, loc)
        k = bw.add_parameter("k")
        k.abstract = _INT
        ct_s = {}
        for j in carried:
            p = bw.add_parameter(f"ct{j}")
            p.abstract = states[j]
            ct_s[j] = p
        acc = {}
        for i in accum:
            p = bw.add_parameter(f"acc{i}")
            p.abstract = invs[i].abstract
            acc[i] = p
        now = {}  # an undone state as iteration k found it, restored a row an iteration
        for d in undos:
            p = bw.add_parameter(f"s{d.j}")
            p.abstract = states[d.j]
            now[d.j] = p
        saved = t.trace
        t.trace = bw
        try:
            s_k = [now[j] if j in now else
                   t.emit(P.tape_get, [tape, j, k], loc, abstract=states[j])
                   for j in range(ns)]
            last = None if from_exits is not None else t.emit(
                P.eq, [k, t.emit(P.sub, [count, 1], loc, abstract=_INT)], loc,
                abstract=AScalar(np.dtype(np.bool_), True))
            nodes, m = self.inline(g, s_k + [_value(i) for i in invs])
            local: dict[int, Any] = {}
            for j in range(ns):
                src = outs[1 + j]
                if j in ct_s and isinstance(src, (Apply, Parameter)) and last is None:
                    self.add(local, _new(m, src), ct_s[j], loc)
                elif j in ct_s and isinstance(src, (Apply, Parameter)):
                    z = _zeros_of(states[j])
                    self.add(local, _new(m, src), t.emit(P.select, [last, z, ct_s[j]], loc,
                                                         abstract=states[j]), loc,
                             _and(ALWAYS, last, False))
            for e, d in (ct_exit.items() if last is not None else ()):
                src = outs[1 + ns + e]
                if isinstance(src, (Apply, Parameter)) and _is_float(src.abstract):
                    z = _zeros_of(src.abstract)
                    self.add(local, _new(m, src), t.emit(P.select, [last, d, z], loc,
                                                         abstract=src.abstract), loc,
                             _and(ALWAYS, last, True))
            self.sweep(nodes, local)
            # a cotangent the sweep never reaches stays a symbolic zero after the loop, so
            # the rules before the loop skip it as the evaluator does (a materialized zero
            # times sqrt's infinite slope at 0 would be NaN where the evaluator gives 0)
            reached = {j for j in carried if local.get(s_k[j].id) is not None}
            reached_acc = {i for i in accum if local.get(invs[i].id) is not None}
            new_ct = [_or_zeros(local.get(s_k[j].id), states[j]) for j in carried]
            new_acc = []
            for i in accum:
                d = local.get(invs[i].id)
                new_acc.append(acc[i] if d is None else t.p_gadd([acc[i], d], loc))
            go = t.emit(P.gt, [k, 0], loc, abstract=AScalar(np.dtype(np.bool_), True))
            k1 = t.emit(P.sub, [k, 1], loc, abstract=_INT)
            log_k, restored = [], []
            for r, d in enumerate(undos):  # iteration k - 1 wrote a row: put back its old
                row = t.emit(P.tape_get, [tape, ns + r, k], loc, abstract=d.row)
                at = t.emit(P.tape_get, [tape, ns + u + r, k], loc, abstract=d.index.abstract)
                log_k += [row, at]
                restored.append(t.emit(P.index_set, [now[d.j], at, row], loc,
                                       abstract=states[d.j]))
            state_out = [k1, *new_ct, *new_acc, *restored]
            bw.output = bw.apply(P.make_tuple, go, *state_out, *new_ct, *new_acc, loc=loc)
        finally:
            t.trace = saved
        # the tape stores only the states the backward loop reads (a stacked list's
        # buffer is written by the body, never read: it is not stored every iteration)
        taped_body.kept = _read_states(bw, s_k + log_k[0::2] + log_k[1::2])
        lifted = lift_free_nodes(bw)
        nstate = 1 + len(carried) + len(accum) + u
        start = t.emit(P.sub, [count, 1 if from_exits is None else 2], loc, abstract=_INT)
        runs = enabled
        if from_exits is not None:  # the iterations before the last run, if any
            more = t.emit(P.gt, [count, 1], loc, abstract=AScalar(np.dtype(np.bool_), True))
            runs = more if enabled is True else t.emit(
                P.and_, [enabled, more], loc, abstract=AScalar(np.dtype(np.bool_), True))
        ct0 = [_zeros_of(states[j]) if from_exits is None or j not in from_exits else
               from_exits[j] for j in carried]
        now0 = []  # the undone states as the backward loop's first iteration finds them
        for r, d in enumerate(undos):
            last = 1 + ns2 + nexit
            h = t.emit(P.loop_out, [taped, last + r], loc, abstract=states[d.j])
            if from_exits is not None:  # it starts before the last run: undo its write
                row = t.emit(P.loop_out, [taped, last + u + r], loc, abstract=d.row)
                at = t.emit(P.loop_out, [taped, last + 2 * u + r], loc,
                            abstract=d.index.abstract)
                h = t.emit(P.index_set, [h, at, row], loc, abstract=states[d.j])
            now0.append(h)
        back = t.emit(P.loop, [LoopBody(bw, nstate), runs, start, *ct0,
                               *[_zeros_of(invs[i].abstract) for i in accum], *now0,
                               *lifted], loc, abstract=ALOOP)
        base = 1 + nstate
        for r, j in enumerate(carried):
            if not isinstance(init[j], (Apply, Parameter)) or (
                    j not in reached and (from_exits is None or j not in from_exits)):
                continue
            d = t.emit(P.loop_out, [back, base + r], loc, abstract=states[j])
            if from_exits is not None and j in from_exits:
                # no iteration before the last run: the exits' cotangents themselves
                # (none where the loop did not run at all)
                skipped = from_exits[j] if enabled is True else t.emit(
                    P.select, [enabled, from_exits[j], _zeros_of(states[j])], loc,
                    abstract=states[j])
                d = t.emit(P.select, [runs, d, skipped], loc, abstract=states[j])
            self.add(cts, init[j], d, loc)
            self.maybe_zero.add(init[j].id)
        for r, i in enumerate(accum):
            if i in reached_acc:
                self.add(cts, invs[i], t.emit(P.loop_out, [back, base + len(carried) + r],
                                              loc, abstract=invs[i].abstract), loc)
                self.maybe_zero.add(invs[i].id)


    def invoke(self, n: Apply, out_cts: dict[int, Any], cts: dict[int, Any]) -> None:
        """The adjoint of a call of a typed (recursive) function: a call of its adjoint
        function, which recomputes the callee's body and sweeps it backwards -- its own
        recursive calls becoming calls of the adjoint function (checkpointing per call)."""
        tf = n.inputs[1].value
        _, results = tf.result
        wanted = [k for k, a in enumerate(results) if _is_float(a)]
        if not any(out_cts.get(k, ZERO) is not ZERO for k in wanted):
            return
        loc = n.loc
        t = self.t
        bwd, grads = self.adjoint_fn(tf, loc)
        ins = n.inputs[3:]
        cts_in = [out_cts[k] if out_cts.get(k, ZERO) is not ZERO else _zeros_of(results[k])
                  for k in wanted]
        node = t.emit(P.invoke, [bwd, _value(n.inputs[2]), *[_value(i) for i in ins],
                                 *cts_in], loc, abstract=ACALL)
        for r, j in enumerate(grads):
            if isinstance(ins[j], (Apply, Parameter)):
                self.add(cts, ins[j], t.emit(P.loop_out, [node, r], loc,
                                             abstract=ins[j].abstract), loc)
                self.maybe_zero.add(ins[j].id)

    def adjoint_fn(self, tf: Any, loc) -> tuple[Any, list[int]]:
        """``tf``'s adjoint function (made once per tracer): parameters ``tf``'s, then one
        cotangent per float result; results the cotangents of its float parameters."""
        from myc.infer.calls import TypedFn

        memo = self.t.adjoint_fns
        g = tf.graph
        grads = [j for j, p in enumerate(g.parameters) if _is_float(p.abstract)]
        if id(tf) in memo:
            return memo[id(tf)], grads
        _, results = tf.result
        wanted = [k for k, a in enumerate(results) if _is_float(a)]
        bw = Graph(f"{g.name}:adjoint", None, g.loc)
        bt = TypedFn(bw)
        bt.result = (("t",) + (("v", Node),) * len(grads),
                     [g.parameters[j].abstract for j in grads])
        memo[id(tf)] = bt
        params = []
        for p in g.parameters:
            q = bw.add_parameter(p.name)
            q.abstract = p.abstract
            params.append(q)
        ct_params = []
        for k in wanted:
            q = bw.add_parameter(f"ct{k}")
            q.abstract = results[k]
            ct_params.append(q)
        t = self.t
        saved = t.trace, t.path
        t.trace, t.path = bw, None
        try:
            nodes, m = self.inline(g, params)
            local: dict[int, Any] = {}
            outs = g.output.inputs[1:]
            for k, q in zip(wanted, ct_params, strict=True):
                if isinstance(outs[k], (Apply, Parameter)):
                    self.add(local, _new(m, outs[k]), q, loc)
            Adjoint(t).sweep(nodes, local)
            res = [_or_zeros(local.get(params[j].id), params[j].abstract) for j in grads]
            bw.output = bw.apply(P.make_tuple, *[t.as_node(r, loc) for r in res], loc=loc)
        finally:
            t.trace, t.path = saved
        bt.done = True
        return bt, grads


def _inactive(nodes: list[Apply], wrt: list[Any], params: list[Any]) -> set[int]:
    """Ids of the parameters and nodes (in schedule order) that none of ``wrt`` reaches."""
    def ids(v: Any) -> list[int]:
        if isinstance(v, tuple):
            return [k for x in v for k in ids(x)]
        return [v.id] if isinstance(v, Node) else []

    active = {k for v in wrt for k in ids(v)}
    out = {k for v in params for k in ids(v)} - active
    for n in nodes:
        if any(isinstance(i, (Apply, Parameter)) and i.id in active for i in n.inputs[1:]):
            active.add(n.id)
        else:
            out.add(n.id)
    return out


def _share_taped(g: Graph, taped: dict[int, Apply],
                 shifted: dict[int, tuple[int, int]]) -> None:
    """The primal's values of a loop that has a taped rerun are read from the rerun (its
    results are the loop's, then the tape): the loop runs twice, not three times.  (A
    rerun with an undo log has more states: its exit values come ``shift`` later.)"""
    if not taped:
        return
    for n in Manager(g).owned.get(g, []):
        if isinstance(n, Apply):
            for k, i in enumerate(n.inputs):
                if k and isinstance(i, Apply) and i.id in taped and n is not taped[i.id]:
                    ns, shift = shifted.get(i.id, (0, 0))
                    if shift and k == 1 and n.inputs[0].value is P.loop_out and \
                            n.inputs[2].value >= 1 + ns:
                        n.inputs[2] = Constant(n.inputs[2].value + shift)
                    n.inputs[k] = taped[i.id]


def _exit_states(g: Graph, ns: int, ct_exit: dict[int, Any],
                 carried: list[int]) -> dict[int, list[Any]] | None:
    """When every exit value of loop body ``g`` with a cotangent (``ct_exit``, by exit)
    is a carried float state's parameter -- the state as the last run found it --
    the cotangents each such state starts the backward loop with (several where exits
    are the same state); else None."""
    outs = g.output.inputs[1:]
    params = {p.id: j for j, p in enumerate(g.parameters[:ns])}
    found: dict[int, list[Any]] = {}
    for e, d in ct_exit.items():
        src = outs[1 + ns + e]
        j = params.get(src.id) if isinstance(src, Parameter) else None
        if j is None or j not in carried or getattr(d, "abstract", None) != src.abstract:
            return None  # (a cotangent of another type: cast on the way, as before)
        found.setdefault(j, []).append(d)
    return found


def _read_states(bw: Graph, reads: list[Any]) -> tuple[int, ...]:
    """The positions in ``reads`` (the backward body's ``tape_get`` nodes, one per state)
    of the nodes that ``bw``'s output depends on: the states its tape must store."""
    want = {n.id: j for j, n in enumerate(reads) if isinstance(n, Apply)}
    return tuple(sorted({want[n.id] for n in applies(bw) if n.id in want}))


def _new(m: dict[int, Any], src: Node) -> Any:
    return m.get(src.id, src)


def _or_zeros(d: Any, a: Any) -> Any:
    return _zeros_of(a) if d is None or d is ZERO else d


def typed_grad(graph: Graph, args: list[Any], argnums: tuple[int, ...], single: bool,
               has_value: bool, has_aux: bool = False,
               typed_calls: bool = False) -> tuple[Graph, Any]:
    """``(value_and_)grad`` of ``graph`` on ``args`` as one typed program, loops kept
    (``has_aux``: ``graph`` returns ``(loss, aux)``, ``myc.ad.grad.grad_graph``)."""
    from myc.infer.trace import GraphBreak, Tracer, finish_trace, symbolize

    tracer = Tracer(graph, typed_calls=typed_calls)
    sym_args = [symbolize(a, tracer.trace, p.name)
                for a, p in zip(args, graph.parameters, strict=True)]
    out = tracer.run(*sym_args)
    if isinstance(out, (Jump, Tree, Fork)):
        raise GraphBreak("data-dependent control flow at the program's end")
    aux = None
    if has_aux:
        out, aux = tracer.call_prim(P.check_aux_output, [out], graph.loc)
        if isinstance(out, (Jump, Tree, Fork)):
            raise GraphBreak("data-dependent control flow at the program's end")
    y = tracer.call_prim(P.check_scalar_output, [out], graph.loc)
    if not isinstance(y, Node):
        raise GraphBreak("the output does not depend on the inputs")
    tracer.trace.output = y  # for the schedule: the nodes y depends on
    nodes = [n for n in schedule(tracer.trace, Manager(tracer.trace).owned.get(
        tracer.trace, [])) if isinstance(n, Apply)]
    tracer.trace.output = None
    cts: dict[int, Any] = {y.id: tracer.call_prim(P.seed_like, [y], graph.loc)}
    adj = Adjoint(tracer)
    adj.inactive = _inactive(nodes, [sym_args[i] for i in argnums], sym_args)
    adj.sweep(nodes, cts)

    def grad_of(sym: Any, arg: Any) -> Any:
        if isinstance(sym, tuple):  # the argument's own kind: a dict's gradient a dict
            return like(sym, [grad_of(s, a) for s, a in zip(sym, arg, strict=True)])
        d = cts.get(sym.id, ZERO) if isinstance(sym, Node) else ZERO
        return tracer.p_grad_cast([d, sym], graph.loc)

    grads = [grad_of(sym_args[i], args[i]) for i in argnums]
    res = grads[0] if single else tuple(grads)
    value = (y, aux) if has_aux else y
    done = finish_trace(tracer, (value, res) if has_value else (res, aux) if has_aux else res)
    _share_taped(tracer.trace, adj.taped, adj.shifted)
    return done
