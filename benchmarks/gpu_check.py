"""The GPU check: W1-W7 on ``backend="cuda"`` checked against the cpu backend, then timed
against PyTorch on the same GPU (eager, and ``torch.compile`` when asked).

Run by ``benchmarks/gpu_check.sh`` on a machine with an NVIDIA GPU; without one it says
so and records the reason per workload (a dry run).  Results go to ``OUT/gpu_check.json``
(rewritten after every workload, so a run cut short keeps what it measured) and
``OUT/gpu_check.md``.  Timings are medians of calls made after two warm-up calls, each
synchronized with the GPU; myc is timed with CuPy arguments (results left on the device,
as torch's are) and with NumPy arguments (copies to and from the GPU included).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import sys
import time
import traceback
from typing import Any

import numpy as np

from benchmarks.frameworks import TorchAdapter, to_numpy_list
from benchmarks.runner import check
from benchmarks.workloads import WORKLOADS


def versions() -> dict:
    out: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform(),
                           "numpy": np.__version__}
    for mod in ("llvmlite", "cupy", "torch", "jax", "hypothesis"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001 - report, go on
            out[mod] = f"missing ({type(exc).__name__})"
    try:
        import cupy

        out["gpu_available"] = bool(cupy.cuda.is_available())
        if out["gpu_available"]:
            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            out["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) \
                else str(props["name"])
            out["driver"] = cupy.cuda.runtime.driverGetVersion()
            out["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
            out["peak_gbs"] = peak_gbs(cupy)
            out["copy_gbs"] = copy_gbs(cupy)
    except Exception as exc:  # noqa: BLE001
        out["gpu_available"] = False
        out["gpu_error"] = f"{type(exc).__name__}: {exc}"
    return out


def peak_gbs(cupy) -> float | None:
    """The GPU's theoretical memory bandwidth in GB/s (memory clock x bus width x 2),
    or None where the driver does not say."""
    try:
        rt = cupy.cuda.runtime
        dev = cupy.cuda.Device().id
        khz = rt.deviceGetAttribute(36, dev)  # cudaDevAttrMemoryClockRate
        bits = rt.deviceGetAttribute(37, dev)  # cudaDevAttrGlobalMemoryBusWidth
        return 2.0 * khz * 1e3 * bits / 8 / 1e9 if khz and bits else None
    except Exception:  # noqa: BLE001 - a report
        return None


def copy_gbs(cupy, nbytes: int = 1 << 28, repeats: int = 10) -> float | None:
    """A measured reference: CuPy copying ``nbytes`` from one device buffer to another
    (bytes read plus bytes written over the median time of ``repeats`` copies, timed
    with CUDA events) -- what a memory-bound kernel can reach in practice."""
    try:
        src = cupy.ones(nbytes // 4, dtype=cupy.float32)
        dst = cupy.empty_like(src)
        dst[...] = src
        times = []
        for _ in range(repeats):
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            dst[...] = src
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
        del src, dst
        return 2 * nbytes / statistics.median(times) / 1e9
    except Exception:  # noqa: BLE001 - a report
        return None


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def with_limit(seconds: float, fn):
    """``fn()``, or Timeout after ``seconds`` (SIGALRM: the main thread only)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def median_ms(call, budget: float, max_calls: int = 200) -> dict:
    for _ in range(2):
        call()
    times = []
    t_end = time.perf_counter() + budget
    while len(times) < 3 or (time.perf_counter() < t_end and len(times) < max_calls):
        t0 = time.perf_counter_ns()
        call()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "calls": len(times)}


def _err(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:500]}"


def program(myc, w):
    if w.kind == "value_and_grad":
        return myc.value_and_grad(w.myc_fn, argnums=w.argnums)
    return w.myc_fn


def run_workload(w, size: str, budget: float, compile_limit: float) -> dict:
    import myc

    rec: dict[str, Any] = {"workload": w.name, "kind": w.kind, "size": w.size_label(size)}
    inputs = w.make_inputs(0, size)
    nbytes = sum(np.asarray(a).nbytes for a in inputs if isinstance(a, np.ndarray))
    t0 = time.perf_counter()
    ref = to_numpy_list(myc.jit(program(myc, w), backend="cpu")(*inputs))
    rec["cpu_first_ms"] = (time.perf_counter() - t0) * 1e3
    rec["io_bytes"] = nbytes + sum(r.nbytes for r in ref)
    def sync() -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    # myc: CuPy in and out (arguments resident on the device) first, then NumPy in and
    # out (copies included); host fallbacks (device operands copied to the host) counted
    try:
        import cupy

        from myc.backends.gpu.host import host_fallbacks, reset_host_fallbacks

        f = myc.jit(program(myc, w), backend="cuda")
        dev = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs)
        sync()
        t0 = time.perf_counter()
        out = f(*dev)
        sync()
        first = (time.perf_counter() - t0) * 1e3
        res = check(to_numpy_list(out), ref, w.rtol, w.atol)
        rec["myc_cuda_device_io"] = {"first_call_ms": first, "check": res,
                                     "steps": steps_of(f)}
        if res["ok"]:
            from myc.backends.gpu.graphs import graph_stats, reset_graph_stats

            reset_host_fallbacks()
            reset_graph_stats()
            rec["myc_cuda_device_io"].update(median_ms(lambda: (f(*dev), sync()), budget))
            rec["myc_cuda_device_io"]["host_fallbacks"] = host_fallbacks()
            # CUDA graphs (``myc/backends/gpu/graphs.py``): captured, replayed, refused
            rec["myc_cuda_device_io"]["graphs"] = graph_stats()
        out = f(*inputs)
        res2 = check(to_numpy_list(out), ref, w.rtol, w.atol)
        rec["myc_cuda"] = {"check": res2}
        if res2["ok"]:
            rec["myc_cuda"].update(median_ms(lambda: (f(*inputs), sync()), budget))
    except Exception as exc:  # noqa: BLE001
        key = "myc_cuda_device_io" if "myc_cuda" not in rec else "myc_cuda"
        rec[key] = {**rec.get(key, {}), "error": _err(exc),
                    "traceback": traceback.format_exc()[-3000:]}
    rec["_ref"] = ref  # (dropped before writing)
    torch_column(rec, w, inputs, ref, budget, False, compile_limit)
    return rec


def torch_column(rec: dict, w, inputs, ref, budget: float, compiled: bool,
                 compile_limit: float) -> None:
    """PyTorch eager (or ``torch.compile``) on the same GPU, checked, then timed."""
    for name in ("torch_compile" if compiled else "torch_eager",):
        try:
            ad = TorchAdapter("cuda", compiled=compiled)
            state = ad.prepare(w, inputs)
            ms, out, call = with_limit(compile_limit if compiled else 120,
                                       lambda ad=ad, state=state: ad.first_call(w, state))
            res = check(to_numpy_list(out), ref, w.rtol, w.atol)
            rec[name] = {"first_call_ms": ms, "check": res}
            rec[name].update(median_ms(call, budget))
        except Timeout:
            rec[name] = {"error": f"first call over {compile_limit:.0f} s"}
        except Exception as exc:  # noqa: BLE001
            rec[name] = {"error": _err(exc)}


def steps_of(jitted) -> dict:
    """What the compiled program runs: GPU kernels (and their passes, one launch each)
    and the other steps by name (GEMM and views on the device when their operands are
    there, the rest on the host; for reading the timings)."""
    out: dict[str, Any] = {"kernels": 0, "launches": 0, "host": {}}
    try:
        from myc.lower.program import KernelUnit

        for prog in jitted._executable.cache.values():
            for st in getattr(prog, "steps", []):
                fn = getattr(st.fn, "fn", st.fn)
                if isinstance(st.fn, KernelUnit):
                    out["kernels"] += 1
                    out["launches"] += len(st.fn.compiled.plan.passes)
                else:
                    out["host"][st.name] = out["host"].get(st.name, 0) + 1
                    body = getattr(fn, "body", None)
                    if body is not None:
                        out.setdefault("loop_body_steps", []).append(
                            [s2.name for s2 in body.steps])
    except Exception as exc:  # noqa: BLE001 - a report, not a check
        out["error"] = _err(exc)
    return out


def _cell(rec: dict, key: str) -> str:
    r = rec.get(key)
    if r is None:
        return "-"
    if "error" in r:
        return "error"
    if not r.get("check", {}).get("ok", True):
        return "MISMATCH"
    return f"{r['median_ms']:.3f}" if "median_ms" in r else "-"


def markdown(env: dict, recs: list[dict]) -> str:
    lines = ["# myc backend='cuda' GPU check", "",
             f"Device: {env.get('gpu', 'none')} (driver {env.get('driver', '?')}, CUDA "
             f"runtime {env.get('cuda_runtime', '?')}); cupy {env.get('cupy')}, torch "
             f"{env.get('torch')}, numpy {env.get('numpy')}, llvmlite {env.get('llvmlite')}.", "",
             "Median ms per call (synchronized). myc device-io: CuPy arguments and "
             "results (what torch is timed with); myc numpy-io: NumPy arguments and results "
             "(copies included). GB/s: the bytes that must move (inputs and outputs, "
             "once) over the device-io time"
             + (f" (% of the GPU's theoretical {env['peak_gbs']:.0f} GB/s: memory clock x "
                "bus width x 2)" if env.get("peak_gbs") else "")
             + (f" (and % of {env['copy_gbs']:.0f} GB/s, a device-to-device copy "
                "measured here)" if env.get("copy_gbs") else "")
             + ". Host fallbacks: steps whose device operands were copied to "
             "the host during the device-io timing. Graphs: CUDA graphs captured (c), "
             "replayed (r) and refused (with why) during that timing.", "",
             "| workload | size | myc check | myc first call ms | myc device-io | GB/s "
             "| myc numpy-io | torch eager | torch.compile | myc/eager | host fallbacks "
             "| graphs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        m = r.get("myc_cuda", {})
        dev = r.get("myc_cuda_device_io", {})
        ok = "error" if "error" in dev or "error" in m else (
            "ok" if dev.get("check", {}).get("ok") and m.get("check", {}).get("ok") else
            "MISMATCH")
        gbs = "-"
        if "median_ms" in dev:
            g = r["io_bytes"] / dev["median_ms"] / 1e6
            gbs = f"{g:.1f}" + (f" ({100 * g / env['peak_gbs']:.0f}%" +
                                (f", {100 * g / env['copy_gbs']:.0f}% of copy"
                                 if env.get("copy_gbs") else "") + ")"
                                if env.get("peak_gbs") else "")
        fb = dev.get("host_fallbacks")
        fbs = "-" if fb is None else (", ".join(f"{k} {v}" for k, v in fb.items()) or "none")
        gr = dev.get("graphs")
        grs = "-" if gr is None else (", ".join(
            f"c {v}" if k == "captured" else f"r {v}" if k == "replayed" else f"{k} {v}"
            for k, v in gr.items()).replace("|", "/") or "none")
        eager = r.get("torch_eager", {})
        ratio = "-"
        best = dev.get("median_ms", m.get("median_ms"))
        if best and "median_ms" in eager:
            ratio = f"{best / eager['median_ms']:.2f}"
        first = f"{dev['first_call_ms']:.0f}" if "first_call_ms" in dev else "-"
        lines.append(f"| {r['workload']} | {r['size']} | {ok} | {first} | "
                     f"{_cell(r, 'myc_cuda_device_io')} | {gbs} | {_cell(r, 'myc_cuda')} | "
                     f"{_cell(r, 'torch_eager')} | {_cell(r, 'torch_compile')} | {ratio} | "
                     f"{fbs} | {grs} |")
    errors = [(r["workload"], k, v["error"]) for r in recs for k, v in r.items()
              if isinstance(v, dict) and "error" in v]
    if errors:
        lines += ["", "Errors:", ""] + [f"- {w} {k}: {e}" for w, k, e in errors]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"))
    p.add_argument("--size", default="quick", choices=("tiny", "quick", "full"))
    p.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6,W7")
    p.add_argument("--budget", type=float, default=1.0, help="seconds of timing per column")
    p.add_argument("--compile", action="store_true", help="add a torch.compile column")
    p.add_argument("--compile-limit", type=float, default=60.0,
                   help="seconds allowed for torch.compile's first call")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    env = versions()
    print(json.dumps(env, indent=1), flush=True)
    names = args.workloads.split(",")
    chosen = [w for w in WORKLOADS if w.name in names]
    recs: list[dict] = []

    def save() -> None:
        clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in recs]
        with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
            json.dump({"env": env, "size": args.size, "results": clean}, f, indent=1,
                      default=str)
        with open(os.path.join(args.out, "gpu_check.md"), "w") as f:
            f.write(markdown(env, clean))

    for w in chosen:  # myc and PyTorch eager for every workload first...
        t0 = time.perf_counter()
        try:
            rec = run_workload(w, args.size, args.budget, args.compile_limit)
        except Exception as exc:  # noqa: BLE001 - the next workload still runs
            rec = {"workload": w.name, "size": w.size_label(args.size),
                   "myc_cuda": {"error": _err(exc), "traceback": traceback.format_exc()[-3000:]}}
        rec["wall_s"] = time.perf_counter() - t0
        recs.append(rec)
        print(json.dumps({k: v for k, v in rec.items() if not k.startswith("_")},
                         default=str)[:1500], flush=True)
        save()
    if args.compile:  # ...then torch.compile, whose first calls take long, as time allows
        for w, rec in zip(chosen, recs, strict=True):
            if "_ref" not in rec:
                continue
            torch_column(rec, w, w.make_inputs(0, args.size), rec["_ref"], args.budget, True,
                         args.compile_limit)
            print(w.name, "torch.compile:", json.dumps(rec.get("torch_compile"),
                                                       default=str)[:500], flush=True)
            save()
    print(markdown(env, [{k: v for k, v in r.items() if not k.startswith("_")}
                         for r in recs]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
