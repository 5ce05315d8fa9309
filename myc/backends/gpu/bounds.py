"""Bounds checks of gathers on the GPU: ``x[idx]`` with index arrays raises as NumPy does.

CuPy's integer-array indexing *wraps* an out-of-range index (``a[[1, 3]]`` of a length-3
array is ``a[[1, 0]]``) where NumPy raises ``IndexError`` -- and myc promises NumPy's
``MycIndexError`` on every backend (a gather whose value is dead is even kept in the
program for that error alone: ``typed.flags["checks"]``).  So a gather on the device
checks its index first:

- an index array on the device (a call's argument: W3/W4's ``labels``) is checked on
  the device: ``max(uint64(i + n)) < 2n`` holds exactly when every ``i`` is in
  ``[-n, n)`` (a negative sum wraps to a huge unsigned value) -- one addition and one
  reduction, then one read of the maximum.  On a repeat call (``gpu.fastcall``) the
  read is deferred to the end of the steps, so that the host does not wait for the
  GPU in the middle of the program (CuPy's wrapped gather touches no memory out of
  bounds; its values are dropped); inside a CUDA graph capture (``gpu.graphs``) the
  maximum is one of the graph's buffers, read after every replay.  A deferred check
  that finds an index out of range runs the steps again with the checks read at once,
  which raise, located on the user's line;
- an index array on the host or a program's constant is checked with NumPy (a
  constant once per shape indexed: it cannot change);
- any other index form with a device array in it (a boolean mask, ``None``,
  ``...``) is checked exactly with NumPy on a host copy of the index.

An out-of-range index raises ``IndexError`` with NumPy's own message (the index is
then copied to the host to say which), which the host program turns into a located
``MycIndexError``.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from myc.backends.device_host import DeviceConst
from myc.prims.abstract import DEVICE_ARRAY_TYPES

# the device copies of GPU programs' constants, by id, and their ``DeviceConst`` (filled
# by ``gpu.host`` as it uploads them): an index array that is one is checked once
CONST_OF: dict[int, Any] = {}

_deferred = threading.local()  # .checks: a graph capture's list, else absent or None


def defer_to(checks: list[Any] | None, capture: bool = False) -> None:
    """Device checks append ``(maximum, limit)`` to ``checks`` instead of reading the
    maximum now (None: read at once again); ``capture``: a CUDA graph is being
    captured (nothing may be read)."""
    _deferred.checks = checks
    _deferred.capture = capture and checks is not None


def capturing() -> bool:
    """Is this thread capturing a CUDA graph (``gpu.graphs``)?"""
    return getattr(_deferred, "capture", False)


def out_of_range(checks: list[tuple[Any, int]]) -> bool:
    """Did a deferred check find an index out of range (one read per check)?"""
    for top, limit in checks:
        if read(top) >= limit:
            return True
    return False


def check_index(x: Any, idx: Any) -> None:
    """Raise ``IndexError`` (NumPy's) if ``x[idx]`` has an index out of range."""
    shape = (x.host if isinstance(x, DeviceConst) else x).shape if \
        isinstance(x, DeviceConst) or type(x) in DEVICE_ARRAY_TYPES or \
        type(x) is np.ndarray else None
    if shape is None:
        return  # (a tuple or a dict indexed: checked by its own indexing)
    items = idx if type(idx) is tuple else (idx,)
    if CONST_OF:  # a program's constant uploaded for the index (by ``make_tuple``)
        items = tuple(_constant(i, CONST_OF) if type(i) in DEVICE_ARRAY_TYPES else i
                      for i in items)

    simple = len(items) <= len(shape)
    for i in items:
        t = type(i)
        if t in DEVICE_ARRAY_TYPES or t is np.ndarray or issubclass(t, DeviceConst):
            kind = (i.host if issubclass(t, DeviceConst) else i).dtype.kind
            if kind not in "iu":
                simple = False
        elif not (t is int or t is slice or isinstance(i, np.integer)):
            simple = False  # None, Ellipsis, a list...
    if not simple:
        if any(type(i) in DEVICE_ARRAY_TYPES for i in items):
            _exact(shape, items)
        return
    for axis, i in enumerate(items):
        t = type(i)
        if t in DEVICE_ARRAY_TYPES:
            if i.size == 0:
                continue
            n = shape[axis]
            shifted = (i if i.dtype == np.int64 else i.astype(np.int64)) + n
            top = shifted.view(np.uint64).max()
            checks = getattr(_deferred, "checks", None)
            if checks is not None:
                checks.append((top, 2 * n))
            elif read(top) >= 2 * n:
                _exact(shape, items)
        elif issubclass(t, DeviceConst):
            ok = i.__dict__.setdefault("_in_range", set())
            if (shape, axis) not in ok:
                _in_range(i.host, shape[axis], shape, items)
                ok.add((shape, axis))
        elif t is np.ndarray:
            _in_range(i, shape[axis], shape, items)


def _constant(i: Any, const_of: dict[int, Any]) -> Any:
    """The program constant whose device copy ``i`` is, else ``i``."""
    c = const_of.get(id(i))
    return c if c is not None and c._dev is i else i


def _host(v: Any) -> Any:
    if type(v) in DEVICE_ARRAY_TYPES:
        return v.get()
    return v.host if isinstance(v, DeviceConst) else v


def read(v: Any) -> int:
    """A device scalar's value on the host."""
    return int(v.get()) if type(v) in DEVICE_ARRAY_TYPES else int(v)


def _in_range(i: np.ndarray, n: int, shape: tuple, items: tuple) -> None:
    if i.size and (int(i.max()) >= n or int(i.min()) < -n):
        _exact(shape, items)


def _exact(shape: tuple, items: tuple) -> None:
    """NumPy's own ``IndexError`` for indexing an array of ``shape`` with ``items``
    (an array of that shape taking no memory is indexed with host copies)."""
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=shape,
                                            strides=(0,) * len(shape))
    dummy[tuple(_host(i) for i in items)]
    # (in range after all: the device's maximum said otherwise only if the index
    # changed in between -- nothing to report)
