"""A long straight-line program's native module: code that grows linearly with the
program and is compiled light.  An unrolled recurrence's gradient calls hundreds of
same-shaped matrix products: each is one BLAS call in place (or, split over threads, a
call of one wrapper function per distinct shape, not one per product), and a module past ``machine_code.LIGHT_ABOVE`` instructions skips O3 (which is
superlinear in a function's size: a 30-step RK4 gradient spent 2.6 s of CPU there)."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.backends.cpu import loopgen, machine_code


def deep(w, h):
    for _ in range(40):
        h = np.tanh(h @ w)
    return np.sum(h * h)


def deep_grad_reference(w, h):
    hs = [h]
    for _ in range(40):
        hs.append(np.tanh(hs[-1] @ w))
    gh, gw = 2 * hs[-1], np.zeros_like(w)
    for k in range(40, 0, -1):
        ga = gh * (1 - hs[k] ** 2)
        gw += hs[k - 1].T @ ga
        gh = ga @ w.T
    return gw


@pytest.fixture
def modules(monkeypatch) -> list:
    """``(NativeLoop, compiled light?)`` for every native module built."""
    seen: list = []
    built = loopgen.NativeLoop._build
    jit = machine_code.load_or_compile

    def spy_build(self):
        seen.append([self, None])
        return built(self)

    def spy_jit(text, light=False, bare=False, **kw):
        if kw.get("fixed") is None:  # (not the thread pool's module)
            seen[-1][1] = light
        return jit(text, light, bare, **kw)

    monkeypatch.setattr(loopgen.NativeLoop, "_build", spy_build)
    monkeypatch.setattr(machine_code, "load_or_compile", spy_jit)
    monkeypatch.setenv("MYC_CACHE_DIR", "off")
    return seen


def test_a_long_program_calls_blas_in_place_and_compiles_light(modules, monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "1")
    rng = np.random.default_rng(0)
    w, h = rng.standard_normal((16, 16)) * 0.3, rng.standard_normal((8, 16))
    got = myc.grad(deep)(w, h)
    np.testing.assert_allclose(got, deep_grad_reference(w, h), rtol=1e-10, atol=1e-12)
    assert len(modules) == 1
    loop, light = modules[0]
    text = loop.llvm_ir
    # 40 products forward, 79 backward: each one BLAS call in place, no wrapper
    assert text.count("openblas_set_num_threads_local\"(i32 1)") >= 100
    assert "define internal void @\"myc.gemm." not in text
    assert light is True


def test_threaded_products_share_one_wrapper_per_shape(modules, monkeypatch):
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    rng = np.random.default_rng(2)
    w, h = rng.standard_normal((64, 64)) * 0.1, rng.standard_normal((64, 64))
    got = myc.grad(deep)(w, h)
    np.testing.assert_allclose(got, deep_grad_reference(w, h), rtol=1e-9, atol=1e-12)
    text = modules[0][0].llvm_ir
    assert text.count("call void @\"myc.gemm.") >= 100  # row blocks: threads
    # h @ w forward; ga @ w.T and h.T @ ga backward, h.T @ ga also accumulated into the
    # weight's gradient (GEMM with beta = 1: myc.opt.products)
    assert text.count("define internal void @\"myc.gemm.") == 4


def test_a_short_program_of_big_steps_run_once_compiles_light(modules):
    # its time is the kernel's and the products': O3 on its glue only costs compile time
    rng = np.random.default_rng(1)
    w, h = rng.standard_normal((256, 256)) * 0.1, rng.standard_normal((128, 256))
    got = myc.jit(lambda w, h: np.tanh(h @ w) @ w)(w, h)
    np.testing.assert_allclose(got, np.tanh(h @ w) @ w, rtol=1e-10, atol=1e-12)
    assert [light for _, light in modules] == [True]


def test_a_program_of_small_steps_keeps_o3(modules):
    # the host code between steps of 128 elements is a good part of its run time
    rng = np.random.default_rng(1)
    w, h = rng.standard_normal((16, 16)) * 0.3, rng.standard_normal((8, 16))
    got = myc.jit(lambda w, h: np.tanh(h @ w) @ w)(w, h)
    np.testing.assert_allclose(got, np.tanh(h @ w) @ w, rtol=1e-12)
    assert [light for _, light in modules] == [False]


def test_a_program_whose_copies_do_work_keeps_o3(modules):
    # a gather of 20,000 rows of 300: element loops in the program itself
    rng = np.random.default_rng(3)
    x, i = rng.standard_normal((400, 300)), rng.integers(0, 400, 20_000)
    got = myc.jit(lambda x, i: x[i] * 2.0)(x, i)
    np.testing.assert_array_equal(got, x[i] * 2.0)
    assert [light for _, light in modules] == [False]


def test_a_loop_keeps_o3(modules):
    def halve(x):
        while np.sum(x) > 1.0:
            x = x * 0.5
        return x

    x = np.full(8, 3.0)
    np.testing.assert_array_equal(myc.jit(halve)(x), np.full(8, 0.09375))
    assert [light for _, light in modules] == [False]


def test_a_sum_of_a_big_array_compiles_light(modules):
    # a reduction writes one number but reads 2^20: the step's work is what it reads
    x = np.random.default_rng(4).standard_normal(1 << 20)
    f = myc.jit(lambda x: np.sum(np.tanh(x)))
    got = f(x)
    assert modules == []  # only a kernel: the first call runs it from Python
    np.testing.assert_allclose(f(x), got, rtol=0)
    np.testing.assert_allclose(got, np.sum(np.tanh(x)), rtol=1e-9)
    assert [light for _, light in modules] == [True]


def test_constant_indices_are_checked_at_compile_time_and_zeros_are_a_memset(modules):
    # an unrolled loop's coeffs[k]: no bounds check left in the program; zeros: memset
    def horner(x, c):
        acc = np.zeros_like(x)
        for k in range(c.shape[0]):
            acc = acc * x + c[k]
        return np.sum(acc), c[-1]

    rng = np.random.default_rng(5)
    x, c = rng.uniform(0.0, 0.9, 1 << 16), rng.uniform(0.0, 1.0, 12)
    want = np.zeros_like(x)
    for k in range(12):
        want = want * x + c[k]
    total, last = myc.jit(horner)(x, c)
    np.testing.assert_allclose(total, np.sum(want), rtol=1e-12)
    assert last == c[-1]
    text = modules[0][0].llvm_ir
    assert "icmp uge" not in text and "llvm.memset" in text


def heads(q, k):
    # many small copies of constant trip counts: 3-d transposes and einsum's views
    t, d = q.shape
    q3 = q.reshape(t, 2, d // 2).transpose(1, 0, 2)
    k3 = k.reshape(t, 2, d // 2).transpose(1, 0, 2)
    s = np.einsum("htd,hsd->hts", q3, k3)
    return np.sum(np.tanh(s) * s)


def test_glue_loops_of_constant_trip_count_are_not_unrolled(modules):
    """Fully unrolled, a transformer block's dozens of small copies made its native module
    five times bigger after O3 and took 4 s of LLVM (now 0.3 s): the program's own
    element loops carry llvm.loop.unroll.disable (they stay vectorizable)."""
    from myc.backends.cpu.jit import optimized_ir

    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((10, 8)), rng.standard_normal((10, 8))
    got = myc.grad(heads, argnums=(0, 1))(q, k)
    eps = 1e-6
    e = np.zeros_like(q)
    e[3, 5] = eps
    fd = (heads(q + e, k) - heads(q - e, k)) / (2 * eps)
    assert abs(got[0][3, 5] - fd) < 1e-6 * max(1.0, abs(fd))
    loop, light = modules[-1]
    text = loop.llvm_ir
    assert "llvm.loop.unroll.disable" in text and light is False
    before = text.count("\n")
    assert optimized_ir(text).count("\n") < 3 * before
