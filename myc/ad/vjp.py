"""``vjp``: run ``J(f)`` once, hand back the backpropagator as a Python pullback."""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.ad.reverse import reverse_transform, tuple_k
from myc.backends.interp import Interpreter
from myc.ir.nodes import Constant, Graph
from myc.prims import ZERO, P
from myc.runtime.args import check_arg, check_like, own_outputs


def _cotangent(d: Any, x: Any) -> Any:
    """A cotangent in the structure of argument ``x``; integer and bool inputs get zeros."""
    if isinstance(x, tuple):
        ds = (None,) * len(x) if not isinstance(d, tuple) else d
        return tuple(_cotangent(a, b) for a, b in zip(ds, x, strict=True))
    kind = np.result_type(x).kind if not isinstance(x, (bool, int)) else "i"
    if kind in "biu":
        return np.zeros_like(x) if isinstance(x, np.ndarray) else type(x)(0)
    return P.grad_cast.impl(ZERO if d is None else d, x)


def make_vjp(graph: Graph, args: list[Any], originals: list[Any]):
    jg = reverse_transform(graph)
    # one root graph calling J(f) with its continuation, so the evaluator knows both
    w = Graph("vjp")
    xs = [w.add_parameter(f"x{i}") for i in range(len(args))]
    w.output = w.apply(Constant(jg), Constant(tuple_k(len(args) + 1)), *xs)
    interp = Interpreter(w)
    out, back = interp.run(*args)

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        from myc.errors import MycError

        try:
            ct = check_arg(cotangent, "cotangent")
            check_like(ct, out, "cotangent", "the output")
            d = interp.call_value(back, [ct])
            # one cotangent per primal given (parameters left to defaults get none)
            return own_outputs(tuple(_cotangent(d[i + 1], a)
                                     for i, a in enumerate(args[:len(originals)])))
        except MycError as exc:
            raise exc.with_traceback(None) from None

    return own_outputs(out), pullback
