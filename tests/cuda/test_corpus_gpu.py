"""The semantics corpus (``tests/programs``: every program, every argument set) on
``backend="cuda"`` on a real NVIDIA GPU, against CPython; skipped without CuPy or
without a GPU.  The emulated twin for ROCm is ``tests/rocm/test_corpus.py``; this one is
what catches a difference between the emulator and the hardware, or glue that only a
real CuPy exercises (lists, dicts, host steps, loops driven from the host)."""

from __future__ import annotations

import pytest

from tests.cuda import checks
from tests.programs import all_cases
from tests.test_programs import run_corpus_module

cupy, pytestmark = checks.cupy_and_gpu_mark()

MODULES = sorted({f.__module__.rsplit(".", 1)[-1] for f, _ in all_cases()})


@pytest.mark.parametrize("module", MODULES)
def test_corpus_on_cuda(module):
    assert run_corpus_module(module, "cuda")
