"""``backend="cuda"`` on a real NVIDIA GPU (skipped without CuPy or without a GPU): the
kernels against the kernel IR's reference (random fusion groups where hypothesis is
installed, row and split reductions, int64 wrapping, transcendentals, exact mod), whole
programs W1-W7 against the cpu backend (with CuPy arguments too: then nothing is copied
to the host), and the array kinds in and out (NumPy in -> NumPy out, CuPy or CUDA torch
tensors in -> CuPy out).  Needs only pytest."""

from __future__ import annotations

import functools
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import myc
from myc.lower.kernel import Kernel
from tests.cuda import checks

cupy, pytestmark = checks.cupy_and_gpu_mark()

from myc.backends.cuda import runtime  # noqa: E402


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    ck = runtime.compile_kernel(kernel)
    assert ck is not None, kernel.format()
    got = [o.get() for o in ck(inputs)]
    return got, kernel.reference(inputs)


def test_random_fusion_groups_match_the_reference():
    hypothesis = pytest.importorskip("hypothesis")
    from tests.cpu.test_exprs import check_group, fusion_group

    @hypothesis.settings(max_examples=60, deadline=None)
    @hypothesis.given(fusion_group())
    def body(case):
        check_group(case, run)

    body()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_special_values(dtype):
    checks.check_softmax_rows(run, dtype)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_long_reductions_split_into_pieces(op, dtype):
    checks.check_long_reduction(run, op, dtype)


def test_column_reductions_and_int_wrapping():
    checks.check_columns_and_int_wrapping(run)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transcendentals_and_exact_mod(dtype):
    checks.check_transcendentals(run, dtype)


@pytest.mark.parametrize("w", checks.W17, ids=lambda w: w.name)
def test_workload_on_the_gpu(w):
    args = w.make_inputs(0, "tiny")
    got = myc.jit(checks.program(w), backend="cuda")(*args)
    want = myc.jit(checks.program(w), backend="cpu")(*args)
    checks.close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))


def _host(v):
    if isinstance(v, tuple):
        return tuple(_host(x) for x in v)
    return v.get() if isinstance(v, cupy.ndarray) else v


@pytest.mark.parametrize("w", checks.W17, ids=lambda w: w.name)
def test_workload_with_device_arguments_stays_on_the_device(w):
    from myc.backends.cuda import host

    args = w.make_inputs(0, "tiny")
    dev = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    f = myc.jit(checks.program(w), backend="cuda")
    f(*dev)
    host.reset_host_fallbacks()
    got = f(*dev)
    assert host.host_fallbacks() == {}, "device operands were copied to the host"
    want = myc.jit(checks.program(w), backend="cpu")(*args)
    assert all(isinstance(x, cupy.ndarray) for x in checks.leaves(got) if np.ndim(x))
    checks.close(_host(got), want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))


def loss(x, w):
    return np.sum(np.tanh(x @ w) ** 2) / x.shape[0]


def test_array_kinds_in_and_out():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16)).astype(np.float32)
    vg = myc.jit(myc.value_and_grad(loss, argnums=(0, 1)), backend="cuda")
    want = myc.jit(myc.value_and_grad(loss, argnums=(0, 1)), backend="cpu")(x, w)
    v, (gx, gw) = vg(x, w)
    assert isinstance(gx, np.ndarray) and isinstance(gw, np.ndarray)
    np.testing.assert_allclose(v, want[0], rtol=1e-4)
    np.testing.assert_allclose(gw, want[1][1], rtol=1e-4, atol=1e-5)
    v2, (gx2, gw2) = vg(cupy.asarray(x), cupy.asarray(w))
    assert isinstance(gx2, cupy.ndarray) and isinstance(gw2, cupy.ndarray)
    np.testing.assert_allclose(gx2.get(), want[1][0], rtol=1e-4, atol=1e-5)
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        v3, (gx3, _) = vg(torch.as_tensor(x, device="cuda"), torch.as_tensor(w, device="cuda"))
        assert isinstance(gx3, cupy.ndarray)
        np.testing.assert_allclose(gx3.get(), want[1][0], rtol=1e-4, atol=1e-5)


def exp_sin(v):
    return np.exp(v) * 2.0 + np.sin(v)


def test_kernels_really_run_on_the_gpu():
    runtime._cache.clear()
    x = np.linspace(-3, 3, 1 << 20).astype(np.float32)
    got = myc.jit(exp_sin, backend="cuda")(x)
    np.testing.assert_allclose(got, np.exp(x) * 2.0 + np.sin(x), rtol=2e-6, atol=1e-6)
    assert runtime._cache and all(isinstance(ck, runtime.CompiledKernel)
                                  for ck in runtime._cache.values())


@functools.cache
def _gemm_capture_probe() -> tuple[int, str]:
    """``gemm_capture_probe.py`` in a subprocess: (exit status, output)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), MYC_CUDA_GRAPH_GEMM="1")  # (opt-in)
    r = subprocess.run([sys.executable, "-m", "tests.cuda.gemm_capture_probe"], cwd=root,
                       env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def test_gemms_are_captured_through_cublas_in_a_subprocess():
    """2-D float32/float64 products (transposed operands too) captured into a CUDA graph
    through cuBLAS itself (``gpu.capture_gemm``: CuPy 14 refuses cuBLAS in a capture),
    replayed, right against NumPy -- in a subprocess, so that a crash is a failure."""
    rc, out = _gemm_capture_probe()
    assert rc == 0, f"exit status {rc}:\n{out[-3000:]}"


@pytest.mark.parametrize("w", checks.W17, ids=lambda w: w.name)
def test_repeat_calls_on_the_same_arrays_replay_a_cuda_graph(w):
    """Captured (every workload but W5, whose loop reads its condition: refused,
    visibly; W4's GEMMs through cuBLAS itself), replayed with the values of the steps;
    an argument changed in place is read by the replay, and earlier results are not
    overwritten by later replays."""
    from myc.backends.gpu import graphs

    gemm_graphs = w.name == "W4" and os.environ.get("MYC_CUDA_GRAPH_GEMM") == "1"
    if gemm_graphs:  # (its GEMMs' capture first tried where a crash cannot stop us)
        rc, out = _gemm_capture_probe()
        if rc != 0:
            pytest.fail(f"the GEMM capture probe failed (exit status {rc}):\n{out[-3000:]}")
    graphs.reset_graph_stats()
    args = w.make_inputs(0, "tiny")
    dev = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    f = myc.jit(checks.program(w), backend="cuda")
    results = [_host(f(*dev)) for _ in range(4)]
    want = myc.jit(checks.program(w), backend="cpu")(*args)
    tol = {"rtol": max(w.rtol, 2e-4), "atol": max(w.atol, 2e-5)}
    for r in results:
        checks.close(r, want, **tol)
    stats = graphs.graph_stats()
    if w.name == "W5":
        assert not stats.get("captured"), stats
        return
    if w.name == "W4" and not gemm_graphs:  # refused, visibly, once: GEMMs are opt-in
        assert not stats.get("captured") and sum(
            n for k, n in stats.items() if k.startswith("refused")) == 1, stats
        return
    assert stats.get("captured") == 1 and stats.get("replayed", 0) >= 2, stats
    kept = f(*dev)
    kept_host = _host(kept)
    a = dev[0]
    a *= a.dtype.type(0.5)  # in place: the next replay reads it
    args2 = (a.get(), *args[1:])
    checks.close(_host(f(*dev)), myc.jit(checks.program(w), backend="cpu")(*args2), **tol)
    checks.close(_host(kept), kept_host, rtol=0, atol=0)  # still the caller's own


def test_an_out_of_range_index_array_on_the_gpu_raises():
    """CuPy wraps an out-of-range integer index around; myc raises NumPy's IndexError
    (a MycIndexError on the user's line), with and without a CUDA graph."""
    w = next(w for w in checks.W17 if w.name == "W3")
    logits, labels = w.make_inputs(0, "tiny")
    f = myc.jit(checks.program(w), backend="cuda")
    x, y = cupy.asarray(logits), cupy.asarray(labels)
    for _ in range(4):
        f(x, y)
    for value in (logits.shape[1], -logits.shape[1] - 1):
        y[3] = value
        with pytest.raises(myc.MycIndexError, match="out of bounds"):
            f(x, y)
    y[3] = labels[3]
    checks.close(_host(f(x, y)), myc.jit(checks.program(w), backend="cpu")(logits, labels),
                 rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
