"""Arrays kept on the OpenCL device: ``pyopencl.array.Array`` arguments and results,
NumPy in and out with one copy each way, the generated GEMM kernel against NumPy
(shapes off the tile, transposes, batches, float32 and float64), split reductions
finished on the device, device steps (gathers, scatter-adds, slices, concatenation),
and loops whose iterations copy no array (``host.transfers()``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc

pytest.importorskip("pyopencl")
from myc.backends.opencl import gemm, host, ops, runtime  # noqa: E402


@pytest.fixture(scope="module")
def dev():
    return runtime.device()


def mlp(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def test_numpy_in_numpy_out_one_copy_each_way():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((24, 8)).astype(np.float32)
    x = rng.standard_normal((5, 24)).astype(np.float32)
    f = myc.jit(myc.value_and_grad(mlp), backend="opencl")
    f(w, x)
    host.reset_transfers()
    val, g = f(w, x)
    t = host.transfers()
    assert type(g) is np.ndarray and g.dtype == np.float32
    assert t.get("to_device") == 2  # w and x, once each
    assert t.get("to_host") == 1  # the gradient; the value is a scalar read
    assert t.get("scalar_reads") == 1
    assert not host.host_fallbacks()
    vw, gw = myc.jit(myc.value_and_grad(mlp), backend="cpu")(w, x)
    np.testing.assert_allclose(g, gw, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(val, vw, rtol=1e-5)


def test_device_arrays_in_and_out(dev):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((24, 8))
    x = rng.standard_normal((5, 24))
    dw = dev.cla.to_device(dev.queue, w)
    dx = dev.cla.to_device(dev.queue, x)
    f = myc.jit(myc.value_and_grad(mlp), backend="opencl")
    f(dw, dx)
    host.reset_transfers()
    val, g = f(dw, dx)
    assert type(g) is dev.Array and g.dtype == np.float64
    t = host.transfers()
    assert "to_device" not in t and "to_host" not in t  # nothing copied either way
    want_v, want_g = myc.jit(myc.value_and_grad(mlp), backend="cpu")(w, x)
    np.testing.assert_allclose(g.get(), want_g, rtol=1e-10)
    np.testing.assert_allclose(val, want_v, rtol=1e-12)
    np.testing.assert_array_equal(dw.get(), w)  # arguments untouched


def identity_view(x):
    return x.T


def test_a_result_that_views_an_argument_is_the_callers_own(dev):
    x = np.arange(6.0).reshape(2, 3)
    dx = dev.cla.to_device(dev.queue, x)
    got = myc.jit(identity_view, backend="opencl")(dx)
    assert type(got) is dev.Array
    assert got.base_data != dx.base_data
    np.testing.assert_array_equal(got.get(), x.T)


def test_an_array_from_another_context_is_a_myc_error(dev):
    import pyopencl as cl
    import pyopencl.array as cla

    ctx = cl.Context([dev.device])
    other = cla.to_device(cl.CommandQueue(ctx), np.ones(3))
    with pytest.raises(myc.MycError, match="another OpenCL context"):
        myc.jit(lambda v: v * 2.0, backend="opencl")(other)


SHAPES = [(1, 1, 1), (3, 5, 7), (33, 17, 65), (70, 1, 40), (5, 100, 3)]


@pytest.mark.parametrize("m, k, n", SHAPES)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_kernel_matches_numpy(dev, m, k, n, ta, tb, dtype, monkeypatch):
    monkeypatch.setenv("MYC_OPENCL_GEMM", "kernel")  # (a CPU device's default: host BLAS)
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    da = dev.upload(a)
    db = dev.upload(b)
    if ta:
        da = ops.m_t(da)  # a strided view: the kernel's transpose flag reads it
        a = a.T
    if tb:
        db = ops.m_t(db)
        b = b.T
    if min(m, k) > 1:  # (a 1-row transpose is contiguous as well)
        assert gemm._operand(da, np.dtype(dtype))[1] == ta
    host.reset_transfers()
    got = gemm.matmul(da, db)
    assert host.transfers().get("gemm_kernel") == 1
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.get(), a @ b, rtol=tol, atol=tol * k)


@pytest.mark.parametrize("sa, sb", [((4, 9, 6), (4, 6, 5)), ((9, 6), (3, 6, 5)),
                                    ((2, 1, 9, 6), (3, 6, 5)), ((7,), (2, 7, 3)),
                                    ((3, 7, 4), (4,)), ((5,), (5,))])
@pytest.mark.parametrize("path", gemm.CHOICES)
def test_gemm_batches_and_vectors(dev, sa, sb, path, monkeypatch):
    monkeypatch.setenv("MYC_OPENCL_GEMM", path)
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a = rng.standard_normal(sa)
    b = rng.standard_normal(sb)
    got = gemm.matmul(dev.upload(a), dev.upload(b))
    want = np.matmul(a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.get(), want, rtol=1e-12)


@pytest.mark.parametrize("path", gemm.CHOICES)
def test_gemm_in_programs_runs_on_the_device(path, monkeypatch):
    monkeypatch.setenv("MYC_OPENCL_GEMM", path)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 33))
    b = rng.standard_normal((40, 21))

    def f(a, b):
        return np.sum((a.T @ b) ** 2) + np.sum(np.dot(a[0], a.T))

    host.reset_transfers()
    vg = myc.value_and_grad(f, argnums=(0, 1))
    got = myc.jit(vg, backend="opencl")(a, b)
    want = myc.jit(vg, backend="cpu")(a, b)
    t = host.transfers()
    assert t.get(f"gemm_{path.replace('-', '_')}", 0) >= 3 and not host.host_fallbacks()
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    for g, w in zip(got[1], want[1], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_a_split_reduction_is_finished_on_the_device():
    n = 1 << 18
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    f = myc.jit(lambda v: np.sum(v * v), backend="opencl")
    f(x)
    host.reset_transfers()
    got = f(x)
    t = host.transfers()
    assert t == {"to_device": 1, "scalar_reads": 1}  # no partials come back
    np.testing.assert_allclose(got, np.sum(x.astype(np.float64) ** 2), rtol=1e-6)


def picks(z, labels, w):
    rows = z[np.arange(z.shape[0]), labels]
    sl = z[1:, ::2] * w[:, None]
    return np.sum(rows ** 2) + np.sum(sl) + np.sum(np.concatenate((z[0], rows)))


def test_gathers_slices_scatter_adds_and_concatenation_on_the_device():
    rng = np.random.default_rng(4)
    z = rng.standard_normal((9, 7))
    labels = rng.integers(-7, 7, size=9)
    w = rng.standard_normal(8)
    vg = myc.value_and_grad(picks, argnums=(0, 2))
    host.reset_transfers()
    got = myc.jit(vg, backend="opencl")(z, labels, w)
    assert not host.host_fallbacks()
    want = myc.jit(vg, backend="interp")(z, labels, w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, wv in zip(got[1], want[1], strict=True):
        np.testing.assert_allclose(g, wv, rtol=1e-12, atol=1e-14)


def test_an_index_out_of_range_is_numpys_error():
    z = np.ones((3, 4))
    f = myc.jit(lambda z, i: np.sum(z[np.arange(3), i]), backend="opencl")
    with pytest.raises(myc.MycError, match="out of bounds"):
        f(z, np.array([0, 1, 4]))


def newton_sqrt(a):
    x = a
    i = 0
    while i < 30 and np.max(np.abs(x * x - a)) > 1e-9:
        x = 0.5 * (x + a / x)
        i += 1
    return np.sum(x)


def test_loops_copy_no_array_per_iteration():
    vg = myc.value_and_grad(newton_sqrt)
    f = myc.jit(vg, backend="opencl")
    seen = []
    for hi in (2.0, 50.0):  # about 6 and 10 iterations
        a = np.linspace(1.0, hi, 64)
        f(a)
        host.reset_transfers()
        val, g = f(a)
        seen.append((host.transfers(), host.host_fallbacks()))
    (t0, fb0), (t, fb) = seen
    # the argument in, the gradient out, whatever the iteration count; each iteration
    # reads its condition (a scalar).  (Since `while i < n and ...` became a loop node,
    # its adjoint has the host steps of any data-dependent loop's on OpenCL: three
    # selects outside the loops, each a scalar copied back -- a plain `while` had them
    # before; before, this `and` was specialized on each call's iterations instead.)
    assert t.get("to_host") == 1 and t.get("to_device") == t0.get("to_device") <= 4, t
    assert set(fb) <= {"select"} and fb == fb0
    assert t.get("scalar_reads", 0) > t0.get("scalar_reads", 0) >= 5
    want = myc.jit(vg, backend="interp")(a)
    np.testing.assert_allclose(val, want[0], rtol=1e-12)
    np.testing.assert_allclose(g, want[1], rtol=1e-9)


def test_a_step_without_a_device_version_is_reported_and_counted():
    def f(x):
        return np.sum(np.cumsum(x) * x)

    x = np.random.default_rng(5).standard_normal(50)
    jf = myc.jit(f, backend="opencl")
    with pytest.warns(myc.MycFallbackWarning, match="'cumsum' has no OpenCL"):
        host.reset_transfers()
        got = jf(x)
    assert jf.stats().fallbacks.get("opencl-host-step") == 1
    assert host.host_fallbacks() == {"cumsum": 1}
    np.testing.assert_allclose(got, f(x), rtol=1e-12)


def first_index_above(x, thresh):
    for i in range(len(x)):
        if x[i] > thresh:
            return i
    return -1


def test_a_guarded_index_in_a_loop_reads_one_element_on_the_device():
    # ``x[i]`` under an if-converted branch is a guarded step: on the device, the
    # element read as a scalar; the array never comes back to the host
    x = np.linspace(-1.0, 1.0, 200)
    f = myc.jit(first_index_above, backend="opencl")
    f(x, 0.5)
    host.reset_transfers()
    got = f(x, 0.5)
    t = host.transfers()
    assert got == first_index_above(x, 0.5)
    assert not host.host_fallbacks() and "to_host" not in t, t
    assert f(x, 5.0) == -1


def test_gemm_never_reads_a_device_operand_element_by_element(dev, monkeypatch):
    # ``np.asarray`` of a pyopencl array indexes it element by element: a 512x1024
    # product spent minutes there before its kernel ran
    def refuse(self, index):
        raise AssertionError("a device array indexed from the host")

    a = np.ones((9, 5), np.float32)
    b = np.ones((5, 3), np.float32)
    da, db = dev.upload(a), dev.upload(b)
    monkeypatch.setattr(dev.Array, "__getitem__", refuse)
    got = gemm.matmul(da, db)
    monkeypatch.undo()
    np.testing.assert_array_equal(got.get(), a @ b)


@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True)])
def test_host_blas_gemm_on_mapped_device_memory(dev, ta, tb, monkeypatch):
    if not dev.cpu:
        pytest.skip("host BLAS maps device memory: CPU devices only")
    monkeypatch.setenv("MYC_OPENCL_GEMM", "host-blas")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((13, 6) if ta else (6, 13)).astype(np.float32)
    b = rng.standard_normal((9, 13) if tb else (13, 9)).astype(np.float32)
    da, db = dev.upload(a), dev.upload(b)
    if ta:
        da, a = ops.m_t(da), a.T
    if tb:
        db, b = ops.m_t(db), b.T
    host.reset_transfers()
    got = gemm.matmul(da, db)
    assert host.transfers().get("gemm_host_blas") == 1
    np.testing.assert_allclose(got.get(), a @ b, rtol=1e-5, atol=1e-5)


def test_the_gemm_choice_follows_the_device_type_and_the_override(monkeypatch):
    monkeypatch.delenv("MYC_OPENCL_GEMM", raising=False)
    assert gemm.choice(cpu_device=True) == "host-blas"  # its memory is host memory
    assert gemm.choice(cpu_device=False) == "kernel"
    for path in gemm.CHOICES:
        monkeypatch.setenv("MYC_OPENCL_GEMM", path)
        assert gemm.choice(True) == gemm.choice(False) == path
    monkeypatch.setenv("MYC_OPENCL_GEMM", "clblast")
    with pytest.raises(myc.MycValueError, match="MYC_OPENCL_GEMM"):
        gemm.choice(True)


def test_the_default_gemm_of_this_device_is_reported_and_counted(dev, monkeypatch):
    monkeypatch.delenv("MYC_OPENCL_GEMM", raising=False)
    want = "host-blas" if dev.cpu else "kernel"
    rng = np.random.default_rng(3)
    w = rng.standard_normal((19, 8)).astype(np.float32)  # (a signature compiled here:
    x = rng.standard_normal((5, 19)).astype(np.float32)  # the note is the compile's)
    f = myc.jit(myc.value_and_grad(mlp), backend="opencl")
    host.reset_transfers()
    f(w, x)
    t = host.transfers()
    assert t.get(f"gemm_{want.replace('-', '_')}", 0) >= 2
    other = "kernel" if dev.cpu else "host-blas"
    assert f"gemm_{other.replace('-', '_')}" not in t
    words = gemm.describe_choice(dev.cpu)
    assert words in repr(f.stats())
    text = myc.ir(myc.value_and_grad(mlp), w, x, stage="kernels", backend="opencl")
    assert "matmul(s" in text and f"[{words}]" in text


def list_and_dict(x):
    return [x * 2.0, np.sum(x)], {"a": x + 1.0}


def test_results_keep_their_containers(dev):
    x = np.linspace(0.0, 1.0, 64)
    f = myc.jit(list_and_dict, backend="opencl")
    for arg in (x, dev.cla.to_device(dev.queue, x)):
        got = f(arg)
        assert isinstance(got, tuple) and isinstance(got[0], list)
        assert isinstance(got[1], dict) and list(got[1]) == ["a"]
        a = got[1]["a"]
        np.testing.assert_allclose(a.get() if hasattr(a, "get") else a, x + 1.0)


def scaled_sum(x):
    y = x * 2.0
    return np.sum(np.exp(y))


def test_float64_on_a_device_without_fp64_is_a_myc_error_at_compile_time(dev, monkeypatch):
    from myc.backends.opencl import runtime as rt

    monkeypatch.setattr(dev, "fp64", False)  # (a device without cl_khr_fp64)
    monkeypatch.setattr(rt, "_cache", {})  # (kernels built for it stay out of the cache)
    monkeypatch.setattr(ops, "_programs", {})
    assert "float64" not in rt.supported_dtypes(dev)
    f = myc.jit(scaled_sum, backend="opencl")
    with pytest.raises(myc.MycTypeError, match="no float64.*cl_khr_fp64") as err:
        f(np.linspace(0.0, 1.0, 64))
    assert err.value.loc is not None and "scaled_sum" not in str(err.value.hint)
    x32 = np.linspace(0.0, 1.0, 64, dtype=np.float32)  # float32 runs as before
    got = myc.jit(scaled_sum, backend="opencl")(x32)
    np.testing.assert_allclose(got, scaled_sum(x32), rtol=1e-5)


def test_writes_into_arrays_run_on_the_device():
    """``out=`` and ``v[...] = a`` wrote through ``np.asarray`` of an array, which
    ran on the host (a fallback warning per call site); an ``asarray`` of an array of
    its own type is the array itself, and is simplified away."""
    def f(a, b):
        c = np.zeros_like(a)
        np.add(a, b, out=c)
        v = np.zeros(3)
        v[...] = a
        return c * 2.0 + v

    a, b = np.arange(3.0), np.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)
        got = myc.jit(f, backend="opencl")(a, b)
    np.testing.assert_array_equal(got, f(a, b))
