"""Functions, and the methods of objects, passed as arguments: static values compiled in.

A higher-order function (``def fit(loss, w, x): ... loss(w, x) ...``) and a model object
whose methods the program calls (``def step(model, x): return model.loss(x)``) are how
real code is written.  JAX needs ``static_argnums`` for the first and a pytree
registration for the second; myc reads both the way it reads a function or an object in
a global: a function argument is its parsed graph (a closure with no frame), part of the
call's signature by identity, as a function default (``act=np.tanh``) already is; an
object argument keeps its data attributes as data (new arrays each call reuse the
program) and carries its class's methods as such graphs.

The graphs come from the frontend's parse cache, so the same function gives the same
closure each call (one compile); a function that a rebound global made stale is parsed
again, and with it the signature changes.  A program whose signature holds such a
closure is not put in the disk cache: a closure is known by identity only in this
process (two functions called ``loss`` in two modules would share a key).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from myc.errors import MycError, MycTypeError
from myc.ir.nodes import Closure, Graph, top_closure


def is_function(value: Any) -> bool:
    """A Python function, a ``myc.jit``/``grad`` object, or a NumPy/SciPy function myc
    knows by name (a ufunc such as ``np.tanh``)."""
    from myc.frontend.builtins import PRIMITIVE_OF
    from myc.frontend.libraries import library_function

    if isinstance(value, types.FunctionType) or hasattr(value, "__myc_function__") or \
            hasattr(value, "__myc_graph__"):
        return True
    if isinstance(value, (type, types.ModuleType)):
        return False
    return id(value) in PRIMITIVE_OF or library_function(value) is not None


def function_value(value: Any, path: str) -> Any:
    """The program's value for a function argument: a primitive or a closure."""
    from myc.frontend.builtins import PRIMITIVE_OF
    from myc.pipeline import graph_of

    prim = PRIMITIVE_OF.get(id(value))
    if prim is not None:
        return prim
    try:
        return top_closure(graph_of(value))
    except MycError as exc:
        name = getattr(value, "__qualname__", type(value).__name__)
        raise MycTypeError(f"{path} is the function '{name}', which myc cannot compile: "
                           f"{exc.message}", loc=exc.loc) from None


def method_values(cls: type) -> tuple[tuple[str, ...], list[Closure]]:
    """The methods of a user's class as closures, in ``class_members``' order (a method
    myc cannot compile raises only when it is called, as for an object in a global)."""
    from myc.frontend.objects import class_members

    methods, _ = class_members(cls)
    return tuple(methods), [top_closure(_method_graph(cls, m, fn))
                            for m, fn in methods.items()]


_STATIC = (bool, int, str, type(None))


def _is_static(v: Any) -> bool:
    if isinstance(v, tuple):
        return all(_is_static(x) for x in v)
    return isinstance(v, _STATIC) or (isinstance(v, np.integer))


def static_properties(value: Any, fields: list[str], path: str) -> tuple[tuple, list]:
    """The properties of an object passed as an argument, computed by Python now, where
    their values are static (ints, bools, strings, tuples of them: a config's ``head_dim
    = d_model // n_heads``), part of the call's signature as its int attributes are.  A
    property giving data (an array, a float: it may depend on the arrays being
    differentiated) stays uncomputed -- reading it is refused, as before, rather than
    frozen into a constant; one that raises raises when the program reads it."""
    from myc.frontend.objects import class_members
    from myc.prims.containers import Unsupported

    _, props = class_members(type(value))
    names, values = [], []
    cls = type(value).__name__
    for name, prop in props.items():
        if name in fields or prop.fget is None:
            continue
        names.append(name)
        try:
            v = getattr(value, name)
        except Exception as exc:  # noqa: BLE001 - the user's property: raised if read
            values.append(Unsupported(f"'{cls}.{name}' raised {type(exc).__name__}: {exc} "
                                      f"(a property of {_where(path)})"))
            continue
        if _is_static(v):
            values.append(int(v) if isinstance(v, np.integer) else v)
        else:
            values.append(Unsupported(
                f"'{cls}.{name}' of {_where(path)} is a property giving "
                f"{type(v).__name__} data: myc computes an argument's properties only when "
                "they are ints, bools or strings (known when the program specializes)|hint|"
                f"call a method instead (def {name}(self): ...; obj.{name}()), or capture the "
                "object in a closure (or a global)"))
    return tuple(names), values


def _where(path: str) -> str:
    return f"argument {path}"


_WRAPPERS: dict[int, tuple[Any, Any, Graph]] = {}  # id(method) -> (method, inner, graph)


def _method_graph(cls: type, name: str, fn: Any) -> Graph:
    """``method_graph``, the same graph from call to call while the method's own graph
    is (a plain method's is the parse cache's; a static method's wrapper and a refusing
    stand-in are built anew by ``method_graph``, so they are kept here: a new graph per
    call would be a new signature, a compile per call)."""
    from myc.frontend.lower import parse
    from myc.frontend.objects import method_graph, writing_self

    if isinstance(fn, types.FunctionType):
        try:
            return writing_self(fn, parse(fn), f"{cls.__name__}.{name}")
        except MycError:
            pass  # its refusing stand-in, kept below (a sampler's ``sample`` method that
            # jits a bound method: a new stand-in per call was a compile per call)
    inner: Any = None
    if isinstance(fn, staticmethod) and isinstance(fn.__func__, types.FunctionType):
        try:
            inner = parse(fn.__func__)
        except MycError:
            inner = None
    kept = _WRAPPERS.get(id(fn))
    if kept is not None and kept[0] is fn and kept[1] is inner:
        return kept[2]
    g = method_graph(cls, name, fn, parse)
    _WRAPPERS[id(fn)] = (fn, inner, g)
    return g


def holds_closure(key: Any) -> bool:
    """Does a signature key hold a closure (see the module's note on the disk cache)?"""
    if isinstance(key, Closure):
        return True
    if isinstance(key, tuple):
        return any(holds_closure(k) for k in key)
    return False
