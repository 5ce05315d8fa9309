"""Slices at a run-time offset with a static length (JAX's ``lax.dynamic_slice`` rule).

``x[i * bs:(i + 1) * bs]`` with ``i`` an int argument has the same length for every
``i``: the tracer (``myc.infer.dynslice``) proves it and emits ``dynamic_slice`` with
the start as a run-time scalar, so one program serves every value of ``i`` instead of
one program per value.  The primitives clamp the start into the array (as JAX does):
memory-safe whatever the value.  NumPy's semantics where the slice would run past the
end, or wrap around from a negative start, are *not* a clamp: the program guards the
start and a call whose start is out of range runs a program specialized on its value
(``myc.runtime.specialize``).  ``dynamic_slice_grad`` is the adjoint: the sensitivity
placed at the same offset in zeros of the sliced axis's full length.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.prims.abstract import AArray, AScalar
from myc.prims.registry import register
from myc.prims.values import ZERO


def _at(ndim: int, axis: int, start: Any, size: int, dim: int) -> tuple:
    """The basic index of the clamped window along ``axis``."""
    s = min(max(int(start), 0), max(dim - size, 0))
    return (slice(None),) * axis + (slice(s, s + size),) + (slice(None),) * (ndim - axis - 1)


# (written for any array type NumPy dispatches to -- CuPy's too: a GPU runs them there)
def dynamic_slice_ref(x: Any, start: Any, axis: int, size: int) -> Any:
    return x[_at(np.ndim(x), axis, start, size, np.shape(x)[axis])].copy()


def dynamic_slice_grad_ref(d: Any, start: Any, axis: int, dim: int) -> Any:
    shape = np.shape(d)[:axis] + (dim,) + np.shape(d)[axis + 1:]
    out = np.zeros_like(d, shape=shape)
    out[_at(np.ndim(d), axis, start, np.shape(d)[axis], dim)] = d
    return out


def _abstract(v: Any) -> Any:
    if isinstance(v, (AArray, AScalar)):
        return v
    a = np.asarray(v)
    return AArray(a.dtype, a.shape)


def _infer_slice(x: Any, start: Any, axis: int, size: int) -> AArray:
    a = _abstract(x)
    if not 0 <= size <= a.shape[axis]:
        raise ValueError(f"a dynamic slice of length {size} of an axis of {a.shape[axis]}")
    return AArray(a.dtype, a.shape[:axis] + (size,) + a.shape[axis + 1:])


def _infer_grad(d: Any, start: Any, axis: int, dim: int) -> AArray:
    a = _abstract(d)
    return AArray(a.dtype, a.shape[:axis] + (dim,) + a.shape[axis + 1:])


def _bprop_slice(x, start, axis, size, out, dout):
    return (dynamic_slice_grad(dout, start, axis, np.shape(x)[axis]), ZERO, ZERO, ZERO)


def _jvp_slice(x, start, axis, size, tx, tstart, taxis, tsize, out):
    return dynamic_slice(tx, start, axis, size)


def _bprop_grad(d, start, axis, dim, out, dout):
    return (dynamic_slice(dout, start, axis, np.shape(d)[axis]), ZERO, ZERO, ZERO)


def _jvp_grad(d, start, axis, dim, td, tstart, taxis, tdim, out):
    return dynamic_slice_grad(td, start, axis, dim)


dynamic_slice = register(
    "dynamic_slice", "x start axis size", dynamic_slice_ref,
    bprop=_bprop_slice, jvp=_jvp_slice, step_kind="window",
    doc="x's window of static length `size` along `axis` at the run-time offset `start` "
        "(clamped into the axis; the program guards NumPy's semantics).")
dynamic_slice.infer = _infer_slice
dynamic_slice_grad = register(
    "dynamic_slice_grad", "d start axis dim", dynamic_slice_grad_ref,
    bprop=_bprop_grad, jvp=_jvp_grad, step_kind="window_add",
    doc="zeros of length `dim` along `axis` with `d` placed at the run-time offset "
        "`start`: the adjoint of dynamic_slice.")
dynamic_slice_grad.infer = _infer_grad
