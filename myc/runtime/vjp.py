"""``vjp``: run ``J(f)`` once, hand back the backpropagator as a Python pullback; ``jvp``:
run the forward-mode graph.  Both compile like any program, once per function and
backend (the graph transforms themselves are ``myc.ad``'s)."""

from __future__ import annotations

import copy
import weakref
from typing import Any

import numpy as np

from myc.ad.forward import jvp_graph
from myc.ad.grad import lift_parameter
from myc.ad.reverse import reverse_transform, tuple_k
from myc.ir.nodes import Closure, Constant, Graph
from myc.prims import ZERO, P
from myc.prims.containers import like, positional
from myc.prims.effects import is_rng
from myc.runtime.args import check_arg, check_like, own_outputs
from myc.runtime.specialize import make_executable


def _cotangent(d: Any, x: Any) -> Any:
    """A cotangent in the structure of argument ``x``; integer and bool inputs get zeros."""
    if isinstance(x, tuple):
        ds = (None,) * len(x) if not isinstance(d, tuple) else d
        return like(x, [_cotangent(a, b) for a, b in zip(ds, x, strict=True)])
    if is_rng(x) or x is None or isinstance(x, (str, Closure)) or callable(x):
        return None  # a generator, None, a string or a function (static values) has no
        # cotangent
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
        jg = reverse_transform(graph)
        w = Graph(f"vjp({graph.name})")
        xs = [w.add_parameter(f"x{i}") for i in range(nargs)]
        ct = w.add_parameter("cotangent")
        xs = [lift_parameter(w, graph, i, x) if i < len(graph.parameters) else x
              for i, x in enumerate(xs)]  # (a function default: its J image)
        r = w.apply(Constant(jg), Constant(tuple_k(nargs + 1)), *xs)
        back = w.apply(P.getitem, r, 1)
        w.output = w.apply(back, ct)
        runs = per.setdefault((backend, nargs), (make_executable(graph, backend),
                                                 make_executable(w, backend)))
    return runs


def make_vjp(graph: Graph, args: list[Any], originals: list[Any], backend: str = "cpu"):
    forward, backward = _programs(graph, len(args), backend)
    # the pullback reruns the forward pass: from copies of the generators as they were
    # (the same draws; the caller's generators advance once, by the forward call)
    replay = [copy.deepcopy(a) if is_rng(a) else a for a in args]
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
            d = backward(*[copy.deepcopy(a) if is_rng(a) else a for a in replay],
                         positional(ct))  # sensitivities are positional
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


_JVP: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # f -> {backend: executable}


def run_jvp(f: Graph, primals: list, tangents: list, backend: str = "cpu"):
    """``myc.jvp``: the forward-mode graph compiled like any program (specialized per
    signature, its loops native), once per function and backend."""
    per = _JVP.setdefault(f, {})
    run = per.get(backend)
    if run is None:
        run = per.setdefault(backend, make_executable(jvp_graph(f), backend))
    return run(tuple(primals), tuple(tangents))
