"""How Python builtins, ``math`` and NumPy objects map onto primitives.

``PRIMITIVE_OF`` maps a Python callable to the primitive it *is* (called, or used as a
value: ``compose(math.sin, square)``), built from the names each primitive declares in
the primitive table (``myc.prims.registry``).  Calls whose lowering differs from a plain
primitive call (``math`` functions convert to float first, ``int(x)`` truncates,
``min``/``max`` of two values, dtype objects used as casts) are ``myc.frontend.lower``'s.
"""

from __future__ import annotations

import builtins
import math
import sys
from typing import Any

import numpy as np

from myc.prims import REGISTRY, Primitive

# NumPy functions myc implements as library functions: Python functions in the subset
# (``myc/frontend/np_library.py``) parsed like user code, so AD, fusion and every backend
# handle them as compositions of the primitives above.  Keys are NumPy's names (dotted
# under a submodule); values the library function's name.
NP_LIBRARY = {
    "logaddexp": "logaddexp", "stack": "stack", "hstack": "hstack", "vstack": "vstack",
    "column_stack": "column_stack", "atleast_1d": "atleast_1d", "atleast_2d": "atleast_2d",
    "expand_dims": "expand_dims", "squeeze": "squeeze", "ravel": "ravel",
    "var": "var", "std": "std", "outer": "outer", "diag": "diag", "eye": "eye",
    "identity": "identity", "triu": "triu", "tril": "tril", "repeat": "repeat",
    "roll": "roll", "linalg.norm": "norm", "prod": "prod", "flip": "flip",
    "fliplr": "fliplr", "flipud": "flipud", "swapaxes": "swapaxes", "moveaxis": "moveaxis",
    "take": "take", "tile": "tile", "trace": "trace", "meshgrid": "meshgrid",
    "einsum": "einsum", "sort": "sort", "argsort": "argsort",
    # elementwise compositions, tests of values, scans, products, pieces
    "sinh": "sinh", "cosh": "cosh", "arcsinh": "arcsinh", "arccosh": "arccosh",
    "arctanh": "arctanh", "arcsin": "arcsin", "arccos": "arccos", "log2": "log2",
    "log10": "log10", "exp2": "exp2", "hypot": "hypot", "reciprocal": "reciprocal",
    "cbrt": "cbrt", "deg2rad": "deg2rad", "radians": "deg2rad", "rad2deg": "rad2deg",
    "degrees": "rad2deg", "fmax": "fmax", "fmin": "fmin", "heaviside": "heaviside",
    "round": "around", "around": "around", "isnan": "isnan", "isinf": "isinf",
    "isfinite": "isfinite", "nan_to_num": "nan_to_num", "logical_and": "logical_and",
    "logical_or": "logical_or", "logical_xor": "logical_xor", "logical_not": "logical_not",
    "all": "all", "any": "any", "full_like": "full_like", "empty_like": "empty_like",
    "empty": "empty", "copy": "copy", "logspace": "logspace", "nansum": "nansum",
    "nanmean": "nanmean", "nanmax": "nanmax", "nanmin": "nanmin", "average": "average",
    "cumprod": "cumprod", "diff": "diff",
    "median": "median", "tensordot": "tensordot", "inner": "inner", "vdot": "vdot",
    "kron": "kron", "dstack": "dstack", "split": "split", "array_split": "array_split",
    "pad": "pad", "sinc": "sinc", "tri": "tri", "cov": "cov", "corrcoef": "corrcoef",
    "convolve": "convolve", "correlate": "correlate", "dot": "dot",
    "hsplit": "hsplit", "vsplit": "vsplit", "dsplit": "dsplit", "clip": "clip",
    "cross": "cross", "take_along_axis": "take_along_axis", "vander": "vander",
}

# array methods that are library functions (``x.ravel()``): the receiver is the first
# argument
METHOD_LIBRARY = {
    "ravel": "ravel", "flatten": "flatten", "squeeze": "squeeze", "var": "var",
    "std": "std", "repeat": "repeat", "prod": "prod", "cumsum": "cumsum",
    "swapaxes": "swapaxes", "take": "take", "trace": "trace", "argsort": "argsort",
    "round": "around", "all": "all", "any": "any", "cumprod": "cumprod", "dot": "dot",
    "clip": "clip", "item": "item",
}

# NumPy ufuncs that share a primitive with a Python operator (``np.add`` / ``+``)
NP_OPERATORS = frozenset(id(getattr(np, k)) for k in (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
    "remainder", "power", "negative"))

# the Python objects each primitive *is*, from the names the primitive table declares
# (``"np.exp"``, ``"math.atan"``, ``"builtins.abs"``, ``"scipy.special.erf"``)
_ROOTS = {"np": np, "math": math, "builtins": builtins}
_OPTIONAL = ("scipy",)  # resolved once the program's module has imported them


def _resolve(dotted: str, root: Any) -> Any:
    obj = root
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


PRIMITIVE_OF: dict[int, Primitive] = {}
_MATH: list[str] = []  # the math functions that are primitives
_PENDING: list[tuple[str, Primitive]] = []  # names under an optional module
for _p in REGISTRY.values():
    for _dotted in _p.names:
        _root = _dotted.split(".")[0]
        if _root in _ROOTS:
            PRIMITIVE_OF[id(_resolve(_dotted, _ROOTS[_root]))] = _p
            if _root == "math":
                _MATH.append(_dotted.split(".")[1])
        else:
            assert _root in _OPTIONAL, f"{_p.name}: unknown module in name {_dotted}"
            _PENDING.append((_dotted, _p))


def resolve_optional() -> None:
    """Add the primitives named under optional modules (``scipy.special.erf``) that the
    program has imported: called before a program's names are looked up, it imports
    nothing itself (scipy stays optional and costs nothing when unused)."""
    global _PENDING
    if not _PENDING:
        return
    left = []
    for dotted, prim in _PENDING:
        parts = dotted.split(".")
        mod = sys.modules.get(".".join(parts[:-1]))
        if mod is None:
            left.append((dotted, prim))
            continue
        obj = getattr(mod, parts[-1], None)
        if obj is not None:
            PRIMITIVE_OF[id(obj)] = prim
    _PENDING = left


# dtypes usable as ``dtype=`` values and as cast functions (``np.float32(x)``)
DTYPES: dict[int, type] = {
    id(t): t for t in (np.float32, np.float64, np.int64, np.int32, np.bool_, np.float16)
}
BUILTIN_DTYPES = {id(float): np.float64, id(int): np.int64, id(bool): np.bool_}

# ``math`` functions operate on Python floats (and floor/ceil return ints)
MATH_FUNCS: dict[int, str] = {id(getattr(math, k)): k for k in (
    *_MATH, "hypot", "log2", "log10", "degrees", "radians", "trunc", "sinh", "cosh")}



def _np_attr(dotted: str):
    obj = np
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


LIBRARY: dict[int, str] = {id(_np_attr(k)): v for k, v in NP_LIBRARY.items()}
LIBRARY.update(__import__("myc.frontend.linalg_library", fromlist=["NAMES"]).NAMES)
# autograd's helpers under myc.misc (plain Python outside compiled code)
LIBRARY[id(__import__("myc.misc.flatten", fromlist=["flatten"]).flatten)] = \
    "myc.frontend.py_library.misc_flatten"

RANGE = builtins.range
MODULES = (np, math)
