"""The graph IR's node classes.

A program is a set of ``Graph``s.  A graph has ``Parameter``s and one ``output`` node;
its body is the ``Apply`` nodes reachable from the output.  ``Constant`` nodes hold
values: numbers, arrays, primitives and other graphs -- graphs are first-class values.
A graph that uses a node owned by another graph (its lexical ``parent`` or an ancestor)
has that node as a *free variable*; evaluating a ``Constant`` of such a graph builds a
closure.  Every node carries the ``Location`` of the user's code it came from.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

from myc.errors import Location

_ids = itertools.count()


class Node:
    """Base of ``Apply``, ``Parameter`` and ``Constant``."""

    __slots__ = ("graph", "loc", "abstract", "id", "debug_name")

    def __init__(self, graph: Graph | None, loc: Location | None):
        self.graph = graph
        self.loc = loc
        self.abstract: Any = None
        self.id = next(_ids)
        self.debug_name: str | None = None

    @property
    def is_apply(self) -> bool:
        return False

    @property
    def is_constant(self) -> bool:
        return False

    @property
    def is_parameter(self) -> bool:
        return False


class Apply(Node):
    """``inputs[0](*inputs[1:])`` computed in ``graph``."""

    __slots__ = ("inputs",)

    def __init__(self, inputs: list[Node], graph: Graph, loc: Location | None = None):
        super().__init__(graph, loc)
        self.inputs = list(inputs)

    @property
    def is_apply(self) -> bool:
        return True

    @property
    def fn(self) -> Node:
        return self.inputs[0]

    @property
    def args(self) -> list[Node]:
        return self.inputs[1:]

    def __repr__(self) -> str:
        return f"Apply(%{self.id})"


class Parameter(Node):
    """A graph's formal parameter (also the phi nodes of loops and joins)."""

    __slots__ = ("name",)

    def __init__(self, graph: Graph, name: str, loc: Location | None = None):
        super().__init__(graph, loc)
        self.name = name

    @property
    def is_parameter(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"Parameter({self.name})"


class Constant(Node):
    """A literal value, a primitive, or a graph."""

    __slots__ = ("value",)

    def __init__(self, value: Any, loc: Location | None = None):
        super().__init__(None, loc)
        self.value = value

    @property
    def is_constant(self) -> bool:
        return True

    @property
    def is_graph(self) -> bool:
        return isinstance(self.value, Graph)

    def __repr__(self) -> str:
        return f"Constant({self.value!r})"


class Graph:
    """A function: parameters, an output node, and a lexical parent for closures.

    ``parent`` is the graph whose frame this graph's closures capture; ``None`` for
    a top-level function.  The frontend sets it from the source's nesting, transforms
    set it for the graphs they build, and the verifier checks it against the free
    variables actually used.
    """

    __slots__ = ("name", "parameters", "output", "parent", "loc", "flags", "id", "kind",
                 "__weakref__")

    def __init__(self, name: str, parent: Graph | None = None, loc: Location | None = None):
        self.name = name
        self.parameters: list[Parameter] = []
        self.output: Node | None = None
        self.parent = parent
        self.loc = loc
        self.flags: dict[str, Any] = {}
        self.id = next(_ids)
        # "function", "branch", "loop_header", "loop_body", "join", "bprop", ...
        self.kind = "function"

    def add_parameter(self, name: str, loc: Location | None = None) -> Parameter:
        p = Parameter(self, name, loc if loc is not None else self.loc)
        self.parameters.append(p)
        return p

    def apply(self, fn: Any, *args: Any, loc: Location | None = None) -> Apply:
        """Build ``fn(*args)`` in this graph; non-node operands become constants."""
        inputs = [a if isinstance(a, Node) else Constant(a, loc) for a in (fn, *args)]
        return Apply(inputs, self, loc if loc is not None else self.loc)

    def ancestors(self):
        g = self.parent
        while g is not None:
            yield g
            g = g.parent

    def is_within(self, other: Graph) -> bool:
        """True when ``other`` is this graph or one of its lexical ancestors."""
        g: Graph | None = self
        while g is not None:
            if g is other:
                return True
            g = g.parent
        return False

    def __repr__(self) -> str:
        return f"Graph({self.name})"


class Closure:
    """A graph together with the frame of its lexical parent (an evaluator value)."""

    __slots__ = ("graph", "frame")
    myc_static = True  # a function value: static, no gradient (myc.prims.adprims)

    def __init__(self, graph: Graph, frame: Any):
        self.graph = graph
        self.frame = frame

    def __repr__(self) -> str:
        return f"<closure {self.graph.name}>"


_TOP: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def top_closure(graph: Graph) -> Closure:
    """The one closure of a top-level graph made outside a program's own code (a function
    passed as an argument, its transform): values compared by identity -- a call's
    signature, a loop's state -- stay equal from call to call."""
    c = _TOP.get(graph)
    if c is None:
        c = _TOP[graph] = Closure(graph, None)
    return c
