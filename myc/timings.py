"""Where a first call's time goes: ``MYC_TIMINGS=1`` times every stage of a call that
compiles -- parse, AD, inference, each optimizer pass, fusion and lowering, LLVM
optimization and code generation, loading, the disk cache, the run -- and prints one
report per such call on stderr, with the program's size after each stage.

Stages nest (LLVM compiling a kernel happens inside lowering); each stage is charged
its *own* time, the time not spent in a stage nested in it, so the stages add up to the
call.  Off (the default), ``stage`` costs one dictionary lookup.  ``MYC_TIMINGS=cpu``
charges the process's CPU time instead of wall time (a shared machine's wall time
mostly measures the other processes).  ``last()`` returns the
latest report as data (the compile-time benchmark reads it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_stack: list[list[Any]] = []  # [name, start, time spent in nested stages]
_times: dict[str, float] = {}
_counts: dict[str, int] = {}
_last: dict[str, Any] | None = None


def enabled() -> bool:
    return bool(os.environ.get("MYC_TIMINGS"))


_PROCESS_CLOCK = "cpu"  # MYC_TIMINGS=cpu: stages charged in CPU time


def _clock() -> float:
    if os.environ.get("MYC_TIMINGS") == _PROCESS_CLOCK:
        return time.process_time()
    return time.perf_counter()


class _Off:
    """The context of a stage or call while timings are off: nothing to do (cheaper
    than a generator-based context manager on every call)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


_OFF = _Off()


def stage(name: str):
    """Charge the time inside (less nested stages') to ``name``."""
    if not _stack and not enabled():
        return _OFF
    return _stage(name)


@contextmanager
def _stage(name: str) -> Iterator[None]:
    frame = [name, _clock(), 0.0]
    _stack.append(frame)
    try:
        yield
    finally:
        _stack.pop()
        spent = _clock() - frame[1]
        _times[name] = _times.get(name, 0.0) + spent - frame[2]
        if _stack:
            _stack[-1][2] += spent


def count(name: str, value: int | Callable[[], int]) -> None:
    """Record a size: an int, or a function computing it (called only while timing, so
    that counting a graph's nodes costs nothing otherwise)."""
    if not _stack:
        return
    _counts[name] = value if isinstance(value, int) else value()


def call(label: str):
    """The outermost stage of a call: reports when something in it compiled."""
    if _stack or not enabled():
        return _OFF
    return _call(label)


@contextmanager
def _call(label: str) -> Iterator[None]:
    global _last
    _times.clear()
    _counts.clear()
    t0 = _clock()
    try:
        with stage("call (other)"):
            yield
    finally:
        total = _clock() - t0
        if set(_times) - {"call (other)", "run", "disk cache"} or "disk cache" in _times:
            _last = {"label": label, "total_s": total, "stages": dict(_times),
                     "counts": dict(_counts)}
            print(format_report(_last), file=sys.stderr)


def format_report(rep: dict[str, Any]) -> str:
    lines = [f"myc timings for {rep['label']}: {rep['total_s'] * 1e3:.1f} ms"]
    for k, v in sorted(rep["stages"].items(), key=lambda kv: -kv[1]):
        lines.append(f"  {k:28s} {v * 1e3:9.1f} ms")
    if rep["counts"]:
        lines.append("  sizes: " + ", ".join(f"{k} {v}" for k, v in rep["counts"].items()))
    return "\n".join(lines)


def last() -> dict[str, Any] | None:
    """The latest report (``None`` before any): label, total_s, stages, counts."""
    return _last


def timed(name: str):
    """Decorator: every call of the function is a ``stage(name)``."""
    import functools

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not _stack:
                return fn(*args, **kwargs)
            with stage(name):
                return fn(*args, **kwargs)
        return wrapper
    return deco


def add(name: str, value: int) -> None:
    """Add to a size (kernels compiled by the program and its loop bodies)."""
    if _stack:
        _counts[name] = _counts.get(name, 0) + value
