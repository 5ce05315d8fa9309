"""What served a compiled function's calls, and the fallbacks made visible.

A call the compiled path cannot take still gets an answer -- from the reference
evaluator (a signature whose control flow cannot be specialized, a guarded program whose
decisions differ), from NumPy (an OpenCL kernel that cannot be generated), op by op (a
fusion cycle).  Each such fallback is counted in the function's :class:`Stats`
(``f.stats()``, ``myc.stats(f)``), warned about once per function and reason with a
:class:`MycFallbackWarning` naming the function, the reason and the user's line, and
with ``MYC_STRICT=1`` raised as a :class:`~myc.errors.MycFallbackError` instead.

``MYC_STRICT=internal`` (the test suite's setting) only makes internal compiler
failures raise: fallbacks are then counted and warned about, as without it.
"""

from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

from myc.errors import Location, MycFallbackError


class MycFallbackWarning(UserWarning):
    """A call (or a part of it) ran on a slower path than compiled code: the reference
    evaluator, NumPy, or op by op.  Raised as ``MycFallbackError`` under MYC_STRICT=1."""


def strict() -> bool:
    """Does ``MYC_STRICT`` turn fallbacks into errors (any value but ``internal``)?"""
    v = os.environ.get("MYC_STRICT", "")
    return bool(v) and v != "internal"


@dataclass
class Stats:
    """One compiled function's record: how its calls were served, what it compiled and
    why, and its fallbacks (reason -> count)."""

    function: str
    backend: str = "cpu"
    compiled_calls: int = 0  # served by a compiled program
    native_calls: int = 0  # of those, run as one native function
    stepped_calls: int = 0  # of those, run as steps from Python (kernels, BLAS, loops)
    evaluator_calls: int = 0  # served by the reference evaluator
    compiles: int = 0  # programs made (one per signature, plus variants and tier-ups)
    tier_ups: int = 0  # of those, stepped signatures compiled natively (runtime.tiering)
    recompiles: list[str] = field(default_factory=list)  # why each variant was made
    fallbacks: dict[str, int] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # reason -> its first message
    # what a backend chose while compiling that is no fallback (e.g. ``gemm``: which
    # GEMM the OpenCL device runs): topic -> the choice in words
    notes: dict[str, str] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set, repr=False, compare=False)

    def __repr__(self) -> str:
        lines = [f"myc stats of {self.function} (backend={self.backend}):",
                 f"  compiled calls  {self.compiled_calls} "
                 f"(native {self.native_calls}, stepped {self.stepped_calls})",
                 f"  evaluator calls {self.evaluator_calls}",
                 f"  compiles        {self.compiles}" + (
                     f" (tier-ups to native code: {self.tier_ups})" if self.tier_ups
                     else "")]
        lines += [f"  recompile: {why}" for why in self.recompiles]
        lines += [f"  fallback {k}: {n} ({self.why.get(k, '')})"
                  for k, n in sorted(self.fallbacks.items())]
        lines += [f"  {text}" for _, text in sorted(self.notes.items())]
        return "\n".join(lines)

    def ran(self, native: bool) -> None:
        self.compiled_calls += 1
        if native:
            self.native_calls += 1
        else:
            self.stepped_calls += 1

    def fallback(self, reason: str, message: str, loc: Location | None = None) -> None:
        """Count a fallback; warn once per reason (or raise, under MYC_STRICT=1)."""
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        self.why.setdefault(reason, message + (f" at {loc}" if loc is not None else ""))
        report(reason, f"{self.function}: {message}", loc, self.warned)


_seen: set[tuple[str, str]] = set()  # (reason, message) warned outside any function


def report(reason: str, message: str, loc: Location | None = None,
           warned: set[str] | None = None) -> None:
    """The fallback's warning (once per ``warned`` set and reason) or, under
    MYC_STRICT=1, its error.  The warning is attributed to the user's line."""
    if strict():
        raise MycFallbackError(f"{message} [{reason}]", loc,
                               hint="MYC_STRICT=1 makes every fallback an error; without "
                               "it this call runs, with a MycFallbackWarning")
    if warned is None:
        if (reason, message) in _seen:
            return
        _seen.add((reason, message))
    elif reason in warned:
        return
    else:
        warned.add(reason)
    text = f"myc: {message} [{reason}]"
    if loc is not None:  # (Python's warning shows the line itself)
        text += f" at {loc}"
        warnings.warn_explicit(text, MycFallbackWarning, loc.filename, loc.line,
                               module="myc")
    else:
        warnings.warn(text, MycFallbackWarning, stacklevel=4)


# -- the record a compilation in progress reports to ------------------------------------
_current = threading.local()


class compiling:  # noqa: N801 - used as a context manager
    """Fallbacks found while lowering (an OpenCL kernel, a fusion cycle) go to
    ``record``: ``with compiling(stats): lower(...)``."""

    def __init__(self, record: Stats | None):
        self.record = record

    def __enter__(self) -> None:
        self.outer = getattr(_current, "record", None)
        _current.record = self.record

    def __exit__(self, *exc: Any) -> None:
        _current.record = self.outer


def lowering_fallback(reason: str, message: str, loc: Location | None = None) -> None:
    """A fallback met while lowering: counted on the function being compiled (if any)."""
    record = getattr(_current, "record", None)
    if record is not None:
        record.fallback(reason, message, loc)
    else:
        report(reason, message, loc)


def lowering_note(topic: str, text: str) -> None:
    """A backend's choice met while lowering (not a fallback): noted on the function
    being compiled (if any), shown by ``f.stats()``."""
    record = getattr(_current, "record", None)
    if record is not None:
        record.notes[topic] = text


# -- how the last program run on this thread ran ----------------------------------------
_run = threading.local()


def note_run(native: bool) -> None:
    """Called by ``HostProgram.run``: whether that run was one native function."""
    _run.native = native


def last_run_native() -> bool:
    return bool(getattr(_run, "native", False))


class Counted:
    """A backend's runner that is the evaluator itself (``backend="interp"``): every call
    is an evaluator call."""

    def __init__(self, run: Any, name: str, backend: str):
        self._run = run
        self.stats = Stats(name, backend)

    def __call__(self, *args: Any) -> Any:
        self.stats.evaluator_calls += 1
        return self._run(*args)


def stats(fn: Any) -> Stats:
    """The record of a function made by ``myc.jit``, ``myc.grad`` or ``myc.value_and_grad``
    (an empty one before its first call)."""
    get = getattr(fn, "stats", None)
    if not callable(get):
        from myc.errors import MycTypeError

        raise MycTypeError(f"myc.stats takes a function made by myc.jit, myc.grad or "
                           f"myc.value_and_grad, not {type(fn).__name__}")
    return get()
