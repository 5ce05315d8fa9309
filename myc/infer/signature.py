"""What a call's specialization is keyed by (``signature_key``) and the signal that
one cannot be made (``GraphBreak``): all a call served from a compile cache needs of
specialization, apart from the tracer (``myc.infer.trace``)."""

from __future__ import annotations

from typing import Any

from myc.errors import Location
from myc.prims.abstract import AArray, AScalar, abstract_of
from myc.prims.containers import container_meta

# why a guarded trace stops at a random draw or a print: its decisions are taken on this
# call's values, which a draw's are not (``myc.pipeline.specialize`` adds which decision)
EFFECT_WHY = "a random draw or print in a program specialized on its data-dependent decisions"


class GraphBreak(Exception):  # noqa: N818 - a control signal, not an error
    """Specialization cannot continue: a condition depends on abstract data."""

    def __init__(self, reason: str, loc: Location | None = None, unbounded: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.loc = loc
        # the break is an unrolling that does not end (recursion whose depth depends on
        # data?): typed functions (``myc.infer.calls``) may specialize it
        self.unbounded = unbounded


def signature_key(value: Any) -> Any:
    """What a specialization depends on: shapes/dtypes of data, values of ints and bools
    (``myc.infer.runtime_ints.IntPolicy.key`` drops the value of an int kept at run time)."""
    if isinstance(value, tuple):
        if type(value) is not tuple:  # a list, dict or namedtuple: kind and keys count
            meta = container_meta(value)
            kind = meta if isinstance(meta, tuple) else (meta.__module__, meta.__qualname__)
            return ("s", kind) + tuple(signature_key(v) for v in value)
        return ("t",) + tuple(signature_key(v) for v in value)
    a = abstract_of(value)
    if a is None and type(value).__module__.startswith("numpy.random"):
        return ("rng", type(value).__name__)  # by reference: any generator of the type
    if isinstance(a, AArray):
        return ("a", a.dtype.str, a.shape)
    if isinstance(a, AScalar) and a.dtype.kind == "f":
        return ("f", a.dtype.str, a.weak)
    # the type itself: True and np.True_ are equal but compute differently (True + True)
    return ("c", type(value).__module__, type(value).__qualname__, value)
