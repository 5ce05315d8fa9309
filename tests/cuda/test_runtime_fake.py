"""The CUDA runtime's glue without a GPU: CuPy replaced by ``fake_cupy`` (device arrays
that refuse to mix with host arrays, kernels launched on the emulator from the PTX's
plan).  Whole programs W1-W7 with NumPy and with "device" arguments against the cpu
backend; NumPy in gives NumPy out, device arrays in give device arrays out; kernels hand
their results to each other on the device; GEMM runs on the device when its operands
are there."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.cuda import checks, fake_cupy
from tests.cuda.checks import W17, close
from tests.cuda.checks import program as _program


@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_workload_with_host_and_device_arrays(w, monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    args = w.make_inputs(0, "tiny")
    want = myc.jit(_program(w), backend="cpu")(*args)
    f = myc.jit(_program(w), backend="cuda")
    got = f(*args)
    close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
    leaves = [x for x in (got if isinstance(got, tuple) else (got,))]
    assert not any(isinstance(x, fake_cupy.FakeArray) for x in leaves)
    assert fake_cupy.launches, "no kernel was launched"
    dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    got2 = f(*dev)

    def strip(v):
        if isinstance(v, tuple):
            return tuple(strip(x) for x in v)
        if isinstance(v, fake_cupy.FakeArray):
            return v.get()
        assert not isinstance(v, np.ndarray), "a host array returned for device arguments"
        return v

    close(strip(got2), want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))


def mlp_loss(x, w1, w2):
    h = np.tanh(x @ w1)
    return np.sum((h @ w2) ** 2) / x.shape[0]


def test_kernels_chain_on_the_device_and_gemm_runs_there(monkeypatch, tmp_path):
    fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.cuda import host

    calls = []
    real = host.HostStep.__call__

    def spy(self, *vals):
        out = real(self, *vals)
        calls.append((self.name, any(hasattr(v, "__cuda_array_interface__") for v in vals),
                      hasattr(out, "__cuda_array_interface__")))
        return out

    monkeypatch.setattr(host.HostStep, "__call__", spy)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8))
    w1 = rng.standard_normal((8, 16))
    w2 = rng.standard_normal((16, 4))
    vg = myc.value_and_grad(mlp_loss, argnums=(1, 2))
    got = myc.jit(vg, backend="cuda")(x, w1, w2)
    close(got, myc.jit(vg, backend="cpu")(x, w1, w2), rtol=1e-10, atol=1e-12)
    gemms = [c for c in calls if c[0] in ("matmul", "dot")]
    assert gemms and any(dev_in and dev_out for _, dev_in, dev_out in gemms), calls
    views = [c for c in calls if c[0] in ("mT", "transpose", "reshape") and c[1]]
    assert views and all(dev_out for _, _, dev_out in views), calls  # stayed on the device


def test_ptx_comes_from_the_disk_cache_the_second_time(monkeypatch, tmp_path):
    fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.cuda import runtime
    from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Store

    k = Kernel("twice", (100,), (Buffer("x", "float32", (100,)),),
               (Store(0, Binary("mul", Load(0, "float32"), Const(2.0, "float32"))),))
    x = np.arange(100, dtype=np.float32)
    first = runtime.compile_kernel(k)
    np.testing.assert_array_equal(first([x])[0].get(), x * 2)
    made = []
    real = runtime.kernel_ptx
    monkeypatch.setattr(runtime, "kernel_ptx", lambda *a: made.append(a) or real(*a))
    monkeypatch.setattr(runtime, "_cache", {})
    again = runtime.compile_kernel(k)
    assert again is not first and not made, "the PTX was generated again"
    assert again.ptx == first.ptx and [p.name for p in again.plan.passes] == \
        [p.name for p in first.plan.passes]
    np.testing.assert_array_equal(again([x])[0].get(), x * 2)


def exp_twice(x):
    return np.exp(x) * 2.0 + x


def test_device_arguments_are_not_uploaded_again(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = np.linspace(-1, 1, 500)
    dx = cp.asarray(x)
    uploads = []
    real = cp.asarray

    def counting(v):
        if not isinstance(v, fake_cupy.FakeArray) and np.array_equal(v, x):
            uploads.append(v)
        return real(v)

    monkeypatch.setattr(cp, "asarray", counting)
    got = myc.jit(exp_twice, backend="cuda")(dx)
    assert isinstance(got, fake_cupy.FakeArray)
    np.testing.assert_allclose(got.get(), np.exp(x) * 2.0 + x, rtol=1e-13, atol=1e-15)
    assert not uploads, "the device argument was uploaded again"
    myc.jit(exp_twice, backend="cuda")(x)
    assert len(uploads) == 1  # a NumPy argument: once


def _count_transfers(monkeypatch, cp):
    """Counters of device-to-host reads (``.get()``: of scalars, of arrays), host-to-device
    uploads and loop iterations."""
    seen = {"d2h": 0, "d2h_arrays": 0, "h2d": 0, "iterations": 0}
    real_get = fake_cupy.FakeArray.get
    real_as = cp.asarray
    from myc.lower.program import HostProgram

    real_body = HostProgram.run_flat

    def get(self):
        seen["d2h" if self.size == 1 else "d2h_arrays"] += 1
        return real_get(self)

    def body(self, values):
        seen["iterations"] += 1
        return real_body(self, values)

    monkeypatch.setattr(HostProgram, "run_flat", body)

    def asarray(v):
        if not isinstance(v, fake_cupy.FakeArray):
            seen["h2d"] += 1
        return real_as(v)

    monkeypatch.setattr(fake_cupy.FakeArray, "get", get)
    monkeypatch.setattr(cp, "asarray", asarray)
    return seen


@pytest.mark.parametrize("name", ["W3", "W4", "W5", "W7"])
def test_device_arguments_and_loop_state_stay_on_the_device(name, monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.cuda import host

    w = next(w for w in W17 if w.name == name)
    args = w.make_inputs(0, "tiny")
    dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    f = myc.jit(_program(w), backend="cuda")
    f(*dev)  # the first call traces on host copies
    seen = _count_transfers(monkeypatch, cp)
    fake_cupy.host_indexes.clear()
    host.reset_host_fallbacks()
    got = f(*dev)
    # every array stays on the device: what is read back is the scalar result and the
    # loop's condition, one scalar an iteration
    assert seen["h2d"] == 0 and seen["d2h_arrays"] == 0, seen
    assert seen["d2h"] <= 1 + seen["iterations"], seen
    assert not fake_cupy.host_indexes, "a host index array (CuPy uploads it each call)"
    assert host.host_fallbacks() == {}
    leaves = checks.leaves(got)
    assert all(isinstance(x, fake_cupy.FakeArray) for x in leaves if np.ndim(x)), leaves


def refuse_devices(x):
    if isinstance(x, fake_cupy.FakeArray):
        raise TypeError("host arrays only")
    return x * 2


def test_a_step_the_device_cannot_run_runs_on_the_host_and_is_counted(monkeypatch,
                                                                      tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.cuda import host

    host.reset_host_fallbacks()
    step = host.HostStep(refuse_devices, "refuse_devices")
    x = np.arange(4.0)
    np.testing.assert_array_equal(step(cp.asarray(x)), x * 2)
    assert host.host_fallbacks() == {"refuse_devices": 1}
    np.testing.assert_array_equal(step(x), x * 2)  # host operands: no fallback
    assert host.host_fallbacks() == {"refuse_devices": 1}


def view_of(x):
    return x.reshape((2, -1))


def test_a_result_sharing_memory_with_a_device_argument_is_a_copy(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = cp.asarray(np.arange(8.0))
    got = myc.jit(view_of, backend="cuda")(x)
    assert isinstance(got, fake_cupy.FakeArray)
    np.testing.assert_array_equal(got.get(), np.arange(8.0).reshape(2, 4))
    assert not np.shares_memory(got.view(np.ndarray), x.view(np.ndarray))


class ForeignCudaArray:
    """A CUDA array of another library (as a CUDA torch tensor looks through DLPack)."""

    def __init__(self, array: np.ndarray, requires_grad: bool = False):
        self.array = array
        self.requires_grad = requires_grad

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA, device 0

    def detach(self) -> ForeignCudaArray:
        return ForeignCudaArray(self.array)


def test_other_cuda_arrays_are_taken_through_dlpack_without_a_copy(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = np.linspace(-1, 1, 300)
    f = myc.jit(exp_twice, backend="cuda")
    f(ForeignCudaArray(x.copy(), requires_grad=True))  # compiled (traced on a host copy)
    seen = _count_transfers(monkeypatch, cp)
    got = f(ForeignCudaArray(x.copy(), requires_grad=True))
    assert isinstance(got, fake_cupy.FakeArray)
    assert seen["h2d"] == 0 and seen["d2h"] == seen["d2h_arrays"] == 0, seen
    np.testing.assert_allclose(got.get(), np.exp(x) * 2.0 + x, rtol=1e-13, atol=1e-15)


def test_a_loop_and_its_taped_rerun_run_once(monkeypatch, tmp_path):
    """value_and_grad of a data-dependent loop: the value's loop and the taped rerun of
    its adjoint run the same body on the same inputs -- on cuda the taped run serves
    both, so each call runs the forward body once (and the backward loop once)."""
    cp = fake_cupy.install(monkeypatch, tmp_path)
    from myc.lower.program import LoopRunner

    w = next(w for w in W17 if w.name == "W5")
    args = w.make_inputs(0, "tiny")
    want = myc.jit(_program(w), backend="cpu")(*args)
    f = myc.jit(_program(w), backend="cuda")
    runs = []
    real = LoopRunner.__call__

    def spy(self, *inputs):
        runs.append(self.tape is not None)  # (the states it tapes; None: untaped)
        return real(self, *inputs)

    monkeypatch.setattr(LoopRunner, "__call__", spy)
    f(*args)
    runs.clear()
    got = f(*(cp.asarray(a) for a in args))
    assert sorted(runs) == [False, True], runs  # the backward loop, the taped forward one
    close(host_leaves(got), want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))


def host_leaves(v):
    """Device leaves as host arrays."""
    if isinstance(v, tuple):
        return tuple(host_leaves(x) for x in v)
    return v.get() if isinstance(v, fake_cupy.FakeArray) else v


class DuckDeviceArray:
    """A device array that, like CuPy's and unlike ``fake_cupy.FakeArray``, is no NumPy
    array: references that test ``isinstance(x, np.ndarray)`` do not take it."""

    def __init__(self, a):
        self.a = np.asarray(a)
        self.dtype, self.shape, self.ndim = self.a.dtype, self.a.shape, self.a.ndim

    def astype(self, dtype, copy=True):
        return DuckDeviceArray(self.a.astype(dtype, copy=copy))

    def get(self):
        return self.a.copy()


@pytest.mark.parametrize("case", ["astype", "cast_grad", "cast_grad_int", "cast_grad_host_x"])
def test_astype_and_cast_grad_of_device_operands_stay_on_the_device(case, monkeypatch,
                                                                    tmp_path):
    """On a GPU (H100, W3/W4 at tiny sizes) these references fell back to the host:
    they test for NumPy arrays.  Their device versions give what the references give."""
    fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.cuda import host
    from myc.prims import REGISTRY
    from myc.prims.abstract import DEVICE_ARRAY_TYPES
    from myc.prims.values import ZERO

    monkeypatch.setattr(host, "_elementwise", lambda: True)
    DEVICE_ARRAY_TYPES.add(DuckDeviceArray)
    try:
        host.reset_host_fallbacks()
        d = np.linspace(-1, 1, 6)
        if case == "astype":
            got = host.HostStep(REGISTRY["astype"].impl, "astype")(
                DuckDeviceArray(np.arange(6)), np.float32)
            want = np.arange(6).astype(np.float32)
        elif case == "cast_grad":
            got = host.HostStep(REGISTRY["cast_grad"].impl, "cast_grad")(
                DuckDeviceArray(d), DuckDeviceArray(np.zeros(6, np.float32)))
            want = d.astype(np.float32)
        elif case == "cast_grad_int":
            got = host.HostStep(REGISTRY["cast_grad"].impl, "cast_grad")(
                DuckDeviceArray(d), DuckDeviceArray(np.zeros(6, np.int64)))
            assert got is ZERO
            return
        else:
            got = host.HostStep(REGISTRY["cast_grad"].impl, "cast_grad")(
                DuckDeviceArray(d), np.zeros(6, np.float32))
            want = d.astype(np.float32)
        assert host.host_fallbacks() == {}
        assert isinstance(got, DuckDeviceArray)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    finally:
        DEVICE_ARRAY_TYPES.discard(DuckDeviceArray)


def list_and_dict(x):
    return [x * 2.0, np.sum(x)], {"a": x + 1.0}


def test_results_keep_their_containers(monkeypatch, tmp_path):
    """Lists and dicts come back as lists and dicts, with device arrays or NumPy ones
    (the result walk used to rebuild every container as a tuple)."""
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = np.linspace(0.0, 1.0, 64).astype(np.float32)
    f = myc.jit(list_and_dict, backend="cuda")
    for arg in (x, cp.asarray(x)):
        got = f(arg)
        assert isinstance(got, tuple) and isinstance(got[0], list)
        assert isinstance(got[1], dict) and list(got[1]) == ["a"]
        np.testing.assert_allclose(np.asarray(got[1]["a"].get() if hasattr(got[1]["a"], "get")
                                              else got[1]["a"]), x + 1.0)
