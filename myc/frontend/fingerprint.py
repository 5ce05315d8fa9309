"""A content hash of a program: its graphs, their structure and every constant's value.

Two programs with the same fingerprint compute the same thing, so a compiled
specialization of one serves the other (the disk cache's key).  Array constants are
hashed by their bytes, graphs and nodes by their position, never by identity.
"""

from __future__ import annotations

import hashlib

import numpy as np

from myc.ir.manager import program_order
from myc.ir.nodes import Constant, Graph, Node
from myc.prims import Primitive
from myc.timings import timed


@timed("cache keys")
def fingerprint(root: Graph) -> str:
    program = list(program_order(root))
    gidx = {g: i for i, (g, _) in enumerate(program)}
    h = hashlib.sha256()
    for g, order in program:
        nidx: dict[int, int] = {}
        parent = gidx.get(g.parent, -1) if g.parent is not None else -1
        h.update(f"G{gidx[g]} p{parent} n{len(g.parameters)} {g.flags.get('defaults')!r}|"
                 .encode())
        for i, p in enumerate(g.parameters):
            nidx[p.id] = i
        for k, n in enumerate(order):
            nidx[n.id] = len(g.parameters) + k
        for n in order:
            h.update(b"(" + b",".join(_ref(i, g, nidx, gidx).encode() for i in n.inputs) + b")")
        h.update(b"->" + _ref(g.output, g, nidx, gidx).encode())
    return h.hexdigest()


def _ref(n: Node, g: Graph, nidx: dict[int, int], gidx: dict[Graph, int]) -> str:
    if isinstance(n, Constant):
        v = n.value
        if isinstance(v, Graph):
            return f"@{gidx.get(v, '?')}"
        if isinstance(v, Primitive):
            return f"!{v.name}"
        if isinstance(v, np.ndarray):
            digest = hashlib.sha1(np.ascontiguousarray(v).tobytes()).hexdigest()
            return f"A{v.dtype.str}{v.shape}{digest}"
        return f"c{type(v).__name__}:{v!r}"
    if n.graph is g:
        return f"%{nidx.get(n.id, '?')}"
    return f"^{gidx.get(n.graph, '?')}.{n.id if n.graph is None else _outer(n)}"


def _outer(n: Node) -> str:
    # a free variable: identified by its owner graph and its position there
    g = n.graph
    if n in g.parameters:
        return f"p{g.parameters.index(n)}"
    return f"n{getattr(n, 'debug_name', None)}:{n.loc.line if n.loc else '?'}:" \
        f"{n.loc.col if n.loc else '?'}"


# --------------------------------------------------------------------------------------
# The source key: what a program is made from, described without parsing it.
#
# A disk-cache hit should not pay for parsing and differentiating the program only to
# learn its fingerprint.  The source key hashes what the frontend reads instead: each
# reached Python function's code object and its file's current text, the values of the
# globals, closure cells and defaults it names (arrays by their bytes, functions
# recursively, library objects by their qualified name), and the transforms applied.
# Anything the description cannot pin down exactly (an object of another kind, a
# function without a source file, an empty cell) makes the key ``None``: the caller
# then uses the full fingerprint above.  A key that is too fine only costs a miss; one
# that is too coarse would be a wrong answer, so the description errs on the fine side.
# --------------------------------------------------------------------------------------

import linecache  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402
import weakref  # noqa: E402
from typing import Any  # noqa: E402

from myc.frontend import globals_watch  # noqa: E402
from myc.frontend.codenames import _names  # noqa: E402, F401 (re-exported)
from myc.timings import timed  # noqa: E402

# modules whose objects are described by name: their versions are part of every cache
# key already (``myc.support.diskcache``), and myc's own source is hashed there too
_LIBRARIES = ("numpy", "math", "builtins", "myc", "scipy")


class _Unsure(Exception):  # noqa: N818 - a control signal
    """The description cannot vouch for this value: no source key."""


def _library(name: str | None) -> bool:
    """Is ``name`` (a module's) numpy, math, builtins, myc or scipy, or inside one?"""
    return bool(name) and (name in _LIBRARIES or
                           any(name.startswith(m + ".") for m in _LIBRARIES))


@timed("cache keys")
def source_key(fn: Any) -> str | None:
    """A hash of everything ``fn``'s compiled program is made from, or ``None`` when
    some part of it cannot be described exactly (then use :func:`fingerprint`).

    The frontend parses a function once per process and keeps its graph: a function
    parsed before now, with globals that have changed since, has a graph the current
    description does not describe.  So every reached function that has a graph must
    have been described, with the same result, when it was parsed (:func:`note_parsed`);
    one parsed unobserved (``myc.ir``, with the cache off) gives no key.
    """
    try:
        d = _Describer()
        text = d.value(fn, depth=0)
        graphs = _parsed_graphs()
        for f in d.keep:
            if f in graphs and _PARSED_AS.get(f) != _alone(f):
                return None
    except (_Unsure, RecursionError, OSError, ValueError, TypeError, AttributeError):
        return None
    return hashlib.sha256(f"src1|{sys.version}|{text}".encode()).hexdigest()


@timed("cache keys")
def note_parsed(fn: Any, before: str | None) -> str | None:
    """After parsing ``fn`` (whose key was ``before``, taken just before the parse):
    record how each function it reached was described when the frontend parsed it, and
    return its key -- ``None`` unless nothing changed while it parsed."""
    if before is None:
        return None
    try:
        d = _Describer()
        text = d.value(fn, depth=0)
        if hashlib.sha256(f"src1|{sys.version}|{text}".encode()).hexdigest() != before:
            return None
        graphs = _parsed_graphs()
        for f in d.keep:
            if f in graphs and f not in _PARSED_AS:
                _PARSED_AS[f] = _alone(f)
    except (_Unsure, RecursionError, OSError, ValueError, TypeError, AttributeError):
        return None
    return before


# function -> its description when the frontend parsed it (under a watching Source)
_PARSED_AS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
globals_watch.CACHES.append(_PARSED_AS)  # forgotten when a global they read is rebound


def _alone(f: types.FunctionType) -> str:
    """``f``'s description with itself as the root (independent of who reached it)."""
    return _Describer().value(f, depth=0)


def _parsed_graphs() -> Any:
    """The frontend's parsed functions (a mapping that supports ``in``).  A process that
    has not imported the frontend has parsed nothing: a warm-cache first call, served by
    source key, does not import it (10 ms)."""
    lower = sys.modules.get("myc.frontend.lower")
    return lower._GRAPHS if lower is not None else {}


class _Describer:
    """One walk over a function and everything it reaches; functions are numbered on
    first sight so recursion and shared helpers are described once."""

    def __init__(self) -> None:
        self.funcs: dict[int, int] = {}  # id(function) -> its number
        self.keep: list[Any] = []  # keep described objects alive (ids stay unique)
        self.files: dict[str, str] = {}  # filename -> hash of its current text

    def value(self, v: Any, depth: int) -> str:
        if depth > 200:
            raise _Unsure("too deep")
        if v is None or isinstance(v, (bool, int, str)):
            return f"{type(v).__name__}:{v!r}"
        if isinstance(v, float):
            return f"float:{v.hex()}"
        if isinstance(v, complex):
            return f"complex:{v.real.hex()},{v.imag.hex()}"
        if isinstance(v, np.generic):
            return f"npg:{v.dtype.str}:{v.tobytes().hex()}"
        if isinstance(v, np.ndarray):
            if v.dtype.hasobject:
                raise _Unsure("object array")
            digest = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
            return f"arr:{v.dtype.str}{v.shape}{digest}"
        if isinstance(v, tuple):
            return "(" + ",".join(self.value(x, depth + 1) for x in v) + ")"
        if isinstance(v, types.ModuleType):
            return f"mod:{v.__name__}"  # its attributes are described where named
        if isinstance(v, (types.FunctionType, types.MethodType)) or \
                hasattr(v, "__myc_function__") or hasattr(v, "__myc_graph__"):
            return self.function(v, depth + 1)
        if isinstance(v, np.dtype):
            return f"dtype:{v.str}"
        if isinstance(v, (type, types.BuiltinFunctionType, np.ufunc)) or \
                type(v).__name__ in ("builtin_function_or_method", "_ArrayFunctionDispatcher"):
            mod = getattr(v, "__module__", None) or (
                "numpy" if isinstance(v, np.ufunc) else None)
            name = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
            if not _library(mod) or not name:
                raise _Unsure(f"object {v!r}")
            return f"lib:{type(v).__name__}:{mod}.{name}"
        if isinstance(v, types.SimpleNamespace):
            return "ns{" + ",".join(f"{k}={self.value(x, depth + 1)}"
                                    for k, x in sorted(vars(v).items())) + "}"
        from myc.prims import Primitive

        if isinstance(v, Primitive):
            return f"prim:{v.name}"
        from myc.frontend.libraries import namespace_name

        ns = namespace_name(v)
        if ns is not None:  # scipy.stats.norm: its methods are myc's library functions
            return f"lib:{ns}"
        mod = type(v).__module__
        if _library(mod) and type(v).__name__ in ("ZeroType", "_Zero", "Zero", "UndefType"):
            return f"lib:{mod}.{type(v).__qualname__}"
        raise _Unsure(f"a {type(v).__name__}")

    def function(self, fn: Any, depth: int) -> str:
        if hasattr(fn, "__myc_function__"):  # myc.jit(f): f (its backend matters too)
            return f"J:{getattr(fn, 'backend', '?')}:" + \
                self.value(fn.__myc_function__, depth + 1)
        source = getattr(fn, "_myc_source", None)
        if source is not None:  # a transform made by myc.api (grad, value_and_grad)
            kind, inner, extra = source
            return f"T:{kind}:{extra!r}:{self.value(inner, depth + 1)}"
        if hasattr(fn, "__myc_graph__"):
            raise _Unsure("a transform that does not say what it is made of")
        if isinstance(fn, types.MethodType):
            raise _Unsure("a bound method")
        mod = getattr(fn, "__module__", None)
        if _library(mod):  # numpy's Python functions, myc's API: named, not walked
            return f"lib:{mod}.{fn.__qualname__}"
        num = self.funcs.get(id(fn))
        if num is not None:
            return f"F#{num}"
        num = self.funcs[id(fn)] = len(self.funcs)
        self.keep.append(fn)
        code = fn.__code__
        parts = [f"F{num}:{fn.__qualname__}", self.code(code), self.file(code.co_filename)]
        parts.append("defaults=" + self.value(fn.__defaults__ or (), depth + 1))
        kw = fn.__kwdefaults__ or {}
        parts.append("kw={" + ",".join(f"{k}={self.value(x, depth + 1)}"
                                       for k, x in sorted(kw.items())) + "}")
        cells = fn.__closure__ or ()
        for name, cell in zip(code.co_freevars, cells, strict=True):
            try:
                contents = cell.cell_contents
            except ValueError:
                raise _Unsure(f"empty cell {name}") from None
            parts.append(f"cell {name}={self.value(contents, depth + 1)}")
        gnames, attrs = _names(code)
        g = fn.__globals__
        builtins_ns = g.get("__builtins__", {})
        if isinstance(builtins_ns, types.ModuleType):
            builtins_ns = vars(builtins_ns)
        for name in sorted(gnames):
            if name in g:
                val = g[name]
                where = "g"
            elif name in builtins_ns:
                val = builtins_ns[name]
                where = "b"
            else:
                parts.append(f"{name}=?")
                continue
            parts.append(f"{where}:{name}={self.value(val, depth + 1)}")
            parts.extend(self.attributes(name, val, attrs, depth + 1))
        return "{" + "|".join(parts) + "}"

    def attributes(self, path: str, base: Any, attrs: frozenset[str],
                   depth: int) -> list[str]:
        """A user module's (or namespace's) attributes that the code may name: the
        frontend reads ``helpers.f`` at parse time, so ``f``'s description counts."""
        if not isinstance(base, (types.ModuleType, types.SimpleNamespace)):
            return []
        if isinstance(base, types.ModuleType) and _library(base.__name__):
            return []
        if depth > 50:
            raise _Unsure("too deep")
        out = []
        for a in sorted(attrs):
            if hasattr(base, a):
                val = getattr(base, a)
                out.append(f"{path}.{a}={self.value(val, depth + 1)}")
                out.extend(self.attributes(f"{path}.{a}", val, attrs, depth + 1))
        return out

    def code(self, code: types.CodeType) -> str:
        consts = []
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                consts.append(self.code(c))
            elif isinstance(c, frozenset):
                consts.append(f"frozenset:{sorted(map(repr, c))}")
            else:
                consts.append(f"{type(c).__name__}:{c!r}")
        fields = (getattr(code, "co_qualname", code.co_name), code.co_argcount,
                  code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
                  code.co_names, code.co_varnames,
                  code.co_freevars, code.co_cellvars, code.co_filename, code.co_firstlineno)
        body = hashlib.sha256(code.co_code + b"|" + code.co_linetable + b"|" +
                              getattr(code, "co_exceptiontable", b"")).hexdigest()
        return f"code{fields!r}{body}[{';'.join(consts)}]"

    def file(self, filename: str) -> str:
        """The hash of the file's text as the frontend will read it (``inspect`` reads
        through ``linecache``, re-checked against the file on disk)."""
        h = self.files.get(filename)
        if h is None:
            linecache.checkcache(filename)
            lines = linecache.getlines(filename)
            if not lines:
                raise _Unsure(f"no source for {filename}")
            h = self.files[filename] = hashlib.sha256("".join(lines).encode()).hexdigest()
        return f"file:{h}"
