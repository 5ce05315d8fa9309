"""The reference evaluator: runs graph IR directly, with NumPy.

It defines myc's semantics; every other backend is tested against it.  Closures are a
graph plus the frame of its lexical parent (a static link).  Tail calls -- which is how
loops, joins and branches are expressed in the IR -- reuse the Python stack frame, so a
``while`` loop of any trip count runs in constant Python stack.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import (
    LIBRARY_DIRS,
    Location,
    MycError,
    MycIndexError,
    MycMemoryError,
    MycRuntimeError,
    MycShapeError,
    MycTypeError,
    MycValueError,
)
from myc.ir.manager import program_order
from myc.ir.nodes import Closure, Constant, Graph, Node
from myc.prims import Primitive
from myc.prims.containers import DictValue

# reductions that take an array (a dict given to one is refused, as NumPy refuses it)
_ARRAY_REDUCTIONS = frozenset("sum mean max min argmax argmin prod cumsum".split())

_RECURSION_LIMIT = 20000
# myc's, NumPy's and SciPy's source: a line there is not the user's
_MYC_DIR = LIBRARY_DIRS


class Frame:
    """Values of one graph activation; ``parent`` is the frame of the lexical parent."""

    __slots__ = ("graph", "values", "parent")

    def __init__(self, graph: Graph, parent: Frame | None):
        self.graph = graph
        self.values: dict[int, Any] = {}
        self.parent = parent


def translate_exception(exc: Exception, what: str, loc: Location | None) -> MycError:
    """A NumPy/Python exception raised by a primitive, as a located ``MycError``."""
    if isinstance(exc, MycError):
        return exc.with_loc(loc)
    msg = str(exc)
    if isinstance(exc, IndexError):
        return MycIndexError(f"{what}: {msg}", loc)
    if isinstance(exc, MemoryError):  # NumPy's message names the size and shape
        return MycMemoryError(f"{what}: {msg or 'out of memory'}", loc)
    if isinstance(exc, ZeroDivisionError):
        return MycRuntimeError(f"{what}: {msg}", loc)
    if isinstance(exc, RecursionError):
        return MycRuntimeError("maximum recursion depth exceeded", loc)
    if isinstance(exc, ValueError):
        low = msg.lower()
        if any(w in low for w in ("broadcast", "shape", "matmul", "reshape", "size",
                                  "dimension", "aligned", "axis")):
            return MycShapeError(f"{what}: {msg}", loc)
        return MycValueError(f"{what}: {msg}", loc)
    if isinstance(exc, (TypeError, AttributeError)):
        return MycTypeError(f"{what}: {msg}", loc)
    if isinstance(exc, (OverflowError, FloatingPointError, ArithmeticError)):
        return MycRuntimeError(f"{what}: {msg}", loc)
    return MycRuntimeError(f"{what}: {type(exc).__name__}: {msg}", loc)


# operand kinds in a compiled plan
_CONST, _LOCAL, _OUTER, _CLOSURE = 0, 1, 2, 3


def _depth(g: Graph, owner: Graph | None) -> int:
    d = 0
    h: Graph | None = g
    while h is not owner:
        assert h is not None, f"{owner} is not an ancestor of {g}"
        h = h.parent
        d += 1
    return d


def _operand(g: Graph, node: Node) -> tuple:
    """How to fetch ``node``'s value inside a frame of ``g``: precomputed once per graph."""
    if isinstance(node, Constant):
        v = node.value
        if isinstance(v, Graph):
            return (_CLOSURE, v, -1 if v.parent is None else _depth(g, v.parent))
        return (_CONST, v)
    if node.graph is g:
        return (_LOCAL, node.id)
    return (_OUTER, node.id, _depth(g, node.graph))


class Interpreter:
    """Evaluates the graphs reachable from a root graph."""

    def __init__(self, root: Graph):
        self.root = root
        self.plans: dict[Graph, tuple] = {}
        self.add_graphs(root)

    def add_graphs(self, root: Graph) -> None:
        """Precompute the plans of ``root`` and the graphs reachable from it."""
        if root in self.plans:
            return
        for g, order in program_order(root, skip=self.plans):
            if g in self.plans:
                continue
            tail = bool(order) and order[-1] is g.output
            steps = [(n.id, [_operand(g, i) for i in n.inputs], n.loc)
                     for n in (order[:-1] if tail else order)]
            out = g.output
            out_plan = ([_operand(g, i) for i in out.inputs], out.loc) if tail else \
                _operand(g, out)  # type: ignore[union-attr]
            params = [p.id for p in g.parameters]
            self.plans[g] = (params, steps, tail, out_plan)

    def add_passed(self, value: Any) -> None:
        """The graphs of the functions an argument holds (itself, or in a structure)."""
        if isinstance(value, Closure):
            self.add_graphs(value.graph)
        elif isinstance(value, tuple):
            for v in tuple.__iter__(value):
                self.add_passed(v)

    def run(self, *args: Any) -> Any:
        for a in args:  # functions passed in (act=relu, an object's methods): their graphs
            self.add_passed(a)
        return self.call_value(Closure(self.root, None), list(args))

    def call_value(self, fn: Any, args: list[Any]) -> Any:
        """Call a value the program returned (a closure, a backpropagator)."""
        from myc.support.recursion import raised_recursion_limit

        try:
            with raised_recursion_limit(_RECURSION_LIMIT), np.errstate(all="ignore"):
                return self.call(fn, list(args), self.root.loc)
        except RecursionError:
            raise MycRuntimeError("maximum recursion depth exceeded in the program",
                                  self.root.loc) from None

    @staticmethod
    def fetch(op: tuple, frame: Frame) -> Any:
        kind = op[0]
        if kind == _LOCAL:
            return frame.values[op[1]]
        if kind == _CONST:
            return op[1]
        if kind == _OUTER:
            f = frame
            for _ in range(op[2]):
                f = f.parent  # type: ignore[assignment]
            return f.values[op[1]]
        if op[2] < 0:
            return Closure(op[1], None)
        f = frame
        for _ in range(op[2]):
            f = f.parent  # type: ignore[assignment]
        return Closure(op[1], f)

    def call(self, fn: Any, args: list[Any], loc: Location | None) -> Any:
        fetch = self.fetch
        user = loc  # the last call written by the user: where errors inside myc's own
        try:        # functions (library functions, rules) reached by tail calls are shown
            while True:
                if isinstance(fn, Primitive):
                    return self.call_prim(fn, args, loc)
                if not isinstance(fn, Closure):
                    raise MycTypeError(f"'{type(fn).__name__}' object is not callable", loc)
                frame, tail, out_plan = self.activate(fn, args, loc)
                if not tail:
                    return fetch(out_plan, frame)
                ops, loc = out_plan
                if loc is not None and not loc.filename.startswith(_MYC_DIR):
                    user = loc
                fn = fetch(ops[0], frame)
                args = [fetch(o, frame) for o in ops[1:]]
        except MycError as exc:
            raise exc.relocated(user) from None

    def activate(self, fn: Closure, args: list[Any], loc: Location | None) -> tuple:
        """Run ``fn``'s graph up to its output: (frame, is the output a tail call, plan)."""
        fetch = self.fetch
        g = fn.graph
        plan = self.plans.get(g)
        if plan is None:  # a function made while running (a J image of one passed in)
            self.add_graphs(g)
            plan = self.plans[g]
        params, steps, tail, out_plan = plan
        if len(args) != len(params):
            args = self.bind(g, args, loc)
        frame = Frame(g, fn.frame)
        vals = frame.values
        for pid, a in zip(params, args):  # noqa: B905 - lengths checked by bind
            vals[pid] = a
        for nid, ops, nloc in steps:
            f = fetch(ops[0], frame)
            a = [fetch(o, frame) for o in ops[1:]]
            if isinstance(f, Primitive):
                vals[nid] = self.call_prim(f, a, nloc)
                continue
            try:
                vals[nid] = self.returned(self.call(f, a, nloc), nloc)
            except MycError as exc:
                # an error inside myc's own rules is reported at the user's call
                raise exc.relocated(nloc) from None
            except RecursionError:
                if not isinstance(f, Closure):
                    raise
                # located at the innermost non-tail call of a graph: the recursive call
                raise MycRuntimeError("maximum recursion depth exceeded in the program",
                                      nloc) from None
        return frame, tail, out_plan

    def returned(self, value: Any, loc: Location | None) -> Any:
        """The value of a non-tail call (the tracer checks it is not control flow)."""
        return value

    @staticmethod
    def bind(g: Graph, args: list[Any], loc: Location | None) -> list[Any]:
        n = len(g.parameters)
        if len(args) == n:
            return args
        if len(args) > n and g.flags.get("drop_extra"):
            return list(args[:n])
        defaults = g.flags.get("defaults")
        if defaults is not None and len(args) < n and n - len(args) <= len(defaults):
            return list(args) + list(defaults[len(defaults) - (n - len(args)):])
        raise MycTypeError(f"{g.name}() takes {n} arguments but {len(args)} were given", loc)

    @staticmethod
    def call_prim(prim: Primitive, args: list[Any], loc: Location | None) -> Any:
        if len(args) != len(prim.params) or prim.variadic:
            full = prim.fill_args(args)
            if full is None:
                raise MycTypeError(f"{prim.name}() takes {len(prim.params)} arguments but "
                                   f"{len(args)} were given", loc)
            args = full
        if (prim.elementwise or prim.name in _ARRAY_REDUCTIONS) and any(
                type(a) is DictValue for a in args):
            # (a dict is a tuple of its values here; NumPy refuses one, as the tracer does)
            raise MycTypeError(f"{prim.name}: unsupported operand of type dict", loc)
        try:
            return prim.impl(*args)
        except RecursionError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a located MycError
            raise translate_exception(exc, prim.name, loc) from None
