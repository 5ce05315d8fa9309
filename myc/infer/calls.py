"""Recursion whose depth depends on data: one typed function per (graph, signature).

Unrolling a call is how the tracer normally specializes it.  A recursive call under a
data-dependent branch (``if x < 2.0: return x`` ... ``fib(x - 1.0)``) cannot be
unrolled: the depth is known only at run time.  Such a call becomes an ``invoke`` node
of a separate typed graph, a :class:`TypedFn`, specialized once per (graph, closure,
argument signature) and shared by every call with that signature -- its own recursive
calls included, so the typed program holds a cycle of calls instead of an unbounded
unrolling.

The result type of a recursive function is found by an explicit worklist fixpoint,
not by running the recursion:

1. the body is traced with the function *pending*: a recursive call to it raises
   :class:`PendingResult`; the side of the branch that made it is dropped, and the
   other side's value gives a first guess of the result (the base case's);
2. the body is traced again with that guess as the result of every recursive call;
   when what the body returns agrees with the guess, the function is done, else the
   guess is replaced and the body traced again (at most ``MAX_ROUNDS`` times).

Functions specialized while another is pending depend on its guess: a retrace of the
pending one forgets them and builds them again.  A recursive call runs only where its
path condition holds (``invoke``'s ``enabled`` input), so a branch not taken does not
recurse.  Captured values of the enclosing program become extra parameters of the
function.  What this cannot express raises ``GraphBreak`` (the caller then specializes
on the call's own decisions, with guards).
"""

from __future__ import annotations

from typing import Any

from myc.infer.control import (
    ALoop,
    PendingResult,
    abstract_leaf,
    flatten,
    leaf_parameters,
    lift_free_nodes,
    unflatten,
)
from myc.ir.nodes import Apply, Closure, Constant, Graph, Node
from myc.prims import P
from myc.prims.abstract import AArray, AScalar

MAX_ROUNDS = 4
MAX_SIGNATURES = 64  # distinct specializations of one graph: past this, a GraphBreak


class TypedFn:
    """One specialization of a graph: parameters are its argument leaves that are data,
    then captured values of enclosing programs; output is ``make_tuple`` of its result
    leaves.  The node ``invoke(fn, enabled, *args)`` calls it; ``loop_out(node, k)``
    reads result ``k``.  Opaque to the passes over the program that calls it."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.result: tuple[Any, list[Any]] | None = None  # (structure, leaf abstracts)
        self.done = False
        self.outer: list[Node] = []  # captured nodes of the enclosing program
        # its calls made while it was being specialized, with the round that made them
        self.calls: list[tuple[Node, int]] = []
        self.rounds = 0

    @property
    def __myc_subgraph__(self) -> Graph:  # the IR printer shows it after the call
        return self.graph

    def __repr__(self) -> str:
        return f"<fn {self.graph.name}>"

    def __getstate__(self) -> dict:
        return {"graph": self.graph, "result": self.result, "done": self.done,
                "outer": [], "calls": []}


ACALL = ALoop("call")  # an ``invoke`` node's value: a tuple read with ``loop_out``


def _leaf_key(v: Any) -> Any:
    if isinstance(v, Node):
        return ("n", v.abstract)
    return ("c", type(v), v if not hasattr(v, "tobytes") else (v.shape, v.dtype.str,
                                                                 v.tobytes()))


def _data(v: Any) -> bool:
    return isinstance(v, Node) or isinstance(abstract_leaf(v), (AArray, AScalar))


class Recursion:
    """The tracer's typed calls (mixed into ``Tracer``)."""

    typed_calls = False  # on when plain specialization broke on data-dependent recursion

    def _init_calls(self) -> None:
        self.fns: dict[Any, TypedFn] = {}
        self.building: list[tuple[TypedFn, set]] = []  # functions being traced, and the
        # pending functions their current round met
        self.made: list[Any] = []  # keys of ``fns`` in creation order
        self.open: dict[Graph, int] = {}
        self.adjoint_fns: dict[int, TypedFn] = {}  # id(fn) -> its adjoint (myc.infer.adjoint)

    def wants_invoke(self, fn: Closure) -> bool:
        """Is ``fn`` a recursive call of a function (a ``def`` or ``lambda``, not a branch
        or loop graph) under a data-dependent branch?"""
        return self.typed_calls and self.path is not None and not self.concrete and \
            self.open.get(fn.graph, 0) > 0 and "signature" in fn.graph.flags

    def invoke_call(self, fn: Closure, args: list[Any], loc) -> Any:
        from myc.infer.signature import GraphBreak

        leaves: list[Any] = []
        struct = flatten(list(args), leaves)
        shape = repr(_untyped(struct))  # leaf types are in the leaf keys
        # floats are data, as for the program's own arguments (a literal ``0.0`` passed
        # down is not worth a specialization of its own); ints and bools stay concrete
        # until they change per level
        variant = [isinstance(v, Node) or _is_float(v) for v in leaves]
        same = [k for k in self.fns if k[0] is fn.graph]
        if len(same) > MAX_SIGNATURES:
            raise GraphBreak("a recursive function specialized on too many signatures", loc)
        for k in same:  # a value that changes per level (a depth counter) becomes data
            tf = self.fns[k]
            if not tf.done and k[1] == id(fn.frame) and k[2] == shape:
                variant = [var or old[0] == "n" or not _same_leaf(v, old)
                           for v, var, old in zip(leaves, variant, k[3], strict=True)]
        for i, v in enumerate(leaves):
            if variant[i] and not _data(v):
                raise GraphBreak("a recursive call's argument changes kind per level", loc)
        key = (fn.graph, id(fn.frame), shape,
               tuple(("n", abstract_leaf(v)) if var else _leaf_key(v)
                     for v, var in zip(leaves, variant, strict=True)))
        tf = self.fns.get(key)
        if tf is None:
            tf = self.build_fn(fn, struct, leaves, variant, key, loc)
        elif tf.result is None:
            raise PendingResult(tf)
        rstruct, abstracts = tf.result
        enabled = True if self.path is None else self.path
        data = [v for v, var in zip(leaves, variant, strict=True) if var]
        node = self.emit(P.invoke, [tf, enabled, *data, *tf.outer], loc, abstract=ACALL)
        if not tf.done:
            tf.calls.append((node, tf.rounds))
        outs = iter([self.emit(P.loop_out, [node, k], loc, abstract=a)
                     for k, a in enumerate(abstracts)])
        return unflatten(rstruct, outs)

    def build_fn(self, fn: Closure, struct: Any, leaves: list[Any], variant: list[bool],
                 key: Any, loc) -> TypedFn:
        """Specialize ``fn`` on the signature: the worklist fixpoint of its result."""
        from myc.infer.signature import GraphBreak

        tf = TypedFn(Graph(f"{fn.graph.name}:rec", None, loc))
        self.fns[key] = tf
        self.made.append(key)
        start = len(self.made)
        for _ in range(MAX_ROUNDS):
            tf.rounds += 1
            for k in self.made[start:]:  # built on this function's previous guess
                self.fns.pop(k, None)
            del self.made[start:]
            body = Graph(f"{fn.graph.name}:rec", None, loc)
            state = leaf_parameters(body, leaves, variant, "a")
            met: set = set()
            self.building.append((tf, met))
            saved = (self.trace, self.path, self.loops, self.spec_depth, self.outer_traces)
            self.trace, self.path, self.loops, self.spec_depth = body, None, [], 0
            self.outer_traces = []  # a typed function's program: nothing is hoisted out
            try:
                out = self.call(fn, list(unflatten(struct, iter(state))), loc, None)
            except PendingResult as exc:
                if exc.fn is tf:
                    raise GraphBreak("a recursive function that never returns without "
                                     "calling itself", loc) from None
                raise
            finally:
                self.trace, self.path, self.loops, self.spec_depth, self.outer_traces = \
                    saved
                self.building.pop()
            out = self.returned(out, loc)
            res_leaves: list[Any] = []
            rstruct = flatten(out, res_leaves)
            if any(not _data(v) for v in res_leaves):
                raise GraphBreak("a recursive function returns a value that is not data", loc)
            abstracts = [abstract_leaf(v) for v in res_leaves]
            outs = [v if isinstance(v, Node) else Constant(v) for v in res_leaves]
            guess = tf.result
            tf.result = (rstruct, abstracts)
            if met - {tf}:
                # a function this one is nested in is pending: this guess is rebuilt when
                # that one is
                tf.graph = body
                body.output = body.apply(P.make_tuple, *outs, loc=loc)
                return tf
            if tf not in met and (guess is None or (guess[0] == rstruct and
                                                    guess[1] == abstracts)):
                body.output = body.apply(P.make_tuple, *outs, loc=loc)
                self.finish_fn(tf, body)
                return tf
            # a round on a guess (or a guess that changed): trace again on this result
        raise GraphBreak("a recursive function's result type does not settle", loc)

    def finish_fn(self, tf: TypedFn, body: Graph) -> None:
        """Captured nodes of enclosing programs become parameters; recursive calls
        inside pass them on."""
        from myc.infer.signature import GraphBreak

        tf.graph = body
        outer = lift_free_nodes(body)
        if outer:
            lifted = body.parameters[-len(outer):]
            for n, r in tf.calls:
                if r != tf.rounds:
                    continue  # made on a guess that was dropped
                if n.graph is not body:  # in a loop nested in it, or in another function
                    raise GraphBreak("a recursive call from a loop or another function, "
                                     "to a function that captures values", n.loc)
                n.inputs.extend(lifted)
            for n in applies(body):
                if n.inputs[0].value is P.invoke and not n.inputs[1].value.done and \
                        n.inputs[1].value is not tf:
                    raise GraphBreak("mutually recursive functions that capture values",
                                     n.loc)
        tf.outer = outer
        tf.calls = []
        tf.done = True

    def pending(self, exc: PendingResult) -> None:
        """A side of a branch made a call to a pending function: the functions being
        built inside that one's build depend on its guess."""
        fns = [f for f, _ in self.building]
        if not fns:
            raise exc
        start = fns.index(exc.fn) if exc.fn in fns else 0
        for _, seen in self.building[start:]:
            seen.add(exc.fn)


def _is_float(v: Any) -> bool:
    a = abstract_leaf(v)
    return isinstance(a, AScalar) and a.dtype.kind == "f"


def _untyped(struct: Any) -> Any:
    if struct[0] == "v":
        return ("v",)
    if struct[0] in ("t", "l"):
        return (struct[0],) + tuple(_untyped(x) for x in struct[1:])
    if struct[0] == "s":
        return struct[:2] + tuple(_untyped(x) for x in struct[2:])
    return struct


def _same_leaf(v: Any, old: Any) -> bool:
    return old[0] == "c" and _leaf_key(v) == old


def applies(g: Graph):
    """The applications ``g``'s output depends on, within ``g`` itself."""
    seen: set[int] = set()
    stack = [g.output]
    while stack:
        n = stack.pop()
        if not isinstance(n, Apply) or n.id in seen or n.graph is not g:
            continue
        seen.add(n.id)
        yield n
        stack.extend(n.inputs)

