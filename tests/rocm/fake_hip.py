"""A stand-in for CuPy's ROCm build on a machine without an AMD GPU, for testing the
ROCm backend's glue: ``tests/cuda/fake_cupy`` 's device arrays (which refuse to mix
with host arrays), a runtime that says ``is_hip`` and names a ``gcnArchName``, and a
``Module`` that takes the code object ``runtime.kernel_hsaco`` linked -- checked with
pyelftools to hold each kernel it is asked for -- and launches the emulator's build of
the same kernel."""

from __future__ import annotations

import io
import sys
from types import SimpleNamespace

from myc.backends.gpu.emulate import EmulatedKernel
from myc.backends.rocm import runtime
from tests.cuda import fake_cupy

ARCH_NAME = b"gfx942:sramecc+:xnack-"
_PROGRAMS: dict[bytes, EmulatedKernel] = {}


class FakeHipModule:
    def load(self, image: bytes) -> None:
        from elftools.elf.elffile import ELFFile

        assert image[:4] == b"\x7fELF", "not a code object"
        self.elf = ELFFile(io.BytesIO(image))
        self.symbols = {s.name for s in self.elf.get_section_by_name(".dynsym").iter_symbols()}
        self.ek = _PROGRAMS[image]

    def get_function(self, name: str) -> fake_cupy.FakeFunction:
        assert name in self.symbols and f"{name}.kd" in self.symbols, name
        return fake_cupy.FakeFunction(self.ek, name)


hip = SimpleNamespace(**vars(fake_cupy.cupy))
hip.cuda = SimpleNamespace(
    is_available=lambda: True, Device=lambda: SimpleNamespace(id=0),
    runtime=SimpleNamespace(is_hip=True, getDeviceProperties=lambda i: {
        "name": b"fake AMD GPU", "gcnArchName": ARCH_NAME}),
    function=SimpleNamespace(Module=FakeHipModule),
    get_current_stream=lambda: SimpleNamespace(synchronize=lambda: None))


def install(monkeypatch, tmp_path) -> SimpleNamespace:
    """Make ``backend="rocm"`` run on the fake ROCm CuPy (for one test)."""
    real = runtime.kernel_hsaco

    def kernel_hsaco(kernel, arch=runtime.DEFAULT_ARCH):
        image, plan = real(kernel, arch)
        _PROGRAMS[image] = EmulatedKernel(kernel)
        return image, plan

    monkeypatch.setitem(sys.modules, "cupy", hip)
    monkeypatch.setattr(runtime, "_device", None)
    monkeypatch.setattr(runtime, "_cache", {})
    monkeypatch.setattr(runtime, "kernel_hsaco", kernel_hsaco)
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path / "cache"))
    fake_cupy.launches.clear()
    return hip
