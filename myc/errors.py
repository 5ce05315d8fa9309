"""Errors myc raises on bad user input.

Every error a user can provoke is a ``MycError``; its message names the problem and,
when known, the user's source location as ``file:line:col`` followed by the source line
and a caret.  Internal invariant failures are plain ``AssertionError``s and are bugs.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass


def _package_dir(name: str) -> str | None:
    """Where package ``name`` is installed, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(os.path.abspath(list(spec.submodule_search_locations)[0]), "")


# myc's own source (its library functions and derivative rules) first, then NumPy's and
# SciPy's: a location in one of these is not the user's line, and errors there are
# reported at the user's call that led into it
LIBRARY_DIRS: tuple[str, ...] = tuple(d for d in (
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ""),
    _package_dir("numpy"), _package_dir("scipy")) if d)


def in_library(filename: str) -> bool:
    """Is ``filename`` myc's, NumPy's or SciPy's source rather than the user's?"""
    return filename.startswith(LIBRARY_DIRS)


@dataclass(frozen=True)
class Location:
    """A position in the user's source code."""

    filename: str
    line: int
    col: int = 0
    end_col: int | None = None
    source_line: str = ""
    function: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col + 1}"

    def render(self) -> str:
        """``file:line:col`` plus the source line and a caret under the construct."""
        text = str(self)
        if self.source_line:
            stripped = self.source_line.rstrip()
            indent = len(stripped) - len(stripped.lstrip())
            body = stripped.lstrip()
            col = max(self.col - indent, 0)
            width = 1
            if self.end_col is not None and self.end_col > self.col:
                width = min(self.end_col - self.col, max(len(body) - col, 1))
            text += f"\n    {body}\n    {' ' * col}{'^' * width}"
        return text


class MycError(Exception):
    """Base of every error myc raises on bad input."""

    def __init__(self, message: str, loc: Location | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._format())

    @property
    def lineno(self) -> int | None:
        return self.loc.line if self.loc else None

    def _format(self) -> str:
        text = self.message
        if self.loc is not None:
            text = f"{self.loc.render()}\n{self.message}" if self.loc.source_line else (
                f"{self.loc}: {self.message}"
            )
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text

    def internal_loc(self) -> bool:
        """Whether the location points into myc's own source (its derivative rules)."""
        return self.loc is not None and in_library(self.loc.filename)

    def relocated(self, loc: Location | None) -> MycError:
        """The same error at ``loc``, a user's line, when it was located inside myc or
        not at all (a primitive applied inside a derivative's own graphs)."""
        if loc is None or (self.loc is not None and not self.internal_loc()):
            return self
        return type(self)(self.message, loc, self.hint)

    def with_loc(self, loc: Location | None) -> MycError:
        """The same error located at ``loc`` if it has no location yet."""
        if self.loc is not None or loc is None:
            return self
        return type(self)(self.message, loc, self.hint)


class MycSyntaxError(MycError):
    """A construct outside the supported Python subset."""


class MycNameError(MycError):
    """A name that is not defined, or a global whose value myc cannot use."""


class MycTypeError(MycError):
    """A value of the wrong kind: wrong arity, a str argument, grad of a non-scalar..."""


class MycShapeError(MycError):
    """Shapes that do not broadcast, matmul dimensions that disagree, a bad reshape."""


class MycIndexError(MycError):
    """An index out of bounds."""


class MycValueError(MycError):
    """A value outside a function's domain (e.g. an ambiguous truth value)."""


class MycRuntimeError(MycError):
    """A failure while running compiled code (division by zero, recursion too deep)."""


class MycFallbackError(MycError):
    """Under ``MYC_STRICT=1``: a call would have left compiled code (for the reference
    evaluator, NumPy, or op by op) -- what is otherwise a ``MycFallbackWarning``."""


class MycMemoryError(MycRuntimeError):
    """An array too large to allocate (its size and the line that makes it are named)."""
