"""Random programs compared across cpu, opencl, interp and CPython: values and gradients.

The default run checks a few hundred programs on the evaluator and the CPU backend
(``MYC_FUZZ_FAST`` scales it) and a smaller share on OpenCL, whose PoCL compiler takes
seconds a program.  The slow tests run ``MYC_FUZZ_EXAMPLES`` random (not derandomized)
programs of each kind on every backend (default 50: under ten minutes on two cores).
Every compiled call must have run compiled code (``tests/reliability/fuzz.py``).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import progen
from tests.backends import BACKENDS
from tests.reliability import campaign, fuzz

PROGRAMS = st.one_of(progen.program(), progen.tuple_program(), progen.f32_program())
FAST = int(os.environ.get("MYC_FUZZ_FAST", "100"))
SLOW = int(os.environ.get("MYC_FUZZ_EXAMPLES", "50"))
needs_opencl = pytest.mark.skipif("opencl" not in BACKENDS, reason="PyOpenCL not installed")


def _settings(n: int, derandomize: bool = True):
    return settings(max_examples=max(n, 1), deadline=None, derandomize=derandomize,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def progdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@_settings(FAST)
@given(prog=PROGRAMS, data=st.data())
def test_values_cpu(progdir, prog, data):
    fuzz.check_values(prog, data.draw(progen.arguments(prog)), progdir, ("interp", "cpu"))


@_settings(FAST // 2)
@given(prog=PROGRAMS, data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_gradients_cpu(progdir, prog, data, seed):
    fuzz.check_gradients(prog, data.draw(progen.arguments(prog)), progdir, seed, ("cpu",))


@needs_opencl
@_settings(FAST // 5)
@given(prog=PROGRAMS, data=st.data())
def test_values_opencl(progdir, prog, data):
    fuzz.check_values(prog, data.draw(progen.arguments(prog)), progdir, ("interp", "opencl"))


@needs_opencl
@_settings(FAST // 10)
@given(prog=PROGRAMS, data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_gradients_opencl(progdir, prog, data, seed):
    fuzz.check_gradients(prog, data.draw(progen.arguments(prog)), progdir, seed, ("opencl",))


@pytest.mark.slow
@_settings(SLOW, derandomize=False)
@given(prog=PROGRAMS, data=st.data())
def test_values_many(progdir, prog, data):
    fuzz.check_values(prog, data.draw(progen.arguments(prog)), progdir)


@pytest.mark.slow
@_settings(SLOW, derandomize=False)
@given(prog=PROGRAMS, data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_gradients_many(progdir, prog, data, seed):
    fuzz.check_gradients(prog, data.draw(progen.arguments(prog)), progdir, seed)


@pytest.mark.slow
def test_campaign(tmp_path, monkeypatch):
    """The long campaign's runner itself, bounded: ``MYC_FUZZ_CAMPAIGN`` programs (default
    200), values and gradients on every backend, in this warm process; each failure's
    file is named in the assertion."""
    monkeypatch.setenv("MYC_CACHE_DIR", "off")  # (the campaign sets it; restored after)
    n = int(os.environ.get("MYC_FUZZ_CAMPAIGN", "200"))
    seen = campaign.main(["--examples", str(n), "--backends", ",".join(BACKENDS),
                          "--out", str(tmp_path)])
    assert seen["run"] >= min(n, 10)  # (Hypothesis may stop early on duplicates)
    assert seen["fail"] == 0, (tmp_path / "summary.txt").read_text() + "\n".join(
        p.read_text() for p in sorted(tmp_path.glob("failure-*.txt"))[:3])
