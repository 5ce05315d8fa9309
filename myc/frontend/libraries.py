"""Which Python objects stand for library functions written in the subset.

A NumPy function in ``NP_LIBRARY`` (``myc/frontend/builtins.py``) or a SciPy function in
``SCIPY_LIBRARY`` below is, for the frontend, the Python function of the same meaning
in ``np_library.py``/``scipy_library.py``: parsed like user code, so every transform and
backend sees the composition of primitives it is.

SciPy is optional.  Its names are resolved only once the user's program has imported the
SciPy submodule that defines them (``scipy.special``, ``scipy.stats``, ``scipy.linalg``:
``sys.modules``), so ``import myc`` never imports SciPy, and without SciPy the table is
simply unused.  A ``scipy.stats`` distribution (``norm``) is a *namespace* here:
``norm.logpdf`` is looked up by the distribution object and the method's name, since
every attribute access makes a new bound method.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from myc.frontend import builtins as B

# SciPy's dotted name (below ``scipy.``) -> the function in ``scipy_library.py``
SCIPY_LIBRARY = {
    "special.logsumexp": "logsumexp", "special.expit": "expit", "special.logit": "logit",
    "special.xlogy": "xlogy", "special.xlog1py": "xlog1py",
    "special.log_softmax": "log_softmax", "special.softmax": "softmax",
    "special.log_expit": "log_expit",
    "stats.norm.logpdf": "norm_logpdf", "stats.norm.pdf": "norm_pdf",
    "stats.norm.cdf": "norm_cdf", "stats.norm.logcdf": "norm_logcdf",
    "stats.norm.sf": "norm_sf", "stats.norm.logsf": "norm_logsf",
    "stats.multivariate_normal.logpdf": "mvn_logpdf",
    "stats.multivariate_normal.pdf": "mvn_pdf",
    "stats.t.logpdf": "t_logpdf", "stats.t.pdf": "t_pdf",
    "stats.gamma.logpdf": "gamma_logpdf", "stats.gamma.pdf": "gamma_pdf",
    "stats.beta.logpdf": "beta_logpdf", "stats.beta.pdf": "beta_pdf",
    "stats.expon.logpdf": "expon_logpdf", "stats.expon.pdf": "expon_pdf",
    "stats.expon.cdf": "expon_cdf", "stats.expon.logcdf": "expon_logcdf",
    "stats.uniform.logpdf": "uniform_logpdf", "stats.uniform.pdf": "uniform_pdf",
    "stats.uniform.cdf": "uniform_cdf",
    "stats.bernoulli.logpmf": "bernoulli_logpmf", "stats.bernoulli.pmf": "bernoulli_pmf",
    "stats.poisson.logpmf": "poisson_logpmf", "stats.poisson.pmf": "poisson_pmf",
    "integrate.odeint": "odeint",
    "spatial.distance.cdist": "cdist", "spatial.distance.pdist": "pdist",
}

_SUBMODULES = ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.integrate",
               "scipy.spatial.distance")

_functions: dict[int, str] = {}  # id(SciPy function or ufunc) -> scipy_library name
_methods: dict[tuple[int, str], str] = {}  # (id(distribution), method) -> name
_namespaces: dict[int, str] = {}  # id(distribution) -> its dotted name
_names: dict[int, str] = {}  # id(SciPy object) -> its dotted name (for messages)
_keep: list[Any] = []  # the objects whose ids are keys above stay alive
_resolved: set[str] = set()


def _refresh() -> None:
    """Resolve the table for each SciPy submodule the process has imported since."""
    for modname in _SUBMODULES:
        if modname in _resolved or modname not in sys.modules:
            continue
        _resolved.add(modname)
        mod = sys.modules[modname]
        prefix = modname.split(".", 1)[1] + "."
        for key, fname in SCIPY_LIBRARY.items():
            if not key.startswith(prefix):
                continue
            parts = key[len(prefix):].split(".")
            obj = getattr(mod, parts[0], None)
            if obj is None:  # an older SciPy without it
                continue
            _keep.append(obj)
            if len(parts) == 1:
                _functions[id(obj)] = fname
                _names[id(obj)] = f"scipy.{key}"
            else:
                _namespaces[id(obj)] = f"{modname}.{parts[0]}"
                _methods[(id(obj), parts[1])] = fname


def _scipy_loaded() -> bool:
    return "scipy" in sys.modules


def library_function(obj: Any) -> types.FunctionType | None:
    """The subset function standing for NumPy/SciPy function ``obj``, or ``None``."""
    name = B.LIBRARY.get(id(obj))
    if name is not None:
        if "." in name:  # another library module's function (myc.frontend.linalg_library)
            import importlib

            mod, _, attr = name.rpartition(".")
            return getattr(importlib.import_module(mod), attr)
        from myc.frontend import np_library

        return getattr(np_library, name)
    if not _scipy_loaded():
        return None
    _refresh()
    name = _functions.get(id(obj))
    if name is None and isinstance(obj, types.MethodType):
        name = _methods.get((id(obj.__self__), obj.__name__))
    if name is None:
        return None
    from myc.frontend import scipy_library

    return getattr(scipy_library, name)


def is_namespace(obj: Any) -> bool:
    """Is ``obj`` a SciPy object whose attributes are library functions (``norm``)?"""
    if not _scipy_loaded():
        return False
    _refresh()
    return id(obj) in _namespaces


def namespace_name(obj: Any) -> str | None:
    """``scipy.stats.norm`` for the ``norm`` distribution object, else ``None``."""
    if not _scipy_loaded():
        return None
    _refresh()
    return _namespaces.get(id(obj))


def supported_methods(obj: Any) -> list[str]:
    """The methods of SciPy namespace ``obj`` that are library functions."""
    return sorted(m for (i, m) in _methods if i == id(obj))


# SciPy functions programs call that myc does not compile, with what to do instead
_SCIPY_HINTS = {
    "scipy.integrate.solve_ivp": "call scipy.integrate.odeint(func, y0, t), which myc "
    "compiles (an adaptive Runge-Kutta integrator it differentiates), or integrate with a "
    "loop written with NumPy",
    "scipy.signal.convolve": "write the convolution with NumPy: a sum over the kernel's "
    "offsets of shifted slices times kernel entries (or np.einsum over a stack of them)",
    "scipy.signal.convolve2d": "write the convolution with NumPy: a sum over the kernel's "
    "offsets of shifted slices times kernel entries",
    "scipy.optimize.minimize": "call the optimizer outside the compiled function, with "
    "myc.value_and_grad(f) as its objective and jac=True",
}


def public_name(fn: types.FunctionType) -> str:
    """``scipy.integrate.solve_ivp`` for the function of ``scipy.integrate._ivp.ivp``:
    the package path up to its first private module."""
    parts = []
    for p in fn.__module__.split("."):
        if p.startswith("_"):
            break
        parts.append(p)
    return ".".join([*parts, fn.__name__])


def scipy_refusal(fn: types.FunctionType) -> tuple[str, str] | None:
    """``(message, hint)`` when ``fn`` is SciPy's own Python function (not one myc
    implements): its source is not compiled, since SciPy's internals (object checks,
    Fortran calls, keyword handling) are far outside the subset."""
    module = fn.__module__ or ""  # None for a function exec'd without a __name__
    if not module.startswith("scipy.") and module != "scipy":
        return None
    name = public_name(fn)
    return (f"{name} is not supported by myc (SciPy's source is not compiled)",
            _SCIPY_HINTS.get(name, "the SciPy functions myc supports are listed in its "
                                   "docs/scipy.md; call this one outside the compiled "
                                   "function and pass its result as an argument"))
