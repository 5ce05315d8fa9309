"""The host program: an ordered list of steps over numbered value slots.

Lowering turns the optimized typed graph into steps -- for now one per primitive,
each running the primitive's NumPy reference on its slots.  Fusion groups become single
kernel steps once the kernel backend is attached (``myc.lower.fusion``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from myc.backends.interp import translate_exception
from myc.errors import MycError
from myc.infer.abstract import AScalar, abstract_of
from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Constant, Graph, Node, Parameter
from myc.prims import P, Primitive


@dataclass
class Step:
    fn: Any  # a Primitive or a compiled kernel: called with the input values
    inputs: list[tuple[bool, Any]]  # (is_slot, slot index or constant value)
    output: int
    loc: Any = None
    name: str = ""


@dataclass
class HostProgram:
    name: str
    nslots: int
    params: list[int]
    steps: list[Step]
    outputs: list[tuple[bool, Any]]
    template: Any
    leaf_kinds: list[Any] = field(default_factory=list)
    graph: Graph | None = None

    def describe(self) -> str:
        """The host program as text: one line per step."""
        lines = [f"host program {self.name}: {len(self.params)} inputs, "
                 f"{len(self.steps)} steps"]
        for st in self.steps:
            ins = ", ".join(f"s{x}" if is_slot else _short(x) for is_slot, x in st.inputs)
            where = f"  # {st.loc.line}: {st.loc.source_line.strip()}" if st.loc else ""
            lines.append(f"  s{st.output} = {st.name}({ins}){where}")
        outs = ", ".join(f"s{x}" if is_slot else _short(x) for is_slot, x in self.outputs)
        lines.append(f"  return ({outs})")
        return "\n".join(lines)

    def run(self, args: list[Any]) -> Any:
        slots: list[Any] = [None] * self.nslots
        leaves: list[Any] = []

        def walk(v: Any) -> None:
            if isinstance(v, tuple):
                for x in v:
                    walk(x)
            else:
                leaves.append(v)

        for a in args:
            walk(a)
        data = [v for v in leaves if _is_data(v)]
        for slot, v in zip(self.params, data, strict=True):
            slots[slot] = v
        with np.errstate(all="ignore"):
            for st in self.steps:
                vals = [slots[x] if is_slot else x for is_slot, x in st.inputs]
                try:
                    slots[st.output] = st.fn(*vals)
                except MycError as exc:
                    raise exc.with_loc(st.loc) from None
                except Exception as exc:  # noqa: BLE001 - located like the evaluator's
                    raise translate_exception(exc, st.name, st.loc) from None
        results = iter([slots[x] if is_slot else x for is_slot, x in self.outputs])
        return _rebuild(self.template, results)


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array<{v.dtype}{list(v.shape)}>" if v.size > 4 else repr(v.tolist())
    return repr(v)


def _is_data(v: Any) -> bool:
    a = abstract_of(v)
    return a is not None and (not isinstance(a, AScalar) or a.dtype.kind == "f")


def _rebuild(template: Any, results) -> Any:
    if isinstance(template, tuple):
        return tuple(_rebuild(t, results) for t in template)
    if isinstance(template, Node):
        return next(results)
    return template


def _as_python(a: AScalar):
    return {"f": float, "i": int, "b": bool}[a.dtype.kind]


class _Finish:
    """Gives a step's raw result the kind its abstract value promises."""

    def __init__(self, prim: Primitive, abstract: Any):
        self.prim = prim
        self.abstract = abstract
        self.name = prim.name

    def __call__(self, *args: Any) -> Any:
        r = self.prim.impl(*args)
        a = self.abstract
        if isinstance(a, AScalar):
            if a.weak:
                return _as_python(a)(r)
            if not isinstance(r, np.generic) or r.dtype != a.dtype:
                return a.dtype.type(r)
        return r


def lower(typed: Graph, template: Any, name: str) -> HostProgram:
    mng = Manager(typed)
    order = schedule(typed, mng.owned.get(typed, []))
    slot_of: dict[int, int] = {}
    params = []
    for p in typed.parameters:
        slot_of[p.id] = len(slot_of)
        params.append(slot_of[p.id])

    def operand(n: Node) -> tuple[bool, Any]:
        if isinstance(n, Constant):
            return (False, n.value)
        return (True, slot_of[n.id])

    steps = []
    out = typed.output
    for n in order:
        if n is out and isinstance(n, Apply) and n.inputs[0].value is P.make_tuple:
            continue
        prim = n.inputs[0].value  # type: ignore[union-attr]
        assert isinstance(prim, Primitive), f"typed graph calls a non-primitive: {n}"
        slot_of[n.id] = len(slot_of)
        fn = _Finish(prim, n.abstract) if isinstance(n.abstract, AScalar) else prim.impl
        steps.append(Step(fn, [operand(i) for i in n.inputs[1:]], slot_of[n.id], n.loc,
                          prim.name))
    if isinstance(out, Apply) and out.inputs[0].value is P.make_tuple:
        outputs = [operand(i) for i in out.inputs[1:]]
    elif isinstance(out, (Apply, Parameter)):
        outputs = [operand(out)]
    else:
        outputs = []
    return HostProgram(name, len(slot_of), params, steps, outputs, template, graph=typed)
