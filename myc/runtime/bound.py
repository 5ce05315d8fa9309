"""Bound methods and ``functools.partial`` objects handed to ``jit``/``grad``/``vjp``/``jvp``.

JAX users write ``jax.jit(model.loss)`` and ``jax.grad(partial(loss, X=X, y=y))``; myc
compiles Python functions from their source, and a bound callable has none of its own.
So a bound callable is split into a *generated* Python function that calls the
underlying one, and the data it was bound with:

* static bound values -- the ``self`` of a method (an object of the user's class, read
  as a static structure, as an object in a global is), functions, strings, ``None`` --
  are globals of the generated function: compiled in, watched by identity like any
  global;
* data -- arrays, numbers, random generators and lists/tuples/dicts of them -- become
  leading *hidden parameters* of the generated function, passed on each call.  A new
  ``partial(loss, X=batch)`` per training step therefore reuses the program compiled
  for the first batch (generated functions are shared by the structure of the binding:
  the function, the static values' identities, which positions hold data).

``argnums`` count the parameters the caller sees (the hidden ones are skipped), as in
JAX; a keyword bound by ``partial`` can be given again at the call (Python's rule).
"""

from __future__ import annotations

import functools
import inspect
import linecache
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from myc.errors import MycTypeError

_PARAM = inspect.Parameter
_LOCK = threading.Lock()
_MAX_SHARED = 128  # generated functions (and their transforms) kept per process
_GENERATED: OrderedDict[Any, types.FunctionType] = OrderedDict()
_TRANSFORMS: OrderedDict[Any, Any] = OrderedDict()


@dataclass
class Split:
    """A bound callable as a generated function and the data it passes first."""

    fn: types.FunctionType
    data: tuple  # the hidden arguments' values, in order
    keywords: frozenset  # names bound by keyword (a call may give them again)
    original: Any  # the bound callable itself


def is_bound(fn: Any) -> bool:
    """A bound method of a Python function or a ``functools.partial`` -- not a
    library's method that myc knows by name (``scipy.stats.norm.logpdf``)."""
    if isinstance(fn, functools.partial):
        return True
    if not (isinstance(fn, types.MethodType) and callable(fn.__func__)):
        return False
    from myc.frontend.libraries import library_function

    return library_function(fn) is None


def _flatten(fn: Any) -> tuple[Any, list, dict]:
    """(the function underneath, the positional values bound, the keyword values)."""
    pos: list = []
    kw: dict = {}
    while True:
        if isinstance(fn, functools.partial):
            pos = list(fn.args) + pos
            kw = {**fn.keywords, **kw}
            fn = fn.func
        elif isinstance(fn, types.MethodType):
            pos = [fn.__self__] + pos
            fn = fn.__func__
        else:
            return fn, pos, kw


def _python(fn: Any) -> bool:
    """A function myc reads the source (and so the signature) of."""
    while hasattr(fn, "__myc_function__"):
        fn = fn.__myc_function__
    return isinstance(fn, types.FunctionType) or hasattr(fn, "__myc_graph__")


def _function_default(p: inspect.Parameter) -> bool:
    return p.default is not _PARAM.empty and callable(p.default) and \
        not isinstance(p.default, type)


def is_data(v: Any) -> bool:
    """Bound values passed as arguments: arrays, numbers, generators, and containers
    holding only those (everything else is compiled in)."""
    if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray,
                      np.random.Generator, np.random.RandomState)):
        return True
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(is_data(x) for x in v)
    if isinstance(v, dict):
        return len(v) > 0 and all(isinstance(k, str) for k in v) and \
            all(is_data(x) for x in v.values())
    return False


def _signature(fn: Any, name: str) -> inspect.Signature:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        raise MycTypeError(f"myc cannot read the parameters of {name}: it compiles Python "
                           "functions, bound methods and functools.partial of them") from None


def split(bound: Any) -> Split:
    """``bound`` (``is_bound``) as a generated function and its hidden arguments."""
    fn, pos, kw = _flatten(bound)
    name = getattr(fn, "__name__", type(fn).__name__)
    if _python(fn):
        params = list(_signature(fn, name).parameters.values())
    else:  # a NumPy function (partial(np.dot, A)): the call's own arguments passed on,
        # not its defaults (the library's signature is not the one myc implements)
        params = [_PARAM("args", _PARAM.VAR_POSITIONAL),
                  _PARAM("kwargs", _PARAM.VAR_KEYWORD)]
    named = [p for p in params if p.kind in (_PARAM.POSITIONAL_ONLY,
                                             _PARAM.POSITIONAL_OR_KEYWORD)]
    star = next((p for p in params if p.kind == _PARAM.VAR_POSITIONAL), None)
    starkw = next((p for p in params if p.kind == _PARAM.VAR_KEYWORD), None)
    if len(pos) > len(named) and star is None:
        raise MycTypeError(f"{name}() takes {len(named)} positional arguments but the "
                           f"bound callable gives it {len(pos)}")
    names = {p.name for p in params}
    for k in kw:
        if k not in names and starkw is None:
            raise MycTypeError(f"{name}() got an unexpected keyword argument '{k}' "
                               "(bound by functools.partial)")
        if any(p.name == k for p in named[:len(pos)]):
            raise MycTypeError(f"{name}() got multiple values for argument '{k}' "
                               "(bound by functools.partial)")
    # a function default left open (``link=np.tanh``) is bound as a static value (the
    # call may still give it: Python's rule), so that no function enters the program as
    # an argument -- forward mode takes no function arguments
    open_pos = [p for p in named[len(pos):] if p.name not in kw]
    for p in reversed(open_pos):
        if not _function_default(p):
            break
        kw[p.name] = p.default
    for p in params:
        if p.kind == _PARAM.KEYWORD_ONLY and p.name not in kw and _function_default(p):
            kw[p.name] = p.default
    data: list = []
    statics: dict[str, Any] = {}
    shape: list = []  # the structure the generated function depends on (its cache key)

    def value(v: Any, label: str) -> str:
        if is_data(v):
            data.append(v)
            shape.append(("data", label))
            return f"__myc_d{len(data) - 1}"
        statics[f"__myc_s{len(statics)}"] = v
        shape.append(("static", label, id(v)))
        return f"__myc_s{len(statics) - 1}"

    call_pos = [value(v, f"p{i}") for i, v in enumerate(pos)]
    call_kw = [f"{k}={value(v, 'k' + k)}" for k, v in kw.items()]
    # the parameters the caller sees, by Python's partial rule: after a positional
    # parameter bound by keyword, the later ones are keyword-only (and *args closed)
    pos_visible, kw_visible, after_kw = [], [], False
    for p in named[len(pos):]:
        if p.name in kw:
            after_kw = True
        else:
            (kw_visible if after_kw else pos_visible).append(p)
    kw_visible += [p for p in params if p.kind == _PARAM.KEYWORD_ONLY and p.name not in kw]
    defaults = {p.name: p.default for p in pos_visible + kw_visible
                if p.default is not _PARAM.empty}

    def param(p: Any) -> str:
        return f"{p.name}=__myc_default_{p.name}" if p.name in defaults else p.name

    open_star = star is not None and not after_kw
    sig_parts = [f"__myc_d{i}" for i in range(len(data))] + [param(p) for p in pos_visible]
    if open_star:
        sig_parts.append("*__myc_args")
    elif kw_visible:
        sig_parts.append("*")
    sig_parts += [param(p) for p in kw_visible]
    call = call_pos + [p.name for p in pos_visible] + (["*__myc_args"] if open_star else [])
    call += [f"{p.name}={p.name}" for p in kw_visible] + call_kw
    if starkw is not None:
        sig_parts.append("**__myc_kwargs")
        call.append("**__myc_kwargs")
    args = ", ".join(call)
    fname = name if name.isidentifier() else "bound"
    key = (fn, tuple(shape), tuple(sig_parts), tuple(sorted(
        (k, id(v)) for k, v in defaults.items())))
    with _LOCK:
        made = _GENERATED.get(key)
        if made is not None:
            _GENERATED.move_to_end(key)
        else:
            made = _generate(fname, fn, sig_parts, args, statics, defaults, key)
            _GENERATED[key] = made
            while len(_GENERATED) > _MAX_SHARED:
                _GENERATED.popitem(last=False)
    return Split(made, tuple(data), frozenset(kw), bound)


_COUNT = [0]


def _generate(name: str, fn: Any, sig_parts: list[str], args: str, statics: dict,
              defaults: dict, key: Any) -> types.FunctionType:
    """The generated function, its source registered with ``linecache`` (the frontend
    reads functions from their source)."""
    _COUNT[0] += 1
    filename = f"<myc bound {name} #{_COUNT[0]}>"
    source = f"def {name}({', '.join(sig_parts)}):\n    return __myc_fn({args})\n"
    namespace: dict[str, Any] = {"__myc_fn": fn, "__name__": "myc_bound", **statics}
    namespace.update({f"__myc_default_{k}": v for k, v in defaults.items()})
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own text
    made = namespace[name]
    made.__qualname__ = getattr(fn, "__qualname__", name)
    made.__doc__ = getattr(fn, "__doc__", None)
    return made


def shared(key: Any, make: Any) -> Any:
    """One transform (``jit``, ``grad``...) per generated function and options, so that
    a new partial of the same structure reuses its compiled programs."""
    with _LOCK:
        got = _TRANSFORMS.get(key)
        if got is not None:
            _TRANSFORMS.move_to_end(key)
            return got
    got = make()
    with _LOCK:
        got = _TRANSFORMS.setdefault(key, got)
        while len(_TRANSFORMS) > _MAX_SHARED:
            _TRANSFORMS.popitem(last=False)
    return got


def resplit(s: Split, kwargs: dict) -> tuple[Split, dict]:
    """A call giving again a keyword the partial bound: Python's rule (the call's value
    wins), as a new binding -- usually of the same generated function."""
    again = {k: kwargs[k] for k in kwargs if k in s.keywords}
    if not again:
        return s, kwargs
    rest = {k: v for k, v in kwargs.items() if k not in s.keywords}
    return split(functools.partial(s.original, **again)), rest


def zeros_like_tree(v: Any) -> Any:
    """A zero tangent for a hidden argument (the bound data does not vary)."""
    if isinstance(v, np.ndarray):
        return np.zeros_like(v)
    if isinstance(v, (np.random.Generator, np.random.RandomState)):
        return None
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*[zeros_like_tree(x) for x in v])
    if isinstance(v, (list, tuple)):
        return type(v)(zeros_like_tree(x) for x in v)
    if isinstance(v, dict):
        return {k: zeros_like_tree(x) for k, x in v.items()}
    return v * 0


def underlying(fn: Any) -> Any:
    """The function a bound callable calls in the end (its name, its backend)."""
    return _flatten(fn)[0]
