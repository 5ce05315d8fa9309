"""Guarded programs: a call that decides differently is specialized again.

A signature whose control flow could only be specialized on the first call's decisions
(``trace(..., guarded=True)``) gets a program that checks those decisions (its guards)
on every call.  A call that decides differently used to run on the reference evaluator
(seconds where compiled code takes milliseconds) and, after three such calls, stayed
there.  Now the signature keeps up to ``MAX_VARIANTS`` programs, one per set of
decisions met, tried most recently successful first; a call none of them takes is
specialized again on its own decisions (unless the program was specialized on a float's
value: such values rarely repeat).  Past the bound a miss runs on the evaluator
(a ``guard-miss`` fallback), and after ``MAX_MISSES`` such misses the signature stays
there (``guard-misses``).  Variants live in memory only (the disk cache keeps the first).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from myc.infer.signature import GraphBreak

FALLBACK = object()  # a signature's cache entry: its calls run on the evaluator
MAX_VARIANTS = 4  # programs per signature
MAX_MISSES = 3  # misses past the bound before the signature stays on the evaluator


def run(sf, prog, args: tuple) -> Any:
    """Run a compiled program, counting how it ran."""
    from myc import timings
    from myc.support.stats import last_run_native, note_run

    note_run(False)
    with timings.stage("run"):
        out = prog.run(list(args))
    sf.stats.ran(last_run_native())
    return out


def evaluate(sf, args: tuple, why: tuple[str, str, Any] | None = None) -> Any:
    """A call served by the reference evaluator; ``why``: the fallback's (reason,
    message, location), reported when the evaluator gives a value (a call it refuses
    was the user's error, not a fallback)."""
    from myc.support.stats import strict

    key = sf.ints.key(list(args))  # the key the cache uses (run-time ints by type)
    if why is None:
        why = _why(sf, key)
    if why is not None and strict():
        sf.stats.fallback(*why)  # raises MycFallbackError
    out = sf._interpret(args)  # host copies of device arguments, counted (cuda)
    sf.stats.evaluator_calls += 1
    if why is not None:
        sf.stats.fallback(*why)
    return out


def _why(sf, key: Any) -> tuple[str, str, Any] | None:
    """Why a signature runs on the evaluator: it could not be specialized, or its guards
    missed too often (None: the user asked, with MYC_NO_SPECIALIZE)."""
    loc = _def_loc(sf)
    if sf.misses.get(key, 0) >= MAX_MISSES and \
            len(sf.variants.get(key, ())) >= MAX_VARIANTS:
        return ("guard-misses", f"its data-dependent decisions differed from all "
                f"{MAX_VARIANTS} compiled variants {MAX_MISSES} times; this signature "
                "now runs on the reference evaluator", loc)
    brk = sf.breaks.get(key)
    if brk is None or os.environ.get("MYC_NO_SPECIALIZE"):
        return None
    if brk.reason.startswith("internal:"):
        return None  # counted and warned when it happened
    return ("graph-break", f"cannot be specialized ({brk.reason}); this signature runs "
            "on the reference evaluator", brk.loc or loc)


def _def_loc(sf):
    g = sf._graph
    if g is not None:
        return g.loc
    b = sf.source.binding if sf.source is not None else None
    return b.loc if b is not None else None


def guarded(sf, prog, args: tuple) -> Any:
    """A call of a guarded program: the first variant whose decisions hold, else a new
    variant for this call's decisions, else the evaluator."""
    from myc.errors import MycError
    from myc.lower.program import GuardFailed

    key = sf.ints.key(list(args))  # the key the cache uses (run-time ints by type)
    with sf._lock:
        vs = sf.variants.setdefault(key, [prog])
    for v in list(vs):
        try:
            out = run(sf, v, args)
        except (GuardFailed, MycError):
            continue  # another path (or an error the evaluator will report properly)
        if vs[0] is not v:
            with sf._lock:
                if v in vs:
                    vs.remove(v)
                    vs.insert(0, v)
        return out
    if prog.int_leaves:
        # a run-time int out of the range its program holds for (a dynamic slice past
        # the end, or from a negative start): a variant with this call's starts pinned
        # (the last, shorter batch is then one more program, not one per step), else
        # the program of this call's int values
        new = _pinned(sf, args) if len(vs) < MAX_VARIANTS else None
        if new is not None:
            with sf._lock:
                vs.insert(0, new)
            sf.stats.recompiles.append(
                "a dynamic slice out of range (past the end, or from a negative start): "
                f"a variant for that start ({len(vs)} of at most {MAX_VARIANTS})")
            try:
                return run(sf, new, args)
            except GuardFailed:
                pass
        return sf.by_value(args)
    if len(vs) < MAX_VARIANTS and _repeatable(prog.guards):
        new = _variant(sf, args, vs)
        if new is not None:
            with sf._lock:
                vs.insert(0, new)
            sf.stats.recompiles.append(
                f"guard miss: decisions differ from the {len(vs) - 1} compiled "
                f"variant(s) of this signature; specialized again ({len(vs)} of at most "
                f"{MAX_VARIANTS})")
            try:
                return run(sf, new, args)
            except (GuardFailed, MycError):
                pass
    sf.misses[key] = sf.misses.get(key, 0) + 1
    why = ("guard-miss", f"its data-dependent decisions differed from all {len(vs)} "
           "compiled variants of this signature; this call runs on the reference "
           "evaluator", _def_loc(sf))
    if sf.misses[key] >= MAX_MISSES and len(vs) >= MAX_VARIANTS:
        sf.cache[key] = FALLBACK
    return evaluate(sf, args, why)


def _variant(sf, args: tuple, known: list[Any]):
    """A program specialized on this call's decisions, or None (it fails to specialize,
    or its decisions are some known variant's: the call is the evaluator's to decide)."""
    from myc import pipeline
    from myc.errors import MycError
    from myc.support.stats import compiling

    try:
        typed, template, _brk = pipeline.specialize(sf.graph, list(args))
        if not typed.flags.get("guards"):
            return None
        pipeline.optimized(typed, sf.backend)
        with compiling(sf.stats):
            prog = pipeline.lowered(typed, template, sf.graph.name, sf.backend)
    except (GraphBreak, MycError):
        return None
    except Exception:  # noqa: BLE001 - an internal failure: the evaluator answers
        if os.environ.get("MYC_STRICT"):
            raise
        return None
    if any(_same(prog.guards, v.guards) for v in known):
        return None
    sf.stats.compiles += 1
    return prog


def _pinned(sf, args: tuple):
    """The run-time-int program with this call's out-of-range slice starts pinned, or
    None (it cannot be made, or no start is out of range: another guard refused)."""
    from myc import pipeline
    from myc.infer.runtime_ints import NotRuntime, positions
    from myc.support.stats import compiling

    at = positions(list(args), sf.ints.runtime)
    try:
        with compiling(sf.stats):
            prog = pipeline.compile_runtime(sf.graph, list(args), at, sf.backend,
                                            pinned=True)
    except NotRuntime:
        return None
    sf.stats.compiles += 1
    return prog


def _repeatable(guards: list) -> bool:
    """Can another call meet these decisions again?  Not a program specialized on a
    float's value (``np.linspace(a, b, n)`` of float ``a``): each new value would be one
    more compile, so such misses go to the evaluator at once."""
    return all(kind == "truth" or np.asarray(expected).dtype.kind in "biuSU"
               for kind, expected in guards)


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        ka == kb and bool(np.array_equal(ea, eb)) for (ka, ea), (kb, eb) in zip(a, b, strict=True))
