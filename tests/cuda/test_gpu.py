"""``backend="cuda"`` on a real NVIDIA GPU (skipped without CuPy or without a GPU): the
kernels against the kernel IR's reference (random fusion groups, row and split
reductions, transcendentals), whole programs W1-W7 against the cpu backend, and the
array kinds in and out (NumPy in -> NumPy out, CuPy or CUDA torch tensors in -> CuPy
out)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import myc
from myc.lower.kernel import Kernel
from tests.cpu.test_exprs import check_group, fusion_group
from tests.cuda import test_emulator as emu

cupy = pytest.importorskip("cupy")
try:
    _has_gpu = bool(cupy.cuda.is_available())
except Exception:  # noqa: BLE001
    _has_gpu = False
pytestmark = pytest.mark.skipif(not _has_gpu, reason="no NVIDIA GPU visible to CuPy")

from myc.backends.cuda import runtime  # noqa: E402


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    ck = runtime.compile_kernel(kernel)
    assert ck is not None, kernel.format()
    got = [o.get() for o in ck(inputs)]
    return got, kernel.reference(inputs)


@settings(max_examples=60, deadline=None)
@given(fusion_group())
def test_random_fusion_groups_match_the_reference(case):
    check_group(case, run)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_with_special_values(dtype, monkeypatch):
    monkeypatch.setattr(emu, "run", run)
    emu.test_softmax_rows_with_special_values(dtype)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_long_reductions_split_into_pieces(op, dtype, monkeypatch):
    monkeypatch.setattr(emu, "EmulatedKernel", lambda k: (lambda ins: run(k, ins)[0]))
    n = emu.codegen.SPLIT_MIN * 2 + 17
    rng = np.random.default_rng(1)
    x = emu.values(rng, (3, n), dtype, specials=False)
    kernel = Kernel("long", (3, n), (emu.Buffer("x", dtype, (3, n)),),
                    (emu.Reduce(0, op, emu.Load(0, dtype), (1,)),
                     emu.Reduce(1, op, emu.Load(0, dtype), (0, 1))))
    got, want = run(kernel, [x])
    emu.assert_matches(kernel, [x], got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transcendentals(dtype, monkeypatch):
    monkeypatch.setattr(emu, "run", run)
    emu.test_transcendentals_within_the_cpu_backends_bounds(dtype)


def test_column_reductions_and_int_wrapping(monkeypatch):
    monkeypatch.setattr(emu, "run", run)
    emu.test_column_reductions_and_int_wrapping()


@pytest.mark.parametrize("w", [pytest.param(w, id=w.name) for w in __import__(
    "tests.cuda.test_programs_emulated", fromlist=["W17"]).W17])
def test_workload_on_the_gpu(w):
    from tests.cuda.test_programs_emulated import _program, close

    args = w.make_inputs(0, "tiny")
    got = myc.jit(_program(w), backend="cuda")(*args)
    want = myc.jit(_program(w), backend="cpu")(*args)
    close(got, want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))


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
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        v3, (gx3, _) = vg(torch.as_tensor(x, device="cuda"), torch.as_tensor(w, device="cuda"))
        assert isinstance(gx3, cupy.ndarray)
        np.testing.assert_allclose(gx3.get(), want[1][0], rtol=1e-4, atol=1e-5)


def test_kernels_really_run_on_the_gpu():
    runtime._cache.clear()
    x = np.linspace(-3, 3, 1 << 20).astype(np.float32)
    got = myc.jit(lambda v: np.exp(v) * 2.0 + np.sin(v), backend="cuda")(x)
    np.testing.assert_allclose(got, np.exp(x) * 2.0 + np.sin(x), rtol=2e-6, atol=1e-6)
    assert runtime._cache and all(isinstance(ck, runtime.CompiledKernel)
                                  for ck in runtime._cache.values())
