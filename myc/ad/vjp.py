"""``vjp``: run ``J(f)`` once, hand back the backpropagator as a Python pullback."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from myc.ad.reverse import reverse_transform, tuple_k
from myc.ir.nodes import Constant, Graph
from myc.prims import ZERO, P
from myc.prims.containers import like, positional
from myc.runtime.args import check_arg, check_like, own_outputs


def _cotangent(d: Any, x: Any) -> Any:
    """A cotangent in the structure of argument ``x``; integer and bool inputs get zeros."""
    if isinstance(x, tuple):
        ds = (None,) * len(x) if not isinstance(d, tuple) else d
        return like(x, [_cotangent(a, b) for a, b in zip(ds, x, strict=True)])
    kind = np.result_type(x).kind if not isinstance(x, (bool, int)) else "i"
    if kind in "biu":
        return np.zeros_like(x) if isinstance(x, np.ndarray) else type(x)(0)
    return P.grad_cast.impl(ZERO if d is None else d, x)


_VJP: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # f -> {backend: runs}


def _programs(graph: Graph, nargs: int, backend: str) -> tuple[Any, Any]:
    """``f`` itself and ``(*args, cotangent) -> sensitivities`` (``J(f)`` run and its
    backpropagator applied in one graph), each compiled like any program, once per
    function and backend.  The pullback recomputes the forward pass rather than keeping
    its intermediates alive between the two calls."""
    per = _VJP.setdefault(graph, {})
    runs = per.get((backend, nargs))
    if runs is None:
        from myc.pipeline import make_executable

        jg = reverse_transform(graph)
        w = Graph(f"vjp({graph.name})")
        xs = [w.add_parameter(f"x{i}") for i in range(nargs)]
        ct = w.add_parameter("cotangent")
        r = w.apply(Constant(jg), Constant(tuple_k(nargs + 1)), *xs)
        back = w.apply(P.getitem, r, 1)
        w.output = w.apply(back, ct)
        runs = per[(backend, nargs)] = (make_executable(graph, backend),
                                       make_executable(w, backend))
    return runs


def make_vjp(graph: Graph, args: list[Any], originals: list[Any], backend: str = "cpu"):
    forward, backward = _programs(graph, len(args), backend)
    out = forward(*args)

    def pullback(*cotangents: Any, **kwargs: Any) -> tuple[Any, ...]:
        from myc.errors import MycError, MycTypeError

        try:
            if len(cotangents) != 1 or kwargs:
                got = len(cotangents) + len(kwargs)
                raise MycTypeError(
                    f"the pullback of {graph.name} takes 1 argument, a cotangent with "
                    f"the structure of the function's output, but {got} were given",
                    hint="for a function returning a tuple, pass one tuple: "
                         "pullback((ct1, ct2))")
            cotangent = cotangents[0]
            ct = check_arg(cotangent, "cotangent")
            check_like(ct, out, "cotangent", "the output")
            d = backward(*args, positional(ct))  # sensitivities are positional
            cts = [_cotangent(d[i + 1], a) for i, a in enumerate(args)]
            sig = graph.flags.get("signature")
            if sig is not None and not sig.simple:
                # def f(x, *args): the cotangents of the primals as they were passed
                star = list(cts[len(sig.names)]) if sig.varargs is not None else []
                cts = cts[:sig.n_positional] + star
            # one cotangent per primal given (parameters left to defaults get none)
            return own_outputs(tuple(cts[:len(originals)]))
        except MycError as exc:
            raise exc.with_traceback(None) from None

    return own_outputs(out), pullback
