"""Which int arguments a specialization keeps as run-time scalars.

An int argument is a constant of the program it specializes (``signature_key`` keys by
its value): right where the value decides a shape, a trip count, an index or a branch,
which the compiler then resolves statically -- and wasteful for an int that is only a
number in the arithmetic (a step counter in ``lr * 0.99 ** step``), which would compile
one program per value.

The rule (what ``torch.compile`` calls automatic dynamic shapes): an int is specialized
by value at first.  When a top-level int argument of a function takes a second value,
the function is traced once more with that int as a parameter; the result is kept -- and
serves every value from then on -- only if the tracer needed no decision on the int
(it raised no ``GraphBreak``) and every value computed from it is a float (the int meets
floats before anything else: no int arithmetic that could overflow int64 where Python's
ints would not, no comparison, no index, no branch, no loop).  Otherwise the argument is
marked static and stays specialized by value.  Ints inside tuples, bools and NumPy
bools always specialize by value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.infer.signature import signature_key
from myc.ir.nodes import Apply, Constant, Graph, Node


class NotRuntime(Exception):  # noqa: N818 - a control signal, not an error
    """The int's value decides something the compiler resolves statically."""


def is_int(v: Any) -> bool:
    return type(v) is int or type(v) is np.int64


class IntPolicy:
    """Per function: which top-level int arguments are run-time scalars, which must stay
    static, and the first value seen of the others -- per position and type (``int``
    and ``np.int64`` compute differently)."""

    def __init__(self) -> None:
        self.runtime: frozenset[tuple[int, type]] = frozenset()
        self.static: set[tuple[int, type]] = set()
        self.first: dict[tuple[int, type], Any] = {}

    def key(self, args: list[Any], runtime: frozenset[tuple[int, type]] | None = None
            ) -> tuple:
        """The call's signature: a run-time int is keyed by its type, not its value."""
        runtime = self.runtime if runtime is None else runtime
        return tuple(("r", type(a).__module__, type(a).__qualname__)
                     if (i, type(a)) in runtime else signature_key(a)
                     for i, a in enumerate(args))

    def varying(self, args: list[Any]) -> frozenset[tuple[int, type]]:
        """The int arguments that now take another value than the first seen, and have
        not been tried as run-time scalars yet."""
        out = set()
        for i, a in enumerate(args):
            if not is_int(a):
                continue
            it = (i, type(a))
            if it in self.runtime or it in self.static:
                continue
            seen = self.first.setdefault(it, a)
            if seen != a:
                out.add(it)
        return frozenset(out)


def positions(args: list[Any], runtime: frozenset[tuple[int, type]]) -> frozenset[int]:
    """The argument positions that are run-time ints in this call."""
    return frozenset(i for i, a in enumerate(args) if (i, type(a)) in runtime)


def decides(typed: Graph, nints: int) -> str | None:
    """Why the run-time int parameters of ``typed`` must be constants instead (``None``:
    every value computed from them is a float)."""
    from myc.ir.manager import Manager, schedule

    ints = {p.id for p in typed.parameters
            if getattr(p.abstract, "dtype", None) is not None and p.abstract.dtype.kind == "i"
            and getattr(p.abstract, "shape", None) == ()}
    if not ints:
        return None if nints == 0 else "no int parameter"
    dep = set(ints)
    for n in schedule(typed, Manager(typed).owned.get(typed, [])):
        if not isinstance(n, Apply):
            continue
        if not any(isinstance(i, Node) and not isinstance(i, Constant) and i.id in dep
                   for i in n.inputs[1:]):
            continue
        if n is typed.output:
            continue  # the outputs' tuple
        prim = getattr(n.inputs[0], "value", None)
        name = getattr(prim, "name", "value")
        if name in _INDEXING and any(isinstance(i, Node) and i.id in dep
                                     for i in n.inputs[2:]):
            return "the int is an index"
        a = getattr(n, "abstract", None)
        if getattr(a, "dtype", None) is None or a.dtype.kind != "f":
            return f"a {name} of the int is not a float"
        dep.add(n.id)
    return None


# primitives whose operands after the first say where, not what: an index is static
_INDEXING = frozenset(["getitem", "getitem_grad", "index_add", "make_slice", "guarded"])


def leaf_positions(args: list[Any], positions: frozenset[int]) -> frozenset[int]:
    """Indices, among the flattened leaves of ``args``, of the top-level ints at
    ``positions`` (what ``HostProgram.run`` passes as parameters besides data)."""
    out = set()
    n = 0
    for i, a in enumerate(args):
        if i in positions and is_int(a):
            out.add(n)
        n += _count(a)
    return frozenset(out)


def _count(v: Any) -> int:
    return sum(_count(x) for x in v) if isinstance(v, tuple) else 1
