"""The benchmark harness: a tiny in-process run, its outputs, its statistics, --compare.

Runs on ``backend="interp"`` (the reference evaluator) with tiny sizes and a tiny time
budget, so it checks the plumbing, not speed.  Every workload, forward and gradient,
must run: a broken ``myc.jit`` fails these tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `benchmarks` lives beside `myc` in the repository
    sys.path.insert(0, str(ROOT))

from benchmarks import compare, stats  # noqa: E402
from benchmarks.cli import main  # noqa: E402
from benchmarks.frameworks import MycAdapter, TorchAdapter  # noqa: E402
from benchmarks.progress import PlainProgress  # noqa: E402
from benchmarks.runner import RunConfig, WorkloadRun, check  # noqa: E402
from benchmarks.workload import Workload  # noqa: E402
from benchmarks.workloads import all_workloads, select  # noqa: E402

FORWARD = ("W1", "W1a", "W7f")
STATUSES = {"ok", "ok (peer error)", "error", "mismatch"}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    saved_env = dict(os.environ)
    saved_threads = torch.get_num_threads()
    try:
        rc = main(
            [
                "--tiny",
                "--backend",
                "interp",
                "--time-budget",
                "0.05",
                "--first-call-repeats",
                "1",
                "--peers",
                "numpy",
                "--output",
                str(out),
                "--in-process",
                "--plain",
                "--quiet",
            ]
        )
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        torch.set_num_threads(saved_threads)
    return rc, out


def test_run_writes_well_formed_outputs(tiny_run):
    rc, out = tiny_run
    assert rc == 0, (out / "results.md").read_text()
    data = json.loads((out / "results.json").read_text())
    assert data["schema"] == "myc-bench/1"
    assert data["config"]["backend"] == "interp" and data["config"]["size"] == "tiny"
    env = data["environment"]
    for key in ("cpu_model", "logical_cores", "os", "versions", "git", "threads", "date"):
        assert key in env, key
    for lib in ("python", "numpy", "torch"):
        assert lib in env["versions"], lib
    assert "commit" in env["git"]
    assert env["threads"]["env"]["MYC_NUM_THREADS"] == str(data["config"]["threads"])
    assert env["threads"]["torch_num_threads"] == data["config"]["threads"]
    assert list(data["workloads"]) == [w.name for w in all_workloads()]
    for name, rec in data["workloads"].items():
        assert rec["status"] in STATUSES, (name, rec["status"])
        torch_impl = rec["implementations"]["torch"]
        assert torch_impl["status"] == "ok", name
        samples = torch_impl["samples_ms"]
        assert len(samples) >= 1 and all(s > 0 for s in samples)
        st = torch_impl["stats_ms"]
        assert st["n"] == len(samples)
        assert st["min"] <= st["q1"] <= st["median"] <= st["q3"] <= st["max"]
        assert st["median"] == pytest.approx(float(np.median(samples)))
        assert "first_call_ms" in torch_impl
        assert "myc" in rec["implementations"], name

    md = (out / "results.md").read_text()
    assert "| workload | size | myc | torch eager |" in md
    for name in data["workloads"]:
        assert f"| {name} " in md
    png = (out / "ratios.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert width > 100 and height > 100


def test_workloads_ran(tiny_run):
    """Every workload ran on myc: a broken ``jit`` or gradient fails here (it is not a
    reason to skip)."""
    _, out = tiny_run
    data = json.loads((out / "results.json").read_text())
    for name in FORWARD:
        rec = data["workloads"][name]
        myc_impl = rec["implementations"]["myc"]
        assert myc_impl["status"] == "ok", (name, myc_impl)
        assert myc_impl["check"]["ok"] and myc_impl["check"]["max_rel_err"] < 1e-4
        assert len(myc_impl["samples_ms"]) == len(rec["implementations"]["torch"]["samples_ms"])
        assert myc_impl["first_call"]["cold_ms"] and myc_impl["first_call"]["disk_cache_ms"]
        ratio = rec["ratios"]["myc/torch"]
        lo, hi = ratio["ci95"]
        assert 0 < lo <= ratio["ratio"] <= hi
    for name, rec in data["workloads"].items():  # gradients too
        assert rec["implementations"]["myc"]["status"] == "ok", (name, rec)


# --- statistics on known data ---------------------------------------------------------
def test_median_iqr_summary_known_values():
    assert stats.median([5, 1, 3, 2, 4]) == 3.0
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.iqr(range(1, 10)) == 4.0  # quartiles 3 and 7 (linear interpolation)
    s = stats.summarize([1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert (s.n, s.median, s.q1, s.q3, s.iqr, s.min, s.max, s.mean) == (9, 5, 3, 7, 4, 1, 9, 5)
    with pytest.raises(ValueError):
        stats.summarize([])


def test_paired_ratio_ci_exact_and_drift_cancelling():
    rng = np.random.default_rng(1)
    b = rng.lognormal(np.log(10.0), 0.3, size=40)
    ci = stats.paired_ratio_ci(2.0 * b, b)
    assert ci.ratio == pytest.approx(2.0)
    assert ci.lo == pytest.approx(2.0) and ci.hi == pytest.approx(2.0)
    # slow drift common to both in each round cancels in the paired interval
    drift = np.linspace(1.0, 3.0, 60)
    a_d = 1.5 * drift * rng.lognormal(0, 0.01, 60)
    b_d = drift * rng.lognormal(0, 0.01, 60)
    paired = stats.paired_ratio_ci(a_d, b_d)
    unpaired = stats.ratio_ci(a_d, b_d)
    assert paired.lo < 1.5 < paired.hi
    assert paired.hi - paired.lo < 0.5 * (unpaired.hi - unpaired.lo)
    with pytest.raises(ValueError):
        stats.paired_ratio_ci([1.0, 2.0], [1.0])


def test_bootstrap_interval_has_about_nominal_coverage():
    """Over many experiments where the true ratio of medians is 1.25, the 95% interval
    should contain it about 95% of the time (percentile bootstrap: a little less for
    small samples)."""
    rng = np.random.default_rng(7)
    hits, trials = 0, 200
    for t in range(trials):
        a = 1.25 * rng.lognormal(np.log(5.0), 0.2, size=40)
        b = rng.lognormal(np.log(5.0), 0.2, size=40)
        ci = stats.ratio_ci(a, b, n_boot=1000, seed=t)
        hits += ci.lo <= 1.25 <= ci.hi
    assert 0.88 <= hits / trials <= 0.995, hits / trials


def test_median_ci_brackets_the_median():
    med, lo, hi = stats.median_ci(np.arange(1.0, 101.0))
    assert med == 50.5 and lo < med < hi and 40 < lo and hi < 61


# --- --compare ------------------------------------------------------------------------
def _fake_results(myc_samples, torch_samples) -> dict:
    return {
        "schema": "myc-bench/1",
        "config": {"backend": "cpu", "size": "quick", "threads": 2},
        "environment": {"cpu_model": "test cpu"},
        "workloads": {
            "W1": {
                "implementations": {
                    "myc": {"samples_ms": list(map(float, myc_samples))},
                    "torch": {"samples_ms": list(map(float, torch_samples))},
                }
            }
        },
    }


def _samples(seed: int, scale: float = 1.0, n: int = 40) -> np.ndarray:
    return scale * np.random.default_rng(seed).lognormal(np.log(10.0), 0.05, size=n)


def test_compare_flags_a_2x_regression_but_not_noise(tmp_path, capsys):
    old = _fake_results(_samples(1), _samples(2))
    regressed = _fake_results(_samples(3, scale=2.0), _samples(4))
    noise = _fake_results(_samples(5), _samples(6))
    improved = _fake_results(_samples(7, scale=0.5), _samples(8))

    by_impl = {c.impl: c for c in compare.compare(old, regressed)}
    assert by_impl["myc"].verdict == "regression"
    assert by_impl["myc"].ratio == pytest.approx(2.0, rel=0.05)
    assert by_impl["torch"].verdict == "no change"
    assert all(c.verdict == "no change" for c in compare.compare(old, noise))
    assert {c.impl: c for c in compare.compare(old, improved)}["myc"].verdict == "improvement"

    paths = {}
    for name, res in (("old", old), ("regressed", regressed), ("noise", noise)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(res))
    assert main(["--compare", str(paths["old"]), str(paths["regressed"])]) == 0
    text = capsys.readouterr().out
    assert "REGRESSION" in text and "myc: 1 regression(s)" in text
    assert main(["--compare", str(paths["old"]), str(paths["noise"])]) == 0
    text = capsys.readouterr().out
    assert "<--" not in text and "myc: 0 regression(s), 0 improvement(s)" in text
    args = ["--compare", str(paths["old"]), str(paths["regressed"]), "--fail-on-regression"]
    assert main(args) == 1
    args = ["--compare", str(paths["old"]), str(paths["noise"]), "--fail-on-regression"]
    assert main(args) == 0


# --- correctness check and mismatch handling ------------------------------------------
def test_check_accepts_rounding_and_rejects_wrong_values():
    ref = [np.float32(100.0), np.array([1.0, -2.0, 3e-6], dtype=np.float32)]
    assert check([np.float32(100.001), ref[1] * (1 + 1e-6)], ref, 1e-4, 1e-5)["ok"]
    bad = check([np.float32(100.0), np.array([1.0, -2.1, 3e-6])], ref, 1e-4, 1e-5)
    assert not bad["ok"] and bad["max_abs_err"] == pytest.approx(0.1, rel=1e-5)
    assert not check([np.float32(np.nan), ref[1]], ref, 1e-4, 1e-5)["ok"]
    assert not check([ref[0]], ref, 1e-4, 1e-5)["ok"]
    assert not check([ref[0], ref[1][:2]], ref, 1e-4, 1e-5)["ok"]


class _WrongMyc(MycAdapter):
    """Stands in for myc and returns a wrong answer: the run must flag it, not time it."""

    def __init__(self):
        self.backend, self.cupy = "interp", None

    def build(self, w, state):
        return lambda: np.float32(2.0) * w.myc_fn(*state)


def test_mismatch_fails_the_workload_loudly_and_is_not_timed(tmp_path):
    w = select("W1")[0]
    lines = []
    progress = PlainProgress(1, quiet=True)
    progress.log = lambda msg, style=None: lines.append(msg)
    cfg = RunConfig.for_size("tiny", time_budget=0.02, first_call_repeats=1)
    rec = WorkloadRun(w, cfg, _WrongMyc(), TorchAdapter("cpu"), {}, str(tmp_path), progress).run()
    assert rec["status"] == "mismatch"
    assert rec["implementations"]["myc"]["status"] == "mismatch"
    assert "samples_ms" not in rec["implementations"]["myc"]
    assert rec["implementations"]["torch"]["samples_ms"]
    assert any("MISMATCH" in line for line in lines)


def test_workload_selection_and_shape():
    assert [w.name for w in select("w1,W7")] == ["W1", "W1a", "W7", "W7f"]
    assert [w.name for w in select("W1a")] == ["W1a"]
    with pytest.raises(ValueError):
        select("W99")
    for w in all_workloads():
        assert isinstance(w, Workload)
        ins1, ins2 = w.make_inputs(3, "tiny"), w.make_inputs(3, "tiny")
        assert all(np.array_equal(a, b) for a, b in zip(ins1, ins2))  # seeded
        assert all(a.dtype in (np.float32, np.int64) for a in ins1)


def test_outputs_are_written_without_matplotlib(tiny_run, tmp_path, monkeypatch):
    """A run's figures survive a missing plotting library: JSON and markdown come first."""
    from benchmarks import report

    _, out = tiny_run
    results = json.loads((out / "results.json").read_text())
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    paths = report.write_all(results, tmp_path)
    assert "plot" not in paths and not (tmp_path / "ratios.png").exists()
    assert json.loads(paths["json"].read_text())["schema"] == "myc-bench/1"
    assert "| workload |" in paths["markdown"].read_text()


def test_contender_keeps_one_core_busy_and_stops():
    """--contend's load: a spinning process pinned to one core, gone after stop()."""
    from benchmarks.contend import Contender

    c = Contender()
    info = c.start()
    try:
        assert c.proc.poll() is None
        assert os.sched_getaffinity(info["pid"]) == {info["busy_core"]}
    finally:
        c.stop()
    assert c.proc is None
    with pytest.raises(ProcessLookupError):
        os.kill(info["pid"], 0)


def test_myc_cpu_column_only_beside_another_backend():
    from benchmarks.frameworks import MycCpuAdapter, available_peers, peer_applies
    from benchmarks.report import best_peer

    assert "myc-cpu" not in available_peers({"myc-cpu"}, False, 1, "cpu", "cpu")
    peers = available_peers({"myc-cpu"}, False, 1, "cpu", "opencl")
    assert isinstance(peers["myc-cpu"], MycCpuAdapter) and peers["myc-cpu"].backend == "cpu"
    from benchmarks.workloads import select

    assert peer_applies("myc-cpu", select("W2")[0], on_cpu=False)
    rec = {"implementations": {n: {"stats_ms": {"median": ms}} for n, ms in
                               (("myc", 3.0), ("myc-cpu", 1.0), ("torch", 2.0))},
           "ratios": {"myc/torch": {"ratio": 1.5}, "myc/myc-cpu": {"ratio": 3.0}}}
    got = best_peer(rec)  # myc's own cpu backend, the fastest here, is no peer
    assert got is not None and got[0] == "torch"


# --- --baseline: another checkout's myc, timed interleaved in a worker process ---------
def _main_restoring_env(args: list[str]) -> int:
    saved_env = dict(os.environ)
    saved_threads = torch.get_num_threads()
    try:
        return main(args)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        torch.set_num_threads(saved_threads)


def test_baseline_of_this_checkout_against_itself(tmp_path):
    """``--baseline`` pointing at this very checkout: the worker imports this myc, its
    outputs pass the check, its samples pair with myc's round by round, and the ratio of
    identical code comes out near 1 with an interval and a verdict by --compare's rule."""
    from benchmarks import baseline

    out = tmp_path / "out"
    rc = _main_restoring_env(
        ["--tiny", "--backend", "interp", "--workloads", "W1a", "--time-budget", "0.1",
         "--min-rounds", "10", "--first-call-repeats", "1", "--peers", "none",
         "--baseline", str(ROOT), "--output", str(out), "--in-process", "--quiet"]
    )
    assert rc == 0, (out / "results.md").read_text()
    data = json.loads((out / "results.json").read_text())
    info = data["config"]["baseline"]
    assert Path(info["myc_file"]) == ROOT / "myc" / "__init__.py"
    assert info["pid"] != os.getpid()
    assert list(data["workloads"]) == ["W1a"]
    assert data["workloads"]["W1a"]["first_call_order"] == ["myc", "myc@base"]
    for name in ("W1a",):
        rec = data["workloads"][name]
        base, new = rec["implementations"]["myc@base"], rec["implementations"]["myc"]
        assert base["status"] == "ok" and base["check"]["ok"], (name, base)
        assert len(base["samples_ms"]) == len(new["samples_ms"]) >= 10
        assert base["first_call"]["cold_ms"] and base["first_call"]["disk_cache_ms"]
        assert base["peak_mem_mib"] >= 0
    rows = {r["workload"]: r for r in baseline.rows(data)}
    for name in ("W1a",):
        row = rows[name]
        assert row["lo"] <= row["ratio"] <= row["hi"]
        assert 0.5 < row["ratio"] < 2.0, row  # the same code on both sides
        assert row["verdict"] == compare.verdict(row["lo"], row["hi"])
    md = (out / "results.md").read_text()
    assert "## Against the baseline" in md and "| W1a |" in md.split("Against the baseline")[1]
    text = baseline.render([str(out / "results.json")])
    assert "myc/base" in text and f"{rows['W1a']['ratio']:.3f}" in text


def _paired_results(scale: float, n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    drift = np.linspace(1.0, 2.0, n)  # the machine slows down; both sides alike
    base = drift * rng.lognormal(np.log(10.0), 0.03, n)
    new = scale * drift * rng.lognormal(np.log(10.0), 0.03, n)
    ci = stats.paired_ratio_ci(new, base)
    return {"workloads": {"W4": {
        "implementations": {
            "myc": {"status": "ok", "samples_ms": list(new), "stats_ms": {"median": 1.0},
                    "first_call": {"cold_median_ms": 50.0, "disk_cache_median_ms": 9.0}},
            "myc@base": {"status": "ok", "samples_ms": list(base), "stats_ms": {"median": 1.0}},
        },
        "ratios": {"myc/myc@base": ci.to_dict()},
    }}}


def test_baseline_verdicts_follow_the_compare_rule():
    from benchmarks import baseline

    (slower,) = baseline.rows(_paired_results(1.10, 30, 1))
    (same,) = baseline.rows(_paired_results(1.00, 30, 2))
    (faster,) = baseline.rows(_paired_results(0.90, 30, 3))
    (short,) = baseline.rows(_paired_results(1.10, 3, 4))
    assert slower["verdict"] == "regression" and slower["ratio"] == pytest.approx(1.1, rel=0.03)
    assert same["verdict"] == "no change"
    assert faster["verdict"] == "improvement"
    assert short["verdict"] == "too few rounds"  # a 3-round interval says nothing
    assert slower["myc_cold_ms"] == 50.0 and "base_cold_ms" not in slower


@pytest.mark.parametrize("case", ["missing", "no_myc", "broken_myc"])
def test_bad_baseline_dir_is_a_clear_error(tmp_path, capsys, case):
    target = tmp_path / "base"
    if case != "missing":
        target.mkdir()
    if case == "broken_myc":
        (target / "myc").mkdir()
        (target / "myc" / "__init__.py").write_text("raise ImportError('baseline is broken')\n")
    rc = _main_restoring_env(
        ["--tiny", "--workloads", "W1", "--peers", "none", "--baseline", str(target),
         "--output", str(tmp_path / "out"), "--in-process", "--quiet"]
    )
    err = capsys.readouterr().err
    assert rc == 2
    expected = {"missing": "no such directory", "no_myc": "no myc package there",
                "broken_myc": "its myc did not load"}[case]
    assert f"--baseline {target}" in err and expected in err, err
    if case == "broken_myc":
        assert "baseline is broken" in err
    assert not (tmp_path / "out").exists()


class _InProcessRemote:
    """A remote implementation without the process: what WorkloadRun asks of myc@base."""

    name = "myc@base"

    def __init__(self):
        self.adapter, self.settles = MycAdapter("interp"), []

    def load(self, w, cfg):
        state = self.adapter.prepare(w, w.make_inputs(cfg.seed, cfg.size))
        ms, out, self._call = self.adapter.first_call(w, state)
        return {"cold_ms": [ms], "cold_median_ms": ms}, out

    def call(self):
        return self._call()

    def sample(self, settle):
        from benchmarks.runner import timed_sample

        self.settles.append(settle)
        return timed_sample(self._call, settle)

    def peak_mem(self):
        return 0.0


def test_remote_is_timed_in_the_rounds_and_timed_filter(tmp_path):
    """A remote takes its turn in every round (its own sample, with --settle), its ratio
    to myc is paired; ``timed`` (--baseline-only) leaves PyTorch checked but untimed;
    ``remotes_first`` makes the remote's first calls before myc's."""
    w = select("W1")[0]
    remote = _InProcessRemote()
    cfg = RunConfig.for_size("tiny", time_budget=0.05, min_rounds=6, first_call_repeats=1,
                             settle=2, timed=("myc", "myc@base"))
    rec = WorkloadRun(w, cfg, MycAdapter("interp"), TorchAdapter("cpu"), {}, str(tmp_path),
                      PlainProgress(1, quiet=True), remotes={"myc@base": remote},
                      remotes_first=True).run()
    assert rec["first_call_order"] == ["myc@base", "myc"]
    impls = rec["implementations"]
    assert impls["myc@base"]["status"] == "ok" and impls["myc@base"]["check"]["ok"]
    assert len(impls["myc@base"]["samples_ms"]) == len(impls["myc"]["samples_ms"]) >= 6
    assert set(remote.settles) == {2} and len(remote.settles) == rec["timing"]["rounds"]
    assert impls["torch"]["status"] == "ok" and "samples_ms" not in impls["torch"]
    assert list(rec["ratios"]) == ["myc/myc@base"]
    assert "peak_mem_mib" in impls["myc@base"]


def test_both_sides_remote_as_in_baseline_symmetric(tmp_path):
    """--baseline-symmetric: myc itself is a remote too; the rounds pair the two remotes,
    the early stop compares them (not myc with itself), and the first calls run in
    reverse order when asked."""
    w = select("W1a")[0]
    own, base = _InProcessRemote(), _InProcessRemote()
    cfg = RunConfig.for_size("tiny", time_budget=0.05, min_rounds=5, first_call_repeats=1,
                             timed=("myc", "myc@base"))
    rec = WorkloadRun(w, cfg, None, TorchAdapter("cpu"), {}, str(tmp_path),
                      PlainProgress(1, quiet=True), remotes={"myc": own, "myc@base": base},
                      remotes_first=True).run()
    assert rec["first_call_order"] == ["myc@base", "myc"]
    impls = rec["implementations"]
    assert impls["myc"]["status"] == "ok" and impls["myc@base"]["status"] == "ok"
    assert len(own.settles) == len(base.settles) == rec["timing"]["rounds"] >= 5
    assert list(rec["ratios"]) == ["myc/myc@base"]
