"""The reference evaluator: runs graph IR directly, with NumPy.

It defines myc's semantics; every other backend is tested against it.  Closures are a
graph plus the frame of its lexical parent (a static link).  Tail calls -- which is how
loops, joins and branches are expressed in the IR -- reuse the Python stack frame, so a
``while`` loop of any trip count runs in constant Python stack.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from myc.errors import (
    Location,
    MycError,
    MycIndexError,
    MycRuntimeError,
    MycShapeError,
    MycTypeError,
    MycValueError,
)
from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Closure, Constant, Graph, Node
from myc.prims import Primitive

_RECURSION_LIMIT = 20000


class Frame:
    """Values of one graph activation; ``parent`` is the frame of the lexical parent."""

    __slots__ = ("graph", "values", "parent")

    def __init__(self, graph: Graph, parent: Frame | None):
        self.graph = graph
        self.values: dict[int, Any] = {}
        self.parent = parent


def _lookup(frame: Frame, node: Node) -> Any:
    owner = node.graph
    f: Frame | None = frame
    while f is not None:
        if f.graph is owner:
            return f.values[node.id]
        f = f.parent
    raise AssertionError(f"node {node} of {owner} not visible from {frame.graph}")


def _frame_of(frame: Frame | None, g: Graph | None) -> Frame | None:
    if g is None:
        return None
    f = frame
    while f is not None:
        if f.graph is g:
            return f
        f = f.parent
    raise AssertionError(f"closure parent {g} not on the static chain")


def translate_exception(exc: Exception, what: str, loc: Location | None) -> MycError:
    """A NumPy/Python exception raised by a primitive, as a located ``MycError``."""
    if isinstance(exc, MycError):
        return exc.with_loc(loc)
    msg = str(exc)
    if isinstance(exc, IndexError):
        return MycIndexError(f"{what}: {msg}", loc)
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


class Interpreter:
    """Evaluates the graphs reachable from a root graph."""

    def __init__(self, root: Graph):
        self.root = root
        mng = Manager(root)
        self.plans: dict[Graph, list[Apply]] = {}
        self.tail: dict[Graph, bool] = {}
        for g in mng.graphs:
            order = schedule(g, mng.owned.get(g, []))
            tail = bool(order) and order[-1] is g.output
            self.plans[g] = order[:-1] if tail else order
            self.tail[g] = tail

    def run(self, *args: Any) -> Any:
        old = sys.getrecursionlimit()
        if old < _RECURSION_LIMIT:
            sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            return self.call(Closure(self.root, None), list(args), self.root.loc)
        except RecursionError:
            raise MycRuntimeError("maximum recursion depth exceeded in the program",
                                  self.root.loc) from None
        finally:
            sys.setrecursionlimit(old)

    def call_value(self, fn: Any, args: list[Any]) -> Any:
        """Call a value the program returned (a closure, a backpropagator)."""
        old = sys.getrecursionlimit()
        if old < _RECURSION_LIMIT:
            sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            return self.call(fn, list(args), self.root.loc)
        except RecursionError:
            raise MycRuntimeError("maximum recursion depth exceeded in the program",
                                  self.root.loc) from None
        finally:
            sys.setrecursionlimit(old)

    def value(self, node: Node, frame: Frame) -> Any:
        if isinstance(node, Constant):
            v = node.value
            if isinstance(v, Graph):
                return Closure(v, _frame_of(frame, v.parent))
            return v
        return _lookup(frame, node)

    def call(self, fn: Any, args: list[Any], loc: Location | None) -> Any:
        while True:
            if isinstance(fn, Primitive):
                return self.call_prim(fn, args, loc)
            if not isinstance(fn, Closure):
                raise MycTypeError(f"'{type(fn).__name__}' object is not callable", loc)
            g = fn.graph
            args = self.bind(g, args, loc)
            frame = Frame(g, fn.frame)
            vals = frame.values
            for p, a in zip(g.parameters, args, strict=True):
                vals[p.id] = a
            for node in self.plans[g]:
                inputs = [self.value(i, frame) for i in node.inputs]
                try:
                    vals[node.id] = self.call(inputs[0], inputs[1:], node.loc)
                except RecursionError:
                    if not isinstance(inputs[0], Closure):
                        raise
                    # located at the innermost non-tail call of a graph: the recursive call
                    raise MycRuntimeError("maximum recursion depth exceeded in the program",
                                          node.loc) from None
            out = g.output
            if not self.tail[g]:
                return self.value(out, frame)
            inputs = [self.value(i, frame) for i in out.inputs]  # type: ignore[union-attr]
            fn, args, loc = inputs[0], inputs[1:], out.loc

    @staticmethod
    def bind(g: Graph, args: list[Any], loc: Location | None) -> list[Any]:
        n = len(g.parameters)
        if len(args) == n:
            return args
        defaults = g.flags.get("defaults")
        if defaults is not None and len(args) < n and n - len(args) <= len(defaults):
            return list(args) + list(defaults[len(defaults) - (n - len(args)):])
        raise MycTypeError(f"{g.name}() takes {n} arguments but {len(args)} were given", loc)

    def call_prim(self, prim: Primitive, args: list[Any], loc: Location | None) -> Any:
        full = prim.fill_args(args)
        if full is None:
            raise MycTypeError(f"{prim.name}() takes {len(prim.params)} arguments but "
                               f"{len(args)} were given", loc)
        if prim.name == "switch" or prim.name == "make_tuple":
            return prim.impl(*full)
        try:
            with np.errstate(all="ignore"):
                return prim.impl(*full)
        except RecursionError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a located MycError
            raise translate_exception(exc, prim.name, loc) from None
