"""Ahead-of-time compilation: a statically shaped program as a shared library + C header.

``aot(fn, "f32[64,4], f32[4]", "libname.so")`` specializes ``fn`` on zero arrays of
those shapes exactly as the JIT does (a named size such as ``N`` is dynamic: see
:mod:`myc.aot.dynamic`) (trace, optimize, fusion groups as kernels), lowers the
optimized program to the host program as data (:mod:`myc.lower.planned` under
:data:`AOT_POLICY`: fused kernels, GEMM -- our own blocked one, no BLAS -- transpose
copies, reshapes, loops, selects, tapes) and writes, through LLVM, one object file that
``cc -shared`` links into ``libname.so``; ``libname.h`` declares the entry point.  See
``docs/aot.md``.  Anything the library could not run natively (gathers, recursion whose
depth depends on data, control flow the JIT can only guard, structure that changes with
a dynamic size...) is rejected with a :class:`myc.MycError` naming it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import Any

import numpy as np

from myc.aot.signature import DTYPES, signature_specs
from myc.backends.cpu.aot_names import check_name
from myc.errors import MycError
from myc.lower.planned import Policy, lower_plan
from myc.lower.planned_loops import refusal

# a library: no BLAS, no Python at run time, the buffer dtypes of its C ABI
AOT_POLICY = Policy("myc.aot", frozenset(DTYPES.values()))


def _entry_name(fn: Any, graph) -> str:
    name = getattr(fn, "__name__", None) or graph.name or "myc_fn"
    name = re.sub(r"\W+", "_", str(name)).strip("_") or "myc_fn"
    return name if not name[0].isdigit() else f"f_{name}"


def build_program(fn: Any, signature: Any, name: str | None = None):
    """The host program as data (``myc.lower.hostplan.HostPlan``) of ``fn`` on
    ``signature``.

    With dynamic sizes (``"f32[N,4]"``) the program is built at several sample sizes
    and generalized (:mod:`myc.aot.dynamic`): one program for every size from a lower
    bound on, or a :class:`MycError` when its structure depends on the size."""
    if name is not None:
        check_name(name)
    specs = signature_specs(signature)
    symbols = sorted({d for _, shape in specs for d in shape if isinstance(d, str)})
    if symbols:
        from myc.aot.dynamic import generalize

        return generalize(lambda examples: program_at(fn, examples, name), specs, symbols,
                          _fn_name(fn))
    return program_at(fn, [example(dt, shape) for dt, shape in specs], name)


def example(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A zero array of ``shape`` to specialize on: a broadcast view of one zero, so a
    signature for a 4 TiB array compiles without allocating it (only its type is read)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def _fn_name(fn: Any) -> str:
    return getattr(getattr(fn, "__myc_function__", fn), "__name__", None) or "function"


def program_at(fn: Any, examples: list[np.ndarray], name: str | None = None):
    """The native program of ``fn`` specialized on arrays shaped like ``examples``
    (``myc.pipeline`` 's stages, as the JIT runs them, then the planned lowering)."""
    from myc import pipeline
    from myc.infer.trace import GraphBreak
    from myc.prims import P
    from myc.runtime.args import check_args
    from myc.runtime.specialize import Binding

    target = getattr(fn, "__myc_function__", fn)  # a jitted function: what it wraps
    graph = pipeline.parsed(pipeline.graph_of(target))
    names = [p.name for p in graph.parameters]
    args = check_args(names, tuple(Binding.of(graph).bind(tuple(examples), {})))
    try:
        # as the JIT specializes: data-dependent loops become loop nodes, a gradient
        # through them a typed adjoint (taped loop + backward loop)
        typed, template, brk = pipeline.specialize(graph, args)
    except GraphBreak as brk:
        where = f" at {brk.loc}" if brk.loc else ""
        raise MycError(f"myc.aot: {graph.name} has control flow that depends on the data "
                       f"in a way the compiler cannot express ({brk.reason}{where}); "
                       "the JIT runs it on the reference evaluator, a library cannot") \
            from None
    if typed.flags.get("guards") or (brk is not None and typed.flags.get("route")
                                      != "adjoint"):
        where = f" at {brk.loc}" if brk is not None and brk.loc else ""
        why = f" ({brk.reason}{where})" if brk is not None else ""
        raise MycError(f"myc.aot: {graph.name} has data-dependent control flow that "
                       f"specialization could only guard{why}: the JIT re-checks its "
                       "decisions on every call, a library cannot; not supported ahead "
                       "of time")
    unsupported = [n for n in typed_nodes(typed) if getattr(n.inputs[0], "value", None)
                   is P.invoke]
    if unsupported:
        raise MycError(refusal(unsupported[0], graph.name, AOT_POLICY.who, AOT_POLICY.when))
    effects = [n for n in typed_nodes(typed)
               if not getattr(getattr(n.inputs[0], "value", None), "pure", True)]
    if effects:  # (myc/prims/effects.py) they call Python objects when the program runs
        raise MycError(f"myc.aot: {graph.name}: '{effects[0].inputs[0].value.name}' (a random "
                       f"draw or print) at line {getattr(effects[0].loc, 'line', '?')} is "
                       "not supported ahead of time: it calls Python when it runs; use myc.jit")
    pipeline.optimized(typed, "cpu")  # (AOT libraries are CPU code)
    entry = check_name(name or _entry_name(fn, graph))
    return lower_plan(typed, template, names, entry, AOT_POLICY)


def typed_nodes(g):
    from myc.ir.manager import Manager

    return [n for n in Manager(g).owned.get(g, []) if hasattr(n, "inputs") and n.inputs]


def aot(fn: Any, signature: Any, output: str, name: str | None = None) -> tuple[str, str]:
    """Compile ``fn`` for ``signature`` into the shared library ``output`` and a C header
    next to it (``libname.so`` -> ``libname.h``); returns ``(so_path, header_path)``.

    The library exports ``int NAME(const myc_array *inputs, int n_inputs, myc_array
    *outputs, int n_outputs)`` (``NAME``: ``name``, else the function's name; a C
    identifier that clashes with no C keyword or libc/libm symbol, see
    :mod:`myc.backends.cpu.aot_names`), plus ``NAME_last_error`` and ``NAME_free``.  Outputs are the
    function's results flattened depth-first (``value_and_grad``: the value, then each
    gradient).
    """
    from myc.backends.cpu.aot_codegen import build_object
    from myc.backends.cpu.aot_header import header

    cc = os.environ.get("CC") or shutil.which("cc")
    if not cc or not shutil.which(cc):
        raise MycError("myc.aot: no C compiler found ('cc'; set CC) to link the library")
    if not isinstance(output, (str, os.PathLike)):
        raise MycError("myc.aot: output is the path of the library to write, e.g. 'libf.so'")
    so_path = os.path.abspath(os.fspath(output))
    base = so_path[:-3] if so_path.endswith(".so") else so_path
    h_path = base + ".h"
    _check_output(so_path, h_path)
    prog = build_program(fn, signature, name)
    obj = build_object(prog)
    with tempfile.TemporaryDirectory(prefix="myc-aot-") as tmp:
        obj_path = os.path.join(tmp, "lib.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        res = subprocess.run([cc, "-shared", "-pthread", "-o", so_path, obj_path, "-lm"],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise MycError(f"myc.aot: linking {so_path} failed: {res.stderr.strip()}")
    guard = re.sub(r"\W", "_", os.path.basename(h_path)).upper()
    try:
        with open(h_path, "w") as f:
            f.write(header(prog, f"MYC_{guard}"))
    except OSError as exc:
        raise MycError(f"myc.aot: cannot write the header {h_path}: {exc.strerror}") from None
    return so_path, h_path


def _check_output(so_path: str, h_path: str) -> None:
    """Refuse an output path the linker could not write, before compiling, with a
    message naming the path (the linker's own says only \"ld returned 1\")."""
    folder = os.path.dirname(so_path)
    for path in (so_path, h_path):
        if os.path.isdir(path):
            raise MycError(f"myc.aot: output {path} is a directory; give the path of the "
                           "library file to write, e.g. 'out/libf.so'")
    if not os.path.isdir(folder):
        raise MycError(f"myc.aot: cannot write {so_path}: the directory {folder} does not "
                       "exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise MycError(f"myc.aot: cannot write {so_path}: the directory {folder} is not "
                       "writable")
