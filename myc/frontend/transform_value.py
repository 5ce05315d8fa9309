"""``myc.grad(f)`` (or another myc transform) inside a program where ``f`` is a function
value -- an argument (``def descend(loss, x): ... myc.grad(loss)(x)``), an attribute of
an object argument -- and so known only when the program specializes.  Where ``f`` is
written in the program the frontend transforms it at once (``transform_call``); here the
transform runs at specialization, on the function the call received, through this
structural primitive.
"""

from __future__ import annotations

from collections.abc import Callable

from myc.errors import MycTypeError
from myc.ir.nodes import Closure, Graph, top_closure
from myc.prims import Primitive
from myc.prims.registry import register


def _transform_value(fn: object, transform: Callable, options: tuple, keywords: tuple
                     ) -> object:
    """The transformed function's closure, built as it is where ``f`` is written."""
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


TRANSFORM_VALUE = register(
    "transform_value", "fn transform options keywords", _transform_value,
    differentiable=False,
    doc="``myc.grad(f)`` (or another myc transform) inside a program of a function "
        "value ``f`` known only when the program specializes: its transformed closure.")
