"""CUDA graphs of repeat calls (``myc/backends/gpu/graphs.py``) and the gathers' bounds
checks (``myc/backends/gpu/bounds.py``), on the fake CuPy -- whose stream capture
records device work and replays it on the same buffers, refuses reads and uploads
inside a capture, and whose integer indexing wraps an out-of-range index as CuPy's
does: the same values as without graphs, arguments changed in place or replaced seen,
results never shared with the next call, and every out-of-range index an error."""

from __future__ import annotations

import math

import numpy as np
import pytest

import myc
from myc.backends.gpu import graphs
from tests.cuda import fake_cupy
from tests.cuda.checks import W17
from tests.cuda.checks import program as _program


def _host(v):
    if isinstance(v, tuple):
        return [y for x in v for y in _host(x)]
    return [v.get() if isinstance(v, fake_cupy.FakeArray) else v]


def _same(a, b):
    for x, y in zip(_host(a), _host(b), strict=True):
        np.testing.assert_array_equal(x, y)
        assert np.asarray(x).dtype == np.asarray(y).dtype


def _device(cp, args):
    return tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_repeat_calls_replay_a_graph_with_the_values_of_the_steps(w, monkeypatch,
                                                                   tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    monkeypatch.setenv("MYC_CUDA_GRAPH_GEMM", "1")  # (W4's GEMMs: opt-in, see below)
    graphs.reset_graph_stats()
    args = w.make_inputs(0, "tiny")
    dev = _device(cp, args)
    f = myc.jit(_program(w), backend="cuda")
    first = f(*dev)
    results = [f(*dev) for _ in range(3)]  # fast path; captured; replayed
    for r in results:
        _same(r, first)
    stats = graphs.graph_stats()
    if w.name == "W5":  # a loop reads its condition: refused, visibly; the steps ran
        assert stats.get("captured", 0) == 0
        assert any(k.startswith("refused:") for k in stats), stats
        return
    assert stats.get("captured") == 1 and stats.get("replayed") == 2, stats
    # an argument changed in place: the replay reads it (against a plain run)
    a = dev[0]
    a.view(np.ndarray)[...] = a.view(np.ndarray) * np.asarray(0.5, a.dtype)
    monkeypatch.setenv("MYC_NO_GRAPHS", "1")
    plain = myc.jit(_program(w), backend="cuda")
    want = plain(*dev)
    plain(*dev)
    monkeypatch.delenv("MYC_NO_GRAPHS")
    before = _host(results[-1])
    _same(f(*dev), want)
    assert graphs.graph_stats()["replayed"] == 3
    # the earlier results are the caller's own: the replay did not overwrite them
    for x, y in zip(_host(results[-1]), before, strict=True):
        np.testing.assert_array_equal(x, y)
    # other arrays: the graph is released, the steps run, then a new capture
    dev2 = _device(cp, w.make_inputs(1, "tiny"))
    want2 = plain(*dev2)
    for _ in range(3):
        _same(f(*dev2), want2)
    stats = graphs.graph_stats()
    assert stats["released"] == 1 and stats["captured"] == 2, stats


def test_a_capture_allocates_from_the_graphs_own_pool(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    pools = []
    real = fake_cupy.FakeMemoryPool.__init__

    def init(self):
        real(self)
        pools.append(self)

    monkeypatch.setattr(fake_cupy.FakeMemoryPool, "__init__", init)
    x = cp.asarray(np.linspace(0, 1, 300))
    f = myc.jit(lambda x: np.exp(x) * np.sum(x), backend="cuda")
    for _ in range(3):
        f(x)
    (pool,) = pools
    assert pool.allocations > 0  # the graph's buffers: nothing else gets that memory
    entry = next(iter(f._executable._gpu_fast.values()))
    assert entry.graphs.graph.pool is pool


def test_arguments_new_every_call_are_not_captured(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    f = myc.jit(lambda x: np.tanh(x) + 1.0, backend="cuda")
    x = cp.asarray(np.linspace(0, 1, 300))
    for _ in range(5):
        x = f(x)  # (as a training step: w = step(w))
    assert graphs.graph_stats().get("captured", 0) == 0
    want = np.linspace(0, 1, 300)
    for _ in range(5):
        want = np.tanh(want) + 1.0
    np.testing.assert_allclose(x.get(), want, rtol=1e-14)


def test_no_graphs_when_turned_off_or_on_rocm(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    monkeypatch.setenv("MYC_NO_GRAPHS", "1")
    x = cp.asarray(np.linspace(0, 1, 300))
    f = myc.jit(lambda x: np.exp(x), backend="cuda")
    for _ in range(4):
        f(x)
    assert graphs.graph_stats() == {}
    monkeypatch.delenv("MYC_NO_GRAPHS")
    assert graphs.enabled("cuda") and not graphs.enabled("rocm")  # (HIP cannot capture)


def test_the_fake_wraps_out_of_range_indices_as_cupy_does():
    a = fake_cupy.cupy.asarray(np.arange(3))
    np.testing.assert_array_equal(a[fake_cupy.cupy.asarray(np.array([1, 3]))].get(),
                                  [1, 0])


def test_an_out_of_range_label_raises_on_every_path(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    w = next(w for w in W17 if w.name == "W3")
    graphs.reset_graph_stats()
    logits, labels = w.make_inputs(0, "tiny")
    n = logits.shape[1]
    f = myc.jit(_program(w), backend="cuda")
    bad = labels.copy()
    bad[5] = n  # one past the end
    with pytest.raises(myc.MycIndexError, match="out of bounds") as info:
        f(cp.asarray(logits), cp.asarray(bad))  # the first call (full path)
    assert "picked = z[" in str(info.value)
    x, y = cp.asarray(logits), cp.asarray(labels)
    good = f(x, y)
    for _ in range(3):
        f(x, y)
    assert graphs.graph_stats().get("replayed", 0) >= 2
    for value in (n, -n - 1, 2**62):
        y.view(np.ndarray)[7] = value  # in place, under the graph
        with pytest.raises(myc.MycIndexError, match="out of bounds") as info:
            f(x, y)
        assert "picked = z[" in str(info.value)
    assert graphs.graph_stats()["index out of range"] == 3
    y.view(np.ndarray)[7] = -1  # negative and in range: as NumPy
    want = myc.jit(_program(w), backend="cpu")(logits, y.get())
    got = f(x, y)
    np.testing.assert_allclose(_host(got)[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(_host(got)[1], want[1], rtol=1e-5, atol=1e-7)
    y.view(np.ndarray)[7] = labels[7]
    _same(f(x, y), good)
    # the fast path without graphs checks too (a new array each call: no capture)
    bad_y = cp.asarray(bad)
    with pytest.raises(myc.MycIndexError, match="out of bounds"):
        f(x, bad_y)


def root_of_picked(x, idx):
    v = x[idx]
    return math.sqrt(float(np.sum(v)))


def test_a_wrapped_gather_does_not_hide_its_index_error(monkeypatch, tmp_path):
    """On a repeat call the gathers' checks are read after the steps; a later step that
    fails on the wrapped gather's values (here sqrt of a negative) must not replace
    the IndexError NumPy raises first."""
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = cp.asarray(np.array([-1.0, 1.0, 1.0]))
    ok = cp.asarray(np.array([1, 2]))
    f = myc.jit(root_of_picked, backend="cuda")
    assert f(x, ok) == f(x, ok) == math.sqrt(2.0)
    assert f._executable._gpu_fast  # the fast path serves the next calls
    bad = cp.asarray(np.array([3, 3]))  # wraps to [0, 0]: a sum of -2
    for _ in range(2):
        with pytest.raises(myc.MycIndexError, match="index 3 is out of bounds"):
            f(x, bad)


def test_large_results_are_not_worth_a_graph(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    graphs.reset_graph_stats()
    monkeypatch.setattr(graphs, "MAX_COPY_BYTES", 1000)
    x = cp.asarray(np.linspace(0, 1, 300))  # a 2400-byte result
    f = myc.jit(lambda x: np.exp(x) * 2.0, backend="cuda")
    for _ in range(5):
        np.testing.assert_allclose(f(x).get(), np.exp(x.get()) * 2.0, rtol=1e-15)
    stats = graphs.graph_stats()
    assert not stats.get("captured") and not stats.get("replayed"), stats
    assert any(k.startswith("not used:") for k in stats), stats


def test_gemms_refuse_the_capture_by_default(monkeypatch, tmp_path):
    """myc's own cuBLAS calls inside a capture are opt-in (``MYC_CUDA_GRAPH_GEMM=1``)
    until they have run on a GPU: by default W4 refuses the capture, visibly, once, and
    its calls run the steps with the same values."""
    cp = fake_cupy.install(monkeypatch, tmp_path)
    monkeypatch.delenv("MYC_CUDA_GRAPH_GEMM", raising=False)
    graphs.reset_graph_stats()
    w = next(w for w in W17 if w.name == "W4")
    dev = _device(cp, w.make_inputs(0, "tiny"))
    f = myc.jit(_program(w), backend="cuda")
    first = f(*dev)
    for _ in range(4):
        _same(f(*dev), first)
    stats = graphs.graph_stats()
    assert stats.get("captured", 0) == 0, stats
    refused = [k for k in stats if k.startswith("refused:")]
    assert len(refused) == 1 and "MYC_CUDA_GRAPH_GEMM=1" in refused[0], stats
