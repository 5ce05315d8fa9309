"""``argsort`` as a host step, and the index that gathers along one axis by it.

``np.argsort`` runs NumPy's own argsort (on every backend, a host step, as ``cumsum``
does), so the permutation is exactly NumPy's, ties included.  It is not differentiable:
an index.  ``np.sort`` is the library function gathering ``a`` by that permutation
(``myc/frontend/np_library.py``), so its gradient is the gather's: the cotangent
scattered back through the permutation.
"""

from __future__ import annotations

import numpy as np

from myc.prims.arrays import STATIC_ONLY, _axis
from myc.prims.registry import register


def _argsort(x, axis, kind):
    return np.argsort(x, axis=axis, kind=kind)


def along_axis_grid(shape: tuple, axis: int) -> tuple[tuple, tuple]:
    """The open-grid index arrays before and after ``axis`` of an array of ``shape``:
    ``a[before + (idx,) + after]`` is ``np.take_along_axis(a, idx, axis)``."""
    nd = len(shape)
    ax = _axis(axis, nd)
    grid = []
    for k in range(nd):
        view = [1] * nd
        view[k] = int(shape[k])
        grid.append(np.arange(int(shape[k])).reshape(view))
    return tuple(grid[:ax]), tuple(grid[ax + 1:])


register("argsort", "x axis kind", _argsort, defaults={"axis": -1, "kind": None},
         differentiable=False)
register("along_axis_grid", "shape axis", along_axis_grid, differentiable=False)
STATIC_ONLY["along_axis_grid"] = "the axis must be an int known when the program is compiled"
