"""The runtime: argument handling, caching per signature, memory, outputs."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import myc


def axpy(a, x, y):
    return a * x + y


def reduce_rows(x):
    return np.sum(np.tanh(x), axis=1)


def choose(x, flag):
    if flag:
        return x * 2.0
    return x - 1.0


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_non_contiguous_inputs(backend):
    base = np.arange(24.0).reshape(4, 6)
    f = myc.jit(reduce_rows, backend=backend)
    for x in (base[:, ::2], base.T, base[::-1]):
        np.testing.assert_allclose(f(x), reduce_rows(x))


def test_same_signature_hits_the_cache_and_new_shapes_respecialize():
    f = myc.jit(axpy)
    x = np.ones(4, np.float32)
    f(2.0, x, x)
    sf = f._executable
    f(3.0, x, x)  # a new float value: same signature
    assert len(sf.cache) == 1
    f(2.0, np.ones(5, np.float32), np.ones(5, np.float32))
    assert len(sf.cache) == 2
    f(2.0, np.ones(5), np.ones(5))  # float64: another dtype
    assert len(sf.cache) == 3


def test_int_and_bool_arguments_specialize_by_value():
    f = myc.jit(choose)
    x = np.ones(3)
    np.testing.assert_allclose(f(x, True), x * 2.0)
    np.testing.assert_allclose(f(x, False), x - 1.0)
    assert len(f._executable.cache) == 2


def test_float32_in_float32_out_on_the_compiled_path():
    f = myc.jit(axpy)
    out = f(0.5, np.ones(3, np.float32), np.ones(3, np.float32))
    assert out.dtype == np.float32


def test_wrong_dtype_is_a_myc_error():
    with pytest.raises(myc.MycTypeError, match="dtype"):
        myc.jit(reduce_rows)(np.ones((2, 2), np.complex128))


def test_shape_errors_are_reported_before_running_with_the_line():
    def bad(x, y):
        z = np.exp(x)
        return z + y  # shapes (3,) and (4,)

    with pytest.raises(myc.MycShapeError) as info:
        myc.jit(bad)(np.ones(3), np.ones(4))
    assert info.value.loc.line == bad.__code__.co_firstlineno + 2


def test_repeated_calls_keep_memory_flat():
    f = myc.jit(axpy)
    x = np.ones(64)
    for _ in range(200):
        f(2.0, x, x)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(20_000):
        f(2.0, x, x)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 200_000, f"memory grew by {after - before} bytes"


def test_outputs_are_owned_and_inputs_untouched():
    def ident(x):
        return x

    x = np.arange(4.0)
    out = myc.jit(ident)(x)
    out[0] = 100.0
    assert x[0] == 0.0 and x.flags.writeable


def piecewise(x, y):
    if x > 0:
        return y * 2.0
    elif x > -1:
        return y - 1.0
    return y * y


def newton_sqrt(a):
    x = a
    i = 0
    while abs(x * x - a) > 1e-10 and i < 50:
        x = 0.5 * (x + a / x)
        i += 1
    return x, i


def converge(x0):
    x = x0
    i = 0
    while i < 1000:
        step = 0.05 * np.sin(x)
        x = x - step
        i += 1
        if np.max(np.abs(step)) < 1e-4:
            break
    return np.sum(x)


def test_guarded_programs_follow_each_calls_control_flow():
    """Data-dependent branches are specialized on the first call's decisions and guarded:
    a call that decides differently must still get Python's answer."""
    f = myc.jit(piecewise)
    y = np.arange(3.0)
    for x in (1.0, -0.5, -3.0, 2.0, 0.0, -0.5, -7.0, 3.0):
        np.testing.assert_allclose(f(x, y), piecewise(x, y))
    g = myc.jit(newton_sqrt)
    for a in (2.0, 9.0, 1e-3, 2.0, 123.0):
        got, want = g(a), newton_sqrt(a)
        assert got[1] == want[1]
        np.testing.assert_allclose(got[0], want[0])


def test_guarded_gradient_of_a_data_dependent_loop():
    rng = np.random.default_rng(1)
    vg = myc.value_and_grad(converge)
    for _ in range(3):
        x0 = rng.uniform(4.0, 8.0, 16)
        v, g = vg(x0)
        np.testing.assert_allclose(v, converge(x0), rtol=1e-10)
        eps = 1e-6
        e0 = np.zeros(16)
        e0[3] = eps
        fd = (converge(x0 + e0) - converge(x0 - e0)) / (2 * eps)
        np.testing.assert_allclose(g[3], fd, rtol=1e-4)


def big_chain(x):
    y = np.exp(-x * x) * 2.0
    return y, np.sum(np.tanh(y))


def test_reused_kernel_buffers_never_alias_results_or_race():
    """Kernels pool their big output buffers across calls: arrays a caller holds must
    never be overwritten, and concurrent calls must not share a buffer."""
    from concurrent.futures import ThreadPoolExecutor

    f = myc.jit(big_chain)
    xs = [np.linspace(-1.0, 1.0, 1 << 19) * k for k in (1.0, 2.0, 3.0, 4.0)]
    held = [f(x)[0] for x in xs]
    for x, h in zip(xs, held):
        np.testing.assert_allclose(h, big_chain(x)[0])
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            outs = list(pool.map(f, xs * 2))
            for x, (y, s) in zip(xs * 2, outs):
                np.testing.assert_allclose(y, big_chain(x)[0])
                np.testing.assert_allclose(s, big_chain(x)[1], rtol=1e-10)
