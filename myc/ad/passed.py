"""Functions passed as arguments to a differentiated function, lifted as ``J``/``F`` lift
function constants.

A function argument (``fit(loss, w)``) or an object's methods
(``myc.runtime.static_args``) reach a transformed program as closures of the user's
graphs; the transformed program calls them the transformed way, so each is replaced by
the closure of its image (``J(g)`` or ``F(g)``) before the call, in structures too.  The
images are cached per graph by the transforms, and their closures by
``myc.ir.nodes.top_closure``.
"""

from __future__ import annotations

from collections.abc import Callable

from myc.errors import MycTypeError
from myc.ir.nodes import Closure, Graph, top_closure
from myc.prims import Primitive
from myc.prims.containers import like


def lift(x: object, graph_image: Callable[[Graph], Graph],
         prim_image: Callable[[Primitive], Graph]) -> object:
    """``x`` with every function in it replaced by its image's closure; data as it is."""
    if isinstance(x, Closure):
        if x.frame is not None:  # (arguments hold only top-level functions' closures)
            raise MycTypeError(f"function '{x.graph.name}' passed to a differentiated "
                               "function captures a frame myc cannot differentiate through")
        return top_closure(graph_image(x.graph))
    if isinstance(x, Primitive):
        if x.variadic:
            raise MycTypeError(f"'{x.name}' takes any number of arguments: pass a function "
                               "that calls it with a fixed number")
        return top_closure(prim_image(x))
    if isinstance(x, tuple) and holds_function(x):
        return like(x, [lift(v, graph_image, prim_image) for v in tuple.__iter__(x)])
    return x


def holds_function(x: object) -> bool:
    if isinstance(x, (Closure, Primitive)):
        return True
    return isinstance(x, tuple) and any(holds_function(v) for v in tuple.__iter__(x))
