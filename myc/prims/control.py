"""Control-flow primitives of *typed* programs: data-dependent choices and loops.

They never appear in the graphs the frontend or AD build (those express control flow
with ``switch`` and tail calls); specialization introduces them when a decision depends
on array or float data, so that a compiled program can keep the decision instead of
falling back to the evaluator.  ``select`` is an if-converted branch: both sides were
computed and one is kept.  ``loop`` runs a typed body graph until it says stop;
``loop_out`` reads one of its results.  ``invoke`` calls a typed function: recursion
whose depth depends on data.
"""

from __future__ import annotations

from typing import Any

from myc.prims.registry import register


def _select(c: Any, a: Any, b: Any) -> Any:
    return a if bool(c) else b


def _loop(body: Any, *inputs: Any) -> Any:
    # a loop's body is a typed graph: only a lowered host program can run it
    runner = getattr(body, "runner", None)
    if runner is None:
        raise NotImplementedError("a typed loop runs only once lowered")
    return runner(*inputs)


def _assert_defined(flag: Any, value: Any, name: str) -> Any:
    if not flag:
        from myc.errors import MycNameError

        raise MycNameError(f"local variable '{name}' is referenced before assignment")
    return value


register("assert_defined", "flag value name", _assert_defined, differentiable=False,
         may_fail=True,
         doc="A loop variable first set inside a data-dependent loop, read after it.")
def _zero_of(a: Any) -> Any:
    import numpy as np

    if getattr(a, "shape", None) == () and hasattr(a, "weak"):
        return {"f": 0.0, "i": 0, "b": False}[a.dtype.kind] if a.weak else a.dtype.type(0)
    return np.zeros(a.shape, a.dtype)


def _guarded(path: Any, prim: Any, abstract: Any, *args: Any) -> Any:
    return prim.impl(*args) if path else _zero_of(abstract)


register("guarded", "path prim abstract", _guarded, variadic=True, differentiable=False,
         doc="``prim(*args)`` where an if-converted branch is taken, a zero elsewhere: an "
         "operation that can fail (an index, a Python division) runs only on its path.")
register("select", "cond x y", _select, differentiable=False, step_kind="select",
         doc="``x`` if ``cond`` else ``y``: a data-dependent branch after if-conversion.")
register("loop", "body", _loop, variadic=True, differentiable=False,
         doc="Run a typed loop body until its first output is false; the loop's results.")
register("invoke", "fn enabled", lambda fn, *inputs: _loop(fn, *inputs), variadic=True,
         differentiable=False,
         doc="Call a typed function (a recursive one, specialized once per signature); its "
         "results are read with ``loop_out``.  Runs only where ``enabled``.")
register("tape_get", "tape index step", lambda t, j, k: t.get(j, k), differentiable=False,
         step_kind="tape_get",
         doc="Loop-carried value ``index`` at the start of iteration ``step`` of a taped loop.")
register("loop_out", "loop index", lambda t, k: t[k], differentiable=False,
         step_kind="exit_value",
         doc="One result of a ``loop``.")
