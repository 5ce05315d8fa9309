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

from myc.api import aot, grad, ir, jit, jvp, value_and_grad, vjp  # noqa: E402

__all__ += ["aot", "grad", "ir", "jit", "jvp", "value_and_grad", "vjp"]
