"""Command line of the harness: ``myc bench ...`` and ``python -m benchmarks ...``.

Thread settings are applied before NumPy, PyTorch or myc is imported (where this module is
the first to import them), so this module imports nothing heavy at load time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

BACKENDS = ("cpu", "opencl", "cuda", "rocm", "interp")


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Benchmark myc against PyTorch (and optional peers) with a correctness "
        "check, interleaved timing and bootstrap confidence intervals. "
        "Method: docs/benchmarks.md.",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller sizes, short budgets (<3 min)")
    size.add_argument("--tiny", action="store_true", help="tiny sizes, for CI smoke tests")
    p.add_argument("--workloads", metavar="W1,W3", help="comma-separated (W1 includes W1a)")
    p.add_argument("--backend", choices=BACKENDS, default="cpu", help="myc backend (default cpu)")
    p.add_argument("--output", metavar="DIR", default="bench-out", help="default: bench-out")
    p.add_argument("--threads", type=int, help="threads for every framework (default: all cores)")
    p.add_argument("--seed", type=int, default=0, help="seed for the inputs (default 0)")
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="S",
        help="seconds of timing per workload (tiny 0.25, quick 5, full 20)",
    )
    p.add_argument(
        "--precision",
        type=float,
        default=0.02,
        help="stop early when the ratio's 95%% CI is within +-this fraction",
    )
    p.add_argument("--min-rounds", type=int, help="rounds before early stopping is allowed")
    p.add_argument("--max-rounds", type=int, default=2000)
    p.add_argument("--warmup", type=int, help="warm-up calls per implementation")
    p.add_argument("--settle", type=int, help="untimed calls of the same implementation "
                   "before each timed one (default 1; 0: plain interleaving)")
    p.add_argument("--first-call-repeats", type=int, help="cold first calls of myc per workload")
    p.add_argument(
        "--with-compile", action="store_true",
        help="add a torch.compile column (slow to compile; implied by --peers torch.compile)"
    )
    p.add_argument(
        "--peers",
        default="auto",
        help="optional columns: auto (all installed), none, or a list of "
        "torch.compile,jax,numpy,numba,myc-cpu (myc on backend cpu, beside --backend)",
    )
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory call")
    p.add_argument(
        "--baseline",
        metavar="DIR",
        help="add a myc@base column: the myc of DIR (another checkout, or a `git archive` "
        "of one) in a worker process, timed interleaved with this checkout's myc; reports "
        "myc/myc@base with its CI and a regression/improvement verdict",
    )
    p.add_argument(
        "--baseline-only",
        action="store_true",
        help="with --baseline: time only myc and myc@base (PyTorch and the peers still "
        "run once for the correctness check), so every round goes to the comparison",
    )
    p.add_argument(
        "--baseline-symmetric",
        action="store_true",
        help="with --baseline: run this checkout's myc in a worker process too, so that "
        "both sides run in identical processes (the harness only orchestrates)",
    )
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("OLD.json", "NEW.json"),
        help="compare two results files instead of running",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --compare: exit 1 if myc regressed anywhere",
    )
    p.add_argument(
        "--contend",
        action="store_true",
        help="run while another process keeps one core busy (every framework under the same "
        "load; docs/benchmarks.md)",
    )
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--plain", action="store_true", help="plain progress lines, no rich display")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--in-process",
        action="store_true",
        help="never re-run in a fresh interpreter, even when NumPy/PyTorch/myc were "
        "imported before the thread settings could be applied",
    )
    return p


def _prog() -> str:
    if os.environ.get("MYC_BENCH_PROG"):
        return os.environ["MYC_BENCH_PROG"]
    return "myc bench" if os.path.basename(sys.argv[0]) == "myc" else "python -m benchmarks"


def _loaded_too_early() -> list[str]:
    """Libraries that read thread settings at load and were loaded before main() ran."""
    return [m for m in ("numpy", "torch", "myc", "scipy") if m in sys.modules]


def _reexec(argv: list[str], prog: str) -> int:
    """Run the harness in a fresh interpreter so thread settings apply from the start."""
    import subprocess

    env = dict(os.environ, MYC_BENCH_CHILD="1", MYC_BENCH_PROG=prog)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return subprocess.call([sys.executable, "-m", "benchmarks", *argv], env=env)


def _parse_peers(spec: str) -> set[str] | None:
    from benchmarks.frameworks import PEERS

    spec = spec.strip().lower()
    if spec == "auto":
        return None
    if spec in ("none", ""):
        return set()
    chosen = {s.strip() for s in spec.split(",") if s.strip()}
    unknown = chosen - set(PEERS)
    if unknown:
        raise ValueError(f"unknown peer(s) {sorted(unknown)}; known: {', '.join(PEERS)}")
    return chosen


def gpu_missing(backend: str) -> str | None:
    """Why ``backend`` (a GPU backend) cannot run here (its ``MycError``), or None."""
    import importlib

    from myc.errors import MycError

    try:
        importlib.import_module(f"myc.backends.{backend}.runtime").device()
    except MycError as exc:
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the harness; returns the exit status (1 when any implementation mismatched)."""
    prog = _prog()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(prog).parse_args(argv)

    if args.compare:
        from benchmarks import compare

        return compare.main(*args.compare, fail_on_regression=args.fail_on_regression)

    if args.list:
        from benchmarks.workloads import select

        for w in select(None):
            print(f"{w.name:<4} {w.kind:<15} {w.title}: {w.description}")
        return 0
    if not args.in_process and os.environ.get("MYC_BENCH_CHILD") != "1" and _loaded_too_early():
        return _reexec(argv, prog)

    from benchmarks import env as envmod

    threads = args.threads or envmod.available_cores()
    if threads < 1:
        print("--threads must be at least 1", file=sys.stderr)
        return 2
    applied = envmod.apply_threads(threads)  # before numpy/torch/myc load where possible

    baseline_dir = None
    if (args.baseline_only or args.baseline_symmetric) and not args.baseline:
        print("error: --baseline-only and --baseline-symmetric need --baseline DIR",
              file=sys.stderr)
        return 2
    if args.baseline:
        from benchmarks.baseline import BaselineError, check_dir

        try:
            baseline_dir = check_dir(args.baseline)
        except BaselineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2

    from benchmarks.workloads import select

    try:
        workloads = select(args.workloads)
        peers_wanted = _parse_peers(args.peers)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if peers_wanted and "torch.compile" in peers_wanted:
        args.with_compile = True  # named as a peer: asked for, not dropped in silence
    if args.backend in ("cuda", "rocm"):
        missing = gpu_missing(args.backend)
        if missing is not None:  # no GPU here: nothing to measure, not a failure
            print(f"myc bench: skipped, backend '{args.backend}' has no device here: "
                  f"{missing}", file=sys.stderr)
            return 0
    try:
        import torch
    except ImportError:
        print("error: the harness needs PyTorch: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    torch.set_num_threads(threads)

    from benchmarks import SCHEMA, memory, report, runner
    from benchmarks.frameworks import MycAdapter, TorchAdapter, available_peers
    from benchmarks.progress import make_progress

    size = "tiny" if args.tiny else "quick" if args.quick else "full"
    cfg = runner.RunConfig.for_size(
        size,
        backend=args.backend,
        seed=args.seed,
        threads=threads,
        time_budget=args.time_budget,
        precision=args.precision,
        min_rounds=args.min_rounds,
        max_rounds=args.max_rounds,
        warmup=args.warmup,
        settle=args.settle,
        first_call_repeats=args.first_call_repeats,
        with_compile=args.with_compile,
        measure_memory=not args.no_memory,
        timed=("myc", "myc@base") if args.baseline_only else None,
    )
    if baseline_dir is not None and args.min_rounds is None:
        from benchmarks.baseline import MIN_ROUNDS

        # the early stop must not judge a 3-round interval that the verdict would refuse
        cfg.min_rounds = max(cfg.min_rounds, MIN_ROUNDS)
    device = runner.torch_device(args.backend)
    torch_ad = TorchAdapter(device)
    myc_ad, myc_error = None, None
    try:
        myc_ad = MycAdapter(args.backend)
    except Exception as exc:
        myc_error = runner.describe_error(exc)
    peers = available_peers(peers_wanted, args.with_compile, threads, device, args.backend)

    load_start = envmod.load_average()
    busy = envmod.busy_warning(load_start, threads)
    cache_root = runner.new_cache_root()
    remotes, baseline_info, own_worker = {}, None, None
    if baseline_dir is not None:
        from benchmarks.baseline import ROOT, BaselineError, BaselinePeer

        base = BaselinePeer(baseline_dir, threads)
        own = BaselinePeer(ROOT, threads, name="myc") if args.baseline_symmetric else None
        try:
            if own is not None:  # this checkout's myc in a worker too, started first
                own_worker = own.start()
                remotes[own.name] = own
                myc_ad, myc_error = None, None
            baseline_info = base.start()
        except BaselineError as exc:
            for remote in remotes.values():
                remote.stop()
            shutil.rmtree(cache_root, ignore_errors=True)
            print(f"error: {exc}", file=sys.stderr)
            return 2
        remotes[base.name] = base
    started = time.perf_counter()
    records: dict[str, dict] = {}
    contender = None
    contention = None
    if args.contend:
        from benchmarks.contend import Contender

        contender = Contender()
        contention = contender.start()
    try:
        with make_progress(len(workloads), quiet=args.quiet, plain=args.plain) as progress:
            progress.log(
                f"myc bench: {len(workloads)} workloads, sizes {size}, backend {args.backend}, "
                f"{threads} threads, torch on {device}; optional: "
                f"{', '.join(peers) or 'none installed'}"
            )
            if baseline_info is not None:
                progress.log(f"--baseline: myc@base is {baseline_info['myc_file']} "
                             f"(worker pid {baseline_info['pid']})")
            if own_worker is not None:
                progress.log(f"--baseline-symmetric: myc is {own_worker['myc_file']} "
                             f"(worker pid {own_worker['pid']})")
            if contention is not None:
                progress.log(f"--contend: core {contention['busy_core']} kept busy by "
                             f"pid {contention['pid']}")
            elif busy:
                progress.log(f"warning: {busy}", style="yellow")
            for i, w in enumerate(workloads):
                run = runner.WorkloadRun(
                    w, cfg, myc_ad, torch_ad, peers, cache_root, progress, myc_error,
                    remotes=remotes, remotes_first=i % 2 == 1,  # first calls: alternate
                )
                try:
                    records[w.name] = run.run()
                except Exception as exc:  # a harness bug in one workload must not stop the run
                    rec = run.rec
                    rec["status"] = "error"
                    rec["error"] = runner.describe_error(exc)
                    records[w.name] = rec
                    progress.finish(w.name, f"harness error: {exc}", ok=False)
    finally:
        if contender is not None:
            contender.stop()
        for remote in remotes.values():
            remote.stop()
        shutil.rmtree(cache_root, ignore_errors=True)

    results = {
        "schema": SCHEMA,
        "command": " ".join([prog, *argv]),
        "config": {
            **cfg.to_dict(),
            "torch_device": device,
            "peers": sorted(peers),
            "baseline": baseline_info,
            "myc_worker": own_worker,
            "workloads": [w.name for w in workloads],
        },
        "environment": {
            **envmod.environment(envmod.thread_settings(threads, applied)),
            "load_average_start": load_start,
            "load_average_end": envmod.load_average(),
            "contention": contention,
        },
        "memory_method": memory.METHOD,
        "wall_s": time.perf_counter() - started,
        "workloads": records,
    }
    paths = report.write_all(results, Path(args.output))
    if not args.quiet:
        plot = (f", {paths['plot']}" if "plot" in paths
                else " (no plot: matplotlib is not installed; pip install 'myc[bench]')")
        if baseline_info is not None:
            from benchmarks.baseline import render

            print(render([str(paths["json"])]))
        print(f"wrote {paths['json']}, {paths['markdown']}{plot} ({results['wall_s']:.0f} s)")
    mismatched = [n for n, r in records.items() if r.get("status") == "mismatch"]
    if mismatched:
        print(f"MISMATCH in {', '.join(mismatched)}: see {paths['markdown']}", file=sys.stderr)
        return 1
    return 0
