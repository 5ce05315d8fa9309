"""A warning when a compiled function changes its own arguments in place.

Why: CPython's ``def step(x, v): x += dt * v`` or a method setting ``self.weights``
changes the caller's array or object; a compiled function never writes into its caller's
arrays or objects (README: inputs are never mutated), so without a word the caller would
simply keep its old values -- a silent difference from the program's meaning.  The
frontend records each parameter a function changes in place (``param_writes``: line,
statement, and whether it is only ``x += v``, which rebinds a number); the first call
of a ``myc.jit`` function names each such argument that holds an array, a list, a dict or
an object (a number bumped by ``x += v`` is rebound in CPython too: no warning).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


class MycArgumentWriteWarning(UserWarning):
    """A compiled function changed one of its arguments in place: the caller's value is
    not changed (return the new value instead)."""


def _shows_change(value: Any, bare: bool) -> bool:
    """Would CPython's caller see an in-place change of ``value``?"""
    from myc.frontend.objects import is_user_object

    if isinstance(value, np.ndarray):
        return True
    return not bare and (isinstance(value, (list, dict)) or is_user_object(value))


def warn_argument_writes(graph: Any, fn: Any, args: tuple, kwargs: dict) -> None:
    """Warn once per argument ``graph`` (``fn``'s parsed graph) changes in place."""
    writes = graph.flags.get("param_writes") or {}
    sig = graph.flags.get("signature")
    if not writes or sig is None:
        return
    given = list(args)
    owner = getattr(fn, "__self__", None)
    if owner is not None and len(sig.names) == len(args) + len(kwargs) + 1:
        given = [owner, *given]  # a bound method: ``self`` first
    name = getattr(fn, "__name__", "function")
    elements = graph.flags.get("param_element_writes") or {}
    for i, (line, text, bare) in sorted(writes.items()):
        if not 0 <= i < len(sig.names):
            continue
        pname = sig.names[i]
        value = given[i] if i < len(given) else kwargs.get(pname)
        if value is None or not _shows_change(value, bare):
            continue
        if i in elements and np.ndim(value) <= elements[i]:
            continue  # ``s = x[0, -2]; s *= 2``: an element, a number CPython rebinds
        warnings.warn(
            f"myc: {name}() changes its argument '{pname}' in place ({text}, line {line}); "
            "a compiled function does not write into its caller's arrays or objects, so "
            "the caller keeps its values: return the new value and assign it",
            MycArgumentWriteWarning, stacklevel=3)
