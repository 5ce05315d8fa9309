"""Which int arguments a specialization keeps as run-time scalars.

An int argument is a constant of the program it specializes (``signature_key`` keys by
its value): right where the value decides a shape, a trip count, an index or a branch,
which the compiler then resolves statically -- and wasteful for an int that is only a
number in the arithmetic (a step counter in ``lr * 0.99 ** step``), which would compile
one program per value.

The rule (what ``torch.compile`` calls automatic dynamic shapes): an int is specialized
by value at first.  When an int argument of a function -- or an int inside a tuple
argument, ``(step, lr)`` -- takes a second value,
the function is traced once more with that int as a parameter; the result is kept -- and
serves every value from then on -- only if the tracer needed no decision on the int
(it raised no ``GraphBreak``) and every value computed from it is a float (the int meets
floats before anything else: no int arithmetic that could overflow int64 where Python's
ints would not, no comparison, no index, no branch, no loop).  Otherwise the argument is
marked static and stays specialized by value.  Ints are counted by their place among the
call's leaves (tuples flattened, as compiled programs take their parameters), so an int
inside a tuple follows the same rule as one on its own.  One exception, JAX's
``dynamic_slice`` rule: an int that only sets the start of a slice whose length is
static (``x[i * b:(i + 1) * b]``) -- the tracer proves it and lists the int nodes it
vouches for in ``typed.flags["int_ok"]`` (``myc.infer.dynslice``).

Not run-time scalars, on purpose: bools and NumPy bools (two values: at most two
programs, never unbounded), and an int first used in int arithmetic (``n + 1``): int64
would wrap where Python's ints grow, and a value the compiled program cannot compute
exactly must not be a silent wrong answer -- such an int stays by value (the bound on
programs per function, ``MYC_MAX_SPECIALIZATIONS``, and the recompile warning hold it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.infer.signature import signature_key
from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.prims.containers import leaves_of


class NotRuntime(Exception):  # noqa: N818 - a control signal, not an error
    """The int's value decides something the compiler resolves statically."""


def is_int(v: Any) -> bool:
    return type(v) is int or type(v) is np.int64


def leaves(args: Any) -> list[Any]:
    """The call's leaves, tuples flattened (the order of a compiled program's inputs)."""
    return leaves_of(args)


class IntPolicy:
    """Per function: which int leaves of the arguments are run-time scalars, which must
    stay static, and the first value seen of the others -- per leaf index and type
    (``int`` and ``np.int64`` compute differently)."""

    def __init__(self) -> None:
        self.runtime: frozenset[tuple[int, type]] = frozenset()
        self.static: set[tuple[int, type]] = set()
        self.first: dict[tuple[int, type], Any] = {}

    def key(self, args: list[Any], runtime: frozenset[tuple[int, type]] | None = None
            ) -> tuple:
        """The call's signature: a run-time int is keyed by its type, not its value."""
        runtime = self.runtime if runtime is None else runtime
        if not runtime:
            return tuple(signature_key(a) for a in args)
        count = [0]
        return tuple(_keyed(a, count, runtime) for a in args)

    def varying(self, args: list[Any]) -> frozenset[tuple[int, type]]:
        """The int arguments that now take another value than the first seen, and have
        not been tried as run-time scalars yet."""
        out = set()
        for i, a in enumerate(leaves(args)):
            if not is_int(a):
                continue
            it = (i, type(a))
            if it in self.runtime or it in self.static:
                continue
            seen = self.first.setdefault(it, a)
            if seen != a:
                out.add(it)
        return frozenset(out)


def _keyed(v: Any, count: list[int], runtime: frozenset[tuple[int, type]]) -> Any:
    """``signature_key(v)`` with the run-time int leaves keyed by their type only."""
    if isinstance(v, tuple):
        from myc.infer.signature import container_meta

        if type(v) is not tuple:
            meta = container_meta(v)
            kind = meta if isinstance(meta, tuple) else (meta.__module__, meta.__qualname__)
            head: tuple = ("s", kind)
        else:
            head = ("t",)
        return head + tuple(_keyed(x, count, runtime) for x in v)
    i = count[0]
    count[0] += 1
    if (i, type(v)) in runtime:
        return ("r", type(v).__module__, type(v).__qualname__)
    return signature_key(v)


def positions(args: list[Any], runtime: frozenset[tuple[int, type]]) -> frozenset[int]:
    """The leaf indices (``leaves``) that are run-time ints in this call."""
    return frozenset(i for i, a in enumerate(leaves(args)) if (i, type(a)) in runtime)


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
    ok = typed.flags.get("int_ok", frozenset())  # proven by ``myc.infer.dynslice``
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
        if n.id in ok:
            # a dynamic slice's values are its operand's: the int only says where
            if name not in _PLACED or _reads(n.inputs[1], dep):
                dep.add(n.id)
            continue
        where = n.inputs[2:3] if name in _INDEX_SECOND else n.inputs[2:]
        if name in _INDEXING and any(_reads(i, dep) for i in where):
            return "the int is an index"
        a = getattr(n, "abstract", None)
        if getattr(a, "dtype", None) is None or a.dtype.kind != "f":
            return f"a {name} of the int is not a float"
        dep.add(n.id)
    return None


# primitives whose operands after the first say where, not what: an index is static
_INDEXING = frozenset(["getitem", "getitem_grad", "index_add", "index_set", "make_slice",
                       "guarded"])
# ... of which only the second is the index (the third is data)
_INDEX_SECOND = frozenset(["getitem_grad", "index_add", "index_set"])
# a run-time start placing its first operand's values
_PLACED = frozenset(["dynamic_slice", "dynamic_slice_grad"])


def _reads(i: Any, dep: set[int]) -> bool:
    return isinstance(i, Node) and i.id in dep


def leaf_positions(args: list[Any], positions: frozenset[int]) -> frozenset[int]:
    """The ints among the leaves at ``positions`` (what ``HostProgram.run`` passes as
    parameters besides data)."""
    return frozenset(i for i, a in enumerate(leaves(args)) if i in positions and is_int(a))
