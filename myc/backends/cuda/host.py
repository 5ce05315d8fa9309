"""What runs where in a host program on ``backend="cuda"``.

- Fused kernels run on the GPU and return CuPy arrays: a kernel's result that feeds
  another kernel stays on the device (``runtime.CompiledKernel`` accepts both kinds).
- Matrix products whose operand already is on the device run there, through CuPy's
  ``matmul``/``dot`` (cuBLAS); so do transposes and reshapes of device arrays (their
  NumPy references dispatch to CuPy through ``__array_function__``).
- A program's (and a loop body's) array arguments are copied to the GPU once on entry.
- Every other step (gathers, scatters, fills, scalar arithmetic, the loop and call
  runners) runs the NumPy reference on the host: its device operands are copied back
  first (:class:`HostStep`).  A loop's carried state therefore comes back to the host
  every iteration, and so do the kernels' scalar results (loop conditions).
- The program's results are NumPy arrays (:func:`to_host_values`); ``myc.jit`` gives
  CuPy arrays back when an argument was a CUDA array (:func:`device_call`).  Such an
  argument is copied to the host (the specializer and host steps read host arrays), but
  the program's kernels read the original, not a new upload.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from myc.lower.post import Post, finish

_ON_DEVICE = {"matmul", "dot"}
# views whose NumPy reference (np.swapaxes, np.transpose, np.reshape) CuPy implements
# through __array_function__: run on a device operand as they are
_VIEWS = {"mT", "transpose", "reshape"}


def _on_gpu(v: Any) -> bool:
    """Is ``v`` a CUDA array (CuPy, a CUDA torch tensor...)?"""
    if type(v) in (np.ndarray, tuple, float, int, bool) or isinstance(v, np.generic):
        return False  # the common cases, quickly
    try:
        return hasattr(v, "__cuda_array_interface__")
    except Exception:  # noqa: BLE001 - e.g. a torch tensor that requires grad
        return False


def to_host(v: Any) -> Any:
    if _on_gpu(v):
        from myc.backends.cuda.runtime import to_host as get

        return get(v)
    return v


def to_host_values(values: list[Any]) -> list[Any]:
    return [to_host(v) for v in values]


def to_device_values(values: list[Any]) -> list[Any]:
    """The NumPy arrays among ``values`` copied to the GPU (a program's arguments: copied
    once, then every kernel and GEMM reading them reads the device copy)."""
    if not any(isinstance(v, np.ndarray) for v in values):
        return values
    from myc.backends.cuda.runtime import device

    cp = device().cp
    known = getattr(_ORIGINALS, "arrays", None) or {}
    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            # an argument that came from the GPU (``device_call``): its original, no upload
            orig = known.get(_buffer_key(v))
            v = orig if orig is not None else cp.asarray(v)
        out.append(v)
    return out


_ORIGINALS = threading.local()  # this thread's call's device arguments, by host buffer


def _buffer_key(a: np.ndarray) -> tuple:
    return (a.__array_interface__["data"][0], a.shape, a.dtype.str, a.strides)


class HostStep:
    """A non-kernel step: GEMM on the device when an operand is there, else the NumPy
    reference on host copies of its operands."""

    def __init__(self, fn: Any, name: str):
        self.fn = fn
        self.name = name

    def __call__(self, *vals: Any) -> Any:
        if self.name in _ON_DEVICE and any(_on_gpu(v) for v in vals) and all(
                _on_gpu(v) or isinstance(v, np.ndarray) for v in vals):
            from myc.backends.cuda.runtime import device

            cp = device().cp
            return getattr(cp, self.name)(*(cp.asarray(v) for v in vals))
        if self.name in _VIEWS and vals and _on_gpu(vals[0]) and \
                not any(_on_gpu(v) or isinstance(v, np.ndarray) for v in vals[1:]):
            try:
                return self.fn(*vals)
            except Exception:  # noqa: BLE001 - not covered there: the host runs it
                pass
        return self.fn(*(to_host(v) for v in vals))

    def __str__(self) -> str:
        return str(self.fn)


def finish_on_device(value: Any, post: Post) -> Any:
    """``myc.lower.post.finish`` for a CuPy kernel result: a scalar comes to the host,
    an array stays on the device."""
    if post.scalar is not None or not _on_gpu(value):
        return finish(to_host(value), post)
    if post.divide_by is not None:
        value = value / value.dtype.type(post.divide_by) if value.dtype.kind == "f" \
            else value / post.divide_by
    if post.reshape is not None:
        value = value.reshape(post.reshape)
    return value


def adapt(steps: list[Any]) -> None:
    """Wrap the non-kernel steps of a cuda host program (in place)."""
    from myc.lower.program import KernelUnit

    for st in steps:
        if not isinstance(st.fn, KernelUnit | HostStep):
            st.fn = HostStep(st.fn, st.name)


def _leaves(v: Any):
    if isinstance(v, tuple):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


def _map(v: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(v, tuple):
        return tuple(_map(x, f) for x in v)
    return f(v)


def device_call(run: Callable[[tuple, dict], Any], args: tuple, kwargs: dict) -> Any:
    """Call ``run`` on host copies of CUDA array arguments; results as CuPy arrays when
    an argument was a CUDA array (CuPy, a CUDA torch tensor...), else as they are."""
    leaves = [*_leaves(args), *(x for v in kwargs.values() for x in _leaves(v))]
    on_gpu = [v for v in leaves if _on_gpu(v)]
    if not on_gpu:
        return run(args, kwargs)
    from myc.backends.cuda.runtime import device

    dev = device()
    cp = dev.cp
    for v in on_gpu:
        where = cp.asarray(v).device.id
        if where != dev.id:
            from myc.errors import MycValueError

            raise MycValueError(f"backend='cuda': an argument is on GPU {where}, but myc "
                                f"runs on GPU {dev.id} (CuPy's current device)")
    originals: dict[tuple, Any] = {}

    def down(v: Any) -> Any:
        if not _on_gpu(v):
            return v
        h = to_host(v)
        arr = cp.asarray(v)
        if arr.flags.c_contiguous:  # the program reads this one instead of a new upload
            originals[_buffer_key(h)] = arr
        return h

    host_args = _map(args, down)
    host_kwargs = {k: _map(v, down) for k, v in kwargs.items()}
    saved = getattr(_ORIGINALS, "arrays", None)
    _ORIGINALS.arrays = originals
    try:
        out = run(host_args, host_kwargs)
    finally:
        _ORIGINALS.arrays = saved
    return _map(out, lambda v: cp.asarray(v) if isinstance(v, np.ndarray) else v)
