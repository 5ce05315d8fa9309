"""Abstract values: what specialization knows about a value it does not compute.

Arrays are known by dtype and static shape; scalars by dtype and whether they are
*weak* Python scalars (``float``/``int``/``bool``: NumPy promotion lets a float32 array
win against them) or NumPy scalars.  Everything else -- tuples, functions, ``None``,
slices, dtypes, ``ZERO`` -- stays concrete during specialization.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class AArray:
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"


@dataclass(frozen=True)
class AScalar:
    dtype: np.dtype
    weak: bool  # a Python float/int/bool rather than a NumPy scalar

    shape = ()
    ndim = 0

    def __str__(self) -> str:
        return f"{'py' if self.weak else ''}{self.dtype}"


Abstract = AArray | AScalar

class ATape:
    """The abstract value of a loop's tape (the state of every iteration: ``myc.infer.
    adjoint``)."""

    shape = None

    def __repr__(self) -> str:
        return "tape"


_PY = {float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_)}

# array types that live on a device (CuPy's ``ndarray``, registered by the cuda backend
# when it opens the GPU): specialized on their shape and dtype, their data never read
DEVICE_ARRAY_TYPES: set[type] = set()


def abstract_of(value: Any) -> Abstract | None:
    """The abstract value of a concrete leaf, or ``None`` if it is not numeric data."""
    if isinstance(value, np.ndarray):
        return AArray(value.dtype, value.shape)
    if isinstance(value, np.generic):
        return AScalar(value.dtype, False)
    if type(value) in _PY:
        return AScalar(_PY[type(value)], True)
    if type(value) in DEVICE_ARRAY_TYPES:
        return AArray(np.dtype(value.dtype), tuple(value.shape))
    return None


def as_abstract(v: Any) -> AArray | AScalar:
    """An operand of a shape rule as an abstract value: abstract already, or a concrete
    leaf's abstract (a ``TypeError`` for anything that is not numeric data)."""
    if isinstance(v, (AArray, AScalar)):
        return v
    a = abstract_of(v)
    if a is None:
        raise TypeError(f"unsupported operand of type {type(v).__name__}")
    return a


def proxy(a: Abstract) -> Any:
    """A one-element stand-in with the same dtype, kind and ndim (for dtype rules)."""
    if isinstance(a, AScalar):
        if a.weak:
            return {"f": 1.0, "i": 1, "b": True}[a.dtype.kind]
        return a.dtype.type(1)
    return np.ones((1,) * a.ndim, a.dtype)


def result_abstract(value: Any, shape: tuple[int, ...]) -> Abstract:
    """The abstract of a result computed on proxies, with its true ``shape``."""
    if isinstance(value, np.ndarray):
        return AArray(value.dtype, tuple(shape))
    if isinstance(value, np.generic):
        return AScalar(value.dtype, False)
    if type(value) in _PY:
        return AScalar(_PY[type(value)], True)
    raise TypeError(f"not a numeric result: {type(value).__name__}")


def zeros_proxy(a: Abstract) -> Any:
    """A zero-memory stand-in of the true shape (broadcast zeros) for shape rules."""
    if isinstance(a, AScalar):
        return proxy(a)
    return np.broadcast_to(np.zeros((), a.dtype), a.shape)
