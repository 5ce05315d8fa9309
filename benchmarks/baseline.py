"""``--baseline DIR``: another checkout's myc as a column, timed interleaved with this one's.

Two separate harness runs compared afterwards (``--compare``) carry an order effect on a
small shared machine: the second run of a pair was up to ~20% slower on some workloads
for the same code, enough to flag a regression that is not there or hide one that is.
Here the baseline's myc runs in a worker process (:mod:`benchmarks.baseline_worker`) and
the harness times it *round by round* with this checkout's myc, so drift of the machine
falls on both alike and the ratio ``myc/myc@base`` gets a paired interval.

The worker imports ``myc`` from ``DIR`` and ``benchmarks`` from this checkout: both sides
use this checkout's workloads, inputs and timing code, only ``myc`` differs.  It gets the
harness's environment and thread settings, and its own ``MYC_CACHE_DIR``.

``python -m benchmarks.baseline results.json ...`` prints the ratio table of one or more
``--baseline`` runs and, for several, the geometric mean per workload.
"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import compare
from benchmarks.fmt import fmt_ms

NAME = "myc@base"
RATIO = f"myc/{NAME}"
# below this many rounds a bootstrap interval is degenerate (one round: zero width), so no
# verdict is given from it
MIN_ROUNDS = 5
ROOT = Path(__file__).resolve().parent.parent  # this checkout: its benchmarks/ package


class BaselineError(Exception):
    """The baseline directory is unusable, or its worker failed."""


def check_dir(directory: str | os.PathLike) -> Path:
    """``DIR`` resolved, or a :class:`BaselineError` saying what is wrong with it."""
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise BaselineError(f"--baseline {directory}: no such directory")
    if not (path / "myc" / "__init__.py").is_file():
        raise BaselineError(
            f"--baseline {directory}: no myc package there (expected {path / 'myc'}/"
            "__init__.py: give a checkout of the repository, or a `git archive` of one, "
            "that has myc/ at its top)"
        )
    return path.resolve()


def describe(path: Path) -> dict:
    """What the baseline is: its directory and, when it is a git work tree's top, commit."""
    info: dict[str, Any] = {"dir": str(path)}
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel", "HEAD"], cwd=path,
                             capture_output=True, text=True, timeout=10, check=True)
        lines = top.stdout.split()
        if len(lines) == 2 and Path(lines[0]).resolve() == path:
            info["commit"] = lines[1]
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stream (pytest)
        return None


class BaselinePeer:
    """The ``myc@base`` implementation: the parent's end of the worker's pipes.

    :class:`benchmarks.runner.WorkloadRun` uses it as a *remote*: :meth:`load` runs the
    first calls and returns the outputs to check, :meth:`call` is one untimed call (warm-up)
    and :meth:`sample` one timed sample measured in the worker.
    """

    def __init__(self, directory: Path, threads: int, name: str = NAME):
        self.name = name  # "myc" for this checkout's own worker (--baseline-symmetric)
        self.directory = directory
        self.threads = threads
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}
        self._tmp: tempfile.TemporaryDirectory | None = None

    # -- process ---------------------------------------------------------------------------
    def start(self) -> dict:
        """Start the worker and check that it imported the directory's myc."""
        self._tmp = tempfile.TemporaryDirectory(prefix="myc-baseline-")
        shim = Path(self._tmp.name)
        (shim / "myc").symlink_to(self.directory / "myc", target_is_directory=True)
        (shim / "benchmarks").symlink_to(ROOT / "benchmarks", target_is_directory=True)
        cache = shim / "cache"  # beside, not inside, the harness's MYC_CACHE_DIR
        cache.mkdir()
        env = dict(os.environ, MYC_CACHE_DIR=str(cache), MYC_BENCH_CHILD="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shim), env.get("PYTHONPATH")) if p)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.baseline_worker",
                 str(to_child_r), str(from_child_w)],
                pass_fds=(to_child_r, from_child_w),
                cwd=shim,  # not this checkout: its myc/ must not shadow the baseline's
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=_stderr_fd(),  # the worker's stray prints stay out of the report
            )
        except OSError as exc:
            os.close(to_child_w)
            os.close(from_child_r)
            self.stop()
            raise BaselineError(f"--baseline {self.directory}: cannot start a worker: {exc}") \
                from None
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._requests = os.fdopen(to_child_w, "wb")
        self._replies = os.fdopen(from_child_r, "rb")
        try:
            info = self._ask("hello", self.threads, "torch" in sys.modules)
        except BaselineError as exc:
            self.stop()
            raise BaselineError(f"--baseline {self.directory}: its myc did not load: {exc}") \
                from None
        expected = (self.directory / "myc").resolve()
        if Path(info["myc_file"]).parent != expected:
            self.stop()
            raise BaselineError(
                f"--baseline {self.directory}: the worker imported myc from "
                f"{info['myc_file']}, not from {expected}"
            )
        self.info = {**describe(self.directory), **info}
        return self.info

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                if proc.poll() is None:
                    pickle.dump(("quit",), self._requests)
                    self._requests.flush()
                    pickle.load(self._replies)
            except (OSError, EOFError, pickle.PickleError):
                pass
            for f in (self._requests, self._replies):
                try:
                    f.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _ask(self, op: str, *args: Any) -> Any:
        if self.proc is None:
            raise BaselineError("the baseline worker is not running")
        try:
            pickle.dump((op, *args), self._requests)
            self._requests.flush()
            status, result = pickle.load(self._replies)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            code = self.proc.poll()
            raise BaselineError(
                f"the baseline worker stopped answering (exit status {code}): "
                f"{type(exc).__name__}"
            ) from None
        if status != "ok":
            raise BaselineError(result["message"] + "\n" + result.get("traceback", ""))
        return result

    def _restart_if_dead(self) -> None:
        """A baseline that crashed on one workload (a segfault in its compiled code) still
        gets measured on the next ones."""
        if self.proc is not None and self.proc.poll() is not None:
            self.stop()
            self.start()

    # -- the remote implementation -------------------------------------------------------
    def load(self, w, cfg) -> tuple[dict, list]:
        """First calls of workload ``w`` in the worker: ``(first-call figures, outputs)``."""
        self._restart_if_dead()
        got = self._ask("load", w.name, cfg.size, cfg.seed, cfg.backend,
                        cfg.first_call_repeats)
        return got["first_call"], got["outputs"]

    def call(self) -> None:
        self._ask("call", 1)

    def sample(self, settle: int) -> float:
        return float(self._ask("sample", settle))

    def peak_mem(self) -> float:
        return float(self._ask("memory"))


# -- results ------------------------------------------------------------------------------
def rows(results: dict) -> list[dict]:
    """Per workload timed on both sides: medians, the paired ratio, its verdict, first calls."""
    out = []
    for name, rec in results.get("workloads", {}).items():
        impls = rec.get("implementations", {})
        new, old = impls.get("myc", {}), impls.get(NAME, {})
        row: dict[str, Any] = {"workload": name, "myc_status": new.get("status"),
                               "base_status": old.get("status")}
        r = rec.get("ratios", {}).get(RATIO)
        if r:
            lo, hi = r["ci95"]
            rounds = min(len(new.get("samples_ms", [])), len(old.get("samples_ms", [])))
            verdict = compare.verdict(lo, hi) if rounds >= MIN_ROUNDS else "too few rounds"
            row.update(myc_ms=new["stats_ms"]["median"], base_ms=old["stats_ms"]["median"],
                       ratio=r["ratio"], lo=lo, hi=hi, verdict=verdict, rounds=rounds,
                       # informative only: the floor each side reached, which preemption
                       # by other processes on a loaded machine cannot raise
                       min_ratio=min(new["samples_ms"]) / min(old["samples_ms"]))
        order = rec.get("first_call_order") or []
        row["first_call_first"] = "myc@base" if order[:1] == [NAME] else "myc"
        for key, impl in (("myc", new), ("base", old)):
            fc = impl.get("first_call", {})
            if fc:
                row[f"{key}_cold_ms"] = fc.get("cold_median_ms")
                row[f"{key}_disk_ms"] = fc.get("disk_cache_median_ms")
        out.append(row)
    return out


def _ms(x: float | None) -> str:
    return fmt_ms(x)


def markdown(results: dict) -> list[str]:
    """The report's section on the baseline (empty without one)."""
    base = results.get("config", {}).get("baseline")
    if not base:
        return []
    what = base.get("dir", "?") + (f" (commit {base['commit'][:12]})" if base.get("commit")
                                   else "")
    lines = [
        "",
        "## Against the baseline",
        "",
        f"`{NAME}`: the myc of {what}, run in a worker process with this checkout's "
        "workloads and timed in the same interleaved rounds as this checkout's myc"
        + (" (itself in a worker process of its own: `--baseline-symmetric`). "
           if results["config"].get("myc_worker") else ". ") +
        "Ratio = myc / myc@base (above 1: this checkout is slower) with its paired-bootstrap "
        "95% CI; a regression or an improvement only when the interval excludes 1 "
        f"(the rule of `--compare`; none from fewer than {MIN_ROUNDS} rounds). The ratio of "
        "the two minima is shown for information (no interval). "
        "First calls: cold cache / disk cache, ms, each in its own process; which side made "
        "them first alternates from workload to workload (the side that compiles second may "
        "find the compiler's code warm in the caches), marked *.",
        "",
        "| workload | rounds | myc | myc@base | myc/myc@base [95% CI] | verdict | ratio of "
        "minima | first call myc | first call myc@base |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows(results):
        if "ratio" in row:
            cells = [str(row["rounds"]), _ms(row["myc_ms"]), _ms(row["base_ms"]),
                     f"{row['ratio']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}]",
                     f"**{row['verdict']}**" if row["verdict"] in ("regression", "improvement")
                     else row["verdict"], f"{row['min_ratio']:.3f}"]
        else:
            cells = ["—", "—", "—", "—", f"not compared (myc {row['myc_status']}, myc@base "
                     f"{row['base_status']})", "—"]
        first = "myc" if row["first_call_first"] == "myc" else "base"
        cells += [f"{_ms(row.get(f'{k}_cold_ms'))} / {_ms(row.get(f'{k}_disk_ms'))}"
                  + (" *" if k == first else "") for k in ("myc", "base")]
        lines.append(f"| {row['workload']} | " + " | ".join(cells) + " |")
    return lines


def render(paths: list[str]) -> str:
    """Plain-text table of one or more ``--baseline`` runs; the geometric mean of the ratios
    over runs when there are several."""
    lines = []
    per_workload: dict[str, list[float]] = {}
    for p in paths:
        try:
            results = compare.load(p)
        except (OSError, ValueError) as exc:  # a run that timed out wrote nothing
            lines.append(f"== {p}: no results ({type(exc).__name__})")
            continue
        lines.append(f"== {p}")
        lines.append(f"{'workload':<9} {'rounds':>6} {'myc ms':>9} {'base ms':>9} "
                     f"{'myc/base':>9}  {'95% CI':<17} {'verdict':<15} min/min")
        for row in rows(results):
            if "ratio" not in row:
                lines.append(f"{row['workload']:<9} not compared (myc {row['myc_status']}, "
                             f"myc@base {row['base_status']})")
                continue
            per_workload.setdefault(row["workload"], []).append(row["ratio"])
            mark = {"regression": "  <-- REGRESSION", "improvement": "  <-- improvement"}
            lines.append(
                f"{row['workload']:<9} {row['rounds']:>6} {row['myc_ms']:>9.4g} "
                f"{row['base_ms']:>9.4g} {row['ratio']:>9.3f}  [{row['lo']:.3f}, "
                f"{row['hi']:.3f}]  {row['verdict']:<15} {row['min_ratio']:.3f}"
                f"{mark.get(row['verdict'], '')}"
            )
    if len(paths) > 1:
        lines.append("== over the runs: geometric mean of myc/myc@base, runs with myc slower")
        for name, rs in per_workload.items():
            g = math.exp(sum(map(math.log, rs)) / len(rs))
            lines.append(f"{name:<9} {g:.3f} over {len(rs)} runs; slower in "
                         f"{sum(r > 1 for r in rs)}; " + " ".join(f"{r:.3f}" for r in rs))
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: python -m benchmarks.baseline RESULTS.json [...]", file=sys.stderr)
        sys.exit(2)
    print(render(sys.argv[1:]))
