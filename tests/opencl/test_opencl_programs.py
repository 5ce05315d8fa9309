"""Whole programs on ``backend="opencl"`` against the reference evaluator: the benchmark
workloads' values and gradients (softmax cross-entropy, the MLP step, logsumexp, the
data-dependent while loop, Horner's loop), higher-order derivatives, dtypes kept,
inputs not mutated, bad input refused with a MycError, and the kernels really built
for OpenCL.  (``tests/test_programs.py`` runs its whole corpus on OpenCL too.)"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from benchmarks.workloads.w3_softmax_xent import W3
from benchmarks.workloads.w4_mlp import W4
from benchmarks.workloads.w5_while_loop import W5
from benchmarks.workloads.w6_horner import W6
from benchmarks.workloads.w7_logsumexp import W7

pytest.importorskip("pyopencl")
from myc.backends.opencl import runtime  # noqa: E402 - plainly: an ImportError in myc fails

WORKLOADS = [W3, W4, W5, W6, W7]


def _leaves(v) -> list:
    return [y for x in v for y in _leaves(x)] if isinstance(v, (tuple, list)) else [v]


def close(got, want, rtol: float, atol: float) -> None:
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("w", WORKLOADS, ids=lambda w: w.name)
def test_workload_value_and_gradient(w):
    args = w.make_inputs(0, "tiny")
    snapshot = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    runtime._cache.clear()
    vg = myc.value_and_grad(w.myc_fn, argnums=w.argnums)
    got = myc.jit(vg, backend="opencl")(*args)
    want = myc.jit(vg, backend="interp")(*args)
    close(got, want, rtol=2e-4, atol=2e-5)
    for a, s in zip(args, snapshot, strict=True):
        np.testing.assert_array_equal(a, s)
    assert runtime._cache  # its kernels were built for the OpenCL device


def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)) * x)


def test_grad_of_grad_and_jvp():
    x = np.linspace(-3.0, 3.0, 257)
    g2 = myc.jit(myc.grad(lambda v: np.sum(myc.grad(softplus_sum)(v) ** 2)),
                 backend="opencl")(x)
    ref = myc.jit(myc.grad(lambda v: np.sum(myc.grad(softplus_sum)(v) ** 2)),
                  backend="interp")(x)
    np.testing.assert_allclose(g2, ref, rtol=1e-9)


def row_softmax(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_kept_and_nan_rows_propagate(dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((33, 70)).astype(dtype)
    x[2, 3] = np.nan
    got = myc.jit(row_softmax, backend="opencl")(x)
    assert got.dtype == dtype
    want = row_softmax(x)
    assert np.isnan(got[2]).all()
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_bad_input_is_a_myc_error():
    f = myc.jit(row_softmax, backend="opencl")
    with pytest.raises(myc.MycError):
        f(np.ones((3, 4), dtype=np.complex128))
    with pytest.raises(myc.MycError):
        f("not an array")


def test_no_device_is_a_clear_myc_error(monkeypatch):
    monkeypatch.setenv("MYC_OPENCL_DEVICE", "97:0")
    with pytest.raises(myc.MycError, match="no OpenCL device '97:0'"):
        runtime._Device()


def test_a_program_from_the_disk_cache_runs_on_opencl():
    import pickle

    from tests.cpu.test_native_program import programs_run

    x = np.random.default_rng(5).standard_normal((16, 40))
    (prog,) = programs_run(myc.jit(row_softmax, backend="opencl"), x)
    assert prog.backend == "opencl" and prog.native is None
    again = pickle.loads(pickle.dumps(prog))  # what the disk cache stores and loads
    units = [st.fn for st in again.steps if getattr(st.fn, "backend", None) == "opencl"]
    assert units and all(isinstance(u.compiled, runtime.CompiledKernel) for u in units)
    np.testing.assert_allclose(again.run([x]), row_softmax(x), rtol=1e-12)


def _rss() -> int:
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def scaled_tanh_sum(x):
    return np.sum(np.tanh(x) * 2.0 + x)


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="Linux")
def test_repeated_calls_keep_device_memory_flat():
    """Device buffers (native memory, invisible to tracemalloc) are released per call."""
    f = myc.jit(scaled_tanh_sum, backend="opencl")
    x = np.linspace(-1.0, 1.0, 100_000)  # 800 kB in, per call
    for _ in range(300):
        f(x)
    before = _rss()
    for _ in range(3000):  # 2.4 GB through the device in all
        f(x)
    grown = _rss() - before
    assert grown < 30e6, f"resident memory grew by {grown / 1e6:.1f} MB"
