"""Running a kernel's plan on some array module: CuPy on the GPU, NumPy in the emulator.

Both allocate the outputs, row temporaries and partials the same way and launch the
passes in order; only ``launch(pass, buffers)`` differs.  What a call allocates and
which buffers each pass takes is worked out once per plan (:func:`layout`): a launch
costs a CuPy call, not a walk over the kernel IR (the GPU runtime runs that layout
inline, ``gpu.runtime.CompiledKernel``; the emulator through :func:`run_plan`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from myc.backends.gpu.codegen import Pass, Plan

_NP_DTYPE = {"float32": "float32", "float64": "float64", "int64": "int64", "bool": "uint8"}


def layout(plan: Plan) -> tuple:
    """(output allocations, temporaries, per-pass buffer indices, bool outputs)."""
    lay = plan.__dict__.get("_layout")
    if lay is None:
        k = plan.kernel
        outs = [(tuple(b.shape), _NP_DTYPE[b.dtype]) for b in k.output_buffers()]
        temps = [(max(n, 1), _NP_DTYPE[dt]) for dt, n in plan.rows]
        part_at: dict[int, int] = {}
        for i, (dt, n) in plan.partials.items():
            part_at[i] = len(temps)
            temps.append((max(n, 1), _NP_DTYPE[dt]))
        nin = len(k.inputs)
        nout = len(outs)
        base = {"in": 0, "out": nin, "row": nin + nout}  # in [*inputs, *outs, *temps]
        passes = []
        for p in plan.passes:
            idx = tuple(base["row"] + part_at[i] if kind == "partial" else base[kind] + i
                        for kind, i in p.args)
            passes.append((p, idx))
        bools = tuple(b.dtype == "bool" for b in k.output_buffers())
        lay = plan.__dict__["_layout"] = (outs, temps, passes, bools)
    return lay


def run_plan(plan: Plan, inputs: list[Any], xp: Any,
             launch: Callable[[Pass, list[Any]], None]) -> list[Any]:
    """Outputs of ``plan`` 's kernel on ``inputs`` (arrays of ``xp``, C-contiguous, bools
    as ``uint8`` views), in ``out_index`` order."""
    outs_spec, temps_spec, passes, bools = layout(plan)
    empty = xp.empty
    outs = [empty(shape, dt) for shape, dt in outs_spec]
    table = [*inputs, *outs, *(empty(n, dt) for n, dt in temps_spec)]
    for p, idx in passes:
        launch(p, [table[i] for i in idx])
    if not any(bools):
        return outs
    return [o.view(xp.bool_) if b else o for o, b in zip(outs, bools, strict=True)]
