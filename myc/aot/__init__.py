"""Ahead-of-time compilation: a program as a shared library plus a C header.

``build`` specializes a function for a signature (``signature`` reads it) and lowers it
to a planned host program (``myc.lower.planned``, under the AOT policy), ``dynamic``
generalizes it over named sizes; the CPU backend (``myc.backends.cpu.aot_*``) emits the
library.  See
``docs/aot.md``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from myc.aot.build import aot, build_program, program_at
from myc.aot.signature import DTYPES, parse_signature, signature_specs
from myc.errors import MycError

__all__ = ["DTYPES", "aot", "build_program", "parse_signature", "program_at",
           "signature_specs"]


class _CallableModule(types.ModuleType):
    """Importing ``myc.aot`` (this package) makes it the attribute ``myc.aot``, hiding the
    public function of that name; so the package itself calls like the function."""

    def __call__(self, fn: Any, signature: Any, output: str, name: str | None = None):
        try:
            return aot(fn, signature, output, name)
        except MycError as exc:
            raise exc.with_traceback(None) from None


sys.modules[__name__].__class__ = _CallableModule
