"""The pass manager: rewrite phases to a fixpoint, with dumps and timings.

Phases (PyTensor's order): canonicalize (algebraic identities, CSE), stabilize
(numerical-stability rewrites), then canonicalize again; last, where the backend's host
code has GEMM with ``beta = 1``, sums of matrix products become accumulations
(``myc.opt.products``); fusion grouping follows (``myc.pipeline.fused``).
``MYC_DUMP_IR=dir`` writes the graph after every pass; ``MYC_TIMINGS=1`` charges each
pass's time to a stage of the call's report (``myc.timings``); tests set ``verify=True``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from myc.ir.manager import Manager
from myc.ir.nodes import Apply, Constant, Graph
from myc.ir.verify import verify
from myc.opt import cse as _cse
from myc.opt import gathers, products, reductions, simplify, stability
from myc.opt.rewrite import rewrite
from myc.prims import P
from myc.timings import add as add_count
from myc.timings import stage

MAX_ROUNDS = 8


def _dump(g: Graph, step: int, name: str) -> None:
    d = os.environ.get("MYC_DUMP_IR")
    if not d:
        return
    from myc.ir.printer import print_graph

    path = Path(d)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{g.name.replace(':', '_')}.{step:02d}.{name}.txt").write_text(print_graph(g))


PASSES = [
    ("simplify", lambda g: rewrite(g, simplify.RULES)),
    ("cse", _cse.cse),
    ("sums and gathers", lambda g: rewrite(g, reductions.RULES + gathers.RULES)),
    ("stabilize", stability.stabilize),
]


def loop_bodies(g: Graph) -> list:
    """The ``LoopBody`` of every ``loop`` node and the ``TypedFn`` of every ``invoke`` node
    of ``g`` (not those nested in them): typed programs of their own."""
    from myc.infer.calls import TypedFn
    from myc.infer.control import LoopBody

    mng = Manager(g)
    return [n.inputs[1].value for n in mng.owned.get(g, [])
            if isinstance(n, Apply) and isinstance(n.inputs[0], Constant)
            and ((n.inputs[0].value is P.loop and isinstance(n.inputs[1].value, LoopBody))
                 or (n.inputs[0].value is P.invoke and isinstance(n.inputs[1].value,
                                                                  TypedFn)))]


def optimize(g: Graph, verify_each: bool = False, _done: set[int] | None = None,
             accumulate: bool = False) -> dict[str, float]:
    """Run the passes on the typed graph ``g`` in place until nothing changes; then, with
    ``accumulate`` (the backend's ``gemm_accumulate``), fold sums of matrix products into
    GEMM accumulations -- after the rounds, which would otherwise see a ``matmul_acc``
    where their rules expect an ``add`` of a ``matmul``."""
    done = set() if _done is None else _done  # a recursive function's body: once
    done.add(id(g))
    timings: dict[str, float] = {}
    step = 0
    _dump(g, step, "typed")
    for _ in range(MAX_ROUNDS):
        changed = 0
        for name, fn in PASSES:
            t0 = time.perf_counter()
            with stage(f"opt {name}"):
                c = fn(g)
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0
            changed += c
            step += 1
            if c:
                _dump(g, step, name)
            if verify_each:
                verify(g)
        if not changed:
            break
    with stage("opt late"):
        late = rewrite(g, gathers.LATE)  # forms the rounds above simplify less well
        if late:
            rewrite(g, [reductions.fold_constants])
            _cse.cse(g)
    if late:
        step += 1
        _dump(g, step, "late")
    if accumulate:
        with stage("opt gemm accumulate"):
            acc = products.accumulate_products(g)
        add_count("gemm accumulations", acc)
        if acc:
            step += 1
            _dump(g, step, "gemm accumulate")
    for body in loop_bodies(g):  # each loop's typed body is a program of its own
        if id(body.graph) in done:
            continue
        for k, v in optimize(body.graph, verify_each, done, accumulate).items():
            timings[k] = timings.get(k, 0.0) + v
    return timings
