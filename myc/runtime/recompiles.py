"""The bound on a function's specializations, and the warning when it keeps recompiling.

Each ``myc.jit`` function keeps at most ``MYC_MAX_SPECIALIZATIONS`` compiled programs
in memory (default 64), least recently used dropped first (a dropped signature compiles
again, or loads from the disk cache, when it comes back).  When a function has been
specialized ``RECOMPILE_WARN`` (8) times -- as ``torch.compile``'s recompile limit -- it
warns once, naming the arguments whose signature keeps changing and how.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from myc.support.caller import user_stacklevel

DEFAULT_MAX = 64
RECOMPILE_WARN = 8


def max_specializations() -> int:
    """``MYC_MAX_SPECIALIZATIONS``: programs kept per function (at least 1)."""
    try:
        return max(1, int(os.environ.get("MYC_MAX_SPECIALIZATIONS", DEFAULT_MAX)))
    except ValueError:
        return DEFAULT_MAX


class Recompiles:
    """The signatures one function was specialized for, and whether it warned."""

    def __init__(self) -> None:
        self.count = 0
        self.seen: list[set[Any]] = []  # per argument position: the keys it took
        self.warned = False

    def note(self, key: tuple, names: list[str], fname: str) -> None:
        """A new specialization for ``key`` (one part per argument) is being made."""
        self.count += 1
        for i, k in enumerate(key):
            while len(self.seen) <= i:
                self.seen.append(set())
            if len(self.seen[i]) <= RECOMPILE_WARN:
                self.seen[i].add(_hashable(k))
        if self.count >= RECOMPILE_WARN and not self.warned:
            self.warned = True
            warnings.warn(self.message(names, fname), RuntimeWarning,
                          stacklevel=user_stacklevel())

    def message(self, names: list[str], fname: str) -> str:
        changing = sorted((i for i, s in enumerate(self.seen) if len(s) > 1),
                          key=lambda i: -len(self.seen[i]))
        parts = []
        for i in changing:
            name = names[i] if i < len(names) else str(i)
            kinds = {k[0] if isinstance(k, tuple) and k else None for k in self.seen[i]}
            n = len(self.seen[i])
            more = "+" if n > RECOMPILE_WARN else ""
            if kinds == {"c"} and all(k[2] == "Closure" for k in self.seen[i]):
                parts.append(f"argument '{name}' took {n}{more} functions (a function "
                             "argument is compiled in, known by identity: make it once, "
                             "outside the loop, instead of a new lambda or def per call)")
            elif kinds == {"c"}:
                parts.append(f"argument '{name}' took {n}{more} values (an int or bool is "
                             "specialized by value where it decides a shape, a trip "
                             "count, an index or a branch)")
            else:
                parts.append(f"argument '{name}' took {n}{more} shapes or dtypes")
        why = "; ".join(parts) or "the signatures differ"
        return (f"myc: {fname} has been compiled for {self.count} signatures: {why}. "
                f"Each is a separate program; at most {max_specializations()} are kept "
                "(MYC_MAX_SPECIALIZATIONS)")


def _hashable(k: Any) -> Any:
    try:
        hash(k)
        return k
    except TypeError:
        return repr(k)
