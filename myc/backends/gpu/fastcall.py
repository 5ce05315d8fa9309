"""Repeat calls of a GPU program with a signature seen before, on CuPy arguments.

A call of ``myc.jit(f, backend="cuda")`` goes through the argument binding and checks,
the specializer's key and cache, the host program's run and its results' conversion;
at the quick sizes that Python costs more than the GPU's work.  When a call's
arguments are all CuPy arrays (what a training loop passes) and their shapes and dtypes
are those of an earlier call that ran a plain compiled program (no guards, no evaluator),
this module runs that program directly: one dictionary lookup on ``(type, shape,
dtype)`` per argument, the device check, then the host program's flat steps
(``HostProgram.flat``) and the scalar results read back -- the same steps, values and
errors as the full path, without the work only a first call needs.

The entry stays valid as long as the specializer still holds that program under its
key (evicted, the call takes the full path and compiles again, as before, and the entry
is replaced); a global the function read being rebound makes ``myc.jit`` a new runner,
with no entries.  Timings (``MYC_TIMINGS``) take the full path, to be reported.
"""

from __future__ import annotations

import os
from typing import Any

from myc.backends.gpu import bounds, graphs
from myc.lower.program import _rebuild
from myc.prims.abstract import DEVICE_ARRAY_TYPES, AScalar
from myc.support.stats import note_run

MISSED = object()  # the fast path does not serve this call: take the full one
_ATTR = "_gpu_fast"  # on the runner (a ``SpecializedFunction``): key -> FastCall


def _key(bound: list[Any]) -> tuple | None:
    key = []
    for v in bound:
        t = type(v)
        if t not in DEVICE_ARRAY_TYPES:
            return None
        key.append((t, v.shape, v.dtype))
    return tuple(key)


def lookup(run: Any, bound: list[Any]) -> FastCall | None:
    """The fast path for this call, if there is one."""
    table = getattr(run, _ATTR, None)
    if not table:
        return None
    key = _key(bound)
    return None if key is None else table.get(key)


def note(run: Any, bound: list[Any], checked: Any, backend: str) -> None:
    """After a full call: make the fast path for its signature when it can serve one."""
    if os.environ.get("MYC_TIMINGS") or os.environ.get("MYC_NO_FAST_CALLS"):
        return
    key = _key(bound)
    if key is None or len(checked) != len(bound) or \
            any(c is not b for c, b in zip(checked, bound, strict=True)):
        return
    table = getattr(run, _ATTR, None)
    cache, ints, stats = (getattr(run, a, None) for a in ("cache", "ints", "stats"))
    if cache is None or ints is None or stats is None:
        return  # not a specializing runner
    lru_key = ints.key(list(checked))
    prog = dict.get(cache, lru_key)  # (not counted as a use)
    old = table.get(key) if table is not None else None
    if old is not None and old.prog is prog:
        return  # (else: evicted and compiled again -- the entry is replaced)
    flat = getattr(prog, "flat", None)
    if flat is None or prog.guards or prog.backend != backend or \
            len(prog.params) != len(bound) or prog.__dict__.get("_native") is not None:
        return
    if table is None:
        table = {}
        setattr(run, _ATTR, table)
    table[key] = FastCall(cache, lru_key, prog, stats)


class FastCall:
    """One signature's compiled program, run without the full call's dispatch."""

    def __init__(self, cache: Any, lru_key: Any, prog: Any, stats: Any):
        self.cache = cache
        self.lru_key = lru_key
        self.prog = prog
        self.flat = prog.flat()
        self.stats = stats
        self.params = prog.params
        self.nslots = prog.nslots
        self.outputs = prog.outputs
        # scalar results, read back as the program's types say (``host.host_scalars``)
        self.scalars = [(i, _convert(prog.specs[x])) for i, (is_slot, x)
                        in enumerate(prog.outputs)
                        if is_slot and isinstance(prog.specs[x], AScalar)]
        self.checks = prog.checks
        # a CUDA graph of the steps, for calls on the same arrays (``gpu.graphs``)
        self.graphs = graphs.GraphPolicy() if graphs.enabled(prog.backend) else None
        self.scalar_slots = dict(self.scalars)  # (read by a graph's replay itself)
        # the gathers' checks read at the end of the steps -- not with loops or typed
        # calls, whose control flow could depend on a wrapped gather's values
        self.defer = not any(getattr(getattr(fn, "step", fn), "runner", False)
                             for fn, *_ in self.flat.ops)

    def call(self, bound: list[Any], dev: Any, backend: str) -> Any:
        """The results (before ``host.own_results``), or ``MISSED``."""
        if dict.get(self.cache, self.lru_key) is not self.prog:
            return MISSED  # evicted (or compiled again): the full path
        self.cache.move_to_end(self.lru_key)  # a use, for the LRU
        check_devices(bound, dev, backend)
        pol = self.graphs
        values = None if pol is None else \
            pol.values(bound, dev.cp, self.flat.run, self.nslots, self.params,
                       self.outputs, self.scalar_slots, self.checks)
        if values is None:
            values = self.run_steps(bound)
        for i, conv in self.scalars:
            v = values[i]
            if type(v) in DEVICE_ARRAY_TYPES:
                values[i] = conv(v.get()[()])
        if self.checks:
            values = values[:len(values) - self.checks]
        note_run(False)
        self.stats.ran(False)
        return _rebuild(self.prog.template, iter(values))


    def run_steps(self, bound: list[Any]) -> list[Any]:
        """The outputs of the steps on ``bound``; the gathers' bounds (``gpu.bounds``)
        read once they are all queued (an index out of range: the steps again, with
        each check read at once, raise where NumPy would)."""
        slots: list[Any] = [None] * self.nslots
        for slot, v in zip(self.params, bound, strict=True):
            slots[slot] = v
        if not self.defer:
            self.flat.run(slots)
            return [slots[x] if is_slot else x for is_slot, x in self.outputs]
        checks: list[Any] = []
        bounds.defer_to(checks)
        try:
            self.flat.run(slots)
        except Exception:
            # an error of a later step, on values a wrapped gather made: NumPy would
            # have raised the gather's IndexError first
            bounds.defer_to(None)
            if not (checks and bounds.out_of_range(checks)):
                raise
        else:
            bounds.defer_to(None)
            if not (checks and bounds.out_of_range(checks)):
                return [slots[x] if is_slot else x for is_slot, x in self.outputs]
        finally:
            bounds.defer_to(None)
        slots = [None] * self.nslots
        for slot, v in zip(self.params, bound, strict=True):
            slots[slot] = v
        self.flat.run(slots)  # (with the checks read at once: raises)
        return [slots[x] if is_slot else x for is_slot, x in self.outputs]


def check_devices(arrays: list[Any], dev: Any, backend: str) -> None:
    """Every device argument is on myc's GPU (CuPy's current one)."""
    for a in arrays:
        where = a.device.id
        if where != dev.id:
            from myc.errors import MycValueError

            raise MycValueError(f"backend='{backend}': an argument is on GPU {where}, but "
                                f"myc runs on GPU {dev.id} (CuPy's current device)")


def _convert(a: AScalar) -> Any:
    if a.weak:
        return {"f": float, "i": int, "b": bool}[a.dtype.kind]
    return a.dtype.type
