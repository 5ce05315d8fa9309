"""``myc.grad(f)`` (or another myc transform) inside a program where ``f`` is a function
value -- an argument (``def descend(loss, x): ... myc.grad(loss)(x)``), an attribute of
an object argument -- and so known only when the program specializes.  Where ``f`` is
written in the program the frontend transforms it at once (``transform_call``); here the
transform runs at specialization, on the function the call received, through this
structural primitive.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from myc.errors import MycTypeError
from myc.ir.nodes import Closure, Graph, top_closure
from myc.prims import Primitive
from myc.prims.registry import register


def _transform_value(fn: object, transform: Callable, options: tuple, keywords: tuple,
                     attr: str | None) -> object:
    """The transformed function's closure, built as it is where ``f`` is written.
    ``attr``: ``fn`` is an object and the function its attribute ``attr``; a method is
    transformed with its ``self`` as a leading parameter (``argnums`` counted past it),
    which the caller passes (``FunctionLowerer.transform_call``)."""
    if attr is not None:
        meta = getattr(fn, "meta_", None)
        if meta is None or attr not in meta.names:
            raise MycTypeError(f"'.{attr}' of a {type(fn).__name__} passed to a myc "
                               "transform: not a function of an object of your classes")
        method = attr not in meta.fields
        fn = fn.field(attr)  # type: ignore[attr-defined]
        if method:
            options, keywords = _past_self(transform, options, keywords)
    if isinstance(fn, Closure):
        if fn.frame is not None:
            raise MycTypeError(f"function '{fn.graph.name}' made inside the program (a "
                               "closure) cannot be transformed by a myc transform there",
                               hint="define it at module level, or apply the transform "
                               "where it is written")
        target: object = fn.graph
    elif isinstance(fn, (Graph, Primitive)):
        target = fn
    else:
        raise MycTypeError("a myc transform inside a program takes a function; got a "
                           f"{type(fn).__name__}")
    flags = getattr(target, "flags", {})
    if "primal_signature" in flags:  # J(f) or F(f): this program is being differentiated
        raise MycTypeError(
            f"a myc transform of function '{target.name.split(':')[-1]}' passed in as a "  # type: ignore[attr-defined]
            "value, inside a program that is itself differentiated (a derivative of a "
            "derivative), is not supported", hint="apply the transform where the function "
            "is written (myc.grad(loss) with loss by its name), or differentiate outside")
    return top_closure(transform(target, *options, **dict(keywords)))


def _past_self(transform: Callable, options: tuple, keywords: tuple) -> tuple[tuple, tuple]:
    """``argnums`` of a transform counted past a method's ``self``."""
    try:
        names = list(inspect.signature(transform).parameters)
    except (TypeError, ValueError):
        return options, keywords
    if "argnums" not in names:  # (myc.jit: nothing to count)
        return options, keywords

    def shift(v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(shift(x) for x in v)
        return v + 1 if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else v

    kw = dict(keywords)
    at = names.index("argnums") - 1  # (after the function)
    if at < len(options):
        options = (*options[:at], shift(options[at]), *options[at + 1:])
    elif "argnums" in kw or "argnum" in kw:
        key = "argnums" if "argnums" in kw else "argnum"
        kw[key] = shift(kw[key])
    else:
        kw["argnums"] = 1
    return options, tuple(sorted(kw.items()))


TRANSFORM_VALUE = register(
    "transform_value", "fn transform options keywords attr", _transform_value,
    differentiable=False,
    doc="``myc.grad(f)`` (or another myc transform) inside a program of a function "
        "value ``f`` known only when the program specializes: its transformed closure.")
