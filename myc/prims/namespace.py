"""``P``: every declared primitive by name, once all declaration modules are loaded.

The rule modules (``bprops``, ``jvps``) are written against ``P``; they import it from
here, and ``myc.prims`` imports them after it, so no module imports its own package."""

from __future__ import annotations

from types import SimpleNamespace

from myc.prims import adprims as _adprims  # noqa: F401
from myc.prims import arrays as _arrays  # noqa: F401
from myc.prims import containers as _containers  # noqa: F401
from myc.prims import control as _control  # noqa: F401
from myc.prims import dynslice as _dynslice  # noqa: F401
from myc.prims import effects as _effects  # noqa: F401
from myc.prims import einsum_plan as _einsum_plan  # noqa: F401
from myc.prims import linalg as _linalg  # noqa: F401
from myc.prims import ops as _ops  # noqa: F401  (registers the primitives)
from myc.prims import sorting as _sorting  # noqa: F401
from myc.prims import special as _special  # noqa: F401
from myc.prims import static_calls as _static_calls  # noqa: F401
from myc.prims.registry import REGISTRY

P = SimpleNamespace(**REGISTRY)
