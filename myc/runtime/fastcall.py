"""Repeat calls with host arguments: a signature seen before runs its program directly.

A call of ``myc.jit(f)`` binds its arguments, checks each one, computes the
specializer's key (an abstract value per argument), looks it up in the LRU, counts the
call in its statistics and times its stages -- about as much Python as the native run
of a small program costs.  When a call's arguments are NumPy arrays and Python floats
whose types, shapes and dtypes are those of an earlier call that ran a plain compiled
program (no guards, no evaluator, no run-time ints), this module serves it: one
comparison per argument against the entry's signature, the read-only views every
argument gets (``runtime.args.check_arg``), the program's run and the statistics --
the same program, values and errors as the full path.

The entry stays valid while the specializer still holds that program under its key
(evicted, the call takes the full path, compiles again and the entry is replaced); a
rebound global makes the wrapper a new runner, with no entries.  ``MYC_NO_FAST_CALLS=1``
turns the fast path off (the GPU backends have their own: ``backends.gpu.fastcall``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from myc.support.stats import last_run_native, note_run

MISSED = object()  # this call is not served here: take the full path
_ATTR = "_host_fast"  # on the runner (a ``SpecializedFunction``): key -> FastCall
MAX_ENTRIES = 8  # signatures per function served here (the LRU bounds the programs)


def _key(bound: list[Any]) -> tuple | None:
    """Per argument (type, shape, dtype) of a plain array, or ``float``; None when an
    argument is anything else (ints specialize by value, containers by structure)."""
    key = []
    for v in bound:
        t = type(v)
        if t is np.ndarray:
            key.append((v.shape, v.dtype))
        elif t is float:
            key.append(float)
        else:
            return None
    return tuple(key)


def lookup(run: Any, bound: list[Any]) -> FastCall | None:
    """The fast path for this call, if there is one."""
    table = getattr(run, _ATTR, None)
    if not table:
        return None
    key = _key(bound)
    return None if key is None else table.get(key)


def note(run: Any, bound: list[Any]) -> None:
    """After a full call: make the fast path for its signature when it can serve one."""
    if os.environ.get("MYC_NO_FAST_CALLS"):
        return
    key = _key(bound)
    if key is None:
        return
    table = getattr(run, _ATTR, None)
    if table is not None and (key in table or len(table) >= MAX_ENTRIES):
        old = table.get(key)
        if old is None or dict.get(old.cache, old.lru_key) is old.prog:
            return
    cache, ints, stats = (getattr(run, a, None) for a in ("cache", "ints", "stats"))
    if cache is None or ints is None or stats is None:
        return  # not a specializing runner
    lru_key = ints.key(list(bound))
    prog = dict.get(cache, lru_key)  # (not counted as a use)
    if prog is None or getattr(prog, "guards", True):
        return  # not compiled (the evaluator serves it), or guarded (variants)
    if getattr(prog, "tier_up", False):
        from myc.runtime.tiering import calls_before_tier_up

        if calls_before_tier_up() != 0:
            return  # its calls are counted until it tiers up (``myc.runtime.tiering``)
    if table is None:
        table = {}
        setattr(run, _ATTR, table)
    table[key] = FastCall(cache, lru_key, prog, stats)


class FastCall:
    """One signature's compiled program, run without the full call's dispatch."""

    __slots__ = ("cache", "lru_key", "prog", "stats")

    def __init__(self, cache: Any, lru_key: Any, prog: Any, stats: Any):
        self.cache = cache
        self.lru_key = lru_key
        self.prog = prog
        self.stats = stats

    def call(self, bound: list[Any]) -> Any:
        """The program's results (before ``own_outputs``), or ``MISSED``."""
        try:
            if dict.get(self.cache, self.lru_key) is not self.prog:
                return MISSED  # evicted (or compiled again): the full path
            self.cache.move_to_end(self.lru_key)  # a use, for the LRU
        except KeyError:  # evicted by another thread meanwhile
            return MISSED
        args = []
        for v in bound:
            if type(v) is np.ndarray:  # what ``check_arg`` hands the program
                v = v.view()
                v.flags.writeable = False
            args.append(v)
        note_run(False)
        out = self.prog.run(args)
        self.stats.ran(last_run_native())
        return out
