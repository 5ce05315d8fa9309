"""Array ``select`` s on a 0-d condition as elementwise ``where``.

A ``select`` picks one whole array at run time: a host step between kernels, which
splits the fusion groups on either side.  A gradient's backward loop selects every
cotangent on the iteration's path (``myc.infer.adjoint`` masks each by the paths that
reach it), so in a loop body these selects cut one kernel into several, each called on
every iteration.  Both forms pick exactly one side; a ``where`` fuses into the kernels
around it.  It prepares fusion: the ``fused`` stage and every lowering (JIT and AOT,
loop bodies included) run it first; it is idempotent.
"""

from __future__ import annotations

from myc.ir.manager import Manager
from myc.ir.nodes import Apply, Constant, Graph
from myc.prims import P


def selects_as_where(g: Graph) -> int:
    """Rewrite ``g`` 's own array ``select`` s on a 0-d condition in place as ``where``;
    returns how many (``g`` is this compilation's own typed program)."""
    changed = 0
    for n in Manager(g).owned.get(g, []):
        if not (isinstance(n, Apply) and isinstance(n.inputs[0], Constant)
                and n.inputs[0].value is P.select and len(n.inputs) == 4):
            continue
        shape = getattr(n.abstract, "shape", None)
        cond = n.inputs[1]
        cshape = () if isinstance(cond, Constant) else getattr(cond.abstract, "shape", None)
        if shape and cshape == () and str(getattr(n.abstract, "dtype", "")) != "object":
            n.inputs[0] = Constant(P.where, n.inputs[0].loc)
            changed += 1
    return changed
