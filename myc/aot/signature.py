"""An AOT signature: ``"f32[N,4], f32[4]"`` (a size may be a name: a dynamic size) or
example arrays, as ``(dtype, shape)`` per argument, checked against a library's limits."""

from __future__ import annotations

import operator
import re
from typing import Any

import numpy as np

from myc.errors import MycError

DTYPES = {"f32": "float32", "f64": "float64", "i64": "int64", "bool": "bool",
          "float32": "float32", "float64": "float64", "int64": "int64"}
_SIG_ITEM = re.compile(r"\s*(\w+)\s*\[([^\]]*)\]\s*")


def parse_signature(signature: Any) -> list[np.ndarray]:
    """Zero example arrays for a static ``signature`` (see :func:`signature_specs`)."""
    out = []
    for i, (dtype, shape) in enumerate(signature_specs(signature)):
        named = [d for d in shape if isinstance(d, str)]
        if named:
            raise MycError(f"myc.aot: item {i} of the signature has the dynamic size "
                           f"{named[0]}; example arrays need every size as a number")
        out.append(np.zeros(shape, dtype))
    return out


def signature_specs(signature: Any) -> list[tuple[str, tuple[int | str, ...]]]:
    """``(dtype, shape)`` per argument of ``signature``: a string ``"f32[N,4], f32[4]"``
    (a size may be a name: a dynamic size, the same for every item that names it) or a
    sequence of arrays / ``(shape, dtype)`` pairs / objects with ``shape`` and ``dtype``."""
    if isinstance(signature, str):
        items, depth, cur = [], 0, ""
        for ch in signature:
            depth += ch == "["
            depth -= ch == "]"
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            items.append(cur)
        out = []
        for text in items:
            m = _SIG_ITEM.fullmatch(text)
            if m is None or m.group(1) not in DTYPES:
                raise MycError(f"myc.aot: cannot read {text.strip()!r} in the signature: "
                               "expected DTYPE[d0,d1,...] with DTYPE one of f32, f64, i64, "
                               "bool, e.g. \"f32[64,4], f32[4]\" or \"f32[N,4], f32[4]\"")
            dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
            shape: list[int | str] = []
            for d in dims:
                if d.isascii() and d.isdigit():
                    shape.append(int(d))
                elif d.isidentifier():
                    shape.append(d)
                else:
                    raise MycError(f"myc.aot: dimension {d!r} in {text.strip()!r}: a size "
                                   "is a number or a name (a dynamic size, e.g. N)")
            out.append(_within_limits(DTYPES[m.group(1)], tuple(shape), text.strip()))
        return out
    if not isinstance(signature, (tuple, list)):
        raise MycError("myc.aot: the signature is a string like \"f32[64,4], f32[4]\" or a "
                       f"tuple of example arrays, not {type(signature).__name__}")
    out = []
    for i, item in enumerate(signature):
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], np.ndarray):
            shape, dtype = item
        elif hasattr(item, "shape") and hasattr(item, "dtype"):
            shape, dtype = item.shape, item.dtype
        else:
            raise MycError(f"myc.aot: signature item {i} is {type(item).__name__}; give an "
                           "array, a (shape, dtype) pair, or use a string signature")
        dt = str(np.dtype(dtype))
        if dt not in DTYPES.values():
            raise MycError(f"myc.aot: signature item {i} has dtype {dt}; supported: float32, "
                           "float64, int64, bool")
        try:
            dims = tuple(d if isinstance(d, str) else operator.index(d) for d in shape)
        except TypeError:
            raise MycError(f"myc.aot: signature item {i} has the shape {shape!r}; sizes "
                           "are ints or names") from None
        out.append(_within_limits(dt, dims, f"item {i}"))
    return out


def _within_limits(dtype: str, shape: tuple[int | str, ...], what: str):
    """``(dtype, shape)``, or a :class:`MycError` where a static size is negative or the
    static part of the shape cannot be an array of a library (more than 2^56 bytes:
    the library could not even count its bytes in 64 bits safely)."""
    from math import prod

    from myc.lower.hostplan import MAX_BYTES

    static = [d for d in shape if isinstance(d, int)]
    if any(d < 0 for d in static):
        raise MycError(f"myc.aot: {what} in the signature has a negative size")
    nbytes = prod(static) * np.dtype(dtype).itemsize
    biggest = max(static, default=0)
    if nbytes > MAX_BYTES or biggest * np.dtype(dtype).itemsize > MAX_BYTES:
        raise MycError(f"myc.aot: {what} in the signature is too large ({nbytes} bytes, "
                       f"an axis of {biggest} elements): a library's arrays are at most "
                       "2^56 bytes")
    return dtype, shape
