"""Host steps of a GPU program get CuPy arrays as operands: the NumPy references of
``astype`` and ``cast_grad`` must keep such an array where it is (call its ``astype``)
instead of converting it, which CuPy refuses -- on an H100 that refusal sent W3's and
W4's casts to the host at small sizes (counted as host fallbacks)."""

from __future__ import annotations

import numpy as np

from myc.prims.adprims import ZERO, cast_grad
from myc.prims.ops import _astype


class Foreign:
    """An array of another library: ``dtype``, ``ndim``, ``astype``; no conversion."""

    def __init__(self, a):
        self.a = np.asarray(a)
        self.dtype, self.ndim, self.shape = self.a.dtype, self.a.ndim, self.a.shape

    def astype(self, dtype, copy=True):
        return Foreign(self.a.astype(dtype, copy=copy))

    def __array__(self, *args, **kwargs):
        raise TypeError("implicit conversion to a NumPy array is not allowed")

    def __float__(self):
        raise TypeError("no implicit conversion")


def test_astype_keeps_a_foreign_array():
    for shape in [(), (3,)]:
        out = _astype(Foreign(np.ones(shape, np.float32)), np.float64)
        assert isinstance(out, Foreign) and out.dtype == np.float64 and out.shape == shape
    assert type(_astype(np.float32(2), np.float64)) is np.float64
    assert type(_astype(2.5, np.float32)) is np.float32


def test_cast_grad_keeps_a_foreign_array():
    x = Foreign(np.ones(3, np.float32))
    out = cast_grad(Foreign(np.ones(3, np.float64)), x)
    assert isinstance(out, Foreign) and out.dtype == np.float32
    out0 = cast_grad(Foreign(np.float64(2.0)), Foreign(np.float32(1.0)))
    assert isinstance(out0, Foreign) and out0.dtype == np.float32
    assert cast_grad(Foreign(np.ones(3)), Foreign(np.ones(3, np.int64))) is ZERO
    assert type(cast_grad(np.float64(1.5), np.float32(1.0))) is np.float32
