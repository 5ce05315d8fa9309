"""Re-reading rebound globals: a compiled program is dropped when a global it read changes.

The frontend reads a function's globals (and closure cells) when it parses it, and
compiles their values in: a global array is a constant of the program, a global
function is inlined.  JAX and Numba do the same and never look again, so rebinding a
global after the first call is silently ignored.  myc keeps, per compiled function,
the globals and cells its code names -- its own and those of every Python function it
reaches -- with the object each was bound to, and checks them by identity on every call
(a few pointer comparisons).  When one was rebound, the parsed graphs of those
functions and the compiled programs are dropped, and the call parses and compiles
again, with the new value.

Objects of the user's classes are read as static structures (``myc.frontend.objects``):
their data attributes are compiled in too, so an object reached from a global, a cell
(or the ``self`` of a bound method handed to ``jit``) has its attributes watched the same
way -- ``model.W = W - lr * g`` after a call is seen, where the program would otherwise
keep the old ``W`` without a word.

Mutating a global array *in place* keeps its identity: that is still not seen (pass
such arrays as arguments), as documented in the README.
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any

from myc.frontend.codenames import _names
from myc.frontend.objects import class_members, is_user_object

# the frontend's caches of parsed functions (``lower._GRAPHS``, ``fingerprint._PARSED_AS``)
CACHES: list[Any] = []
# held while the frontend parses and while entries are forgotten: a thread lowering a
# function never sees its (unfinished) graph dropped from under it
LOCK = threading.RLock()

_MISSING = object()
_LIBRARIES = ("numpy", "math", "builtins", "myc", "scipy")
MAX_FUNCTIONS = 256  # functions walked per program: a bound on the per-call check
MAX_OBJECT_ENTRIES = 4096  # object attributes watched per program (the same bound's idea)


def _library(mod: str | None) -> bool:
    return bool(mod) and any(mod == m or mod.startswith(m + ".") for m in _LIBRARIES)


def _python_function(fn: Any) -> types.FunctionType | None:
    """The user's Python function behind a value (a ``myc.jit`` wrapper, a transform)."""
    for _ in range(16):
        if hasattr(fn, "__myc_function__"):
            fn = fn.__myc_function__
        elif getattr(fn, "_myc_source", None) is not None:
            fn = fn._myc_source[1]
        else:
            break
    if isinstance(fn, types.FunctionType) and not _library(getattr(fn, "__module__", None)):
        return fn
    return None


class GlobalWatch:
    """The globals and cells a function's program read, each with the object it held."""

    def __init__(self, fn: Any):
        self.fn = fn
        # (namespace dict or cell, name or None, the object seen)
        self.entries: list[tuple[Any, str | None, Any]] = []
        self.functions: list[types.FunctionType] = []
        self._walk()

    def _walk(self) -> None:

        seen: set[int] = set()
        stack = [self.fn]
        while stack and len(self.functions) < MAX_FUNCTIONS:
            fn = _python_function(stack.pop())
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            self.functions.append(fn)
            code = fn.__code__
            try:
                gnames, _ = _names(code)
            except (TypeError, ValueError):
                continue
            g = fn.__globals__
            for name in sorted(gnames):
                value = g.get(name, _MISSING)
                self.entries.append((g, name, value))
                stack.extend(_functions_in(value))
                stack.extend(self._objects(value, seen))
            for cell in fn.__closure__ or ():
                try:
                    value = cell.cell_contents
                except ValueError:
                    value = _MISSING
                self.entries.append((cell, None, value))
                stack.extend(_functions_in(value))
                stack.extend(self._objects(value, seen))
            for d in fn.__defaults__ or ():
                stack.extend(_functions_in(d))

    def _objects(self, value: Any, seen: set[int], depth: int = 0) -> list[Any]:
        """Watch the data attributes of the user objects in ``value`` (itself, or inside
        lists, tuples, dicts and other objects); return their classes' methods (the
        functions the frontend will parse for them)."""
        if depth > 6 or id(value) in seen or len(self.entries) > MAX_OBJECT_ENTRIES:
            return []
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif isinstance(value, dict):
            items = list(value.values())
        elif is_user_object(value) and isinstance(getattr(value, "__dict__", None), dict):
            seen.add(id(value))
            attrs = value.__dict__
            items = list(attrs.values())
            for k, v in list(attrs.items()):
                self.entries.append((attrs, k, v))
        else:
            return []
        if len(items) > MAX_FUNCTIONS:
            return []
        found: list[Any] = []
        if is_user_object(value):
            methods, props = class_members(type(value))
            found += [getattr(m, "__func__", m) for m in methods.values()]
            found += [p.fget for p in props.values() if p.fget is not None]
        for v in items:
            found += self._objects(v, seen, depth + 1)
        return found

    def changed(self) -> str | None:
        """The first name rebound since the walk, or ``None``."""
        for holder, name, value in self.entries:
            if name is None:
                try:
                    now = holder.cell_contents
                except ValueError:
                    now = _MISSING
                if now is not value:
                    return "a closure variable"
            elif holder.get(name, _MISSING) is not value:
                return name
        return None

    def invalidate(self) -> None:
        """Forget the parsed graphs of every function walked (they compiled the old
        values in), so the next parse reads the globals again."""
        with LOCK:
            for fn in self.functions:
                for cache in CACHES:
                    cache.pop(fn, None)


def _functions_in(value: Any) -> list[Any]:
    """Functions a global's value may lead the frontend to (itself, or inside a
    tuple/list/dict of them)."""
    if isinstance(value, (list, tuple)):
        return [v for v in value if callable(v)][:MAX_FUNCTIONS]
    if isinstance(value, dict):
        return [v for v in value.values() if callable(v)][:MAX_FUNCTIONS]
    return [value] if callable(value) else []


# function -> the watch taken when the frontend parsed it (``myc.frontend.lower.parse``)
PARSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def parsed_is_stale(fn: types.FunctionType) -> bool:
    """Was a global of ``fn`` (or of a function it reaches) rebound since it was parsed?
    Then its graph, and those of the functions it reaches, are forgotten."""
    w = PARSED.get(fn)
    if w is None or w.changed() is None:
        return False
    w.invalidate()
    return True


def note_parse(fn: types.FunctionType) -> None:
    if not _library(getattr(fn, "__module__", None)):
        PARSED[fn] = GlobalWatch(fn)
