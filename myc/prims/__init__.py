"""The primitive set.  ``P.<name>`` is the primitive called ``name``.

Importing the package declares every primitive (``registry.register``, in the modules
below) and then attaches the reverse and forward rules written against ``P``
(``bprops``, ``jvps``), so a primitive object is complete once ``myc.prims`` is loaded.
"""

from __future__ import annotations

from types import SimpleNamespace

from myc.prims import adprims as _adprims  # noqa: F401
from myc.prims import arrays as _arrays  # noqa: F401
from myc.prims import control as _control  # noqa: F401
from myc.prims import einsum_plan as _einsum_plan  # noqa: F401
from myc.prims import ops as _ops  # noqa: F401  (registers the primitives)
from myc.prims import sorting as _sorting  # noqa: F401
from myc.prims import special as _special  # noqa: F401
from myc.prims.registry import REGISTRY, Primitive, get
from myc.prims.values import UNDEF, ZERO

P = SimpleNamespace(**REGISTRY)

from myc.prims import bprops as _bprops  # noqa: E402, F401  (attaches the rules to P's)
from myc.prims import jvps as _jvps  # noqa: E402, F401

__all__ = ["P", "REGISTRY", "Primitive", "UNDEF", "ZERO", "get"]
