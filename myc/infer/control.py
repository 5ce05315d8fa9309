"""Data-dependent control flow during specialization: if-conversion and loop recognition.

The graph IR expresses every branch as ``switch(truth(c), A, B)()`` and every loop as
a tail-recursive graph (the frontend's ``while``/``for`` headers).  When ``c`` is only
known as a node of the typed program, the tracer cannot pick a side.  Two things make
such programs compile anyway:

* **if-conversion.**  Both sides are traced with their tail calls *held back*: a branch
  ends in a ``Jump`` to the code after it (the join) instead of running it.  When both
  sides jump to the same place, their arguments are merged with ``select`` nodes and the
  join is traced once.  Functions that differ by branch merge into a ``Fork`` value that
  traces both when called (a backpropagator chosen by a branch is such a value).

* **loops.**  When the branches do not rejoin -- one continues a loop, the other leaves
  it -- the enclosing loop header is re-traced in *loop mode*: its parameters become the
  parameters of a separate typed body graph, one iteration is traced into it (branches
  inside merged as above), and the body reports whether to go on, the next state and
  the values the loop exits with.  Loop-carried ints and floats that change between
  iterations are generalized to symbolic values (a round of re-tracing), so a counter
  ``i += 1`` becomes data of the loop.  The outer program gets one ``loop`` node.

Everything the tracer cannot prove safe -- branches that fail when not taken, closures
created per iteration carried by the loop, values whose type changes between
iterations -- raises ``GraphBreak``, and the caller falls back to guarded specialization.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from myc.errors import MycError
from myc.infer import stacked
from myc.infer.masked import WHY as MASK_WHY
from myc.infer.masked import Masked, MaskedLen
from myc.infer.row_merge import merge_row_store
from myc.infer.signature import GraphBreak
from myc.infer.stacked import StackList
from myc.ir.nodes import Apply, Closure, Constant, Graph, Node, Parameter
from myc.prims import UNDEF, ZERO, P, Primitive
from myc.prims.abstract import AArray, AScalar, abstract_of
from myc.prims.containers import DictValue, ObjectValue, container_meta, is_container, like


class PendingResult(Exception):  # noqa: N818 - a control signal
    """A recursive call to a function whose result type is not known yet (raised by
    ``myc.infer.calls``; a branch's other side decides its type)."""

    def __init__(self, fn: Any):  # a ``myc.infer.calls.TypedFn``
        super().__init__(fn.graph.name)
        self.fn = fn


class SymBool:
    """A branch condition known only as a boolean node of the typed program."""

    __slots__ = ("node",)

    def __init__(self, node: Node):
        self.node = node

    def __bool__(self) -> bool:
        from myc.infer.signature import GraphBreak

        raise GraphBreak("a condition depends on array or float data")


class MaybeUndef:
    """A loop variable first assigned inside the loop: its value, and whether it is set."""

    __slots__ = ("value", "flag")

    def __init__(self, value: Any, flag: Any):
        self.value = value
        self.flag = flag


class Fork:
    """One of two functions, chosen by a symbolic condition: calling it traces both."""

    __slots__ = ("cond", "a", "b")

    def __init__(self, cond: Node, a: Any, b: Any):
        self.cond = cond
        self.a = a
        self.b = b


class Jump:
    """A tail call held back because it leaves the code being traced (a join or exit)."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Any, args: list[Any]):
        self.fn = fn
        self.args = args


class Tree:
    """Branches that did not rejoin: what each side of ``cond`` ends with."""

    __slots__ = ("cond", "a", "b")

    def __init__(self, cond: Node, a: Any, b: Any):
        self.cond = cond
        self.a = a
        self.b = b


@dataclass
class Scope:
    """The graph whose tail calls out are held back; ``self_jump``: so are calls to it."""

    graph: Graph
    self_jump: bool


class LoopCtx:
    """A loop header being traced: unrolled until a branch forces loop mode."""

    __slots__ = ("graph", "frame", "mode", "start", "unroll_only", "second", "entry",
                 "nested")

    def __init__(self, graph: Graph, frame: Any, start: int = 0, nested: bool = False):
        self.graph = graph
        # entered while a loop body is traced: its limit is NESTED_UNROLL_NODES
        self.nested = nested
        self.frame = frame
        self.mode = "unroll"
        self.start = start  # the tracer's node count at the loop's entry
        self.unroll_only = False  # kept as a loop node it failed: unroll it after all
        # the entry of its second iteration: (fn, args, node count, tracer marks)
        self.second: tuple | None = None
        # its own entry, the same way (set by ``enter_loop``)
        self.entry: tuple | None = None


class LoopNeeded(Exception):  # noqa: N818 - a control signal
    """Raised in an unrolled loop whose branches do not rejoin, or (``chosen``) whose
    unrolling stopped paying (``unroll_pays``): trace it as a loop."""

    def __init__(self, ctx: LoopCtx, chosen: bool = False, fn: Any = None,
                 args: list[Any] | None = None):
        super().__init__(ctx.graph.name)
        self.ctx = ctx
        self.chosen = chosen
        # chosen: the header's call that would start the next iteration (the iterations
        # unrolled so far stay, peeled: their values have settled into the loop's types)
        self.fn, self.call_args = fn, args


# The unrolling policy (docs/loops.md, measured there): a loop with static control flow
# is unrolled -- its iterations then fuse with each other and run without a loop's
# per-iteration costs -- while it has emitted at most UNROLL_NODES operations; past that
# it becomes one ``loop`` node from its second iteration (the first stays, peeled: the
# loop's variables have settled into their types), so compile time stops growing with
# the trip count and the program around the loop stays small.
UNROLL_NODES = 500
# A loop inside a loop node's body unrolls while it has emitted at most this many: the
# body is compiled once, but a gradient tapes, recomputes and sweeps it backwards, and
# every operation unrolled into it is one more there; a loop node inside a body runs
# natively inside the outer loop's native function (``myc/backends/cpu/loopgen.py``)
NESTED_UNROLL_NODES = 100


# An element stored at a static place (``x[0, i] = v`` unrolled: a ``where`` by a constant
# mask, ``myc.frontend.py_library.array_setitem``) is a pass over the whole array and a
# kernel of its own -- the element it places is read from the array before, so it does
# not fuse with the stores around it -- where a loop node stores the element in place.
# It counts towards ``UNROLL_NODES`` as one operation per this many elements of the
# array (at most STORE_WEIGHT_MAX): Stam's boundary loop over a 18 x 18 grid, 64 stores,
# becomes a loop node instead of 64 host steps and kernels.
STORE_ELEMENTS = 64
STORE_WEIGHT_MAX = 16


def store_weight(args: list[Any], abstract: Any) -> int:
    """What a ``where(args)`` emitted counts towards the unrolling limit."""
    mask = args[0]
    v = args[1] if len(args) == 3 else None
    if isinstance(mask, np.ndarray) and isinstance(abstract, AArray) and \
            np.shape(v.abstract if isinstance(v, Node) else v) == ():
        return 1 + min(mask.size // STORE_ELEMENTS, STORE_WEIGHT_MAX - 1)
    return 1


def unroll_pays(ctx: LoopCtx, count: int) -> bool:
    """Should the loop of ``ctx``, entering one more iteration, go on unrolling?"""
    limit = NESTED_UNROLL_NODES if ctx.nested else UNROLL_NODES
    return ctx.unroll_only or count - ctx.start <= limit


class LoopBody:
    """The typed body of a ``loop`` node: opaque to the passes over the outer program.

    Parameters: the loop-carried state (``nstate`` of them), then loop invariants.
    Output: ``(go_on, *next_state, *exit_values)``.  The node is
    ``loop(body, enabled, *initial_state, *invariants)``: a loop in a side of a branch
    that is not taken does not run (its results are zeros, discarded by a ``select``).
    """

    # a taped loop's stored states (``taped_states``): None stores every state
    kept: tuple[int, ...] | None = None

    def __init__(self, graph: Graph, nstate: int, tape: bool = False):
        self.graph = graph
        self.nstate = nstate
        # taped: the loop also returns the state at the start of every iteration and
        # the iteration count (after its exit values), for its adjoint
        self.tape = tape

    def taped_states(self) -> tuple[int, ...] | None:
        """The states a taped loop stores per iteration, in state order (None: the loop
        is not taped).  Its adjoint (``myc.infer.adjoint``) sets ``kept`` to those its
        backward loop reads as primal values: a state the body only writes -- a stacked
        list's buffer, written a row per iteration -- is not stored ``trips`` times.
        The one place the tape's layout is decided: every runner stores these."""
        if not self.tape:
            return None
        return tuple(range(self.nstate)) if self.kept is None else self.kept

    @property
    def __myc_subgraph__(self) -> Graph:  # the IR printer shows it after the loop
        return self.graph

    def __repr__(self) -> str:
        return f"<loop body {self.graph.name}: {self.nstate} carried>"


class ALoop:
    """The abstract value of a ``loop`` (or ``invoke``) node: a tuple read with
    ``loop_out``."""

    shape = None

    def __init__(self, kind: str = "loop"):
        self.kind = kind

    def __repr__(self) -> str:
        return self.kind


ALOOP = ALoop()


class NoMerge(Exception):  # noqa: N818 - a control signal
    pass


def root_of(g: Graph) -> Graph:
    while g.parent is not None:
        g = g.parent
    return g


def escapes(g: Graph, scope: Scope) -> bool:
    """Does a tail call to ``g`` leave ``scope`` (to a join, a loop header or an exit)?"""
    if g is scope.graph:
        return scope.self_jump
    if g.is_within(scope.graph):
        return False
    return root_of(g) is root_of(scope.graph)


def loop_headers(graphs) -> set[Graph]:
    """Graphs tail-called from inside themselves: the loops the frontend lowered."""
    out = set()
    for h in graphs:
        out_node = h.output
        if isinstance(out_node, Apply) and isinstance(out_node.inputs[0], Constant):
            target = out_node.inputs[0].value
            if isinstance(target, Graph) and h.is_within(target):
                out.add(target)
    return out


def _is_leaf(v: Any) -> bool:
    return isinstance(v, (Node, np.ndarray, np.generic, bool, int, float))


def flatten(v: Any, leaves: list[Any]) -> Any:
    """``v``'s structure with numeric leaves (symbolic or not) replaced by their index."""
    if isinstance(v, StackList):  # a list a loop appends to: its count and buffers
        return ("g", v.meta, flatten(v.count, leaves)) + tuple(flatten(b, leaves)
                                                              for b in v.buffers)
    if is_container(v):  # a list, dict or namedtuple: its kind and keys are structure
        return ("s", container_meta(v)) + tuple(flatten(x, leaves) for x in v)
    if isinstance(v, tuple):
        return ("t",) + tuple(flatten(x, leaves) for x in v)
    if isinstance(v, list):
        return ("l",) + tuple(flatten(x, leaves) for x in v)
    if _is_leaf(v):
        leaves.append(v)
        return ("v", type(v) if not isinstance(v, Node) else Node)
    if isinstance(v, MaybeUndef):
        leaves.append(v.value)
        leaves.append(v.flag)
        return ("m",)
    return ("k", v)


def unflatten(s: Any, leaves) -> Any:
    tag = s[0]
    if tag == "t":
        return tuple(unflatten(x, leaves) for x in s[1:])
    if tag == "s":
        return P.pack.impl(s[1], tuple(unflatten(x, leaves) for x in s[2:]))
    if tag == "l":
        return [unflatten(x, leaves) for x in s[1:]]
    if tag == "v":
        return next(leaves)
    if tag == "m":
        return MaybeUndef(next(leaves), next(leaves))
    if tag == "g":
        return StackList(s[1], unflatten(s[2], leaves),
                         tuple(unflatten(x, leaves) for x in s[3:]))
    return s[1]


def same_structure(a: Any, b: Any) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "s":
        return a[1] == b[1] and len(a) == len(b) and all(
            same_structure(x, y) for x, y in zip(a[2:], b[2:], strict=True))
    if a[0] in ("t", "l"):
        return len(a) == len(b) and all(same_structure(x, y) for x, y in zip(a[1:], b[1:],
                                                                             strict=True))
    if a[0] in ("v", "m"):
        return True  # leaves are compared one by one
    if a[0] == "g":
        return a[1] is b[1] and len(a) == len(b)
    return _same_value(a[1], b[1])


def _same_value(x: Any, y: Any) -> bool:
    if x is y:
        return True
    if isinstance(x, Closure) and isinstance(y, Closure):
        return x.graph is y.graph and x.frame is y.frame
    if type(x) is not type(y):
        return False
    if isinstance(x, (str, type(None), slice, np.dtype)):
        return bool(x == y)
    return False


def abstract_leaf(v: Any) -> Any:
    if isinstance(v, (Masked, MaskedLen)):  # a selection carried by a loop or a branch
        raise GraphBreak(MASK_WHY)
    return v.abstract if isinstance(v, Node) else abstract_of(v)


def same_concrete(x: Any, y: Any) -> bool:
    if isinstance(x, Node) or isinstance(y, Node):
        return x is y
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y))
    return bool(x == y) or (x != x and y != y)


class ControlFlow:
    """The tracer's handling of symbolic conditions (mixed into ``Tracer``)."""

    spec_depth = 0
    MAX_SPECULATION = 24
    exact_kinds = 0  # merging a loop's exits: a Python float stays one (``merge_value``)

    # -- values ------------------------------------------------------------------------
    def merge_value(self, c: Node, x: Any, y: Any, loc) -> Any:
        """The value that is ``x`` where ``c`` holds and ``y`` elsewhere."""
        if x is y:
            return x
        if isinstance(x, MaybeUndef) or isinstance(y, MaybeUndef):
            if x is UNDEF or y is UNDEF:
                m = x if y is UNDEF else y
                f = self.merge_value(c, m.flag, False, loc) if y is UNDEF else \
                    self.merge_value(c, False, m.flag, loc)
                return MaybeUndef(m.value, f)
            mx = x if isinstance(x, MaybeUndef) else MaybeUndef(x, True)
            my = y if isinstance(y, MaybeUndef) else MaybeUndef(y, True)
            return MaybeUndef(self.merge_value(c, mx.value, my.value, loc),
                              self.merge_value(c, mx.flag, my.flag, loc))
        if isinstance(x, SymBool) or isinstance(y, SymBool):
            # truths (``a and b`` as a condition, ``myc.frontend.lower.condition``): a
            # Python bool either way, whether it came from a NumPy bool or a Python one
            weak = AScalar(np.dtype(bool), True)
            tx, ty = self._truth_node(x, loc), self._truth_node(y, loc)
            # ``a and b`` keeps ``a`` where it is false, ``a or b`` where it is true: a
            # logical operation (no select of numbers: OpenCL runs those on the host)
            if ty is c:
                return SymBool(self.emit(P.and_, [c, tx], loc, abstract=weak))
            if tx is c:
                return SymBool(self.emit(P.or_, [c, ty], loc, abstract=weak))
            return SymBool(self.emit(P.select, [c, tx, ty], loc, abstract=weak))
        if isinstance(x, Node) or isinstance(y, Node) or (_is_leaf(x) and _is_leaf(y)):
            if not isinstance(x, Node) and not isinstance(y, Node) and same_concrete(x, y):
                return x
            ax, ay = abstract_leaf(x), abstract_leaf(y)
            if ax != ay and self.in_loop_body() and not self.exact_kinds:
                # ``if x < 0.5: x = 0.5`` of a NumPy float in a loop node's body: merged
                # as one NumPy float (not where the loop's exits rejoin: a value it
                # leaves with keeps its Python kind, as CPython gives it)
                if _strengthens(ax, ay):
                    x, ax = self._as_numpy_scalar(x, ay, loc), ay
                elif _strengthens(ay, ax):
                    y, ay = self._as_numpy_scalar(y, ax, loc), ax
            if ax is None or ax != ay:
                raise NoMerge(f"a value has type {ax} on one side and {ay} on the other")
            stored = merge_row_store(self, c, x, y, loc)  # ``if c: H[t] = h``: one row
            if stored is not None:
                return stored
            return self.emit(P.select, [c, x, y], loc, abstract=ax)
        if isinstance(x, (tuple, list)) and type(x) is type(y) and len(x) == len(y):
            keyed = type(x) is ObjectValue or type(x) is DictValue
            if keyed and (getattr(x, "meta_", None) != getattr(y, "meta_", None) or
                          getattr(x, "keys_", None) != getattr(y, "keys_", None)):
                raise NoMerge("an object or dict has other attributes or keys on one side")
            items = [self.merge_value(c, a, b, loc) for a, b in zip(x, y, strict=True)]
            return like(x, items) if keyed else type(x)(items)
        if isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys():
            return {k: self.merge_value(c, x[k], y[k], loc) for k in x}
        if _callable(x) and _callable(y):
            if isinstance(x, Closure) and isinstance(y, Closure) and x.graph is y.graph \
                    and x.frame is y.frame:
                return x
            return Fork(c, x, y)
        if x is ZERO or y is ZERO:
            raise NoMerge("a gradient is zero on one side only")
        if _same_value(x, y):
            return x
        raise NoMerge(f"values of different kinds ({type(x).__name__}, "
                      f"{type(y).__name__}) on the two sides")

    def _as_numpy_scalar(self, v: Any, a: AScalar, loc) -> Any:
        """A Python float merged with a NumPy float of its dtype (one side of an ``if``
        sets ``x = 0.5``, the other keeps ``x = i - dt * u[i, j]``): the NumPy scalar.
        Equal values (``np.float64`` is a ``float`` subclass, same IEEE arithmetic), so
        the merged value is the NumPy type on both sides, as a loop carries such a
        variable (``run_loop``); the Python side only differs where CPython would raise
        (a division by its zero) or promote weakly (with a float32 array).  A node by
        an exact product with the NumPy 1 (keeps -0.0, inf and nan)."""
        if isinstance(v, Node):
            return self.emit(P.mul, [v, a.dtype.type(1.0)], loc, abstract=a)
        return a.dtype.type(v)

    def _truth_node(self, v: Any, loc) -> Any:
        """A truth (a ``SymBool`` or a Python bool) as a weak bool value to select."""
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if not isinstance(v, SymBool):
            raise NoMerge("a truth on one side, a value on the other")
        n = v.node
        if not (isinstance(n.abstract, AScalar) and n.abstract.dtype.kind == "b"):
            raise NoMerge("a truth that is not a bool")
        if not n.abstract.weak:
            n = self.emit(P.to_bool, [n], loc, abstract=AScalar(np.dtype(bool), True))
        return n

    def merge(self, c: Node, a: Any, b: Any, loc) -> Any:
        """Rejoin two traced branches: a merged value or jump, else a ``Tree``."""
        if isinstance(a, Jump) and isinstance(b, Jump) and _same_fn(a.fn, b.fn) \
                and len(a.args) == len(b.args):
            try:
                return Jump(a.fn, [self.merge_value(c, x, y, loc)
                                   for x, y in zip(a.args, b.args, strict=True)])
            except NoMerge:
                return Tree(c, a, b)
        if not isinstance(a, (Jump, Tree)) and not isinstance(b, (Jump, Tree)):
            try:
                return self.merge_value(c, a, b, loc)
            except NoMerge:
                return Tree(c, a, b)
        return Tree(c, a, b)

    # -- branches ------------------------------------------------------------------------
    def symbolic_truth(self, prim: Primitive, x: Node, loc) -> Any:
        from myc.ir.evaluator import Interpreter
        from myc.prims.abstract import zeros_proxy

        Interpreter.call_prim(P.truth, [zeros_proxy(x.abstract)], loc)  # size > 1: error
        if isinstance(x.abstract, AArray) or (prim.name == "not_" and not x.abstract.weak):
            # the truth of a size-1 array or a NumPy scalar is a Python bool
            x = self.emit(P.to_bool, [x], loc, abstract=AScalar(np.dtype(bool), True))
        if prim.name == "not_":
            return self.emit(P.eq, [x, False], loc)
        if x.abstract.dtype.kind != "b":
            x = self.emit(P.ne, [x, 0], loc)
        return SymBool(x)

    def loop_of(self, fn: Any) -> LoopCtx | None:
        g = fn.graph if isinstance(fn, Closure) else None
        if g is None:
            return None
        for ctx in reversed(self.loops):
            if g.is_within(ctx.graph):
                return ctx
        return None

    def call_fork(self, fork: Fork, args: list[Any], loc, scope: Scope | None) -> Any:
        """Trace both sides of a data-dependent branch; rejoin them where possible."""
        from myc.infer.signature import GraphBreak

        ctx = self.loop_of(fork.a) or self.loop_of(fork.b)
        if ctx is None and not self.if_convert:
            raise GraphBreak("a condition depends on array or float data", loc)
        a = self.side(lambda: self.trace_branch(fork.a, args, loc, when=(fork.cond, True)))
        b = self.side(lambda: self.trace_branch(fork.b, args, loc, when=(fork.cond, False)))
        r = self.merge_sides(fork.cond, a, b, loc)
        if isinstance(r, Tree):
            if ctx is not None and ctx.mode == "unroll":
                raise LoopNeeded(ctx)
            # outside loops: sides that return early are followed to their ends
            r = self.resolve(r, scope, loc)
            if isinstance(r, Tree) and ctx is None and scope is None:
                raise GraphBreak("data-dependent branches that end differently", loc)
        return r

    def side(self, trace_it) -> Any:
        """One side of a branch, or a ``PendingResult`` when it calls a recursive function
        whose result type is not known yet (``myc.infer.calls``): the other side decides."""
        try:
            return trace_it()
        except PendingResult as exc:
            self.pending(exc)
            return exc

    def merge_sides(self, c: Node, a: Any, b: Any, loc) -> Any:
        if isinstance(a, PendingResult):
            if isinstance(b, PendingResult):
                raise a
            return b
        if isinstance(b, PendingResult):
            return a
        return self.merge(c, a, b, loc)

    # an ``if`` outside any loop is if-converted too (``MYC_NO_IF_CONVERSION=1``: guarded)
    if_convert = not os.environ.get("MYC_NO_IF_CONVERSION")

    def resolve(self, o: Any, scope: Scope | None, loc) -> Any:
        """Continue the held-back jumps of ``o`` that stay inside ``scope``; rejoin."""
        if isinstance(o, Tree):
            old = self.path
            try:
                self.path = self.narrowed(o.cond, True, loc)
                a = self.side(lambda: self.resolve(o.a, scope, loc))
                self.path = old
                self.path = self.narrowed(o.cond, False, loc)
                b = self.side(lambda: self.resolve(o.b, scope, loc))
            finally:
                self.path = old
            return self.merge_sides(o.cond, a, b, loc)
        if isinstance(o, Jump) and isinstance(o.fn, Closure) and \
                (scope is None or not escapes(o.fn.graph, scope)):
            return self.trace_branch(o.fn, o.args, loc, scope)
        return o

    def narrowed(self, c: Node, positive: bool, loc) -> Any:
        """The path condition inside one side of a branch on ``c``."""
        cond = c if positive else self.emit(P.eq, [c, False], loc,
                                            abstract=abstract_leaf(True))
        if self.path is None:
            return cond
        return self.emit(P.and_, [self.path, cond], loc, abstract=abstract_leaf(True))

    def trace_branch(self, fn: Any, args: list[Any], loc, scope: Any = "own",
                     when: tuple[Node, bool] | None = None) -> Any:
        """Trace one side of a branch; ``when``: (condition, side) -- operations that can
        fail at run time are guarded by the path condition (``P.guarded``)."""
        old_path = self.path
        if when is not None:
            self.path = self.narrowed(when[0], when[1], loc)
        try:
            return self._trace_branch(fn, args, loc, scope)
        finally:
            self.path = old_path

    path: Any = None

    def in_loop_body(self) -> bool:
        """Is a loop node's body being traced (at any depth)?"""
        return any(c.mode == "body" for c in self.loops)

    def run_time_range_len(self, args: list[Any], loc) -> Any:
        """``len(range(start, stop, step))`` of ints known only at run time -- an outer
        loop's counter in its body: ``for j in range(i)`` -- as int arithmetic, with a
        constant step: the inner loop is then a loop node counted to it.  None where an
        argument is not an int (the tracer's error stands) or the step is not constant,
        and outside loop bodies (there the program is specialized on the count, as before:
        a loop that cannot be a loop node, one growing a list, would be an error)."""

        def is_int(v: Any) -> bool:
            if isinstance(v, Node):
                a = v.abstract
                return isinstance(a, AScalar) and a.dtype.kind == "i"
            return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

        start, stop, step = args
        if not all(is_int(v) for v in args) or isinstance(step, Node) or step == 0 or \
                not self.in_loop_body():
            return None
        k = int(step)
        span = self.call_prim(P.sub, [stop, start] if k > 0 else [start, stop], loc)
        if abs(k) != 1:  # ceil(span / |k|)
            span = self.call_prim(P.floordiv, [self.call_prim(
                P.add, [span, abs(k) - 1], loc), abs(k)], loc)
        return self.call_prim(P.py_max, [span, 0], loc)

    def _trace_branch(self, fn: Any, args: list[Any], loc, scope: Any) -> Any:
        from myc.infer.signature import GraphBreak

        if isinstance(fn, Primitive):
            return self.call_prim(fn, list(args), loc)
        self.spec_depth += 1
        try:
            if self.spec_depth > self.MAX_SPECULATION:
                raise GraphBreak("data-dependent branches nested too deeply", loc,
                                 unbounded=True)
            if scope == "own":
                scope = Scope(fn.graph, False) if isinstance(fn, Closure) else None
            return self.call(fn, list(args), loc, scope)
        except MycError as exc:
            # the side not taken may fail (an index out of range, a math domain error):
            # only a program that takes one side per call can tell
            raise GraphBreak(f"a data-dependent branch may fail: {exc.message}", loc) \
                from None
        except RecursionError:
            raise GraphBreak("data-dependent recursion", loc, unbounded=True) from None
        finally:
            self.spec_depth -= 1

    # -- loops ---------------------------------------------------------------------------
    def enter_loop(self, fn: Closure, args: list[Any], loc, scope: Scope | None):
        """Trace a loop from its entry: unrolled, or as a loop node when it must be."""
        ctx = LoopCtx(fn.graph, fn.frame, self.count, nested=self.in_loop_body())
        ctx.entry = (fn, list(args), self.count, self.marks())
        self.loops.append(ctx)
        try:
            try:
                return ("done", self.call(fn, args, loc, scope))
            except LoopNeeded as need:
                if need.ctx is not ctx:
                    raise
                chosen = need
            ctx.mode = "body"
            if not chosen.chosen:
                try:
                    return self.run_loop(fn, args, loc, ctx, scope)
                except Exception as brk:
                    grown = getattr(brk, "grown", None)
                    if grown is not None and not ctx.nested:  # (nested: the loop
                        # holding it unrolls instead, which may make its count static)
                        from myc.errors import MycTypeError

                        name, kind = grown
                        raise MycTypeError(
                            f"the {kind} '{name}' changes length in a loop whose trip "
                            "count depends on data: inside compiled code a list's length "
                            "is static, like an array's shape", loc,
                            hint="preallocate an array and fill it (np.where), or give "
                                 "the loop a static trip count (for i in range(n))") \
                            from None
                    raise
            from myc.infer.signature import GraphBreak

            settled = None
            if ctx.second is not None and ctx.entry[3] == self.marks():
                settled = _settled(ctx.entry[1], ctx.second[1])
            if settled is not None:
                # the first iteration changed no variable's type: the loop node starts
                # at the loop's entry (no iteration peeled: the program holds one copy
                # of the body, not two); what was unrolled since is dead
                chosen.fn, chosen.call_args, self.count = ctx.entry[0], settled, ctx.start
            elif ctx.second is not None and ctx.second[3] == self.marks():
                # back to the second iteration's entry: the iterations unrolled since
                # are dead nodes (they registered no check, guard or effect)
                chosen.fn, chosen.call_args, self.count = ctx.second[:3]
            count = self.count
            try:
                return self.run_loop(chosen.fn, chosen.call_args, loc, ctx, scope)
            except GraphBreak as brk:
                if self.strict_loops:
                    # a gradient's loop carries its backpropagators: the adjoint route
                    # (``myc.infer.adjoint``) keeps it a loop with a tape instead
                    brk.chosen_loop = True
                    raise
                # a loop that cannot be a loop node (it carries a list, a closure...):
                # unrolled after all, from where unrolling stopped
                self.count = count
                ctx.mode, ctx.unroll_only = "unroll", True
                return ("done", self.call(chosen.fn, chosen.call_args, loc, scope))
        finally:
            self.loops.remove(ctx)

    def run_loop(self, fn: Closure, args: list[Any], loc, ctx: LoopCtx,
                 scope: Scope | None) -> tuple:
        from myc.infer.signature import GraphBreak

        args = list(args)
        undef = [i for i, a in enumerate(args) if a is UNDEF]
        leaves0: list[Any] = []
        struct0 = flatten(args, leaves0)
        variant = [isinstance(v, Node) for v in leaves0]
        stacking = False
        for _ in range(10):
            body = Graph(f"{fn.graph.name}:loop", None, loc)
            state = leaf_parameters(body, leaves0, variant, "s")
            saved, saved_path = self.trace, self.path
            self.trace, self.path = body, None  # the body runs only while the loop runs
            self.outer_traces.append(saved)
            try:
                inputs = unflatten(struct0, iter(state))
                try:
                    out = self.call(fn, inputs, loc, Scope(fn.graph, True))
                except GraphBreak as brk:
                    if stacking and getattr(brk, "grown", None) is None:
                        brk.grown = next(a.meta.grown for a in args
                                         if isinstance(a, StackList))
                    raise
                kinds = self.exit_kinds(out, fn.graph, [])
                go, nxt, payloads, which = self.collapse(out, fn.graph, kinds, loc)
                exit_ = (kinds, payloads, which) if kinds else None
                if stacking:
                    stacked.check_exits(payloads, loc)
                    if nxt is not None:
                        nxt = stacked.commit(self, nxt, loc)
                if go is True or go is False:
                    go = Constant(go)
            except NoMerge as exc:
                raise GraphBreak(f"a loop's branches do not agree: {exc}", loc) from None
            finally:
                self.trace, self.path = saved, saved_path
                self.outer_traces.pop()
            if nxt is None:
                raise GraphBreak("a loop body that never continues", loc)
            nxt = [MaybeUndef(v, True) if isinstance(a, MaybeUndef) and
                   not isinstance(v, MaybeUndef) and v is not UNDEF else v
                   for a, v in zip(args, nxt, strict=True)]
            leaves1: list[Any] = []
            struct1 = flatten(list(nxt), leaves1)
            zeros = [i for i, a in enumerate(args) if a is ZERO and _is_leaf(nxt[i])
                     and abstract_leaf(nxt[i]) is not None]
            if zeros:
                # a symbolic zero (an AD tangent or sensitivity not yet touched) that the
                # body makes a value: carried as an actual zero of that type
                for i in zeros:
                    args[i] = _zeros_of(abstract_leaf(nxt[i]))
                leaves0 = []
                struct0 = flatten(args, leaves0)
                variant = [isinstance(v, Node) for v in leaves0]
                continue
            late = [i for i in undef if args[i] is UNDEF and nxt[i] is not UNDEF]
            if late:
                # first assigned in the body: carried as a value and a "set yet" flag
                for i in late:
                    v = nxt[i].value if isinstance(nxt[i], MaybeUndef) else nxt[i]
                    a = abstract_leaf(v)
                    if a is None:
                        raise GraphBreak("a loop variable first set in the loop is not "
                                         "numeric data", loc)
                    args[i] = MaybeUndef(_zeros_of(a), False)
                leaves0 = []
                struct0 = flatten(args, leaves0)
                variant = [isinstance(v, Node) for v in leaves0]
                continue
            if not same_structure(struct0, struct1):
                grown = _grown_container(fn.graph, struct0, struct1)
                conv = stacked.convert(args, inputs, nxt, grown) if self.stack_lists \
                    and grown is not None and grown[1] == "list" else None
                if conv is None:
                    brk = GraphBreak("a loop variable changes kind between iterations", loc)
                    brk.grown = grown
                    raise brk
                # a list the loop appends to: carried as stacked arrays
                # (``myc.infer.stacked``), once the loop's trip count is known
                stacking = True
                args = conv
                leaves0 = []
                struct0 = flatten(args, leaves0)
                variant = [isinstance(v, Node) for v in leaves0]
                continue
            widened = False
            for i, (v0, v1) in enumerate(zip(leaves0, leaves1, strict=True)):
                a0, a1 = abstract_leaf(v0), abstract_leaf(v1)
                if a0 != a1 and _strengthens(a0, a1) and not variant[i]:
                    variant[i] = True  # a parameter next round: then see how it is read
                    widened = True
                    continue
                if a0 != a1 and _strengthens(a0, a1) and self._write_only(
                        state[i], [go, nxt, exit_]):
                    # ``n = 0.0`` before the loop, a NumPy scalar inside it, never read
                    # first: carried as the NumPy type (a zero-trip loop returns
                    # np.float64(0.0) for Python's 0.0 -- equal, a float subclass)
                    # (a symbolic initial value -- a gradient's argument -- by an exact
                    # product with the NumPy scalar 1, which keeps -0.0, inf and nan)
                    leaves0[i] = self.emit(P.mul, [v0, a1.dtype.type(1.0)], loc) \
                        if isinstance(v0, Node) else a1.dtype.type(v0)
                    variant[i] = True
                    widened = True
                    continue
                if variant[i]:
                    if a1 != a0:
                        raise GraphBreak(f"a loop variable changes from {a0} to {a1} "
                                         "between iterations", loc)
                elif not same_concrete(v0, v1):
                    if a1 != a0 or a0 is None:
                        raise GraphBreak("a loop variable changes type between iterations",
                                         loc)
                    variant[i] = True
                    widened = True
            if not widened and stacking and stacked.unsized(args):
                trips = stacked.trip_count(go, state, leaves0, leaves1)
                if trips is None:
                    brk = GraphBreak("a list grows in a loop whose trip count is not "
                                     "static", loc)
                    brk.grown = args[stacked.unsized(args)[0]].meta.grown
                    raise brk
                args = stacked.size(self, args, trips, loc)
                leaves0 = []
                struct0 = flatten(args, leaves0)
                variant = [isinstance(v, Node) for v in leaves0]
                continue
            if not widened:
                break
        else:
            raise GraphBreak("a loop's variables do not settle", loc)
        if exit_ is None:
            raise GraphBreak("a loop that never exits", loc)
        return self.finish_loop(body, leaves0, variant, leaves1, go, exit_, loc, scope)

    def exit_kinds(self, o: Any, header: Graph, kinds: list) -> list:
        """The distinct ways one iteration leaves the loop: (kind, target) pairs."""
        if isinstance(o, Tree):
            self.exit_kinds(o.a, header, kinds)
            self.exit_kinds(o.b, header, kinds)
        elif isinstance(o, Jump):
            if not (isinstance(o.fn, Closure) and o.fn.graph is header) and not any(
                    k == "jump" and _same_fn(t, o.fn) for k, t in kinds):
                kinds.append(("jump", o.fn))
        elif not any(k == "value" for k, _ in kinds):
            kinds.append(("value", None))
        return kinds

    def _write_only(self, p: Any, outputs: list) -> bool:
        """Is the loop parameter ``p`` read by the body only where a Python scalar and
        the NumPy scalar of its dtype behave alike: passed along (``select``ed) into what
        the iteration returns, or compared for a branch?"""
        if not isinstance(p, Node):
            return False
        roots = [v for v in _walk_values(outputs) if isinstance(v, Node)]
        seen: set[int] = set()
        users: dict[int, list] = {}
        stack = list(roots)
        while stack:
            n = stack.pop()
            if n.id in seen or not isinstance(n, Apply):
                continue
            seen.add(n.id)
            for k, i in enumerate(n.inputs[1:]):
                users.setdefault(i.id, []).append((n, k))
                stack.append(i)

        def cond_only(node: Node) -> bool:  # a condition: Python and NumPy bools agree
            for u, k in users.get(node.id, []):
                prim = u.inputs[0].value
                if (prim in (P.select, P.guarded) and k == 0) or (
                        prim in (P.eq, P.and_) and cond_only(u)):
                    continue
                if prim is P.select and k > 0 and cond_only(u):
                    continue  # ``a and b`` (``b if a else a``) as a condition
                return False
            return True

        def ok(node: Node) -> bool:
            for u, k in users.get(node.id, []):
                prim = u.inputs[0].value
                if prim is P.select and k > 0 and ok(u):
                    continue
                if prim in (P.lt, P.le, P.gt, P.ge, P.eq, P.ne) and cond_only(u):
                    continue
                return False
            return True

        return ok(p)

    def collapse(self, o: Any, header: Graph, kinds: list, loc) -> tuple:
        """(go on?, next state, payload per exit kind, which exit) of one iteration."""
        if isinstance(o, Jump) and isinstance(o.fn, Closure) and o.fn.graph is header:
            return True, o.args, {}, None
        if isinstance(o, Jump):
            k = next(i for i, (kd, t) in enumerate(kinds) if kd == "jump"
                     and _same_fn(t, o.fn))
            return False, None, {k: o.args}, k
        if not isinstance(o, Tree):
            k = next(i for i, (kd, _) in enumerate(kinds) if kd == "value")
            return False, None, {k: o}, k
        c = o.cond
        ga, na, pa, ea = self.collapse(o.a, header, kinds, loc)
        gb, nb, pb, eb = self.collapse(o.b, header, kinds, loc)
        go = ga if ga is gb else self.merge_value(c, ga, gb, loc)
        nxt = na if nb is None else nb if na is None else \
            self.merge_value(c, tuple(na), tuple(nb), loc)
        payloads = dict(pa)
        self.exact_kinds += 1
        try:
            for k, v in pb.items():
                payloads[k] = self.merge_value(c, payloads[k], v, loc) if k in payloads \
                    else v
        finally:
            self.exact_kinds -= 1
        which = ea if eb is None else eb if ea is None else \
            self.merge_value(c, ea, eb, loc)
        return go, (list(nxt) if nxt is not None else None), payloads, which

    def finish_loop(self, body: Graph, leaves0, variant, leaves1, go, exits, loc,
                    scope) -> tuple:
        """The loop node in the outer program, and how the loop leaves: ``("tail",
        target, args)`` (a jump; ``target`` None: a value) or ``("done", result)``."""
        kinds, payloads, which = exits
        flat = []
        for k in range(len(kinds)):
            leaves: list[Any] = []
            struct = flatten(payloads[k], leaves)
            flat.append((struct, leaves))
        ex_nodes = [v for _, leaves in flat for v in leaves if isinstance(v, Node)]
        several = len(kinds) > 1
        if several and not isinstance(which, Node):
            which = Constant(which)
        outs = [go] + [v for v, var in zip(leaves1, variant, strict=True) if var] + \
            ([which] if several else []) + ex_nodes
        body.output = body.apply(P.make_tuple, *outs, loc=loc)
        invariants = lift_free_nodes(body)
        nstate = sum(variant)
        init = [v for v, var in zip(leaves0, variant, strict=True) if var]
        # inside a branch that may not be taken, the loop runs only if it is
        enabled = True if self.path is None else self.path
        node = self.emit(P.loop, [LoopBody(body, nstate), enabled, *init, *invariants], loc,
                         abstract=ALOOP)
        base = 1 + nstate + (1 if several else 0)
        results = iter([self.emit(P.loop_out, [node, base + k], loc, abstract=n.abstract)
                        for k, n in enumerate(ex_nodes)])
        values = [unflatten(struct, iter([next(results) if isinstance(v, Node) else v
                                          for v in leaves])) for struct, leaves in flat]
        values = [stacked.materialize(self, v, loc) for v in values]
        if not several:
            kind, target = kinds[0]
            return ("tail", target if kind == "jump" else None, values[0])
        # several exits (a ``return`` inside the loop, and its normal end): each is
        # traced after the loop, and the one taken is selected
        chosen = self.emit(P.loop_out, [node, 1 + nstate], loc, abstract=which.abstract
                           if isinstance(which, Node) and which.abstract else
                           abstract_leaf(0))
        outcomes = []
        for k, ((kind, target), v) in enumerate(zip(kinds, values, strict=True)):
            if kind == "value":
                outcomes.append(v)
            elif scope is not None and escapes(target.graph, scope):
                outcomes.append(Jump(target, v))
            else:
                taken = self.emit(P.eq, [chosen, k], loc, abstract=abstract_leaf(True))
                outcomes.append(self.trace_branch(target, v, loc, scope, when=(taken, True)))
        result = outcomes[-1]
        self.exact_kinds += 1
        try:
            for k in range(len(outcomes) - 2, -1, -1):
                is_k = self.emit(P.eq, [chosen, k], loc, abstract=abstract_leaf(True))
                result = self.merge(is_k, outcomes[k], result, loc)
        finally:
            self.exact_kinds -= 1
        return ("done", result)


def _settled(args0: list[Any], args1: list[Any]) -> list[Any] | None:
    """A loop's variables at its entry (``args0``), when they already have the types
    they have at its second iteration (``args1``): then the first iteration need not be
    peeled, and the loop node may start at the entry (a value that differs between the
    two -- a counter, an array -- is carried as loop data either way).  A variable first
    set by the first iteration on every path (``for i in ...``'s ``i``, a temporary) is
    not read before it is set: it enters as a zero of its type.  None: peel."""
    args0 = [_zeros_of(abstract_leaf(v1)) if v0 is UNDEF and _is_leaf(v1) else v0
             for v0, v1 in zip(args0, args1, strict=True)]
    leaves0: list[Any] = []
    leaves1: list[Any] = []
    try:
        s0, s1 = flatten(list(args0), leaves0), flatten(list(args1), leaves1)
        if not same_structure(s0, s1) or _has_maybe(s0) or _has_maybe(s1):
            return None  # (a variable set on some paths only: its flag settles)
        for v0, v1 in zip(leaves0, leaves1, strict=True):
            if _callable(v0) or _callable(v1):
                if not _same_fn(v0, v1):
                    return None
                continue
            if abstract_leaf(v0) != abstract_leaf(v1):
                return None
    except Exception:  # noqa: BLE001 - anything unusual: peel, as before
        return None
    return args0


def _has_maybe(s: Any) -> bool:
    """Does structure ``s`` (``flatten``'s) hold a variable set on some paths only?"""
    if s[0] == "m":
        return True
    if s[0] in ("t", "l"):
        return any(_has_maybe(x) for x in s[1:])
    if s[0] in ("s", "g"):
        return any(_has_maybe(x) for x in s[2:])
    return False


def _grown_container(header: Graph, s0: Any, s1: Any) -> tuple[str, str] | None:
    """The loop variable (name, kind) that is a list or dict whose length (or keys)
    one iteration changes, if any."""
    names = [p.name for p in header.parameters]

    def grows(a: Any, b: Any) -> bool:
        if a[0] == "s" and b[0] == "s" and a[1] == b[1] and len(a) == len(b):
            return any(grows(x, y) for x, y in zip(a[2:], b[2:], strict=True))
        if a[0] == "s" and b[0] == "s":
            return True
        if a[0] in ("t", "l") and a[0] == b[0] and len(a) == len(b):
            return any(grows(x, y) for x, y in zip(a[1:], b[1:], strict=True))
        return False

    for i, (a, b) in enumerate(zip(s0[1:], s1[1:], strict=False)):
        if grows(a, b):
            kind = "dict" if isinstance(a[1], tuple) else "list" if a[0] == "s" else "tuple"
            return (names[i] if i < len(names) else f"#{i}", kind)
    return None


def _strengthens(a0: Any, a1: Any) -> bool:
    """A weak Python scalar becoming the NumPy scalar of the same dtype."""
    return isinstance(a0, AScalar) and isinstance(a1, AScalar) and a0.weak and \
        not a1.weak and a0.dtype == a1.dtype and a0.dtype.kind == "f"  # bools/ints compute
    # differently as NumPy scalars (~True is -2, np.int64 wraps); floats only differ in type


def _walk_values(v: Any):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _walk_values(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _walk_values(x)
    elif isinstance(v, MaybeUndef):
        yield v.value
        yield v.flag
    else:
        yield v


def _zeros_of(a: Any) -> Any:
    z = np.zeros(a.shape, a.dtype)
    if a.shape == ():
        z = z[()]
        if getattr(a, "weak", False):
            z = z.item()
    return z


def _callable(v: Any) -> bool:
    return isinstance(v, (Closure, Primitive, Fork))


def _same_fn(a: Any, b: Any) -> bool:
    if a is b:
        return True
    return isinstance(a, Closure) and isinstance(b, Closure) and a.graph is b.graph and \
        a.frame is b.frame


def leaf_parameters(body: Graph, leaves: list[Any], variant: list[bool],
                    prefix: str) -> list[Any]:
    """The leaves as ``body`` sees them: the variant ones become its parameters (typed
    like the leaf), the others stay the values they are."""
    state: list[Any] = []
    for v, var in zip(leaves, variant, strict=True):
        if var:
            p = body.add_parameter(f"{prefix}{len(body.parameters)}")
            p.abstract = abstract_leaf(v)
            state.append(p)
        else:
            state.append(v)
    return state


def lift_free_nodes(body: Graph) -> list[Node]:
    """Nodes of enclosing programs that ``body`` reads become its parameters."""
    lifted: dict[int, Parameter] = {}
    outer: list[Node] = []
    seen: set[int] = set()
    stack = [body.output]
    while stack:
        n = stack.pop()
        if n.id in seen or not isinstance(n, Apply):
            continue
        seen.add(n.id)
        for k, i in enumerate(n.inputs):
            if isinstance(i, (Apply, Parameter)) and i.graph is not body:
                p = lifted.get(i.id)
                if p is None:
                    p = body.add_parameter(f"inv{len(lifted)}")
                    p.abstract = i.abstract
                    lifted[i.id] = p
                    outer.append(i)
                n.inputs[k] = p
            elif isinstance(i, Apply):
                stack.append(i)
    return outer
