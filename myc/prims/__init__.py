"""The primitive set.  ``P.<name>`` is the primitive called ``name``."""

from __future__ import annotations

from types import SimpleNamespace

from myc.prims import adprims as _adprims  # noqa: F401
from myc.prims import arrays as _arrays  # noqa: F401
from myc.prims import containers as _containers  # noqa: F401
from myc.prims import control as _control  # noqa: F401
from myc.prims import ops as _ops  # noqa: F401  (registers the primitives)
from myc.prims.registry import REGISTRY, Primitive, get
from myc.prims.values import UNDEF, ZERO

P = SimpleNamespace(**REGISTRY)

__all__ = ["P", "REGISTRY", "Primitive", "UNDEF", "ZERO", "get"]
