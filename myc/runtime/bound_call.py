"""A bound callable passed as an argument to a compiled function: a
``functools.partial`` (``log_p = partial(log_joint, X=X, y=y)`` handed to a sampler's
step), a bound method (``model.loss``), or what ``myc.grad``/``myc.jit`` made of one.

``myc.runtime.bound`` splits a bound callable into a generated Python function and the
data it was bound with (arrays, numbers: its leading hidden parameters).  As an argument,
the split is an object of ``BoundCall`` (``myc.runtime.args``): its function a static
value compiled in (by identity, as any function argument), its data a tuple of leaves --
so a new ``partial(loss, X=batch)`` each step reuses the program compiled for the first,
as it does when handed to ``grad`` -- and its ``__call__``, compiled from the source
below, is what a call through the argument runs.
"""

from __future__ import annotations

from typing import Any


class BoundCall:
    """``fn(*data, *args, **kwargs)``: a bound callable's generated function and data."""

    def __init__(self, fn: Any, data: tuple) -> None:
        self.fn = fn
        self.data = data

    def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN204 - compiled by myc
        return self.fn(*self.data, *args, **kwargs)


def parts(value: Any) -> tuple[Any, tuple] | None:
    """``(function, data)`` of a bound callable (a partial, a bound method, or a myc
    transform of one), or None for anything else."""
    from myc.runtime import bound

    split = getattr(value, "_split", None)
    make = getattr(value, "_make", None)
    if isinstance(split, bound.Split) and make is not None:  # myc.grad(partial(...))
        return make(split), split.data
    if bound.is_bound(value):
        s = bound.split(value)
        return s.fn, s.data
    return None
