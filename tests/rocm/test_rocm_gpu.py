"""``backend="rocm"`` on a real AMD GPU (skipped without CuPy's ROCm build or without a
GPU; never run yet: no AMD GPU was available): the kernels against the kernel IR's
reference, whole programs W1-W7 against the cpu backend with NumPy and CuPy
arguments."""

from __future__ import annotations

import pytest

import myc
from myc.lower.kernel import Kernel
from tests.cuda import checks

cupy = pytest.importorskip("cupy")
try:
    _has_gpu = bool(cupy.cuda.runtime.is_hip) and bool(cupy.cuda.is_available())
except Exception:  # noqa: BLE001
    _has_gpu = False
pytestmark = pytest.mark.skipif(not _has_gpu, reason="no AMD GPU visible to CuPy's ROCm build")

from myc.backends.rocm import runtime  # noqa: E402


def run(kernel: Kernel, inputs: list) -> tuple[list, list]:
    ck = runtime.compile_kernel(kernel)
    assert ck is not None, kernel.format()
    return [o.get() for o in ck(inputs)], kernel.reference(inputs)


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


def _host(v):
    if isinstance(v, tuple):
        return tuple(_host(x) for x in v)
    return v.get() if isinstance(v, cupy.ndarray) else v


@pytest.mark.parametrize("w", checks.W17, ids=lambda w: w.name)
def test_workload_on_the_gpu_with_numpy_and_device_arguments(w):
    args = w.make_inputs(0, "tiny")
    f = myc.jit(checks.program(w), backend="rocm")
    want = myc.jit(checks.program(w), backend="cpu")(*args)
    checks.close(f(*args), want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
    dev = tuple(cupy.asarray(a) if hasattr(a, "dtype") and a.ndim else a for a in args)
    checks.close(_host(f(*dev)), want, rtol=max(w.rtol, 2e-4), atol=max(w.atol, 2e-5))
