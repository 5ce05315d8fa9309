"""Running one workload: correctness first, first-call latency, then interleaved timing.

For each workload, in this order:

1. **Reference.**  PyTorch eager runs once on the inputs; its outputs are the reference.
2. **First calls and correctness.**  myc is built afresh and called with an empty cache
   directory (*cold*), then built afresh again with that directory filled (*disk cache*),
   ``first_call_repeats`` times; each peer is built afresh and called once.  Every
   implementation's first outputs are compared with the reference (:func:`check`).  A
   mismatch marks the implementation ``mismatch`` -- loudly -- and it is not timed: the
   speed of a wrong answer is not reported.  An exception marks it ``error``.
3. **Warm-up**, interleaved, ``warmup`` calls of each.
4. **Timing.**  Rounds of one call of each implementation, the order rotated every round
   (A B C, B C A, ...) so that no one always runs first after the others.  Each timed call
   is preceded by ``settle`` untimed calls of the same implementation: a thread pool that
   spin-waits after its work (PyTorch's OpenMP workers, OpenBLAS's) otherwise holds a core
   during the *next* implementation's call -- measured here: W3 after a PyTorch call took
   5.2 ms against 2.5 ms alone, and W4 19 ms against 10.5 ms.  Garbage collection is
   disabled during each call.  After ``min_rounds``, stop as soon as the bootstrap 95%
   CI of the myc/PyTorch median ratio is within +-``precision`` of the ratio, or when the
   time budget is spent (or ``max_rounds``).  An implementation that runs in another
   process (``--baseline``'s myc, :mod:`benchmarks.baseline`) takes its turn in the same
   rounds; its process times the call with the same :func:`timed_sample`.
5. **Peak memory**: one more call each (:mod:`benchmarks.memory`).
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from benchmarks import memory, stats
from benchmarks.frameworks import (
    GPU_BACKENDS,
    Adapter,
    MycAdapter,
    TorchAdapter,
    ms_since,
    peer_applies,
    to_numpy_list,
)
from benchmarks.workload import Workload

PROFILES = {
    #        budget s, min rounds, warm-up, first-call repeats
    "tiny": dict(time_budget=0.25, min_rounds=3, warmup=1, first_call_repeats=1),
    "quick": dict(time_budget=5.0, min_rounds=5, warmup=2, first_call_repeats=1),
    "full": dict(time_budget=20.0, min_rounds=10, warmup=3, first_call_repeats=3),
}


@dataclass
class RunConfig:
    size: str = "full"
    backend: str = "cpu"
    seed: int = 0
    threads: int = 1
    time_budget: float = 20.0
    min_rounds: int = 10
    max_rounds: int = 2000
    warmup: int = 3
    settle: int = 1  # untimed calls of the same implementation before each timed one
    first_call_repeats: int = 3
    precision: float = 0.02
    n_boot: int = 2000
    with_compile: bool = False
    measure_memory: bool = True
    # implementations timed in the rounds (None: all that passed the check); the others
    # still run their first calls and the correctness check
    timed: tuple[str, ...] | None = None

    @classmethod
    def for_size(cls, size: str, **overrides: Any) -> RunConfig:
        base = dict(PROFILES[size])
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(size=size, **base)

    def to_dict(self) -> dict:
        return asdict(self)


def torch_device(backend: str) -> str:
    """PyTorch runs on the GPU for a GPU backend when it has one, else on the CPU."""
    if backend in GPU_BACKENDS:
        import torch

        if torch.cuda.is_available():
            return "cuda"
    return "cpu"


def describe_error(exc: BaseException) -> dict:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    msg = f"{type(exc).__name__}: {exc}"
    return {"message": msg[:2000], "traceback": "".join(tb[-12:])[-6000:]}


def check(got: list[np.ndarray], ref: list[np.ndarray], rtol: float, atol: float) -> dict:
    """Compare outputs with the reference, output by output.

    Passes when every element satisfies ``|got - ref| <= atol * scale + rtol * |ref|`` with
    ``scale = max|ref|`` of that output (an absolute floor relative to the output's size,
    so gradients of very different magnitudes are judged alike) and nothing is NaN where the
    reference is finite.  Reports the largest absolute error and that error over ``scale``.
    """
    result: dict = {"ok": True, "rtol": rtol, "atol": atol, "max_abs_err": 0.0, "max_rel_err": 0.0}
    if len(got) != len(ref):
        return {**result, "ok": False, "reason": f"{len(got)} outputs, expected {len(ref)}"}
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        g = np.asarray(g, dtype=np.float64)
        r = np.asarray(r, dtype=np.float64)
        if g.size == 1 and r.size == 1:
            g, r = g.reshape(()), r.reshape(())
        if g.shape != r.shape:
            return {**result, "ok": False, "reason": f"output {k}: shape {g.shape} != {r.shape}"}
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        scale = scale if scale > 0 and np.isfinite(scale) else 1.0
        err = np.abs(g - r)
        bad_nan = np.isnan(g) & ~np.isnan(r)
        max_err = float(np.max(np.where(np.isnan(err), np.inf, err))) if err.size else 0.0
        result["max_abs_err"] = max(result["max_abs_err"], max_err)
        result["max_rel_err"] = max(result["max_rel_err"], max_err / scale)
        ok = bool(np.all(err <= atol * scale + rtol * np.abs(r))) and not bool(np.any(bad_nan))
        if not ok and result["ok"]:
            result["ok"] = False
            result["reason"] = f"output {k} of {len(ref)} differs (max error {max_err:.3g})"
    return result


def timed_sample(call: Callable[[], Any], settle: int) -> float:
    """What one round records for one implementation: ``settle`` untimed calls (they absorb
    the previous implementation's spinning threads), then one timed call.  The baseline's
    worker process (:mod:`benchmarks.baseline_worker`) records its samples with this too."""
    for _ in range(settle):
        call()
    return time_once(call)


def time_once(call: Callable[[], Any]) -> float:
    """Milliseconds for one call, garbage collection off; outputs freed after the clock."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        out = call()
        elapsed = ms_since(t0)
    finally:
        if enabled:
            gc.enable()
    del out
    return elapsed


class WorkloadRun:
    """State of one workload's run; :meth:`run` returns its JSON-ready record."""

    def __init__(
        self,
        w: Workload,
        cfg: RunConfig,
        myc: MycAdapter | None,
        torch_ad: TorchAdapter,
        peers: dict[str, Adapter],
        cache_root: str,
        progress,
        myc_import_error: dict | None = None,
        remotes: dict[str, Any] | None = None,
        remotes_first: bool = False,
    ):
        self.w, self.cfg, self.progress = w, cfg, progress
        # implementations that run in another process (the baseline's myc,
        # benchmarks/baseline.py): they time their own calls with timed_sample
        self.remotes = dict(remotes or {})
        self.remotes_first = remotes_first
        self.myc, self.torch, self.cache_root = myc, torch_ad, cache_root
        self.peers = {
            name: ad
            for name, ad in peers.items()
            if peer_applies(name, w, on_cpu=torch_ad.device == "cpu")
        }
        self.calls: dict[str, Callable[[], Any]] = {}
        self.rec: dict = {
            "name": w.name,
            "title": w.title,
            "description": w.description,
            "kind": w.kind,
            "size": {k: v for k, v in w.sizes[cfg.size].items()},
            "size_label": w.size_label(cfg.size),
            "status": "ok",
            "implementations": {},
        }
        if myc_import_error is not None:
            self._impl("myc")["status"] = "error"
            self._impl("myc")["error"] = myc_import_error

    def _impl(self, name: str) -> dict:
        return self.rec["implementations"].setdefault(name, {"status": "pending"})

    def _fail(self, name: str, status: str, detail: dict) -> None:
        impl = self._impl(name)
        impl["status"] = status
        impl.update(detail)
        self.calls.pop(name, None)
        msg = detail.get("error", {}).get("message") or detail.get("check", {}).get("reason")
        msg = (str(msg).strip().splitlines() or [""])[0][:200]
        self.progress.log(
            f"    {self.w.name} {name}: {status.upper()}: {msg}",
            style="bold red" if status == "mismatch" else "yellow",
        )

    def run(self) -> dict:
        w, cfg = self.w, self.cfg
        t_start = time.perf_counter()
        self.progress.start(w.name, f"{w.title} [{w.size_label(cfg.size)}]")
        inputs = w.make_inputs(cfg.seed, cfg.size)
        ref = self._reference(inputs)
        if ref is not None:
            self._first_calls(inputs, ref)
            if self.calls:
                self._timing()
                if cfg.measure_memory:
                    self._memory()
        self._finalize(time.perf_counter() - t_start)
        return self.rec

    # -- phases ------------------------------------------------------------------------
    def _reference(self, inputs: tuple) -> list[np.ndarray] | None:
        name = self.torch.name
        try:
            state = self.torch.prepare(self.w, inputs)
            ms, out, call = self.torch.first_call(self.w, state)
            ref = to_numpy_list(out)
        except Exception as exc:
            self._fail(name, "error", {"error": describe_error(exc)})
            return None
        impl = self._impl(name)
        impl.update(status="ok", first_call_ms=ms, check={"ok": True, "reference": True})
        self.calls[name] = call
        return ref

    def _checked(self, name: str, out: Any, ref: list[np.ndarray], call) -> None:
        try:
            got = to_numpy_list(out)
            result = check(got, ref, self.w.rtol, self.w.atol)
        except Exception as exc:
            self._fail(name, "error", {"error": describe_error(exc)})
            return
        impl = self._impl(name)
        if result["ok"]:
            impl.update(status="ok", check=result)
            self.calls[name] = call
        else:
            self._fail(name, "mismatch", {"check": result})

    def _first_calls(self, inputs: tuple, ref: list[np.ndarray]) -> None:
        # The side that compiles second may find the compiler's code (shared libraries, the
        # same physical pages in both processes) warm in the caches: remotes_first reverses
        # the order (the remotes, last first, then myc), and the harness alternates it from
        # workload to workload.
        steps = [lambda: self._myc_first_calls(inputs, ref)]
        steps += [lambda n=n: self._remote_first_calls(n, ref) for n in self.remotes]
        for step in reversed(steps) if self.remotes_first else steps:
            step()
        if self.remotes:
            self.rec["first_call_order"] = [n for n in self.rec["implementations"]
                                            if n == "myc" or n in self.remotes]
        self._peer_first_calls(inputs, ref)

    def _myc_first_calls(self, inputs: tuple, ref: list[np.ndarray]) -> None:
        w, cfg = self.w, self.cfg
        if self.myc is not None:
            self.progress.update(w.name, "myc: first calls (compile)")
            try:
                state = self.myc.prepare(w, inputs)
                first, out, call = self.myc.first_calls(
                    w, state, cfg.first_call_repeats, self.cache_root
                )
            except Exception as exc:
                self._fail("myc", "error", {"error": describe_error(exc)})
            else:
                impl = self._impl("myc")
                impl["first_call"] = {
                    **first,
                    "cold_median_ms": float(np.median(first["cold_ms"])),
                    "disk_cache_median_ms": float(np.median(first["disk_cache_ms"])),
                }
                self._checked("myc", out, ref, call)

    def _remote_first_calls(self, name: str, ref: list[np.ndarray]) -> None:
        w, remote = self.w, self.remotes[name]
        self.progress.update(w.name, f"{name}: first calls (compile, in its process)")
        try:
            first, out = remote.load(w, self.cfg)
        except Exception as exc:
            self._fail(name, "error", {"error": describe_error(exc)})
            return
        self._impl(name)["first_call"] = first
        self._checked(name, out, ref, remote.call)

    def _peer_first_calls(self, inputs: tuple, ref: list[np.ndarray]) -> None:
        w = self.w
        for name, ad in self.peers.items():
            self.progress.update(w.name, f"{name}: first call")
            try:
                state = ad.prepare(w, inputs)
                ms, out, call = ad.first_call(w, state)
            except Exception as exc:
                self._fail(name, "error", {"error": describe_error(exc)})
                continue
            self._impl(name)["first_call_ms"] = ms
            self._checked(name, out, ref, call)

    def _primary_ci(self, samples: dict[str, list[float]], n_boot: int) -> float:
        """Relative half-width of the interval that decides when to stop: myc against the
        baseline's myc when there is one (that comparison is why the run was made), else
        myc against PyTorch."""
        ref = self.torch.name
        for other in (*self.remotes, ref):
            if other != "myc" and "myc" in samples and other in samples:
                ci = stats.paired_ratio_ci(samples["myc"], samples[other], n_boot=n_boot)
                return ci.rel_halfwidth
        name = ref if ref in samples else next(iter(samples))
        med, lo, hi = stats.median_ci(samples[name], n_boot=n_boot)
        return (hi - lo) / (2 * med) if med > 0 else float("inf")

    def _timing(self) -> None:
        cfg, w = self.cfg, self.w
        names = [n for n in self.calls if cfg.timed is None or n in cfg.timed]
        warm_start = time.perf_counter()
        for _ in range(cfg.warmup):
            for name in names:
                self._call_or_fail(name)
            if time.perf_counter() - warm_start > cfg.time_budget / 4:
                break
        names = [n for n in names if n in self.calls]
        samples: dict[str, list[float]] = {n: [] for n in names}
        if not names:
            return
        gc.collect()
        start = time.perf_counter()
        rounds, stop, halfwidth = 0, "budget", float("inf")
        while names:
            k = rounds % len(names)
            for name in names[k:] + names[:k]:
                try:
                    samples[name].append(self._sample(name))
                except Exception as exc:
                    self._fail(name, "error", {"error": describe_error(exc)})
            names = [n for n in names if n in self.calls]
            samples = {n: samples[n] for n in names}
            rounds += 1
            elapsed = time.perf_counter() - start
            if not names:
                break
            self.progress.update(
                w.name,
                f"round {rounds}, CI +-{100 * halfwidth:.1f}%",
                fraction=elapsed / cfg.time_budget,
            )
            if rounds >= cfg.max_rounds:
                stop = "max_rounds"
                break
            if rounds < cfg.min_rounds:
                if elapsed >= 2 * cfg.time_budget:
                    stop = "budget (fewer than min_rounds)"
                    break
                continue
            if elapsed >= cfg.time_budget:
                stop = "budget"
                break
            if rounds < 50 or rounds % 10 == 0:
                halfwidth = self._primary_ci(samples, n_boot=400)
                if halfwidth <= cfg.precision:
                    stop = "ci"
                    break
        self.rec["timing"] = {
            "rounds": rounds,
            "elapsed_s": time.perf_counter() - start,
            "stop_reason": stop,
            "order": "rotated each round",
            "settle": cfg.settle,
        }
        for name, xs in samples.items():
            if xs:
                impl = self._impl(name)
                impl["samples_ms"] = xs
                impl["stats_ms"] = stats.summarize(xs).to_dict()
        self._ratios(samples)

    def _sample(self, name: str) -> float:
        remote = self.remotes.get(name)
        if remote is not None:  # the same timed_sample, run in the remote's process
            return remote.sample(self.cfg.settle)
        return timed_sample(self.calls[name], self.cfg.settle)

    def _call_or_fail(self, name: str) -> None:
        if name not in self.calls:
            return
        try:
            out = self.calls[name]()
            del out
        except Exception as exc:
            self._fail(name, "error", {"error": describe_error(exc)})

    def _ratios(self, samples: dict[str, list[float]]) -> None:
        ref = self.torch.name
        ratios: dict[str, dict] = {}
        pairs = [(n, ref) for n in samples if n != ref and ref in samples]
        pairs += [("myc", n) for n in samples if n not in ("myc", ref) and "myc" in samples]
        for a, b in pairs:
            n = min(len(samples[a]), len(samples[b]))
            if n == 0:
                continue
            ci = stats.paired_ratio_ci(samples[a][:n], samples[b][:n], n_boot=self.cfg.n_boot)
            ratios[f"{a}/{b}"] = ci.to_dict()
        self.rec["ratios"] = ratios

    def _memory(self) -> None:
        for name, call in list(self.calls.items()):
            try:
                remote = self.remotes.get(name)
                self._impl(name)["peak_mem_mib"] = (
                    remote.peak_mem() if remote is not None else memory.peak_delta_mib(call)
                )
            except Exception as exc:
                self._impl(name)["peak_mem_error"] = describe_error(exc)["message"]

    def _finalize(self, elapsed: float) -> None:
        impls = self.rec["implementations"]
        statuses = {n: i.get("status") for n, i in impls.items()}
        if "mismatch" in statuses.values():
            self.rec["status"] = "mismatch"
        elif any(s == "error" for n, s in statuses.items() if n in ("myc", self.torch.name)):
            self.rec["status"] = "error"
        elif any(s == "error" for s in statuses.values()):
            self.rec["status"] = "ok (peer error)"
        self.rec["wall_s"] = elapsed
        self.progress.finish(self.w.name, self.summary_line(), ok=self.rec["status"] == "ok")

    def summary_line(self) -> str:
        impls = self.rec["implementations"]
        parts = []
        for name, impl in impls.items():
            st = impl.get("stats_ms")
            if st:
                parts.append(f"{name} {st['median']:.3g} ms")
            else:
                parts.append(f"{name} {impl.get('status')}")
        r = self.rec.get("ratios", {}).get(f"myc/{self.torch.name}")
        if r:
            lo, hi = r["ci95"]
            parts.append(f"myc/torch {r['ratio']:.3g} [{lo:.3g}, {hi:.3g}]")
        return f"{self.rec['status']}: " + ", ".join(parts)


def new_cache_root() -> str:
    """A private MYC_CACHE_DIR for the run, so cold figures never see the user's cache."""
    root = tempfile.mkdtemp(prefix="myc-bench-cache-")
    os.environ["MYC_CACHE_DIR"] = root
    return root
