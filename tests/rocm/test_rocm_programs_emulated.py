"""Whole programs on ``backend="rocm"`` with the AMD GPU replaced by the emulator: the
benchmark workloads W1-W7 (forward and value_and_grad) against the cpu backend, grad of
grad and jvp; every kernel these programs compile is linked into a code object for the
AMDGPU target and checked (``elfcheck``)."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.cuda.checks import W17, close
from tests.cuda.checks import program as _program
from tests.rocm.elfcheck import elftools_or_skip, link_and_check, lld_or_skip
from tests.rocm.emulated import emulated


@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_workload_on_the_emulated_gpu_and_its_code_objects(w, monkeypatch, tmp_path):
    kernels = emulated(monkeypatch, tmp_path)
    args = w.make_inputs(0, "tiny")
    got = myc.jit(_program(w), backend="rocm")(*args)
    want = myc.jit(_program(w), backend="cpu")(*args)
    close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
    assert kernels, "no kernel was compiled for the GPU"
    lld_or_skip()
    elftools_or_skip()
    for k in kernels:
        link_and_check(k, archs=("gfx90a",))


def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)) * x)


def test_grad_of_grad_and_jvp(monkeypatch, tmp_path):
    emulated(monkeypatch, tmp_path)
    x = np.linspace(-3.0, 3.0, 257)

    def f(v):
        return np.sum(myc.grad(softplus_sum)(v) ** 2)

    g2 = myc.jit(myc.grad(f), backend="rocm")(x)
    np.testing.assert_allclose(g2, myc.jit(myc.grad(f), backend="cpu")(x), rtol=1e-9)
    dx = np.cos(x)
    got = myc.jvp(myc.jit(softplus_sum, backend="rocm"), (x,), (dx,))
    want = myc.jvp(myc.jit(softplus_sum, backend="cpu"), (x,), (dx,))
    close(got, want, rtol=1e-9, atol=1e-12)


def test_no_cupy_is_a_clear_error(monkeypatch):
    from myc.backends.rocm import runtime

    monkeypatch.setattr(runtime, "_device", None)
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)  # import fails
    with pytest.raises(myc.MycError, match=r"pip install 'myc\[rocm\]'"):
        myc.jit(lambda x: x * 2.0 + 1.0, backend="rocm")(np.ones(3))


def test_bench_skips_cleanly_without_a_gpu(monkeypatch, capsys, tmp_path):
    from benchmarks.cli import main
    from myc.backends.rocm import runtime

    monkeypatch.setattr(runtime, "_device", None)
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)  # no CuPy for ROCm
    rc = main(["--backend", "rocm", "--tiny", "--workloads", "W1", "--in-process",
               "--output", str(tmp_path / "out")])
    assert rc == 0
    err = capsys.readouterr().err
    assert "skipped, backend 'rocm' has no device" in err and "myc[rocm]" in err
    assert not (tmp_path / "out").exists()
