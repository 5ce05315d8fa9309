"""The semantics corpus (``tests/programs``: every program, every argument set) on
``backend="rocm"`` with the emulator in place of the GPU, against CPython, and every
kernel those programs compile linked into a code object for gfx90a and checked.  Slow
(4-6 minutes on 2 cores, most of it LLVM's AMDGPU code generation): ``-m slow``."""

from __future__ import annotations

import pytest

from myc.backends.rocm import runtime
from tests.programs import all_cases
from tests.rocm.elfcheck import check_code_object, elftools_or_skip, lld_or_skip
from tests.rocm.emulated import emulated
from tests.test_programs import run_corpus_module

MODULES = sorted({f.__module__.rsplit(".", 1)[-1] for f, _ in all_cases()})


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_corpus_on_rocm(module, monkeypatch, tmp_path):
    kernels = emulated(monkeypatch, tmp_path)
    assert run_corpus_module(module, "rocm")
    lld_or_skip()
    elftools_or_skip()
    for k in kernels:
        image, plan = runtime.kernel_hsaco(k, "gfx90a")
        check_code_object(image, [p.name for p in plan.passes], "gfx90a")
