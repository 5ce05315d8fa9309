"""The compiled path: specialize per signature, optimize, lower, run; else interpret.

Each new argument signature (shapes and dtypes of arrays and floats, values of ints
and bools) is traced once into a flat typed program (``myc.infer.trace``), optimized
(``myc.opt``) and lowered into a host program of kernels and library calls
(``myc.lower``).  A signature whose control flow depends on array or float data cannot
be specialized (``GraphBreak``); it runs on the reference evaluator, and that choice
is cached too.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

from myc.backends.interp import Interpreter
from myc.infer.trace import GraphBreak, signature_key, trace
from myc.ir.nodes import Graph, Node

_FALLBACK = object()
_MAX_MISSES = 3


class SpecializedFunction:
    """A graph with a cache of specialized programs keyed by argument signature."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.cache: dict[Any, Any] = {}
        self.breaks: dict[Any, GraphBreak] = {}
        self.misses: dict[Any, int] = {}
        self._fingerprint: str | None = None
        self._interp: Interpreter | None = None
        self._lock = threading.Lock()

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            from myc.ir.fingerprint import fingerprint

            self._fingerprint = fingerprint(self.graph)
        return self._fingerprint

    @property
    def interp(self) -> Interpreter:
        if self._interp is None:
            self._interp = Interpreter(self.graph)
        return self._interp

    def program(self, args: list[Any]):
        """The compiled program for ``args``'s signature, or ``None`` to interpret."""
        key = tuple(signature_key(a) for a in args)
        entry = self.cache.get(key)
        if entry is None:
            with self._lock:
                entry = self.cache.get(key)
                if entry is None:
                    entry = self._compile(key, args)
                    self.cache[key] = entry
        return None if entry is _FALLBACK else entry

    def _compile(self, key: Any, args: list[Any]):
        from myc.lower.program import lower

        if os.environ.get("MYC_NO_SPECIALIZE"):
            return _FALLBACK
        from myc.errors import MycError
        from myc.opt.passes import optimize
        from myc.runtime import diskcache

        disk_key = None
        if diskcache.cache_dir() is not None:
            try:
                disk_key = f"{self.fingerprint()}|{key!r}"
            except Exception:  # noqa: BLE001 - no fingerprint, no disk cache
                disk_key = None
            if disk_key is not None:
                cached = diskcache.load("program", disk_key)
                if cached is not None and hasattr(cached, "run"):
                    return cached
        try:
            typed, template, brk = specialize(self.graph, args)
            if brk is not None:
                self.breaks[key] = brk
            optimize(typed)
            prog = lower(typed, template, self.graph.name)
            if disk_key is not None:
                diskcache.store("program", disk_key, prog)
            return prog
        except GraphBreak as brk:
            self.breaks[key] = brk
            return _FALLBACK
        except MycError:
            raise
        except Exception as exc:  # an internal failure: never the user's problem
            if os.environ.get("MYC_STRICT"):
                raise
            warnings.warn(f"myc: specializing {self.graph.name} failed internally "
                          f"({type(exc).__name__}: {exc}); running it on the reference "
                          "evaluator", RuntimeWarning, stacklevel=3)
            self.breaks[key] = GraphBreak(f"internal: {exc}")
            return _FALLBACK

    def __call__(self, *args: Any) -> Any:
        from myc.errors import MycError
        from myc.lower.program import GuardFailed

        prog = self.program(list(args))
        if prog is None:
            return self.interp.run(*args)
        if not prog.guards:
            return prog.run(list(args))
        try:
            return prog.run(list(args))
        except (GuardFailed, MycError):
            # another path through the data-dependent control flow (or an error the
            # evaluator will report properly): evaluate; give up guarding after repeats
            key = tuple(signature_key(a) for a in args)
            self.misses[key] = self.misses.get(key, 0) + 1
            if self.misses[key] >= _MAX_MISSES:
                self.cache[key] = _FALLBACK
            return self.interp.run(*args)


def specialize(graph: Graph, args: list[Any]) -> tuple[Graph, Any, GraphBreak | None]:
    """The typed program of ``graph`` for ``args``, its output template, and -- when
    plain specialization broke on data-dependent control flow -- why.

    Routes, in order: plain tracing (data-dependent loops become ``loop`` nodes); for a
    gradient, the primal traced then swept backwards (``myc.infer.adjoint``); else the
    program specialized on this call's decisions, guarded (``typed.flags["guards"]``).
    Raises ``GraphBreak`` when none applies (the signature is interpreted).
    """
    try:
        typed, template = trace(graph, args)
        return typed, template, None
    except GraphBreak as brk:
        first = brk
    calls = [False, True] if _recursion(first) else [False]
    if calls[-1]:
        try:  # data-dependent recursion: a typed function per signature
            typed, template = trace(graph, args, typed_calls=True)
            return typed, template, None
        except GraphBreak:
            pass
    spec = graph.flags.get("grad_of")
    if spec is not None and not os.environ.get("MYC_NO_TYPED_AD"):
        from myc.infer.adjoint import typed_grad

        primal, nums, single, has_value = spec
        for typed_calls in calls:
            try:
                typed, template = typed_grad(primal, args, nums, single, has_value,
                                             typed_calls)
                typed.flags["route"] = "adjoint"
                return typed, template, first
            except GraphBreak as brk:
                if not typed_calls and _recursion(brk):
                    calls = [False, True]
    typed, template = trace(graph, args, guarded=True)
    return typed, template, first


def _recursion(brk: GraphBreak) -> bool:
    """Did specialization break on recursion whose depth depends on data (then typed
    functions, ``myc.infer.calls``, may specialize it)?"""
    if os.environ.get("MYC_NO_TYPED_CALLS"):
        return False
    return brk.unbounded


def flatten_args(args: list[Any], params: list[Node]) -> list[Any]:
    """Argument leaves in the order of the typed graph's parameters."""
    out: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, tuple):
            for x in v:
                walk(x)
        else:
            out.append(v)

    for a in args:
        walk(a)
    return out
