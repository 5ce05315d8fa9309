"""Why a host program runs as one native function or as steps from Python.

``myc.ir(..., stage="kernels")`` and the docs say which; a program that steps is not
wrong, but it pays Python's dispatch per step (per iteration, for a loop that steps),
so users should be able to see it and why.
"""

from __future__ import annotations

import os
from typing import Any


def describe(prog: Any, tiers: str = "") -> str:
    """One comment line per decision: the program's, and each loop's (``tiers``: when a
    program stepping for its size alone goes native, ``myc.runtime.tiering``)."""
    lines = [f"# runs {_mode(prog, tiers)}"]
    for st in prog.steps:
        if st.kind != "loop":
            continue
        native = st.fn.native
        where = f" at line {st.loc.line}" if st.loc is not None else ""
        how = "natively (one native function)" if native is not None else \
            f"stepped from Python, one iteration at a time ({_why(st.fn.body, st.fn)})"
        lines.append(f"# loop{where} runs {how}")
    return "\n".join(lines) + "\n"


def _mode(prog: Any, tiers: str) -> str:
    if prog.native is not None:
        return "natively: the whole program is one native function"
    return f"stepped: a Python loop over its steps ({_why(prog, None)}){tiers}"


def _why(prog: Any, loop: Any) -> str:
    """Why ``prog`` (a whole program, or ``loop``'s body) is not native code."""
    from myc.lower.target import target

    if os.environ.get("MYC_NO_NATIVE_LOOPS"):
        return "MYC_NO_NATIVE_LOOPS is set"
    if not target(getattr(prog, "backend", "cpu")).native_host:
        return f"native host programs are CPU only, this is {prog.backend}"
    if loop is None and any(st.kind == "loop" for st in prog.steps):
        return "it holds a data-dependent loop, which runs as its own native function " \
            "where it can"
    if loop is None and getattr(prog, "graph", None) is not None:
        from myc.lower.program import native_blockers

        blockers = native_blockers(prog.graph, target(prog.backend))
        if blockers:  # then its small array ops stayed NumPy steps, outside kernels
            return f"the native generator does not cover {', '.join(blockers)}"
    try:
        from myc.backends.cpu.loopgen import NativeLoop, Unsupported, _once_view
    except ImportError:  # pragma: no cover - the kernel backend is optional
        return "the native code generator is not available"
    try:
        if loop is None:
            NativeLoop(_once_view(prog), 0)
        else:
            NativeLoop(prog, loop.nstate, loop.tape)
    except Unsupported as exc:
        return f"the native generator does not cover {exc}"
    except Exception as exc:  # noqa: BLE001 - a description, not a run
        return f"{type(exc).__name__}: {exc}"
    return "a step the native generator does not cover (a program over " \
        "400 operations, or one with NumPy-only steps)"
