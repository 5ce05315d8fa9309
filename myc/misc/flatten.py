"""``flatten(tree) -> (vector, unflatten)``, autograd's convention (dict keys sorted).

Plain Python here; inside a compiled function the frontend uses the subset version in
``myc.frontend.py_library`` (``misc_flatten``), so ``flat, _ = flatten(params)`` in a
loss differentiates like the concatenation it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def leaves(value: Any) -> list[Any]:
    """The leaves of a pytree, dict keys sorted (autograd's order)."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in leaves(value[k])]
    return [value]


def rebuild(value: Any, it: Any) -> Any:
    """``value``'s structure with its leaves taken from ``it`` in ``leaves``'s order."""
    if isinstance(value, (list, tuple)):
        items = [rebuild(v, it) for v in value]
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        rebuilt = {k: rebuild(value[k], it) for k in sorted(value)}
        return {k: rebuilt[k] for k in value}
    return next(it)


def flatten(value: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """A 1-d float array of every leaf of ``value`` raveled, and the function taking
    such a vector back to ``value``'s structure and shapes."""
    parts = leaves(value)
    flat = [np.ravel(np.asarray(v)) for v in parts]
    vector = np.concatenate(flat) if flat else np.array([])
    sizes = [f.size for f in flat]
    shapes = [np.shape(v) for v in parts]

    def unflatten(vec: np.ndarray) -> Any:
        vec = np.asarray(vec)
        parts, start = [], 0
        for size, shape in zip(sizes, shapes, strict=True):
            parts.append(np.reshape(vec[start:start + size], shape))
            start += size
        return rebuild(value, iter(parts))

    return vector, unflatten


def flatten_func(func: Callable, example: Any) -> tuple[Callable, Callable, np.ndarray]:
    """``func`` taking a flat vector instead of a tree like ``example``."""
    _ex, unflatten = flatten(example)

    def _func(_x, *args):
        return flatten(func(unflatten(_x), *args))[0]

    return _func, unflatten, _ex
