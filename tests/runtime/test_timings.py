"""``MYC_TIMINGS=1``: one report per compiling call, covering every stage of it."""

import numpy as np

import myc
from myc import timings


def _fresh(x):
    return np.sum(np.tanh(x * 1.23456789 + 0.7654321))


def test_the_report_covers_the_whole_first_call(monkeypatch, capsys):
    monkeypatch.setenv("MYC_TIMINGS", "1")
    f = myc.grad(_fresh)
    f(np.linspace(0.0, 1.0, 4096))
    rep = timings.last()
    assert rep is not None and rep["label"] == "grad(_fresh)"
    for name in ("parse", "ad", "infer", "opt simplify", "opt cse", "fusion", "lower",
                 "kernel codegen", "llvm optimize", "llvm codegen", "loading", "run"):
        assert name in rep["stages"], name
    assert rep["counts"]["typed nodes"] > 0 and rep["counts"]["optimized nodes"] > 0
    # each stage is charged its own time: together they are the call
    assert sum(rep["stages"].values()) <= rep["total_s"] * 1.0001
    assert "myc timings for grad(_fresh)" in capsys.readouterr().err


def test_no_report_when_off(monkeypatch):
    monkeypatch.delenv("MYC_TIMINGS", raising=False)
    before = timings.last()
    myc.jit(lambda x: x * 2.0 + 1.0)(np.ones(3))
    assert timings.last() is before


def _fresh_cpu(x):
    return np.sum(np.cos(x * 2.3456789 - 0.123456))


def test_cpu_mode_charges_the_process_clock(monkeypatch):
    """``MYC_TIMINGS=cpu`` reads ``time.process_time``, not the wall clock: a fake
    process clock that never moves charges nothing."""
    monkeypatch.setenv("MYC_TIMINGS", "cpu")
    monkeypatch.setattr(timings.time, "process_time", lambda: 5.0)
    myc.grad(_fresh_cpu)(np.linspace(0.0, 1.0, 512))
    rep = timings.last()
    assert rep is not None and rep["label"] == "grad(_fresh_cpu)"
    assert "infer" in rep["stages"] and "llvm optimize" in rep["stages"]
    assert rep["total_s"] == 0.0 and not any(rep["stages"].values())
