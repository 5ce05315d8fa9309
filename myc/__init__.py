"""myc: a differentiable array compiler for a subset of numeric Python."""

from myc.errors import (
    MycError,
    MycIndexError,
    MycNameError,
    MycRuntimeError,
    MycShapeError,
    MycSyntaxError,
    MycTypeError,
    MycValueError,
)

__version__ = "0.1.0"

__all__ = [
    "MycError",
    "MycIndexError",
    "MycNameError",
    "MycRuntimeError",
    "MycShapeError",
    "MycSyntaxError",
    "MycTypeError",
    "MycValueError",
    "__version__",
]

try:  # the public surface; api.py is filled in stage by stage
    from myc.api import aot, grad, ir, jit, jvp, value_and_grad, vjp  # noqa: F401

    __all__ += ["aot", "grad", "ir", "jit", "jvp", "value_and_grad", "vjp"]
except ImportError:  # pragma: no cover - only while bootstrapping
    pass
