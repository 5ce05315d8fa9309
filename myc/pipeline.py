"""The compilation pipeline: the one stage sequence that ``jit``, ``myc.ir`` and
``myc.aot`` run, stage by stage.

    parsed -> (ad) -> typed -> optimized -> fused -> kernels -> target

``parsed``: the function as graph IR (``myc.frontend``), verified.  ``ad``: the reverse
transform of the parsed graph (``myc.ad``), shown by ``myc.ir``; ``grad`` and friends
build it before the sequence starts.  ``typed``: specialized on the arguments' types
(``myc.infer``): data-dependent loops as ``loop`` nodes, a gradient through them as a
typed adjoint, or the call's decisions guarded.  ``optimized``: rewrites (``myc.opt``).
``fused``: the fusion groups (``myc.opt.fusion``): which operations share one kernel.
``kernels``: the host program (``myc.lower``): kernel steps, library steps, loops.
``target``: each kernel in the backend's own language (``myc.backends.registry``).
``docs/ir.md`` shows each; ``docs/architecture.md`` draws the whole.
"""

from __future__ import annotations

import os
from typing import Any

from myc import timings
from myc.backends.registry import backend as backend_named
from myc.backends.registry import names as backend_names
from myc.infer.signature import EFFECT_WHY, GraphBreak
from myc.ir.manager import node_count
from myc.ir.nodes import Graph
from myc.ir.verify import verify
from myc.lower.kernel import Kernel

STAGES = ("parsed", "ad", "typed", "optimized", "fused", "kernels", "target")


def backends() -> tuple[str, ...]:
    """The registered backends' names."""
    return backend_names()


def graph_of(fn: Any) -> Graph:
    """The graph of what a user hands to ``grad``, ``myc.ir`` or ``myc.aot``: a function
    (jitted or transformed too), a primitive, or a NumPy function the frontend maps to
    one (``myc.grad(np.sin)``)."""
    from myc.frontend.lower import parse
    from myc.prims import Primitive

    if isinstance(fn, Primitive):
        from myc.ad.grad import prim_graph

        return prim_graph(fn)
    from myc.frontend.builtins import PRIMITIVE_OF

    prim = PRIMITIVE_OF.get(id(fn))
    if prim is not None:  # myc.grad(np.sin)
        from myc.ad.grad import prim_graph

        return prim_graph(prim)
    return parse(fn)


def parsed(fn: Any) -> Graph:
    """Stage ``parsed``: ``fn`` (a graph, or what ``myc.frontend.lower.parse`` takes) as
    verified graph IR."""
    from myc.frontend.lower import parse

    g = fn if isinstance(fn, Graph) else parse(fn)
    verify(g)
    return g


def specialize(graph: Graph, args: list[Any]) -> tuple[Graph, Any, GraphBreak | None]:
    """Stage ``typed``: the typed program of ``graph`` for ``args``, its output
    template, and -- when plain specialization broke on data-dependent control flow --
    why.

    Routes, in order: plain tracing (data-dependent loops become ``loop`` nodes); for a
    gradient, the primal traced then swept backwards (``myc.infer.adjoint``); else the
    program specialized on this call's decisions, guarded (``typed.flags["guards"]``).
    Raises ``GraphBreak`` when none applies (the signature is interpreted).
    """
    from myc.infer.trace import trace  # (the tracer is loaded only to compile)

    spec = graph.flags.get("grad_of")
    adjoint = spec is not None and not os.environ.get("MYC_NO_TYPED_AD")
    try:
        typed, template = trace(graph, args, strict_loops=adjoint)
        return typed, template, None
    except GraphBreak as brk:
        first = brk
    if getattr(first, "chosen_loop", False):
        # a long loop of a gradient: kept a loop (with a tape) by the adjoint route, or,
        # where that cannot take the program, unrolled after all
        from myc.infer.adjoint import typed_grad

        primal, nums, single, has_value, has_aux = spec
        try:
            typed, template = typed_grad(primal, args, nums, single, has_value, has_aux)
            typed.flags["route"] = "adjoint"
            return typed, template, None
        except GraphBreak:
            pass
        try:
            typed, template = trace(graph, args)
            return typed, template, None
        except GraphBreak as brk:
            first = brk
    calls = [False, True] if _recursion(first) else [False]
    if calls[-1]:
        try:  # data-dependent recursion: a typed function per signature
            typed, template = trace(graph, args, typed_calls=True)
            return typed, template, None
        except GraphBreak:
            pass
    if adjoint:
        from myc.infer.adjoint import typed_grad

        primal, nums, single, has_value, has_aux = spec
        for typed_calls in calls:
            try:
                typed, template = typed_grad(primal, args, nums, single, has_value,
                                             has_aux, typed_calls)
                typed.flags["route"] = "adjoint"
                return typed, template, first
            except GraphBreak as brk:
                if not typed_calls and _recursion(brk):
                    calls = [False, True]
    try:
        typed, template = trace(graph, args, guarded=True)
    except GraphBreak as brk:
        if first is None or brk.reason != EFFECT_WHY:
            raise
        # a draw cannot be specialized on: say which decision asked for specialization
        # (``if r[t] != 0: running_add = 0``), the line a rewrite would change
        where = "" if first.loc is None else \
            f" at {os.path.basename(first.loc.filename)}:{first.loc.line}"
        raise GraphBreak(f"{brk.reason}, which it is because {first.reason}{where}",
                         brk.loc) from None
    return typed, template, first


def _recursion(brk: GraphBreak) -> bool:
    """Did specialization break on recursion whose depth depends on data (then typed
    functions, ``myc.infer.calls``, may specialize it)?"""
    if os.environ.get("MYC_NO_TYPED_CALLS"):
        return False
    return brk.unbounded


def optimized(typed: Graph, backend: str = "cpu") -> Graph:
    """Stage ``optimized``: ``typed`` rewritten in place (``myc.opt.passes``) for
    ``backend``: sums of matrix products become GEMM accumulations where its host code
    has them (``Target.gemm_accumulate``; ``MYC_NO_GEMM_ACC=1`` turns that off)."""
    from myc.opt import products
    from myc.opt.passes import optimize

    optimize(typed, accumulate=backend_named(backend).gemm_accumulate and products.enabled())
    return typed


def native_first(typed: Graph, backend: str = "cpu", native_max: int | None = None) -> bool:
    """Is ``typed`` small and made only of what ``backend`` 's native host code covers?
    Then every array operation becomes a kernel, so the whole program can run as one
    native function (lowering falls back to the usual groups if it cannot).
    ``native_max``: how many operations is small (None: ``MYC_NATIVE_FIRST_MAX``'s;
    ``myc.lower.program.NO_SIZE_LIMIT``: any number, as a tier-up compiles)."""
    from myc.lower.program import native_capable

    t = backend_named(backend)
    return t.native_host and native_capable(typed, t, native_max)


def fused(typed: Graph, backend: str = "cpu", native_max: int | None = None) -> list[Any]:
    """Stage ``fused``: the fusion groups of the optimized ``typed`` (none under
    ``MYC_NO_FUSION``); lowering compiles each into one kernel.  ``native_max``: as
    :func:`native_first`'s."""
    from myc.opt.selects import selects_as_where

    if backend_named(backend).native_host:  # (as lowering does: the same groups)
        selects_as_where(typed)
    if os.environ.get("MYC_NO_FUSION"):
        return []
    from myc.opt.fusion import fuse

    # a native-first program, or a backend whose every array op is a kernel (a device:
    # the op runs there), groups arrays of any size; else small arrays stay NumPy steps
    every = native_first(typed, backend, native_max) or backend_named(backend).kernel_every_op
    return fuse(typed, 1) if every else fuse(typed)


def lowered(typed: Graph, template: Any, name: str, backend: str = "cpu",
            groups: list[Any] | None = None, compiler: Any = None,
            native_max: int | None = None) -> Any:
    """Stage ``kernels``: the host program of the optimized ``typed`` for ``backend``
    (``groups``: its ``fused`` stage, else made here).  ``native_max``: the size up to
    which a program is lowered native-first (:func:`native_first`)."""
    from myc.lower.program import lower

    backend_named(backend)  # an unknown name: the error lists the registered ones
    stepped = groups is None and not native_first(typed, backend, native_max)
    if stepped:
        groups = fused(typed, backend, native_max)  # (a native-first program groups
        # as it goes)
    prog = lower(typed, template, name, backend=backend, compiler=compiler, groups=groups,
                 native_max=native_max)
    if stepped:  # (what ``myc.runtime.tiering`` looks at)
        prog.not_native_first = True
    return prog


def compile(graph: Graph, args: list[Any], backend: str = "cpu",
            on_typed: Any = None, native_max: int | None = None) -> Any:
    """The whole sequence after ``parsed``: ``graph`` specialized on ``args``, optimized,
    fused and lowered for ``backend``; returns the host program.  ``on_typed`` is told
    why plain specialization broke (a ``GraphBreak``), when it did.  ``native_max``:
    the native-first size limit (:func:`native_first`; a tier-up lifts it).  Raises
    ``GraphBreak`` when ``args`` ' signature cannot be specialized at all."""
    timings.count("parsed nodes", lambda: node_count(graph))
    with timings.stage("infer"):
        typed, template, brk = specialize(graph, args)
    if brk is not None and on_typed is not None:
        on_typed(brk)
    timings.count("typed nodes", lambda: node_count(typed))
    optimized(typed, backend)
    timings.count("optimized nodes", lambda: node_count(typed))
    return lowered(typed, template, graph.name, backend, native_max=native_max)


def compile_runtime(graph: Graph, args: list[Any], positions: frozenset[int],
                    backend: str, pinned: bool = False, native_max: int | None = None):
    """The host program of ``graph`` for ``args`` with the int leaves at ``positions``
    (indices among the call's leaves, tuples flattened) as parameters; raises
    ``NotRuntime`` when the rule above keeps any of them static (or
    anything fails: the by-value program is then made, and reports any error).
    ``pinned``: the variant for a call its program's guards refused, with this call's
    dynamic slices that are out of range pinned to their starts
    (``myc.infer.dynslice``).  ``native_max``: as :func:`compile`'s."""
    from myc.infer.runtime_ints import NotRuntime, decides, leaf_positions
    from myc.infer.trace import trace
    from myc.prims.containers import leaves_of

    pins = None
    if pinned:
        flat = leaves_of(args)
        pins = [flat[i] for i in sorted(leaf_positions(args, positions))]
    try:
        typed, template = trace(graph, args, runtime_ints=positions, pins=pins)
    except GraphBreak as brk:
        raise NotRuntime(brk.reason) from None
    except Exception as exc:  # noqa: BLE001 - the by-value trace reports it
        raise NotRuntime(f"{type(exc).__name__}: {exc}") from None
    if pinned and not typed.flags.get("pinned"):
        raise NotRuntime("no slice start to pin")
    leaves = leaf_positions(args, positions)
    why = decides(typed, len(leaves))
    if why is not None:
        raise NotRuntime(why)
    try:
        prog = lowered(optimized(typed, backend), template, graph.name, backend,
                       native_max=native_max)
    except Exception as exc:  # noqa: BLE001
        raise NotRuntime(f"{type(exc).__name__}: {exc}") from None
    prog.int_leaves = leaves
    return prog


def program_kernels(prog: Any) -> list[Any]:
    """The kernel IR of every fused step of a host program, in order, with those of its
    loops' bodies and typed calls (each program once: a recursive call contains itself)."""
    out: list[Any] = []
    seen: set[int] = set()
    todo = [prog]
    while todo:
        p = todo.pop(0)
        if p is None or id(p) in seen:
            continue
        seen.add(id(p))
        for st in p.steps:
            if isinstance(st.kernel, Kernel):
                out.append(st.kernel)
            todo += [getattr(st.kernel, "body", None), getattr(st.fn, "body", None)]
    return out


def describe_fused(typed: Graph, backend: str = "cpu") -> str:
    """Stage ``fused`` as text: the optimized program, then each fusion group -- its
    iteration domain, its members (``recomputed``: another group stores that value
    too; this one recomputes it rather than reading it) and the values it stores."""
    from myc.ir.printer import Namer, print_graph

    groups = fused(typed, backend)
    native = native_first(typed, backend)
    every = native or backend_named(backend).kernel_every_op
    namer = Namer()
    why = " (a small program the native host code covers: every array operation in " \
        "a kernel, to run as one native function)" if native else ""
    lines = [print_graph(typed, namer=namer), "", f"# {len(groups)} fusion group(s){why}"]
    for grp in groups:
        stores = ", ".join(namer(m) for m in grp.outputs) or "nothing (all recomputed)"
        name = getattr(grp.members[0].inputs[0].value, "name", "") if grp.members else ""
        if not every and len(grp.members) < 2 and name not in ("sum", "max", "min", "mean"):
            stores += " -- a lone elementwise operation: a NumPy step instead"
        lines.append(f"group{grp.id}{list(grp.domain)}: stores {stores}")
        for m in grp.members:
            again = "  (recomputed)" if m.id in grp.borrowed else ""
            lines.append(f"    {namer(m)} = {getattr(m.inputs[0].value, 'name', '?')}{again}")
    return "\n".join(lines)
