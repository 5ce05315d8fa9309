"""``backend="rocm"`` without a GPU: the device is replaced by the emulator.

As ``tests/cuda/emulated.py`` for the ROCm runtime: ``myc.backends.rocm.runtime`` hands
out ``EmulatedKernel`` s (the same phase functions the code objects are made from, run
serially on the host) and a stand-in device; returns the list of kernels compiled, so
that the tests link each for the AMDGPU target.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np

from myc.backends.gpu.emulate import EmulatedKernel
from myc.backends.rocm import runtime
from myc.lower.kernel import Kernel


class _FakeDevice:
    backend = "rocm"
    name = "emulator"
    arch = "gfx90a"
    id = 0
    cp = SimpleNamespace(asarray=np.asarray)  # "device" arrays are host arrays here


def emulated(monkeypatch, tmp_path) -> list[Kernel]:
    seen: list[Kernel] = []
    cache: dict[str, EmulatedKernel] = {}

    def compile_kernel(kernel: Kernel) -> EmulatedKernel:
        key = runtime.cache_key(kernel, "emu")
        if key not in cache:
            cache[key] = EmulatedKernel(kernel)
            seen.append(kernel)
        return cache[key]

    monkeypatch.setattr(runtime, "device", lambda: _FakeDevice())
    monkeypatch.setattr(runtime, "compile_kernel", compile_kernel)
    # programs compiled against the emulator must not be found by a real GPU run
    monkeypatch.setenv("MYC_CACHE_DIR", os.fspath(tmp_path / "cache"))
    return seen
