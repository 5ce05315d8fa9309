"""Running a kernel's plan on some array module: CuPy on the GPU, NumPy in the emulator.

Both allocate the outputs, row temporaries and partials the same way and launch the
passes in order; only ``launch(pass, buffers)`` differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from myc.backends.cuda.codegen import Pass, Plan

_NP_DTYPE = {"float32": "float32", "float64": "float64", "int64": "int64", "bool": "uint8"}


def run_plan(plan: Plan, inputs: list[Any], xp: Any,
             launch: Callable[[Pass, list[Any]], None]) -> list[Any]:
    """Outputs of ``plan`` 's kernel on ``inputs`` (arrays of ``xp``, C-contiguous, bools
    as ``uint8`` views), in ``out_index`` order."""
    k = plan.kernel
    outs = [xp.empty(b.shape, _NP_DTYPE[b.dtype]) for b in k.output_buffers()]
    rows = [xp.empty(max(n, 1), _NP_DTYPE[dt]) for dt, n in plan.rows]
    partials = {i: xp.empty(max(n, 1), _NP_DTYPE[dt]) for i, (dt, n) in plan.partials.items()}
    table = {"in": inputs, "row": rows, "out": outs, "partial": partials}
    for p in plan.passes:
        launch(p, [table[kind][i] for kind, i in p.args])
    return [o.view(xp.bool_) if b.dtype == "bool" else o
            for o, b in zip(outs, k.output_buffers(), strict=True)]
