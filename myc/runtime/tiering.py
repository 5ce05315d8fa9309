"""Tiered compilation: a signature over the native-first size limit steps, then goes native.

Native-first lowering (every small array operation a kernel of its own, the whole
program one native function) costs an LLVM compilation per distinct kernel, so a
program over ``MYC_NATIVE_FIRST_MAX`` operations keeps its small operations as NumPy
steps and runs from Python step by step: a short first call, a slow steady one
(docs/loops.md).  Such a program is marked when it is compiled (``mark``) if its size
is all that keeps it from being native.  Once its stepped calls have taken, in all,
``TIME_FACTOR`` times its compile time (or, with ``MYC_TIER_UP_CALLS=N``, once its
signature has been called N times; 0: never), the next call compiles
the same signature native-first with the limit lifted (``tier_up``) and the
signature's entry becomes that program -- in memory and in the disk cache, so later
calls run natively, and so does a later process that finds it there.

The compile is synchronous, at the call that tiers up: half of it is Python (tracing,
optimizing, lowering) holding the GIL, so a thread would slow the stepped calls beside
it on a small machine and could not be interrupted.  Ctrl-C during it raises
``KeyboardInterrupt`` from that call and leaves the stepped program in place (the next
call tries again), as for a first compile.  Guarded programs (``myc.runtime.variants``)
are not tiered up; programs with run-time ints are (with the same ints at run time).
Should the native-first program not run as one native function after all, the stepped
one stays, marked so that no process tries again.
"""

from __future__ import annotations

import os
import time
from typing import Any

from myc.errors import MycError

# By default a marked signature tiers up once its stepped calls have run, in all, for
# this many times the stepped program's compile time: the native-first compile costs
# 2-4 times that (GP 2.1 vs 0.58 s, HMM-30 1.6 vs 0.62 s, RNN-30 0.96 vs 0.55 s), so a
# process never spends more than about twice what the better choice in hindsight would
# have (renting until the rent paid equals the price: the ski-rental rule), and a
# script calling a function a handful of times never pays a native compile.
TIME_FACTOR = 3.0
_UNKNOWN_COMPILE_S = 1.0  # a program from an older disk cache did not record it


def calls_before_tier_up() -> int | None:
    """How many calls a marked signature runs stepped before the next one tiers it up:
    ``MYC_TIER_UP_CALLS`` (0: never); None (unset, or ``auto``): by time (``TIME_FACTOR``)."""
    v = os.environ.get("MYC_TIER_UP_CALLS")
    if v is None or v.strip().lower() in ("", "auto"):
        return None
    try:
        return max(int(v), 0)
    except ValueError:
        raise MycError("MYC_TIER_UP_CALLS must be a number of calls (0: never tier up) or "
                       f"'auto', not {v!r}") from None


def describe() -> str:
    """When a marked program tiers up, for ``myc.ir`` (empty: never)."""
    n = calls_before_tier_up()
    if n is None:
        return (f"; natively once its calls have taken {TIME_FACTOR:g}x its compile time "
                "(MYC_TIER_UP_CALLS)")
    return f"; natively from its call {n + 1} on (MYC_TIER_UP_CALLS)" if n else ""


def mark(prog: Any, backend: str, seconds: float = _UNKNOWN_COMPILE_S) -> None:
    """Set ``prog.tier_up`` when ``prog`` steps only because it is over the size limit
    (kept with it on disk: a process that loads it tiers it up too), with its compile
    time (``seconds``: what its stepped calls must add up to, ``TIME_FACTOR``).  A
    program lowered native-first costs nothing here."""
    graph = getattr(prog, "graph", None)
    if not getattr(prog, "not_native_first", False) or graph is None or prog.guards or \
            os.environ.get("MYC_NO_NATIVE_LOOPS") or any(
            st.kind == "loop" for st in prog.steps):
        return  # (a data-dependent loop keeps a whole program stepping at any size)
    from myc.lower.program import NO_SIZE_LIMIT, native_blockers
    from myc.lower.target import target

    t = target(backend)
    if not t.native_host:
        return
    if native_blockers(graph, t, NO_SIZE_LIMIT):  # (else only its size kept it from
        return  # being lowered native-first)
    prog.tier_up = True
    prog.compile_seconds = seconds


def run(sf: Any, prog: Any, args: tuple) -> Any:
    """Run this call of a marked ``prog``: stepped until the signature has been called
    ``calls_before_tier_up()`` times (or, by default, until its stepped calls have taken
    ``TIME_FACTOR`` times its compile time), then its native tier."""
    from myc.runtime import variants

    n = calls_before_tier_up()
    if n == 0:
        return variants.run(sf, prog, args)
    key = sf.ints.key(list(args))
    if dict.get(sf.cache, key) is not prog:
        return variants.run(sf, prog, args)  # not this signature's entry (by value)
    calls, spent = sf.tier_calls.get(key, (0, 0.0))
    due = calls >= n if n is not None else \
        spent >= TIME_FACTOR * getattr(prog, "compile_seconds", _UNKNOWN_COMPILE_S)
    if due:
        return variants.run(sf, tier_up(sf, key, prog, args), args)
    began = time.perf_counter()
    try:
        return variants.run(sf, prog, args)
    finally:
        sf.tier_calls[key] = (calls + 1, spent + time.perf_counter() - began)


def tier_up(sf: Any, key: Any, prog: Any, args: tuple) -> Any:
    """Compile ``key`` 's signature native-first and make it the signature's program;
    the program to run this call (``prog`` again if that failed)."""
    with sf._lock:
        now = dict.get(sf.cache, key)
        if now is not prog:  # another thread tiered it up meanwhile
            return now if getattr(now, "run", None) is not None else prog
        new = _native_tier(sf, prog, list(args))
        sf.tier_calls.pop(key, None)
        if new is None:
            prog.tier_up = False  # (on disk too: no process tries again)
            sf.store(key, prog)
            return prog
        sf.cache[key] = new
        sf.stats.compiles += 1
        sf.stats.tier_ups += 1
        sf.store(key, new)
        return new


def _native_tier(sf: Any, prog: Any, args: list[Any]) -> Any:
    """The signature's program compiled native-first, or None when it is not one
    native function after all (or compiling it failed: a ``tier-up`` fallback)."""
    from myc import pipeline
    from myc.backends.registry import backend as backend_named
    from myc.infer.runtime_ints import NotRuntime, positions
    from myc.infer.signature import GraphBreak
    from myc.lower.program import NO_SIZE_LIMIT
    from myc.support.stats import compiling

    traced = backend_named(sf.backend).trace_args(args)
    try:
        with compiling(sf.stats):  # native-first whatever its size
            if prog.int_leaves:
                at = positions(args, sf.ints.runtime)
                new = pipeline.compile_runtime(sf.graph, traced, at, sf.backend,
                                               native_max=NO_SIZE_LIMIT)
            else:
                new = pipeline.compile(sf.graph, traced, sf.backend, native_max=NO_SIZE_LIMIT)
            native = new.native  # (built now: it is what this compile is for)
            new.lazy_native = False
    except (NotRuntime, GraphBreak):
        return None
    except Exception as exc:  # noqa: BLE001 - the stepped program still serves
        if os.environ.get("MYC_STRICT"):
            raise
        sf.stats.fallback("tier-up", "compiling its native program failed "
                          f"({type(exc).__name__}: {exc}); this signature keeps its "
                          "stepped program", sf.graph.loc)
        return None
    if native is None or new.guards:
        return None
    return new
