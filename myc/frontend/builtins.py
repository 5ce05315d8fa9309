"""How Python builtins, ``math`` and NumPy objects map onto primitives.

``PRIMITIVE_OF`` maps a Python callable to the primitive it *is* when used as a value
(``compose(math.sin, square)``).  ``CALL_RULES`` gives calls whose lowering differs from
a plain primitive call: ``math`` functions convert to float first, ``int(x)`` truncates,
``min``/``max`` of two values, dtype objects used as casts.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from myc.prims import P, Primitive

_NP = {
    "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt",
    "square": "square", "abs": "abs", "absolute": "abs", "sign": "sign", "sin": "sin",
    "cos": "cos", "tan": "tan", "tanh": "tanh", "arctan": "arctan", "arctan2": "arctan2",
    "floor": "floor",
    "ceil": "ceil", "power": "pow", "maximum": "maximum", "minimum": "minimum",
    "clip": "clip", "where": "where", "sum": "sum", "mean": "mean", "max": "max",
    "amax": "max", "min": "min", "amin": "min", "argmax": "argmax", "argmin": "argmin",
    "dot": "dot", "matmul": "matmul", "transpose": "transpose", "reshape": "reshape",
    "broadcast_to": "broadcast_to", "shape": "shape", "ndim": "ndim", "size": "size",
    "zeros": "zeros", "ones": "ones", "full": "full", "zeros_like": "zeros_like",
    "ones_like": "ones_like", "arange": "arange", "linspace": "linspace", "array": "array",
    "asarray": "array", "add": "add", "subtract": "sub", "multiply": "mul",
    "divide": "truediv", "true_divide": "truediv", "negative": "neg",
    "floor_divide": "floordiv", "mod": "mod", "remainder": "mod",
    "concatenate": "concatenate", "cumsum": "cumsum",
}

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
}

# array methods that are library functions (``x.ravel()``): the receiver is the first
# argument
METHOD_LIBRARY = {
    "ravel": "ravel", "flatten": "flatten", "squeeze": "squeeze", "var": "var",
    "std": "std", "repeat": "repeat", "prod": "prod", "cumsum": "cumsum",
    "swapaxes": "swapaxes", "take": "take", "trace": "trace",
}

_MATH = {
    "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "exp": "exp", "log": "log",
    "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "atan": "arctan", "fabs": "abs",
    "floor": "floor", "ceil": "ceil", "pow": "pow", "atan2": "arctan2",
}

_BUILTINS = {
    "abs": "abs", "len": "len", "float": "to_float", "int": "to_int", "bool": "to_bool",
    "min": "py_min", "max": "py_max",
}

# NumPy ufuncs that share a primitive with a Python operator (``np.add`` / ``+``)
NP_OPERATORS = frozenset(id(getattr(np, k)) for k in (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
    "remainder", "power", "negative"))

PRIMITIVE_OF: dict[int, Primitive] = {}
for _k, _v in _NP.items():
    PRIMITIVE_OF[id(getattr(np, _k))] = getattr(P, _v)
for _k, _v in _MATH.items():
    PRIMITIVE_OF[id(getattr(math, _k))] = getattr(P, _v)
for _k, _v in _BUILTINS.items():
    PRIMITIVE_OF[id(getattr(builtins, _k))] = getattr(P, _v)

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

RANGE = builtins.range
MODULES = (np, math)
