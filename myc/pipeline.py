"""The compilation pipeline, stage by stage, as DESIGN.md draws it.

    parse -> (ad) -> infer -> opt -> lower -> backend

Each stage is a named function here; ``myc.ir`` prints the value after any of them.
Stages that have not landed yet pass their input through unchanged and say so.
"""

from __future__ import annotations

from typing import Any

from myc.errors import MycValueError
from myc.frontend.lower import parse
from myc.ir.nodes import Graph
from myc.ir.verify import verify

STAGES = ("parsed", "ad", "typed", "optimized", "kernels", "target")
BACKENDS = ("interp", "cpu", "opencl", "cuda")


def parsed(fn: Any) -> Graph:
    g = fn if isinstance(fn, Graph) else parse(fn)
    verify(g)
    return g


def make_executable(graph: Graph, backend: str):
    """A callable running ``graph`` on ``backend``.

    ``cpu``, ``opencl`` and ``cuda`` specialize per signature and compile fusion groups to kernels
    for that target (the host program's other steps run natively on the CPU, or NumPy).
    """
    if backend not in BACKENDS:
        raise MycValueError(f"unknown backend '{backend}'; available: {', '.join(BACKENDS)}")
    if backend == "interp":
        from myc.ir.evaluator import Interpreter

        return Interpreter(graph).run
    from myc.runtime.specialize import SpecializedFunction

    return SpecializedFunction(graph, backend=backend)
