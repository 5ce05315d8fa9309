"""The primitive set.  ``P.<name>`` is the primitive called ``name``.

Importing the package declares every primitive (``registry.register``, in the modules
below) and then attaches the reverse and forward rules written against ``P``
(``bprops``, ``jvps``), so a primitive object is complete once ``myc.prims`` is loaded.
"""

from __future__ import annotations

from myc.prims import bprops as _bprops  # noqa: E402, F401, I001  (attaches the rules to P's)
from myc.prims import effect_rules as _effect_rules  # noqa: E402, F401
from myc.prims import jvps as _jvps  # noqa: E402, F401
from myc.prims import linalg_rules as _linalg_rules  # noqa: E402, F401
from myc.prims.namespace import P
from myc.prims.registry import REGISTRY, Primitive, get
from myc.prims.values import UNDEF, ZERO

__all__ = ["P", "REGISTRY", "Primitive", "UNDEF", "ZERO", "get"]
