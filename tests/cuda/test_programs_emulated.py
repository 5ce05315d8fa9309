"""Whole programs on ``backend="cuda"`` with the GPU replaced by the emulator: the
benchmark workloads W1-W7 (forward and value_and_grad) against the cpu backend, grad of
grad and jvp, a loop, and the lowering making every array op a GPU kernel.  The PTX of
every kernel these programs compile is assembled for sm_75/80/90 (where ``ptxas`` is)."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.cuda.checks import W17, close
from tests.cuda.checks import program as _program
from tests.cuda.emulated import emulated
from tests.cuda.test_ptx import assemble, ptxas_or_skip


@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_workload_on_the_emulated_gpu(w, monkeypatch, tmp_path):
    kernels = emulated(monkeypatch, tmp_path)
    args = w.make_inputs(0, "tiny")
    snapshot = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    got = myc.jit(_program(w), backend="cuda")(*args)
    want = myc.jit(_program(w), backend="cpu")(*args)
    close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
    for a, s in zip(args, snapshot, strict=True):
        np.testing.assert_array_equal(a, s)
    assert kernels, "no kernel was compiled for the GPU"
    if w.kind == "forward" and len(args) == 1 and w.name != "W5":  # and its gradient
        fn = w.myc_fn
        vg = myc.value_and_grad(lambda x: np.sum(fn(x)))
        close(myc.jit(vg, backend="cuda")(*args), myc.jit(vg, backend="cpu")(*args),
              rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_workload_kernels_assemble(w, monkeypatch, tmp_path):
    ptxas_or_skip()
    kernels = emulated(monkeypatch, tmp_path)
    args = w.make_inputs(0, "tiny")
    myc.jit(_program(w), backend="cuda")(*args)
    assert kernels
    for k in kernels:
        assemble(k, archs=("sm_75", "sm_90"))


def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)) * x)


def test_grad_of_grad_and_jvp(monkeypatch, tmp_path):
    emulated(monkeypatch, tmp_path)
    x = np.linspace(-3.0, 3.0, 257)

    def f(v):
        return np.sum(myc.grad(softplus_sum)(v) ** 2)

    g2 = myc.jit(myc.grad(f), backend="cuda")(x)
    np.testing.assert_allclose(g2, myc.jit(myc.grad(f), backend="cpu")(x), rtol=1e-9)
    dx = np.cos(x)
    got = myc.jvp(myc.jit(softplus_sum, backend="cuda"), (x,), (dx,))
    want = myc.jvp(myc.jit(softplus_sum, backend="cpu"), (x,), (dx,))
    close(got, want, rtol=1e-9, atol=1e-12)


def test_every_array_op_is_a_kernel(monkeypatch, tmp_path):
    kernels = emulated(monkeypatch, tmp_path)

    def f(x):
        return np.exp(x)  # a lone op: a kernel on the GPU (NumPy's loop on the cpu backend)

    x = np.linspace(-1, 1, 1000).astype(np.float32)
    got = myc.jit(f, backend="cuda")(x)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
    assert len(kernels) == 1


def test_no_gpu_is_a_clear_error(monkeypatch):
    from myc.backends.cuda import runtime

    monkeypatch.setattr(runtime, "_device", None)
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)  # import fails
    with pytest.raises(myc.MycError, match=r"pip install 'myc\[cuda\]'"):
        myc.jit(lambda x: x * 2.0 + 1.0, backend="cuda")(np.ones(3))
