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
    _loops(prog, lines, None)
    return "\n".join(lines) + "\n"


def _loops(prog: Any, lines: list[str], outer: Any) -> None:
    """A line per loop step of ``prog``, then per loop nested in its body; ``outer``: the
    loop step whose body ``prog`` is (None: the program's own loops)."""
    for st in prog.steps:
        if st.kind != "loop":
            continue
        where = f" at line {st.loc.line}" if st.loc is not None else ""
        if outer is not None:
            at = f" at line {outer.loc.line}" if outer.loc is not None else ""
            where += f" (nested in the loop{at})"
        if outer is not None and outer.fn.native is not None:
            how = "natively, inline in the native function of the loop holding it"
        elif st.fn.native is not None:
            how = "natively (one native function)"
        else:
            how = f"stepped from Python, one iteration at a time ({_why(st.fn.body, st.fn)})"
        lines.append(f"# loop{where} runs {how}")
        _loops(st.fn.body, lines, st)


def _mode(prog: Any, tiers: str) -> str:
    if prog.native is not None:
        return "natively: the whole program is one native function"
    return f"stepped: a Python loop over its steps ({_why(prog, None)}){tiers}"


def _why(prog: Any, loop: Any) -> str:
    """Why ``prog`` (a whole program, or ``loop``'s body) is not native code."""
    from myc.lower.program import once_view
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
        from myc.backends.cpu.loopgen import NativeLoop, Unsupported
    except ImportError:  # pragma: no cover - the kernel backend is optional
        return "the native code generator is not available"
    try:
        if loop is None:
            NativeLoop(once_view(prog), 0)
        else:
            NativeLoop(prog, loop.nstate, loop.tape)
    except Unsupported as exc:
        return f"the native generator does not cover {exc}"
    except Exception as exc:  # noqa: BLE001 - a description, not a run
        return f"{type(exc).__name__}: {exc}"
    return "a step the native generator does not cover (a program over " \
        "400 operations, or one with NumPy-only steps)"
