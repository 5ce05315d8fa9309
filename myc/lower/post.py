"""How a kernel output becomes its node's value (a mean's division, a reshape, a
scalar): what a compiled program keeps of its fusion groups to run them, apart from
the grouping machinery (``myc.lower.groups``) -- a program loaded from the disk cache
needs only this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from myc.prims.abstract import AScalar


@dataclass
class Post:
    """How to turn a kernel output into the node's value."""

    divide_by: int | None = None
    reshape: tuple[int, ...] | None = None
    scalar: AScalar | None = None


def finish(value: np.ndarray, post: Post) -> Any:
    if post.divide_by is not None:
        value = np.true_divide(value, post.divide_by, dtype=value.dtype) \
            if value.dtype.kind == "f" else value / post.divide_by
    if post.reshape is not None:
        value = value.reshape(post.reshape)
    if post.scalar is not None:
        a = post.scalar
        v = np.asarray(value).reshape(())[()]
        if a.weak:
            return {"f": float, "i": int, "b": bool}[a.dtype.kind](v)
        return a.dtype.type(v)
    return value


def finish_outputs(unit: Any, outs: list[Any], finish_one: Any) -> list[Any]:
    """A kernel unit's outputs after their post steps (a division, a reshape, a scalar
    read) by the backend's ``finish_one``; the outputs as they are when none needs one
    (decided once per unit, kept on it)."""
    plain = unit.__dict__.get("_plain")
    if plain is None:
        plain = unit._plain = all(p.divide_by is None and p.reshape is None and
                                  p.scalar is None for p in unit.plan.post)
    if plain:
        return outs
    return [finish_one(o, p) for o, p in zip(outs, unit.plan.post, strict=True)]
