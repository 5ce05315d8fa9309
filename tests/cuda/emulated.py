"""``backend="cuda"`` without a GPU: the device is replaced by the emulator.

``emulated(monkeypatch)`` makes ``myc.backends.cuda.runtime`` hand out
``EmulatedKernel`` s (the same phase functions as the PTX, run serially on the host) and
a stand-in device, so whole programs lower and run exactly as on the GPU except for the
CuPy glue; it returns the list of kernels compiled, for the PTX tests.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np

from myc.backends.cuda import runtime
from myc.backends.cuda.emulate import EmulatedKernel
from myc.lower.kernel import Kernel


class _FakeDevice:
    name = "emulator"
    arch = "sm_75"
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
