"""Loop plan of a kernel: the domain with size-1 axes dropped and contiguous axes merged,
element strides of every load and output along the remaining axes, and how each
reduction accumulates.

The generated function runs a chunk ``[begin, end)`` of the *parallel range*: the
elements of a 1-axis plan, or the rows (all axes but the innermost, flattened) of a
longer one; each row runs the innermost axis as one contiguous, vectorizable loop.

Reduction modes:

* ``store``: nothing left to reduce (only size-1 axes were reduced): written like a Store.
* ``inner``: the innermost axis is reduced: accumulated in registers across it, then
  written once per row (or per chunk, in a 1-axis plan).
* ``outer``: only outer axes are reduced: each inner-loop iteration updates the output
  element in memory (``out[o+j] = op(out[o+j], v)``, itself a vectorizable loop).

``init``: the kernel reads the output before writing it, so the runtime fills it with
the reduction's identity first.  ``shared``: different chunks of the parallel range
write the same output elements, so each chunk gets its own partial copy, combined by
the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from myc.lower.kernel import (
    Kernel,
    Load,
    Reduce,
    Store,
    c_strides,
    output_shape,
    postorder,
    row_reductions,
)


@dataclass(frozen=True)
class OutPlan:
    strides: tuple[int, ...]  # element strides along the plan's axes (0 where reduced)
    op: str | None  # reduction op; None for stores and "store"-mode reductions
    mode: str  # "store" | "inner" | "outer"
    init: bool
    shared: bool


@dataclass(frozen=True)
class Plan:
    dims: tuple[int, ...]
    loads: tuple[tuple[Load, tuple[int, ...]], ...]  # distinct loads and their strides
    outs: tuple[OutPlan, ...]  # in out_index order

    @property
    def extent(self) -> int:
        """Size of the parallel range ``[0, extent)`` the function is called on."""
        return self.dims[0] if len(self.dims) == 1 else prod(self.dims[:-1])

    @property
    def row(self) -> int:
        """Domain elements per unit of the parallel range."""
        return 1 if len(self.dims) == 1 else self.dims[-1]


def make_plan(kernel: Kernel) -> Plan:
    shape = kernel.shape
    nd = len(shape)
    loads = [n for n in postorder([o.expr for o in kernel.outputs]) if isinstance(n, Load)]
    vectors: list[list[int]] = []  # one stride vector per load, then per output
    for load in loads:
        buf = kernel.inputs[load.buffer]
        vec = [0] * nd
        axes = kernel.load_axes(load)
        for a, size, stride in zip(axes, buf.shape, c_strides(buf.shape), strict=True):
            vec[a] = stride if size != 1 else 0
        vectors.append(vec)
    outs = sorted(kernel.outputs, key=lambda o: o.out_index)
    masks: list[list[bool]] = []
    for out in outs:
        reduced = out.axes if isinstance(out, Reduce) else ()
        oshape = output_shape(shape, out)
        ostrides = c_strides(oshape)
        vec = [0] * nd
        j = 0
        for a in range(nd):
            if a in reduced and not (isinstance(out, Reduce) and out.keepdims):
                continue
            vec[a] = 0 if a in reduced else ostrides[j]
            j += 1
        vectors.append(vec)
        masks.append([a in reduced for a in range(nd)])

    # merge adjacent axes that every access walks contiguously, dropping size-1 axes; a
    # kernel with row reductions keeps the last axis as the innermost one, whole, and
    # runs over rows (a unit of the parallel range is one row)
    rows = bool(row_reductions([o.expr for o in kernel.outputs]))
    groups: list[int] = []  # last original axis of each merged group
    dims: list[int] = []
    for a in range(nd):
        last = rows and a == nd - 1
        if shape[a] == 1 and not last:
            continue
        if groups and not last:
            p = groups[-1]
            if all(v[p] == v[a] * shape[a] for v in vectors) and all(
                    m[p] == m[a] for m in masks):
                groups[-1] = a
                dims[-1] *= shape[a]
                continue
        groups.append(a)
        dims.append(shape[a])
    if not dims:
        groups, dims = [-1], [1]
    if rows and len(dims) == 1:
        groups, dims = [-1, *groups], [1, *dims]
    for v in vectors:
        v.append(0)  # axis -1: the stand-in for an empty domain shape

    def strides(v: list[int]) -> tuple[int, ...]:
        return tuple(v[g] for g in groups)

    nl = len(loads)
    load_plans = tuple((load, strides(v)) for load, v in zip(loads, vectors[:nl], strict=True))
    out_plans = []
    inner = len(dims) - 1
    for out, vec, mask in zip(outs, vectors[nl:], masks, strict=True):
        mask.append(False)
        red = [i for i, g in enumerate(groups) if mask[g]]
        if isinstance(out, Store) or not red:
            out_plans.append(OutPlan(strides(vec), None, "store", False, False))
        elif inner in red:
            init = len(dims) > 1 and red != [inner]
            shared = len(dims) == 1 or init
            out_plans.append(OutPlan(strides(vec), out.op, "inner", init, shared))
        else:
            out_plans.append(OutPlan(strides(vec), out.op, "outer", True, True))
    return Plan(tuple(dims), load_plans, tuple(out_plans))
