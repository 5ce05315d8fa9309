"""The host side of ``backend="cuda"`` calls: microseconds of Python per call of W1-W7.

At the quick sizes the GPU's work per call is a few microseconds, so what a
``myc.jit(..., backend="cuda")`` call costs is mostly its host side (specialization
lookup, the host program's steps, one CuPy launch per kernel pass).  This measures that
alone, with CuPy-resident arguments (as ``benchmarks/gpu_check.py``'s device-io column):

- **on a GPU** (CuPy sees one): the wall time of a call *without* synchronizing (the
  launches are queued; the stream is synchronized between calls, outside the timing) --
  the host time a call takes -- next to the synchronized time;
- **without one** (``--fake``, the default when CuPy or a GPU is missing): CuPy replaced
  by ``tests/cuda/fake_cupy.py`` with its kernel launches and GEMMs made free (they are
  counted, not run; kernel outputs are zero-filled); the first call runs the emulator,
  to check the program.  W5 (a data-dependent loop) runs its launches on the emulator
  and their wall time is subtracted, so that its iteration count is the real one (on a
  loaded machine that subtraction is noisy: compare W5 over several runs).

Calls repeat on the same arrays, so from the third call on a CUDA graph of the call
replays (``myc/backends/gpu/graphs.py``; ``MYC_NO_GRAPHS=1`` to compare without; on the
fake CuPy a replay is free, like its launches); what happened is printed per workload.

Printed per workload: µs per call (median wall time, its minimum, and the median of
this thread's CPU time -- steadier on a loaded machine), kernel launches, CuPy calls and
device-to-host reads per call (and loop iterations for W5); ``--profile W3`` adds a
cProfile of the calls, by cumulative time.

    python -m benchmarks.gpu_overhead [--fake] [--workloads W1,W3] [--profile W3]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pathlib
import pstats
import statistics
import sys
import tempfile
import time
from typing import Any

import numpy as np

from benchmarks.workloads import WORKLOADS

_ALL = ("W1", "W2", "W3", "W4", "W5", "W6", "W7")


def _program(myc: Any, w: Any) -> Any:
    if w.kind == "value_and_grad":
        return myc.value_and_grad(w.myc_fn, argnums=w.argnums)
    return w.myc_fn


def _gpu_present() -> bool:
    try:
        import cupy

        return bool(cupy.cuda.is_available())
    except Exception:  # noqa: BLE001 - no CuPy, no driver: the fake one
        return False


class Counters:
    """What one call does on the device side (counted by wrapping CuPy's entry points)."""

    def __init__(self) -> None:
        self.launches = 0
        self.cupy = 0
        self.d2h = 0
        self.iterations = 0
        self.launch_ns = 0

    def as_dict(self, calls: int) -> dict:
        return {"launches": self.launches / calls, "cupy_calls": self.cupy / calls,
                "d2h": self.d2h / calls, "iterations": self.iterations / calls}


COUNTERS = Counters()  # (one for all: the wrappers stay installed)


def _wrap_launches(counters: Counters) -> None:
    """Count the kernel launches of every kernel loaded so far (and those loaded later)."""
    from myc.backends.gpu import runtime

    def counting(fn: Any) -> Any:
        if getattr(fn, "_counted", False):
            return fn

        def launch(*a: Any, **k: Any) -> Any:
            counters.launches += 1
            return fn(*a, **k)

        launch._counted = True  # type: ignore[attr-defined]
        return launch

    real_init = runtime.CompiledKernel.__init__
    if not getattr(real_init, "_counted", False):
        def init(self: Any, *a: Any, **k: Any) -> None:
            real_init(self, *a, **k)
            _count_kernel(self, counting)

        init._counted = True  # type: ignore[attr-defined]
        runtime.CompiledKernel.__init__ = init
    from myc.backends.cuda import runtime as cuda_rt

    for ck in list(cuda_rt._cache.values()):
        _count_kernel(ck, counting)


def _count_kernel(ck: Any, counting: Any) -> None:
    hook = getattr(ck, "count_launches", None)
    if hook is not None:  # the runtime says where its launches are
        hook(counting)
        return
    ck._launches = [(counting(fn), *rest) for fn, *rest in ck._launches]


def _wrap_cupy(cp: Any, counters: Counters) -> None:
    """Count CuPy's array-making calls and device-to-host reads."""
    for name in ("asarray", "empty", "matmul", "dot", "stack", "zeros", "ascontiguousarray"):
        real = getattr(cp, name, None)
        if real is None or getattr(real, "_counted", False):
            continue

        def counted(*a: Any, _real: Any = real, **k: Any) -> Any:
            counters.cupy += 1
            return _real(*a, **k)

        counted._counted = True  # type: ignore[attr-defined]
        setattr(cp, name, counted)
    nd = cp.ndarray
    real_copy = nd.copy
    if not getattr(real_copy, "_counted", False):
        def copy(self: Any, *a: Any, **k: Any) -> Any:
            counters.cupy += 1
            return real_copy(self, *a, **k)

        copy._counted = True  # type: ignore[attr-defined]
        try:
            nd.copy = copy
        except TypeError:  # CuPy's ndarray is a C type: copies not counted
            pass
    real_get = nd.get
    if not getattr(real_get, "_counted", False):
        def get(self: Any, *a: Any, **k: Any) -> Any:
            counters.d2h += 1
            return real_get(self, *a, **k)

        get._counted = True  # type: ignore[attr-defined]
        try:
            nd.get = get
        except TypeError:  # CuPy's ndarray is a C type: reads not counted
            pass


def _count_iterations(counters: Counters) -> None:
    from myc.lower.program import HostProgram

    real = HostProgram.run_flat
    if getattr(real, "_counted", False):
        return

    def run_flat(self: Any, values: list[Any]) -> list[Any]:
        counters.iterations += 1
        return real(self, values)

    run_flat._counted = True  # type: ignore[attr-defined]
    HostProgram.run_flat = run_flat


def _fake_cupy(tmp: str) -> tuple[Any, Any, dict]:
    """Install ``tests/cuda/fake_cupy.py``; returns it, its monkeypatch and switches:
    ``switch["free"]`` makes launches and GEMMs free (outputs zero-filled)."""
    import pytest

    from tests.cuda import fake_cupy

    mp = pytest.MonkeyPatch()
    cp = fake_cupy.install(mp, pathlib.Path(tmp))
    switch = {"free": False, "emulated_ns": 0, "emulated_cpu_ns": 0}
    real_call = fake_cupy.FakeFunction.__call__

    def call(self: Any, grid: tuple, block: tuple, args: tuple) -> None:
        if switch["free"]:
            return None
        t0 = time.perf_counter_ns()
        c0 = time.thread_time_ns()
        real_call(self, grid, block, args)
        switch["emulated_cpu_ns"] += time.thread_time_ns() - c0
        switch["emulated_ns"] += time.perf_counter_ns() - t0
        return None

    mp.setattr(fake_cupy.FakeFunction, "__call__", call)
    real_launch = fake_cupy.FakeGraph.launch

    def launch(self: Any, stream: Any = None) -> None:  # a CUDA graph's replay: free
        if switch["free"]:  # too (on a GPU, one cudaGraphLaunch of a few microseconds)
            return None
        return real_launch(self, stream)

    mp.setattr(fake_cupy.FakeGraph, "launch", launch)
    fake_cupy.launches.clear()
    real_empty, real_matmul, real_dot = cp.empty, cp.matmul, cp.dot

    pool: dict = {}

    def empty(shape: Any, dtype: Any = float) -> Any:
        if switch["free"]:  # (CuPy's memory pool: no page faults per call)
            key = (shape if isinstance(shape, tuple) else (shape,), np.dtype(dtype).str)
            out = pool.get(key)
            if out is None:  # (owning its memory, as CuPy's allocations)
                out = pool[key] = fake_cupy.FakeArray(key[0], dtype)
                out.view(np.ndarray)[...] = 0
            return out
        return real_empty(shape, dtype)

    def gemm(real: Any) -> Any:
        def run(a: Any, b: Any) -> Any:
            if switch["free"]:
                shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + \
                    a.shape[-2:-1] * (a.ndim > 1) + b.shape[-1:] * (b.ndim > 1)
                return empty(shape, np.result_type(a, b))
            return real(a, b)
        return run

    mp.setattr(cp, "empty", empty)
    real_copy = fake_cupy.FakeArray.copy

    def copy(self: Any, order: str = "C") -> Any:  # (a device-to-device copy: free too)
        return empty(self.shape, self.dtype) if switch["free"] else real_copy(self, order)

    mp.setattr(fake_cupy.FakeArray, "copy", copy)
    mp.setattr(cp, "matmul", gemm(real_matmul))
    mp.setattr(cp, "dot", gemm(real_dot))
    return cp, mp, switch


def measure(name: str, size: str, calls: int, fake: bool, switch: dict | None,
            profile: bool) -> dict:
    import myc

    w = next(w for w in WORKLOADS if w.name == name)
    import cupy as cp

    from myc.backends.gpu.graphs import graph_stats, reset_graph_stats

    reset_graph_stats()
    if switch is not None:
        switch["free"] = False  # the first calls compute (on the emulator)
    inputs = w.make_inputs(0, size)
    dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs)
    f = myc.jit(_program(myc, w), backend="cuda")
    t0 = time.perf_counter()
    out = f(*dev)  # compiles; on the fake CuPy the emulator runs it: checked below
    first_ms = (time.perf_counter() - t0) * 1e3
    rec: dict[str, Any] = {"workload": name, "size": w.size_label(size),
                           "first_call_ms": round(first_ms, 1)}
    if fake and size != "quick":  # (the emulator at quick sizes is slow: checked in tests)
        want = myc.jit(_program(myc, w), backend="cpu")(*inputs)
        rec["check"] = _same(out, want, w)
    f(*dev)
    sync = (lambda: None) if fake else cp.cuda.get_current_stream().synchronize
    # loops read their condition each iteration: their launches must compute
    free = fake and name != "W5"
    if switch is not None:
        switch["free"] = free
        switch["emulated_ns"] = 0
    f(*dev)
    sync()
    if switch is not None:
        switch["emulated_ns"] = 0
    times, synced, cpu = [], [], []
    prof = cProfile.Profile() if profile else None
    for _ in range(calls):
        sync()
        before = switch["emulated_ns"] if switch is not None else 0
        before_cpu = switch["emulated_cpu_ns"] if switch is not None else 0
        c0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        if prof is not None:
            prof.enable()
        f(*dev)
        if prof is not None:
            prof.disable()
        t1 = time.perf_counter_ns()
        c1 = time.thread_time_ns()
        sync()
        t2 = time.perf_counter_ns()
        emulated = (switch["emulated_ns"] - before) if switch is not None else 0
        emulated_cpu = (switch["emulated_cpu_ns"] - before_cpu) if switch is not None else 0
        times.append((t1 - t0 - emulated) / 1e3)
        cpu.append((c1 - c0 - emulated_cpu) / 1e3)
        synced.append((t2 - t0 - emulated) / 1e3)
    # then what a call does, counted over a few more calls (the counting wrappers stay
    # installed: later workloads' launches pay a Python call each, about 0.1 us)
    counters = COUNTERS
    _wrap_launches(counters)
    _wrap_cupy(cp, counters)
    _count_iterations(counters)
    counters.__init__()
    for _ in range(3):
        f(*dev)
    sync()
    rec.update(counters.as_dict(3))
    rec["graphs"] = graph_stats()  # CUDA graphs captured, replayed, refused (why)
    rec["host_us"] = round(statistics.median(times), 1)
    rec["host_us_min"] = round(min(times), 1)
    # this thread's CPU time: what other processes on a loaded machine do not inflate
    # (not where launches ran on the emulator: its CPU time is not cleanly separable)
    rec["cpu_us"] = round(statistics.median(cpu), 1) if not fake or free else float("nan")
    if not fake:
        rec["synced_us"] = round(statistics.median(synced), 1)
    if prof is not None:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45)
        rec["profile"] = s.getvalue()
    return rec


def _same(got: Any, want: Any, w: Any) -> str:
    def leaves(v: Any) -> list:
        return [y for x in v for y in leaves(x)] if isinstance(v, tuple | list) else [v]

    try:
        for g, x in zip(leaves(got), leaves(want), strict=True):
            g = g.get() if hasattr(g, "get") and hasattr(g, "__cuda_array_interface__") else g
            np.testing.assert_allclose(np.asarray(g), np.asarray(x),
                                       rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
        return "ok"
    except AssertionError as exc:
        return f"MISMATCH {str(exc)[:200]}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fake", action="store_true",
                    help="the fake CuPy, even where a GPU is present")
    ap.add_argument("--workloads", default=",".join(_ALL))
    ap.add_argument("--size", default="quick")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--profile", default="", help="workloads to profile (comma-separated)")
    ap.add_argument("--json", default="", help="write the records here too")
    args = ap.parse_args(argv)
    fake = args.fake or not _gpu_present()
    os.environ.setdefault("MYC_CACHE_DIR", tempfile.mkdtemp(prefix="myc-overhead-"))
    switch = None
    tmp = tempfile.mkdtemp(prefix="myc-overhead-fake-")
    if fake:
        _cp, _mp, switch = _fake_cupy(tmp)
    where = "fake CuPy (launches and GEMMs free)" if fake else "GPU"
    try:
        load = " load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        load = ""
    print(f"# host overhead per backend='cuda' call, {where}, size {args.size}, "
          f"{args.calls} calls;{load}")
    print(f"{'workload':8} {'host us':>9} {'min us':>8} {'cpu us':>8} {'synced us':>10} "
          f"{'launches':>9} "
          f"{'cupy':>6} {'d2h':>5} {'iters':>6} {'first ms':>9} check")
    recs = []
    for name in [n.strip() for n in args.workloads.split(",") if n.strip()]:
        try:
            rec = measure(name, args.size, args.calls, fake, switch,
                          name in args.profile.split(","))
        except Exception as exc:  # noqa: BLE001 - report, go on
            rec = {"workload": name, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            print(f"{name:8} ERROR {rec['error']}")
            recs.append(rec)
            continue
        recs.append(rec)
        print(f"{name:8} {rec['host_us']:9.1f} {rec['host_us_min']:8.1f} {rec['cpu_us']:8.1f} "
              f"{rec.get('synced_us', float('nan')):10.1f} {rec['launches']:9.1f} "
              f"{rec['cupy_calls']:6.1f} {rec['d2h']:5.1f} {rec['iterations']:6.1f} "
              f"{rec['first_call_ms']:9.1f} {rec.get('check', '-')}", flush=True)
    for rec in recs:
        if rec.get("graphs"):
            print(f"{rec['workload']:8} CUDA graphs: {rec['graphs']}")
    for rec in recs:
        if "profile" in rec:
            print(f"\n## profile of {rec['workload']} ({args.calls} calls)\n{rec['profile']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{k: v for k, v in r.items() if k != "profile"} for r in recs], fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
