"""Sums of matrix products accumulate by GEMM with ``beta = 1`` (``myc.opt.products``):
``x + a @ b`` lowers to one ``matmul_acc`` step and no elementwise kernel for the sum,
natively and on the step-by-step runner, in the order the sum was written.  Values and
gradients must agree with NumPy and the reference evaluator (float32, float64,
transposed operands, scaled and subtracted products), a partial sum read elsewhere and
an accumulator that is an argument must not be overwritten, and a backend without the
step (OpenCL) keeps its plain sums."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.lower.program import LoopRunner
from tests.adversarial.common import fd_grad
from tests.cpu.test_native_program import programs_run


def sum3(a, b, c, d, e, f):
    return a @ b + c @ d + e @ f


def sum_t(a, b, c, d, e):
    """Transposed operands: GEMM's transpose flags, not copies."""
    return a.T @ b + c @ d.T + a.T @ e.T


def scaled(x, a, b, c, d):
    return x - 0.5 * (a @ b) + (c @ d) * 2.0


def into_arg(x, a, b):
    return x + a @ b


def partial_reused(a, b, c, d, e, f):
    s = a @ b + c @ d  # read twice: by the next sum and by the product below
    t = s + e @ f
    return t * s


def unrolled_loss(w, h):
    """An unrolled recurrence: its gradient sums a weight product per step."""
    acc = 0.0
    for _ in range(4):
        h = np.tanh(h @ w)
        acc = acc + np.sum(h * h)
    return acc


def _program(fn, *args):
    return programs_run(myc.jit(fn), *args)[-1]


def _step_names(prog) -> list[str]:
    return [st.name for st in prog.steps]


def _kernels(prog) -> list:
    return [st for st in prog.steps if st.kind == "kernel"]


def _close(got, want, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _mats(rng, dtype, *shapes):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_of_products_is_gemm_accumulation_without_a_kernel(dtype):
    rng = np.random.default_rng(0)
    args = _mats(rng, dtype, (5, 3), (3, 4), (5, 6), (6, 4), (5, 2), (2, 4))
    prog = _program(sum3, *args)
    assert _step_names(prog).count("matmul_acc") == 2
    assert not _kernels(prog), "the sum of products became a kernel"
    assert prog.native is not None
    got = myc.jit(sum3)(*args)
    assert got.dtype == dtype
    _close(got, sum3(*args), dtype)
    _close(got, myc.jit(sum3, backend="interp")(*args), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_operands(dtype):
    rng = np.random.default_rng(1)
    args = _mats(rng, dtype, (3, 5), (3, 4), (5, 2), (4, 2), (4, 3))
    prog = _program(sum_t, *args)
    assert _step_names(prog).count("matmul_acc") == 2 and not _kernels(prog)
    got = myc.jit(sum_t)(*args)
    _close(got, sum_t(*args), dtype)
    _close(got, myc.jit(sum_t, backend="interp")(*args), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scaled_and_subtracted_products(dtype):
    rng = np.random.default_rng(2)
    x, a, b, c, d = _mats(rng, dtype, (4, 3), (4, 5), (5, 3), (4, 2), (2, 3))
    prog = _program(scaled, x, a, b, c, d)
    assert _step_names(prog).count("matmul_acc") == 2 and not _kernels(prog)
    got = myc.jit(scaled)(x, a, b, c, d)
    assert got.dtype == dtype
    _close(got, scaled(x, a, b, c, d), dtype)
    _close(got, myc.jit(scaled, backend="interp")(x, a, b, c, d), dtype)


def test_an_argument_accumulator_is_not_written():
    rng = np.random.default_rng(3)
    x, a, b = _mats(rng, np.float64, (4, 4), (4, 3), (3, 4))
    keep = x.copy()
    f = myc.jit(into_arg)
    for _ in range(2):
        _close(f(x, a, b), keep + a @ b, np.float64)
    assert np.array_equal(x, keep)
    assert "matmul_acc" in _step_names(_program(into_arg, x, a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_partial_sum_read_elsewhere_is_not_overwritten(dtype):
    rng = np.random.default_rng(4)
    args = _mats(rng, dtype, (3, 2), (2, 4), (3, 5), (5, 4), (3, 3), (3, 4))
    prog = _program(partial_reused, *args)
    assert _step_names(prog).count("matmul_acc") == 2
    f = myc.jit(partial_reused)
    for _ in range(2):  # a second call reuses the buffers
        got = f(*args)
        _close(got, partial_reused(*args), dtype)
    _close(got, myc.jit(partial_reused, backend="interp")(*args), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unrolled_gradient_accumulates_weight_products(dtype):
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((6, 6)) * 0.4).astype(dtype)
    h = rng.standard_normal((5, 6)).astype(dtype)
    g = myc.grad(unrolled_loss, argnums=(0, 1))
    gw, gh = g(w, h)
    assert gw.dtype == dtype and gh.dtype == dtype
    iw, ih = myc.jit(g, backend="interp")(w, h)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(gw, iw, rtol=tol, atol=tol)
    np.testing.assert_allclose(gh, ih, rtol=tol, atol=tol)
    if dtype == np.float64:
        np.testing.assert_allclose(gw, fd_grad(unrolled_loss, (w, h), 0), rtol=1e-6,
                                   atol=1e-8)
    prog = programs_run(g, w, h)[-1]
    assert _step_names(prog).count("matmul_acc") >= 3  # dW's four products: one GEMM + 3


def test_stepped_runner_computes_the_accumulation(monkeypatch):
    """Without native programs the step runs its NumPy reference."""
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    rng = np.random.default_rng(6)
    x, a, b, c, d = _mats(rng, np.float64, (4, 3), (4, 5), (5, 3), (4, 2), (2, 3))

    def stepped(x, a, b, c, d):  # its own code: no program cached by the tests above
        return x - 0.5 * (a @ b) + (c @ d) * 2.0

    prog = _program(stepped, x, a, b, c, d)
    assert prog.native is None and "matmul_acc" in _step_names(prog)
    _close(myc.jit(stepped)(x, a, b, c, d), scaled(x, a, b, c, d), np.float64)


def test_loop_body_sums_accumulate_natively():
    """A loop node's body is lowered (and rewritten) on its own."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 4)) * 0.3
    b = rng.standard_normal((4, 4)) * 0.3

    def grow(a, b):
        while np.sum(a * a) < 30.0:
            a = a @ b + b @ a + a
        return a

    got = myc.jit(grow)(a, b)
    np.testing.assert_allclose(got, grow(a, b), rtol=1e-10)
    loops = [st.fn for p in programs_run(myc.jit(grow), a, b) for st in p.steps
             if isinstance(st.fn, LoopRunner)]
    assert loops and all(lp.native is not None for lp in loops)
    assert any("matmul_acc" in _step_names(lp.body) for lp in loops)


def test_switched_off_gives_the_same_sums(monkeypatch):
    rng = np.random.default_rng(8)
    args = _mats(rng, np.float64, (5, 3), (3, 4), (5, 6), (6, 4), (5, 2), (2, 4))

    def plain(a, b, c, d, e, f):  # its own code: a program of its own
        return a @ b + c @ d + e @ f

    monkeypatch.setenv("MYC_NO_GEMM_ACC", "1")
    prog = _program(plain, *args)
    assert "matmul_acc" not in _step_names(prog) and _kernels(prog)
    _close(myc.jit(plain)(*args), sum3(*args), np.float64)


def test_opencl_keeps_plain_sums():
    pytest.importorskip("pyopencl")
    rng = np.random.default_rng(9)
    args = _mats(rng, np.float64, (5, 3), (3, 4), (5, 6), (6, 4), (5, 2), (2, 4))
    assert "matmul_acc" not in myc.ir(sum3, *args, stage="kernels", backend="opencl")
    try:
        got = myc.jit(sum3, backend="opencl")(*args)
    except myc.MycError as exc:  # no OpenCL device here
        pytest.skip(str(exc))
    _close(np.asarray(got), sum3(*args), np.float64)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_row_blocks_on_threads_accumulate(monkeypatch, threads):
    """A product big enough to split into row blocks (one per thread) adds each block
    to its own rows of the sum so far, scaled."""
    monkeypatch.setenv("MYC_NUM_THREADS", threads)
    rng = np.random.default_rng(10)
    x, a, b, c, d = _mats(rng, np.float64, (96, 80), (96, 64), (64, 80), (80, 96), (80, 80))

    def big(x, a, b, c, d):  # its own code: built for this thread count
        return x - 0.25 * (a @ b) + c.T @ d

    prog = _program(big, x, a, b, c, d)
    assert _step_names(prog).count("matmul_acc") == 2 and not _kernels(prog)
    _close(myc.jit(big)(x, a, b, c, d), big(x, a, b, c, d), np.float64)
