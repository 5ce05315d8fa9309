"""Which NumPy/SciPy functions run at compile time on static arguments, and the call node.

A call of a NumPy or SciPy function that myc neither implements (a primitive, a library
function in the subset) nor compiles from NumPy's source is not refused where it is
parsed: whether its arguments are static -- ints, shapes, tuples, strings, dtypes,
constant arrays -- is known only when the program is specialized, so it becomes a
``numpy_static`` node (``myc/prims/static_calls.py``) that the tracer evaluates with
NumPy itself when every argument is known, and refuses (with the error myc gave before,
saying that the function is supported only with static arguments) when one is data.

Only library code runs this way, never the user's (which myc compiles): functions,
ufuncs and classes of the ``numpy`` and ``scipy`` packages, and methods of SciPy's
distributions (``norm.ppf``).  Never what has effects or is not deterministic: NumPy's
random numbers (they have their own support, ``myc/frontend/effects.py``), file I/O,
global settings (``np.seterr``), functions that write into an argument
(``np.fill_diagonal``), uninitialized memory (``np.empty``) -- those keep their refusal.
"""

from __future__ import annotations

import ast
import sys
import types
from typing import Any

import numpy as np

from myc.errors import MycError
from myc.frontend.libraries import is_namespace, namespace_name
from myc.frontend.libraries import public_name as scipy_public_name
from myc.ir.nodes import Constant, Node
from myc.prims import P, Primitive
from myc.prims.static_calls import StaticCall

# packages whose functions have effects, read files or draw random numbers
REFUSED_MODULES = ("numpy.random", "numpy.testing", "numpy.f2py", "numpy.distutils",
                   "numpy.ctypeslib", "numpy.lib._npyio_impl", "numpy.lib.npyio",
                   "numpy.lib.format", "numpy.lib._datasource", "numpy.ma", "scipy.io",
                   "scipy.datasets", "scipy._lib", "scipy.stats._qmc", "scipy.stats.qmc",
                   "scipy.linalg.interpolative")
# names (in any module) that write into an argument, read or write files, change global
# settings, print, return uninitialized memory or draw random numbers
REFUSED_NAMES = frozenset("""
    save savez savez_compressed savetxt load loadtxt genfromtxt fromfile fromregex tofile
    memmap copyto put place putmask put_along_axis fill_diagonal seterr seterrcall
    setbufsize set_printoptions printoptions errstate show_config show_runtime info
    source lookfor get_include empty empty_like ndarray nditer rvs random random_state seed
    default_rng fit bootstrap permutation_test monte_carlo_test
""".split())


def _module_of(obj: Any) -> str:
    if isinstance(obj, np.ufunc):
        if getattr(np, obj.__name__, None) is obj:
            return "numpy"
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, obj.__name__, None) is obj:
            return "scipy.special"
        return ""  # a ufunc of the user's (np.frompyfunc) or another package's
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        if isinstance(owner, np.ufunc):  # np.add.outer
            return _module_of(owner)
        # a bound method: SciPy's distributions (norm.ppf), nothing else
        mod = type(owner).__module__ or ""
        return mod if mod.startswith("scipy.stats") else ""
    return getattr(obj, "__module__", None) or ""


def library_of(obj: Any) -> str | None:
    """``"NumPy"``/``"SciPy"`` where ``obj`` is a library callable that may run at compile
    time on static arguments, else ``None``."""
    if not callable(obj) or isinstance(obj, types.ModuleType):
        return None
    mod = _module_of(obj)
    root = mod.split(".")[0]
    if root not in ("numpy", "scipy"):
        return None
    if any(mod == m or mod.startswith(m + ".") for m in REFUSED_MODULES):
        return None
    if getattr(obj, "__name__", "") in REFUSED_NAMES:
        return None
    return "NumPy" if root == "numpy" else "SciPy"


_BUILTIN_TYPES = {"to_float": float, "to_int": int, "to_bool": bool}


def _builtin_type(n: Node) -> Node:
    """``float`` passed as a dtype (``np.finfo(float)``): the type itself, not the
    primitive the name stands for in a call (which AD would transform)."""
    if isinstance(n, Constant) and isinstance(n.value, Primitive) and \
            n.value.name in _BUILTIN_TYPES:
        return Constant(_BUILTIN_TYPES[n.value.name], n.loc)
    return n


def public_name(obj: Any, written: str) -> str:
    """SciPy's public name (``scipy.stats.norm.ppf``, ``scipy.special.roots_legendre``)
    whatever the user's import; NumPy's as written (``np.triu_indices``)."""
    owner = getattr(obj, "__self__", None)
    if owner is not None and is_namespace(owner):
        return f"{namespace_name(owner)}.{obj.__name__}"
    if isinstance(obj, np.ufunc) and _module_of(obj) == "scipy.special":
        return f"scipy.special.{obj.__name__}"
    if isinstance(obj, types.FunctionType) and obj.__module__.startswith("scipy"):
        return scipy_public_name(obj)
    return written


def call_node(low: Any, callee: Any, refused: MycError, e: ast.Call, block: Any,
              star: tuple[Node, Node] | None = None) -> Node:
    """``numpy_static(call, args, kwargs)`` for the call ``e`` of ``callee``; ``refused``
    is what myc reports where the call is not static.  ``star``: a star call's
    positional tuple and keyword dict, already built."""
    library = library_of(callee)
    assert library is not None
    name = public_name(callee, ast.unparse(e.func))
    message = refused.message
    if star is not None:
        args, kwargs = star
        kwnames = None
    else:
        pos, kw = low._args(e, block, numpy=True)
        pos = [_builtin_type(a) for a in pos]
        kw = {k: _builtin_type(v) for k, v in kw.items()}
        kwnames = tuple(kw)
        args = low.apply(block, P.make_tuple, *pos, node=e)
        kwargs = low.apply(block, P.make_tuple, *kw.values(), node=e)
    call = StaticCall(callee, name, library, kwnames, type(refused), message, refused.hint)
    return low.apply(block, P.numpy_static, Constant(call, low.loc(e)), args, kwargs, node=e)
