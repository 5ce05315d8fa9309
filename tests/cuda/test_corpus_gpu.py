"""The semantics corpus (``tests/programs``: every program, every argument set) on
``backend="cuda"`` on a real NVIDIA GPU, against CPython; skipped without CuPy or
without a GPU.  The emulated twin for ROCm is ``tests/rocm/test_corpus.py``; this one is
what catches a difference between the emulator and the hardware, or glue that only a
real CuPy exercises (lists, dicts, host steps, loops driven from the host)."""

from __future__ import annotations

import pytest

from tests.programs import all_cases
from tests.test_programs import run_corpus_module

cupy = pytest.importorskip("cupy")
try:
    _has_gpu = bool(cupy.cuda.is_available())
except Exception:  # noqa: BLE001
    _has_gpu = False
pytestmark = pytest.mark.skipif(not _has_gpu, reason="no NVIDIA GPU visible to CuPy")

MODULES = sorted({f.__module__.rsplit(".", 1)[-1] for f, _ in all_cases()})


@pytest.mark.parametrize("module", MODULES)
def test_corpus_on_cuda(module):
    assert run_corpus_module(module, "cuda")
