"""myc: a differentiable array compiler for a subset of numeric Python."""

from myc.errors import (
    MycError,
    MycFallbackError,
    MycIndexError,
    MycMemoryError,
    MycNameError,
    MycRuntimeError,
    MycShapeError,
    MycSyntaxError,
    MycTypeError,
    MycValueError,
)
from myc.support.version import __version__

__all__ = [
    "MycError",
    "MycFallbackError",
    "MycFallbackWarning",
    "MycIndexError",
    "MycMemoryError",
    "MycNameError",
    "MycRuntimeError",
    "MycShapeError",
    "MycSyntaxError",
    "MycTypeError",
    "MycValueError",
    "__version__",
]

from myc.api import (  # noqa: E402
    aot,
    grad,
    hessian_vector_product,
    ir,
    jit,
    jvp,
    value_and_grad,
    vjp,
)
from myc.jacobians import (  # noqa: E402
    elementwise_grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
)
from myc.runtime.args import FLOAT0 as float0  # noqa: E402
from myc.support.stats import MycFallbackWarning, Stats, stats  # noqa: E402

__all__ += ["Stats", "aot", "elementwise_grad", "float0", "grad", "hessian",
            "hessian_vector_product", "ir", "jacfwd", "jacobian", "jacrev", "jit", "jvp",
            "stats", "value_and_grad", "vjp"]

# Load the LLVM backend with the package rather than inside the first call, so that a
# first call's latency measures compilation (or a disk-cache hit), not imports.
try:  # pragma: no cover - llvmlite is a dependency; degrade to NumPy steps without it
    import myc.backends.cpu.runtime  # noqa: E402, F401
except ImportError:
    pass
