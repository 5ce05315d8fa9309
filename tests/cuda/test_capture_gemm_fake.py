"""GEMMs inside a CUDA graph capture (``myc/backends/gpu/capture_gemm.py``) on the fake
CuPy, whose ``matmul`` refuses a capturing stream as CuPy 14's does and whose cuBLAS
computes column-major GEMMs from raw pointers, op flags and leading dimensions: W4
captured and replayed with the values of the plain steps, transposed operands and
float64 through the op flags, and the products that are not plain 2-D float GEMMs
refusing the capture visibly."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.backends.gpu import capture_gemm, graphs
from tests.cuda import fake_cupy
from tests.cuda.checks import W17
from tests.cuda.checks import program as _program


@pytest.fixture(autouse=True)
def _opt_in(monkeypatch):
    """The raw cuBLAS path is opt-in until it has run on a GPU (``MYC_CUDA_GRAPH_GEMM``)."""
    monkeypatch.setenv("MYC_CUDA_GRAPH_GEMM", "1")


def _host(v):
    if isinstance(v, tuple | list):
        return [y for x in v for y in _host(x)]
    return [v.get() if isinstance(v, fake_cupy.FakeArray) else v]


def _plain_values(monkeypatch, fn, args):
    """``fn`` 's values on ``args`` without graphs (cupy.matmul every call)."""
    monkeypatch.setenv("MYC_NO_GRAPHS", "1")
    f = myc.jit(fn, backend="cuda")
    f(*args)
    out = _host(f(*args))
    monkeypatch.delenv("MYC_NO_GRAPHS")
    return out


def _replayed(fn, args, n=4):
    f = myc.jit(fn, backend="cuda")
    return [_host(f(*args)) for _ in range(n)]


def test_the_fake_matmul_refuses_a_capturing_stream_as_cupy_14(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    a = cp.asarray(np.eye(2))
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        with pytest.raises(NotImplementedError, match="during stream capture"):
            cp.matmul(a, a)
        s.end_capture()


def test_w4_is_captured_and_replays_the_values_of_the_steps(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    w = next(w for w in W17 if w.name == "W4")
    args = w.make_inputs(0, "tiny")
    dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    want = _plain_values(monkeypatch, _program(w), dev)
    cp.cublas.gemms.clear()
    for got in _replayed(_program(w), dev):
        for x, y in zip(got, want, strict=True):
            np.testing.assert_array_equal(x, y)
    stats = graphs.graph_stats()
    assert stats.get("captured") == 1 and stats.get("replayed") == 2, stats
    # W4's five products, its backward ones with a transposed operand (a view)
    assert len(cp.cublas.gemms) == 5, cp.cublas.gemms
    assert {(ta, tb) for _, ta, tb, *_ in cp.cublas.gemms} >= {(0, 0), (1, 0), (0, 1)}
    assert fake_cupy.FakeGraph.launched >= 2


def transposes(x, w, v, u):
    return x.T @ w, x @ v.T, np.dot(x.T, u.T), x.T @ x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transposed_operands_and_float64(dtype, monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3)).astype(dtype)
    w = rng.standard_normal((5, 4)).astype(dtype)
    v = rng.standard_normal((7, 3)).astype(dtype)
    u = rng.standard_normal((4, 5)).astype(dtype)
    dev = (cp.asarray(x), cp.asarray(w), cp.asarray(v), cp.asarray(u))
    want = _plain_values(monkeypatch, transposes, dev)
    ref = [x.T @ w, x @ v.T, x.T @ u.T, x.T @ x]
    for got in _replayed(transposes, dev):
        for g, p, r in zip(got, want, ref, strict=True):
            assert g.dtype == dtype and g.shape == r.shape
            np.testing.assert_array_equal(g, p)
            np.testing.assert_allclose(g, r, rtol=1e-5 if dtype == np.float32 else 1e-13)
    assert graphs.graph_stats().get("captured") == 1, graphs.graph_stats()
    assert {g[0] for g in cp.cublas.gemms} == {np.dtype(dtype)}
    assert {(ta, tb) for _, ta, tb, *_ in cp.cublas.gemms} == {(0, 1), (1, 0), (1, 1)}
    # an argument changed in place: the replayed GEMMs read it
    dev[0].view(np.ndarray)[...] *= dtype(2)
    got = _host(myc.jit(transposes, backend="cuda")(*dev))
    np.testing.assert_allclose(got[0], 2 * x.T @ w, rtol=1e-5)


def batched(a, b):
    return a @ b


def int_product(a, b):
    return a @ b


def matvec(a, v):
    return a @ v


@pytest.mark.parametrize("fn, shapes, dtype, reason", [
    (batched, ((2, 3, 4), (2, 4, 5)), np.float32, "only 2-D products"),
    (matvec, ((3, 4), (4,)), np.float64, "only 2-D products"),
    (int_product, ((3, 4), (4, 2)), np.int64, "only float32 or float64"),
], ids=["batched", "matvec", "int64"])
def test_other_products_refuse_the_capture_visibly(fn, shapes, dtype, reason,
                                                    monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    rng = np.random.default_rng(1)
    host = [(rng.standard_normal(s) * 4).astype(dtype) for s in shapes]
    dev = tuple(cp.asarray(h) for h in host)
    for got in _replayed(fn, dev):
        np.testing.assert_allclose(got[0], np.matmul(*host), rtol=1e-12)
    stats = graphs.graph_stats()
    assert not stats.get("captured"), stats
    (refusal,) = [k for k in stats if k.startswith("refused:")]
    assert reason in refusal and "in a CUDA graph capture" in refusal, refusal
    assert not cp.cublas.gemms


def test_no_cublas_library_refuses_the_capture_visibly(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()

    def missing():
        raise NotImplementedError("no libcublas here")

    monkeypatch.setattr(capture_gemm, "_load", missing)
    x = cp.asarray(np.ones((3, 3)))
    for got in _replayed(batched, (x, x)):
        np.testing.assert_array_equal(got[0], np.full((3, 3), 3.0))
    (refusal,) = [k for k in graphs.graph_stats() if k.startswith("refused:")]
    assert "no cuBLAS" in refusal and "no libcublas here" in refusal, refusal


def test_the_gpu_probe_script_passes_on_the_fake(monkeypatch, tmp_path, capsys):
    """``gemm_capture_probe.py`` (run by ``test_gpu.py`` on a real GPU) itself."""
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    from tests.cuda import gemm_capture_probe

    monkeypatch.setattr(gemm_capture_probe, "cupy", cp)
    assert gemm_capture_probe.main() == 0, capsys.readouterr().out
    assert len(cp.cublas.gemms) == 8  # (4 products, 2 dtypes: captured once each)
