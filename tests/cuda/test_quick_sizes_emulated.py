"""W1-W7 at the benchmark's quick sizes on the emulated GPU against the cpu backend: the
sizes the GPU check times, which take the paths tiny inputs do not (reductions split
into hundreds of pieces, thousands of blocks).  Slow: ``-m slow``."""

from __future__ import annotations

import pytest

import myc
from tests.cuda.checks import W17, close
from tests.cuda.checks import program as _program
from tests.cuda.emulated import emulated


@pytest.mark.slow
@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_workload_at_quick_size(w, monkeypatch, tmp_path):
    emulated(monkeypatch, tmp_path)
    args = w.make_inputs(0, "quick")
    got = myc.jit(_program(w), backend="cuda")(*args)
    want = myc.jit(_program(w), backend="cpu")(*args)
    close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
