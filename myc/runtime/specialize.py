"""The compiled path: specialize per signature, optimize, lower, run; else interpret.

Each new argument signature (shapes and dtypes of arrays and floats, values of ints
and bools -- an int that decides nothing becomes a run-time scalar after its second
value, ``myc.infer.runtime_ints``) is traced once into a flat typed program
(``myc.infer.trace``), optimized (``myc.opt``) and lowered into a host program of
kernels and library calls (``myc.lower``).  A signature whose control flow depends on
array or float data cannot be specialized (``GraphBreak``); it runs on the reference
evaluator, and that choice is cached too. Every call is counted in ``stats``
(``myc.support.stats``); a guarded program whose decisions differ is specialized again
(``myc.runtime.variants``); a program that steps only because it is over the
native-first size limit is compiled natively once called a few times
(``myc.runtime.tiering``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from myc import pipeline
from myc.backends.registry import backend as backend_named
from myc.infer.runtime_ints import IntPolicy, NotRuntime, leaves, positions
from myc.infer.signature import GraphBreak, signature_key
from myc.ir.evaluator import Interpreter
from myc.ir.manager import settle
from myc.ir.nodes import Graph, Node
from myc.prims.containers import leaves_of
from myc.runtime import static_args, tiering, variants
from myc.runtime.recompiles import Recompiles, max_specializations
from myc.runtime.variants import FALLBACK as _FALLBACK
from myc.support import gcpause
from myc.support.lru import LRU
from myc.support.stats import Stats, compiling


class SpecializedFunction:
    """A graph with a cache of specialized programs keyed by argument signature.

    The graph may come later: a wrapper that found its programs on disk by source key
    (``myc.frontend.fingerprint.source_key``) need not parse and differentiate at all, so
    ``source`` (a :class:`Source`) parses on demand -- for a signature missing from the
    disk cache, or to evaluate a call the program cannot take.
    """

    def __init__(self, graph: Graph | None, source: Source | None = None,
                 backend: str = "cpu"):
        # (its program is final: the fingerprint and every signature's trace walk it once)
        self._graph = settle(graph) if graph is not None else None
        self.source = source
        self.backend = backend  # what kernels are compiled for ("cpu", "opencl", "cuda")
        # bounded (``myc.runtime.recompiles``); ints kept at run time where they decide
        # nothing (``myc.infer.runtime_ints``)
        self.cache: LRU = LRU(maxsize=max_specializations())
        self.ints = IntPolicy()
        self.recompiles = Recompiles()
        self.breaks: dict[Any, GraphBreak] = {}
        self.misses: dict[Any, int] = {}
        self.variants: dict[Any, list[Any]] = {}  # guarded programs per signature
        self.tier_calls: dict[Any, int] = {}  # stepped calls before a tier-up (tiering)
        name = graph.name if graph is not None else \
            source.binding.name if source is not None and source.binding else "?"
        self.stats = Stats(name, backend)
        self._fingerprint: str | None = None
        self._interp: Interpreter | None = None
        self._lock = threading.Lock()

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            assert self.source is not None
            self._graph = settle(self.source.parse())
        return self._graph

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            from myc.frontend.fingerprint import fingerprint

            self._fingerprint = fingerprint(self.graph)
        return self._fingerprint

    @property
    def interp(self) -> Interpreter:
        if self._interp is None:
            self._interp = Interpreter(self.graph)
        return self._interp

    def program(self, args: list[Any]):
        """The compiled program for ``args``'s signature, or ``None`` to interpret."""
        entry = self._cached(lambda: self.ints.key(args),
                             lambda key: self._specialize_new(key, args))
        return None if entry is _FALLBACK else entry

    def _cached(self, key_of: Callable[[], Any],
                make: Callable[[Any], tuple[Any, Any]]) -> Any:
        """The cache's entry under ``key_of()``, else ``make(key)`` 's ``(key, entry)``
        stored: looked up again under the lock (another thread may have compiled it, or
        changed the key: which ints are run-time scalars), so each compiles once."""
        entry = self.cache.get(key_of())
        if entry is None:
            with self._lock:
                key = key_of()
                entry = self.cache.get(key)
                if entry is None:
                    with gcpause.compiling():
                        key, entry = make(key)
                    self.cache[key] = entry
        return entry

    def _specialize_new(self, key: Any, args: list[Any]) -> tuple[Any, Any]:
        """Compile a new signature: an int argument that took a new value is tried as a
        run-time scalar first (``myc.infer.runtime_ints``)."""
        names = self.source.binding.names if self.source is not None and \
            self.source.binding is not None else [p.name for p in self.graph.parameters]
        varying = self.ints.varying(args)
        runtime = self.ints.runtime | varying
        at = positions(args, runtime)
        if at:
            rkey = self.ints.key(args, runtime)
            try:
                entry = self._compile(rkey, args, at)
                self.ints.runtime = runtime
                self.recompiles.note(rkey, names, self.graph_name())
                return rkey, entry
            except NotRuntime:  # by value from now on (the ints tried, even if known)
                flat = leaves(args)
                tried = frozenset((i, type(flat[i])) for i in at)
                self.ints.runtime = self.ints.runtime - tried
                self.ints.static |= tried
                key = self.ints.key(args)
        self.recompiles.note(key, names, self.graph_name())
        return key, self._compile(key, args)

    def by_value(self, args: list[Any] | tuple) -> Any:
        """A call its run-time-int program's guards refuse (``myc.infer.dynslice``): run
        the program specialized on every int's value (kept beside the others)."""
        from myc.lower.program import GuardFailed

        args = list(args)
        key = ("by-value", *(signature_key(a) for a in args))

        def make(key: Any) -> tuple[Any, Any]:
            self.stats.recompiles.append(
                "a run-time int outside the range its program holds for (a dynamic slice "
                "past the end or from a negative start): specialized on its value")
            return key, self._compile(key, args)

        entry = self._cached(lambda: key, make)
        if entry is _FALLBACK:
            return variants.evaluate(self, tuple(args), _by_value_why(self, key))
        try:
            return variants.run(self, entry, tuple(args))
        except GuardFailed:
            return variants.evaluate(self, tuple(args))

    def graph_name(self) -> str:
        """The function's name, without parsing it when the disk cache served it."""
        b = self.source.binding if self.source is not None else None
        return b.name if b is not None else self.graph.name

    def _compile(self, key: Any, args: list[Any], runtime: frozenset[int] = frozenset()):
        if os.environ.get("MYC_NO_SPECIALIZE"):
            return _FALLBACK
        from myc.errors import MycError
        from myc.support import diskcache

        disk_key = src_key = None
        # (a function argument's closure is known by identity only: myc/runtime/static_args)
        if diskcache.cache_dir() is not None and not static_args.holds_closure(key):
            env = _env_key() + backend_named(self.backend).cache_tag
            skey = self.source.skey if self.source is not None else None
            if skey is not None:  # no parse, no AD: the source says which program
                src_key = f"src|{skey}|{env}|{key!r}"
                cached = diskcache.load("program", src_key)
                if cached is not None and hasattr(cached, "run"):
                    return self._stored_again(key, cached)
            try:
                disk_key = f"{self.fingerprint()}|{env}|{key!r}"
            except Exception:  # noqa: BLE001 - no fingerprint, no disk cache
                disk_key = None
            # parsing (just now, or earlier) fixed the globals it read: key by those
            skey = self.source.skey if self.source is not None else None
            src_key = f"src|{skey}|{env}|{key!r}" if skey is not None else None
            if disk_key is not None:
                cached = diskcache.load("program", disk_key)
                if cached is not None and hasattr(cached, "run"):
                    if src_key is not None:
                        diskcache.store("program", src_key, cached)
                    return self._stored_again(key, cached)
        args = backend_named(self.backend).trace_args(args)  # e.g. host copies
        try:
            if runtime:  # raises NotRuntime when an int must stay a constant
                began = time.perf_counter()
                with compiling(self.stats):
                    prog = pipeline.compile_runtime(self.graph, args, runtime, self.backend)
                self.stats.compiles += 1
                tiering.mark(prog, self.backend, time.perf_counter() - began)
                for k in (disk_key, src_key):
                    if k is not None:
                        diskcache.store("program", k, prog)
                return self._stored_again(key, prog)
            graph = self.graph

            def broke(brk: GraphBreak) -> None:
                self.breaks[key] = brk

            began = time.perf_counter()
            with compiling(self.stats):  # (its time is the compile's, as before)
                prog = pipeline.compile(graph, args, self.backend, broke)
            self.stats.compiles += 1
            tiering.mark(prog, self.backend, time.perf_counter() - began)
            for k in (disk_key, src_key):
                if k is not None:
                    diskcache.store("program", k, prog)
            return self._stored_again(key, prog)
        except NotRuntime:
            raise
        except GraphBreak as brk:
            self.breaks[key] = brk
            return _FALLBACK
        except MycError:
            raise
        except Exception as exc:  # an internal failure: never the user's problem
            if os.environ.get("MYC_STRICT"):
                raise
            self.stats.fallback("internal", "specializing failed internally "
                                f"({type(exc).__name__}: {exc}); this signature runs on "
                                "the reference evaluator", self.graph.loc)
            self.breaks[key] = GraphBreak(f"internal: {exc}")
            return _FALLBACK

    def _stored_again(self, key: Any, prog: Any) -> Any:
        """``prog``, to be stored again once its native function is made (at its second
        run: ``HostProgram.lazy_native``), so a later process loads its machine code."""
        if getattr(prog, "lazy_native", False):
            prog.on_native = lambda: self.store(key, prog)
        return prog

    def store(self, key: Any, prog: Any) -> None:
        """Put ``prog`` in the disk cache as ``key`` 's program (a tier-up's: replacing
        the stepped one under both of its keys)."""
        from myc.support import diskcache

        if diskcache.cache_dir() is None or os.environ.get("MYC_NO_SPECIALIZE") or \
                static_args.holds_closure(key):
            return
        env = _env_key() + backend_named(self.backend).cache_tag
        skey = self.source.skey if self.source is not None else None
        keys = [f"src|{skey}|{env}|{key!r}"] if skey is not None else []
        try:
            keys.append(f"{self.fingerprint()}|{env}|{key!r}")
        except Exception:  # noqa: BLE001 - no fingerprint, no disk cache
            pass
        for k in keys:
            diskcache.store("program", k, prog)

    def __call__(self, *args: Any) -> Any:
        prog = self.program(list(args))
        if prog is None:
            return variants.evaluate(self, args)
        if not prog.guards:
            if getattr(prog, "tier_up", False):  # stepped, over the size limit
                return tiering.run(self, prog, args)
            return variants.run(self, prog, args)
        return variants.guarded(self, prog, args)

    def _interpret(self, args: tuple) -> Any:
        """The reference evaluator's result (it reads host arrays: a device argument is
        copied, and counted, by its backend)."""
        return self.interp.run(*backend_named(self.backend).evaluator_args(args))


def _by_value_why(sf: SpecializedFunction, key: Any) -> tuple[str, str, Any] | None:
    brk = sf.breaks.get(key)
    if brk is None or brk.reason.startswith("internal:"):
        return None
    return ("graph-break", f"cannot be specialized ({brk.reason}); this signature runs "
            "on the reference evaluator", brk.loc or sf.graph.loc)


# settings that change what a signature compiles to (the others -- thread count,
# timings, dumps, the cache's place -- do not)
_ENV_IGNORED = frozenset({"MYC_CACHE_DIR", "MYC_TIMINGS", "MYC_DUMP_IR", "MYC_NUM_THREADS",
                          "MYC_CACHE_MAX", "MYC_CACHE_KEY_FILE", "MYC_MAX_SPECIALIZATIONS",
                          "MYC_TIER_UP_CALLS"})


def _env_key() -> str:
    """The ``MYC_*`` settings in force and this CPU (name and features), part of every
    program's disk key."""
    from myc.backends.cpu.jit import host

    return repr((sorted((k, v) for k, v in os.environ.items()
                        if k.startswith("MYC_") and k not in _ENV_IGNORED), host()))


@dataclass
class Binding:
    """How a call's positional and keyword arguments map onto the graph's parameters:
    what a wrapper needs before it has a graph (kept on disk under the source key)."""

    name: str
    names: list[str]
    defaults: dict[str, Any]
    loc: Any = None
    # ``def f(a, *args, k=1, **kw)``: ``names`` are the graph's parameters (a, k, args,
    # kw); ``npos`` of them are positional, then come the star parameters' names
    npos: int | None = None
    varargs: str | None = None
    varkw: str | None = None
    # the parameters the function changes in place (``a += v``, ``ws[0] = v``):
    # (index, line, the write); a call passing them memory another argument shares is
    # refused (``args.check_shared_writes``)
    writes: tuple = ()

    @classmethod
    def of(cls, graph: Graph) -> Binding:
        from myc.ir.nodes import Closure

        sig = graph.flags.get("signature")
        defaults = {}
        for n, c in (sig.defaults.items() if sig is not None else ()):
            # a function default (def f(x, act=np.tanh)) is a closure of its graph
            defaults[n] = Closure(c.value, None) if isinstance(c.value, Graph) else c.value
        b = cls(graph.name, [p.name for p in graph.parameters], defaults, graph.loc)
        if sig is not None and not sig.simple:
            b.npos, b.varargs, b.varkw = sig.n_positional, sig.varargs, sig.varkw
        b.writes = tuple((i, line, text) for i, (line, text, _) in
                         graph.flags.get("param_writes", {}).items() if i >= 0)
        return b

    def storable(self) -> bool:
        """Only plain data defaults go to disk (a default function is a graph here)."""
        def plain(v: Any) -> bool:
            if isinstance(v, tuple):
                return all(plain(x) for x in v)
            return v is None or isinstance(v, (bool, int, float, complex, str, np.generic,
                                               np.ndarray))
        return all(plain(v) for v in self.defaults.values())

    def bind(self, args: tuple, kwargs: dict) -> list[Any]:
        """Positional arguments from a Python call's args, kwargs and the defaults."""
        from myc.errors import MycTypeError

        names = self.names
        npos = getattr(self, "npos", None)
        if not kwargs and npos is None and len(args) == len(names):
            return list(args)  # (every parameter given by position: a repeat call's case)
        varargs, varkw = getattr(self, "varargs", None), getattr(self, "varkw", None)
        stars = [n for n in (varargs, varkw) if n is not None]
        if npos is not None:  # star parameters: the named ones, then *args, **kw
            names = names[:len(names) - len(stars)]
        else:
            npos = len(names)
        if len(args) > npos and varargs is None:
            raise MycTypeError(f"{self.name}() takes {npos} arguments but "
                               f"{len(args)} were given", self.loc)
        bound = dict(zip(names[:npos], args, strict=False))
        extra: dict[str, Any] = {}
        for k, v in kwargs.items():
            if k not in names and varkw is not None:
                extra[k] = v
                continue
            if k not in names:
                raise MycTypeError(f"{self.name}() got an unexpected keyword argument "
                                   f"'{k}'", self.loc)
            if k in bound:
                raise MycTypeError(f"{self.name}() got multiple values for argument "
                                   f"'{k}'", self.loc)
            bound[k] = v
        out = []
        for n in names:
            if n in bound:
                out.append(bound[n])
            elif n in self.defaults:
                out.append(self.defaults[n])
            else:
                raise MycTypeError(f"{self.name}() missing required argument '{n}'",
                                   self.loc)
        if varargs is not None:
            out.append(tuple(args[npos:]))
        if varkw is not None:
            out.append(extra)
        return out


class Source:
    """A wrapper's program as the cache sees it: the graph, parsed on demand, and the
    source key, taken when the wrapper is first called and again when it parses (the
    frontend reads globals then; the programs it makes are stored under that key)."""

    def __init__(self, build: Callable[[], Graph], described: Any, backend: str):
        self._build = build
        self._described = described
        self.graph: Graph | None = None
        self.skey: str | None = None
        self.binding: Binding | None = None
        self.backend = backend
        self.keyed = backend_named(backend).source_keyed and \
            not os.environ.get("MYC_NO_SPECIALIZE")
        if self.keyed:
            from myc.support import diskcache

            self.keyed = diskcache.cache_dir() is not None
        if self.keyed:
            from myc.frontend.fingerprint import source_key
            from myc.support import diskcache

            self.skey = source_key(described)
            if self.skey is not None:
                b = diskcache.load("binding", self.skey)
                if isinstance(b, Binding):
                    self.binding = b
        if self.binding is None:
            self.parse(self.skey)

    def parse(self, before: str | None = None) -> Graph:
        """The graph, parsed now if need be; ``before``: the source key taken just now
        (else it is taken here, before the frontend reads anything)."""
        if self.graph is None:
            if self.keyed and before is None:
                from myc.frontend.fingerprint import source_key

                before = source_key(self._described)
            g = self._build()
            self.graph = g
            self.binding = Binding.of(g)
            if self.keyed:
                from myc.frontend.fingerprint import note_parsed
                from myc.support import diskcache

                self.skey = note_parsed(self._described, before)
                if self.skey is not None and self.binding.storable():
                    diskcache.store("binding", self.skey, self.binding)
        return self.graph


def flatten_args(args: list[Any], params: list[Node]) -> list[Any]:
    """Argument leaves in the order of the typed graph's parameters."""
    return leaves_of(args)


def make_executable(graph: Graph, backend: str) -> Callable[..., Any]:
    """A callable running ``graph`` on ``backend``: specialized per signature where the
    backend compiles (``SpecializedFunction``), else the reference evaluator."""
    if backend_named(backend).specializes:
        return SpecializedFunction(graph, backend=backend)
    return Interpreter(graph).run
