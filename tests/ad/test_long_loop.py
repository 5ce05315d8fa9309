"""Reverse mode through very long loops: a ``while`` loop's adjoint is again a loop, so
the gradient of 100,000 iterations needs no deep recursion, and its memory (the chain of
backpropagator closures, i.e. the tape) grows linearly with the trip count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import myc

from .long_loop_programs import long_loop, long_loop_derivative_reference

REPO = Path(__file__).resolve().parents[2]


def test_gradient_through_21000_iterations_needs_no_deep_recursion():
    # the evaluator's recursion limit is 20,000 frames: one frame per iteration would fail
    n = 21_000
    g = myc.grad(myc.jit(long_loop, backend="interp"))(0.3, n)
    assert g == pytest.approx(long_loop_derivative_reference(0.3, n), rel=1e-7)
    _, t = myc.jvp(myc.jit(long_loop, backend="interp"), (0.3, n), (1.0, 0))
    assert t == pytest.approx(g, rel=1e-12)


def _measure(n: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "tests.ad.long_loop_programs", str(n)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_gradient_through_100000_iterations_memory_is_linear():
    small, big = _measure(25_000), _measure(100_000)
    for r in (small, big):
        assert r["grad"] == pytest.approx(long_loop_derivative_reference(0.3, r["n"]), rel=1e-7)
    d_small = small["peak_kib"] - small["baseline_kib"]
    d_big = big["peak_kib"] - big["baseline_kib"]
    for r, d in ((small, d_small), (big, d_big)):
        print(f"\nwhile-loop gradient, {r['n']:>7,} iterations: {r['seconds']:.1f} s, peak RSS "
              f"{r['peak_kib'] / 1024:.0f} MiB (baseline {r['baseline_kib'] / 1024:.0f} MiB, "
              f"+{d / 1024:.0f} MiB = {d * 1024 / r['n']:.0f} bytes/iteration)")
    print(f"memory ratio 100k/25k: {d_big / d_small:.2f} (linear = 4)")
    assert d_big < 6 * d_small, (small, big)
