"""The ROCm runtime's glue without an AMD GPU: CuPy replaced by a ROCm-flavoured stand-in
(``fake_hip``: device arrays that refuse to mix with host arrays, code objects loaded
and checked, kernels launched on the emulator).  Workloads with NumPy and with "device"
arguments against the cpu backend; the architecture taken from the device; GEMM on the
device; a CuPy built for the other vendor is a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.cuda import fake_cupy
from tests.cuda.checks import W17, close
from tests.cuda.checks import program as _program
from tests.rocm import fake_hip
from tests.rocm.elfcheck import elftools_or_skip, lld_or_skip


@pytest.fixture
def hip(monkeypatch, tmp_path):
    lld_or_skip()
    elftools_or_skip()
    return fake_hip.install(monkeypatch, tmp_path)


@pytest.mark.parametrize("w", [w for w in W17 if w.name in ("W2", "W4", "W5", "W7")],
                         ids=lambda w: w.name)
def test_workload_with_host_and_device_arrays(w, hip):
    args = w.make_inputs(0, "tiny")
    want = myc.jit(_program(w), backend="cpu")(*args)
    f = myc.jit(_program(w), backend="rocm")
    got = f(*args)
    close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
    leaves = list(got if isinstance(got, tuple) else (got,))
    assert not any(isinstance(x, fake_cupy.FakeArray) for x in leaves)
    assert fake_cupy.launches, "no kernel was launched"
    dev = tuple(hip.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    got2 = f(*dev)

    def strip(v):
        if isinstance(v, tuple):
            return tuple(strip(x) for x in v)
        if isinstance(v, fake_cupy.FakeArray):
            return v.get()
        assert not isinstance(v, np.ndarray), "a host array returned for device arguments"
        return v

    close(strip(got2), want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))


def test_code_objects_are_for_the_devices_arch_and_cached_on_disk(hip, monkeypatch):
    from myc.backends.rocm import runtime
    from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Store

    k = Kernel("twice", (100,), (Buffer("x", "float32", (100,)),),
               (Store(0, Binary("mul", Load(0, "float32"), Const(2.0, "float32"))),))
    x = np.arange(100, dtype=np.float32)
    first = runtime.compile_kernel(k)
    assert runtime.device().arch == "gfx942"  # from gcnArchName
    assert b"amdgcn-amd-amdhsa--gfx942" in first.hsaco
    np.testing.assert_array_equal(first([x])[0].get(), x * 2)
    made = []
    real = runtime.kernel_hsaco
    monkeypatch.setattr(runtime, "kernel_hsaco", lambda *a: made.append(a) or real(*a))
    monkeypatch.setattr(runtime, "_cache", {})
    again = runtime.compile_kernel(k)
    assert again is not first and not made, "the code object was linked again"
    assert again.hsaco == first.hsaco
    np.testing.assert_array_equal(again([x])[0].get(), x * 2)


def mlp_loss(x, w1, w2):
    h = np.tanh(x @ w1)
    return np.sum((h @ w2) ** 2) / x.shape[0]


def test_gemm_runs_on_the_device(hip, monkeypatch):
    from myc.backends.gpu import host

    calls = []
    real = host.HostStep.__call__

    def spy(self, *vals):
        out = real(self, *vals)
        calls.append((self.name, hasattr(out, "__cuda_array_interface__")))
        return out

    monkeypatch.setattr(host.HostStep, "__call__", spy)
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(s) for s in ((32, 8), (8, 16), (16, 4)))
    vg = myc.value_and_grad(mlp_loss, argnums=(1, 2))
    got = myc.jit(vg, backend="rocm")(x, w1, w2)
    close(got, myc.jit(vg, backend="cpu")(x, w1, w2), rtol=1e-10, atol=1e-12)
    gemms = [c for c in calls if c[0] in ("matmul", "dot")]
    assert gemms and all(on_dev for _, on_dev in gemms), calls


def test_the_wrong_vendors_cupy_is_a_clear_error(monkeypatch, tmp_path):
    """CuPy's CUDA build with backend='rocm', and its ROCm build with backend='cuda'."""
    from myc.backends.cuda import runtime as cuda_runtime
    from myc.backends.rocm import runtime as rocm_runtime

    fake_cupy.install(monkeypatch, tmp_path)  # a CUDA CuPy
    monkeypatch.setattr(rocm_runtime, "_device", None)
    with pytest.raises(myc.MycError, match="built for CUDA.*backend='cuda'"):
        myc.jit(lambda x: x * 2.0, backend="rocm")(np.ones(3))
    fake_hip.install(monkeypatch, tmp_path)  # a ROCm CuPy
    monkeypatch.setattr(cuda_runtime, "_device", None)
    with pytest.raises(myc.MycError, match="built for ROCm.*backend='rocm'"):
        myc.jit(lambda x: x * 3.0, backend="cuda")(np.ones(3))


def test_no_linker_is_a_clear_error(monkeypatch, tmp_path):
    import sys

    from myc.backends.rocm import amdgpu

    fake_hip.install(monkeypatch, tmp_path)
    monkeypatch.setitem(sys.modules, "ziglang", None)
    monkeypatch.delenv("MYC_LD_LLD", raising=False)
    monkeypatch.setattr(amdgpu.shutil, "which", lambda name: None)
    with pytest.raises(myc.MycError, match="ziglang"):
        myc.jit(lambda x: x * 2.0 + 1.0, backend="rocm")(np.ones(3))


def test_rocm_cupy_without_a_gpu_is_a_clear_error(monkeypatch, tmp_path):
    from types import SimpleNamespace

    hip = fake_hip.install(monkeypatch, tmp_path)
    monkeypatch.setattr(hip, "cuda", SimpleNamespace(**{**vars(hip.cuda),
                                                         "is_available": lambda: False}))
    with pytest.raises(myc.MycError, match="finds no GPU.*rocm-smi"):
        myc.jit(lambda x: x * 2.0 + 1.0, backend="rocm")(np.ones(3))
