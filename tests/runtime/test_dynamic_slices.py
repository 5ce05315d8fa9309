"""Slices whose bounds are run-time ints but whose length is static compile once
(``myc.infer.dynslice``), with NumPy's semantics wherever the slice would differ: the
last, shorter batch and a negative start run a program specialized on the value."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS
from tests.runtime.minibatch_net import build, train

COMPILING = [b for b in BACKENDS if b != "interp"]
TOL = {"cpu": 1e-10, "opencl": 1e-6}


def _close(got, want, backend):
    for g, w in zip(_flat(got), _flat(want), strict=True):
        np.testing.assert_allclose(g, w, rtol=TOL[backend], atol=TOL[backend])


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [x for e in v for x in _flat(e)]
    return [v]


@pytest.mark.parametrize("backend", COMPILING)
def test_a_mini_batch_training_loop_is_one_program(backend):
    """The step number picks the batch (``step % batches``): ten steps, two programs
    (the first step's, by value, then the one that serves every step), the evaluator's
    losses and gradients."""
    loss, layers = build(n_images=40, batch=8)
    f = myc.value_and_grad(loss, backend=backend)
    ref = myc.value_and_grad(loss, backend="interp")
    for step in range(10):
        _close(f(layers, step), ref(layers, step), backend)
    st = f.stats()
    assert st.compiles <= 2 and st.evaluator_calls == 0


def test_training_with_a_dynamic_slice_matches_the_evaluator():
    loss, layers = build(n_images=40, batch=8)
    trained = train(myc.grad(loss), layers, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = train(myc.grad(loss, backend="interp"), layers, 12)
    _close(trained, want, "cpu")


@pytest.mark.parametrize("backend", COMPILING)
def test_the_last_shorter_batch_follows_numpy(backend):
    """42 images in batches of 8: the sixth batch has 2 rows, as NumPy slices it."""
    loss, layers = build(n_images=42, batch=8)
    f = myc.value_and_grad(loss, backend=backend)
    ref = myc.value_and_grad(loss, backend="interp")
    for step in [0, 1, 2, 5, 3, 11, 4, 5]:
        _close(f(layers, step), ref(layers, step), backend)
    st = f.stats()
    assert st.compiles <= 3 and st.evaluator_calls == 0  # the short batch: by value


def window_sum(x, i):
    return np.sum(np.sin(x[i - 3:i]) * np.arange(6.0))


def columns(x, i):
    return np.sum(x[1:, i * 2:i * 2 + 2] ** 2) + np.sum(x[..., i:i + 1] * x[0, i:i + 1])


def rows_of_object(x, i):
    s = slice(i, 3 + i)
    return np.sum(np.tanh(x[s, ...]), axis=0)


X = np.linspace(-1.0, 1.0, 48).reshape(8, 6)


@pytest.mark.parametrize("backend", COMPILING)
@pytest.mark.parametrize("fn, values", [
    (window_sum, [5, 6, 3, 7, 8, 2, 0, -1, 12, 4]),  # < 3: a negative start wraps
    (columns, [0, 1, 2, 3, 1, 0]),                   # 3: past the end, shorter
    (rows_of_object, [0, 2, 5, 6, -2, -9, 3])])      # beyond the array: empty or short
def test_run_time_slice_bounds_follow_numpy(backend, fn, values):
    f = myc.jit(fn, backend=backend)
    for i in values:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _close(f(X, i), fn(X, i), backend)
    assert f.stats().evaluator_calls == 0
    assert f._executable.ints.runtime  # the int is a run-time scalar


def test_in_range_values_share_one_program():
    f = myc.jit(window_sum)
    for i in range(3, 9):
        np.testing.assert_allclose(f(X, i), window_sum(X, i), rtol=1e-12)
    assert len(f._executable.cache) == 2  # the first value's program, the run-time one


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_dynamic_slice_by_finite_differences(backend):
    g = myc.grad(columns, backend=backend)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 7))
    for i in [0, 1, 2]:
        got = g(x, i)
        want = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[k] = 1e-6
            want[k] = (columns(x + e, i) - columns(x - e, i)) / 2e-6
        np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("backend", COMPILING)
def test_forward_mode_of_a_dynamic_slice(backend):
    x, t = np.linspace(0.1, 1.0, 48).reshape(8, 6), np.ones((8, 6))
    for i in [3, 4, 5]:
        out, tout = myc.jvp(window_sum, (x, i), (t, None), backend=backend)
        ref = myc.jvp(window_sum, (x, i), (t, None), backend="interp")
        _close((out, tout), ref, backend)


def head(x, n):
    return np.sum(x[:n]) * 2.0


def window_of_two_ints(x, i, n):
    return np.sum(x[i:i + n])


def strided(x, i):
    return np.sum(x[i:i + 4:2] * np.arange(6.0)) + np.sum(x[i + 3:i:-1])


@pytest.mark.parametrize("fn, args", [
    (head, [(1,), (2,), (3,), (4,)]),
    (window_of_two_ints, [(0, 2), (1, 2), (1, 3), (2, 1)]),
    (strided, [(0,), (1,), (5,), (-2,)])])
def test_a_length_that_depends_on_the_int_stays_by_value(fn, args):
    f = myc.jit(fn)
    for a in args:
        np.testing.assert_allclose(f(X, *a), fn(X, *a), rtol=1e-12)
    assert not f._executable.ints.runtime
    assert len(f._executable.cache) == len(args)


def far_window(x, i):
    return np.sum(x[i - 2**40:i - 2**40 + 2])


def test_ints_beyond_the_guarded_range_are_specialized_on_their_value():
    """An int parameter beyond +-2**31 leaves the run-time program (int64 must stay
    exact along the chain): the program of its value answers."""
    f = myc.jit(far_window)
    for i in [0, 1, 2**40, 2**40 + 3, 2**62]:
        np.testing.assert_allclose(f(X, i), far_window(X, i), rtol=1e-12)
    assert f.stats().evaluator_calls == 0


def test_a_dynamic_slice_runs_on_a_gpu_device(monkeypatch, tmp_path):
    """CUDA's glue without a GPU (``tests/cuda/fake_cupy``): the window and its adjoint
    give device arrays (they ran there, not on host copies)."""
    from myc.backends.cuda import host
    from tests.cuda import fake_cupy

    fake_cupy.install(monkeypatch, tmp_path)
    kinds: dict[str, set] = {}
    real = host.HostStep.__call__

    def spy(self, *vals):
        out = real(self, *vals)
        kinds.setdefault(self.name, set()).add(isinstance(out, fake_cupy.FakeArray))
        return out

    monkeypatch.setattr(host.HostStep, "__call__", spy)
    g = myc.grad(columns, backend="cuda")
    x = np.random.default_rng(1).normal(size=(4, 7))
    for i in [0, 1, 2, 3]:
        np.testing.assert_allclose(g(x, i), myc.grad(columns)(x, i), rtol=1e-6, atol=1e-7)
    assert kinds["dynamic_slice"] == {True} and kinds["dynamic_slice_grad"] == {True}


G = np.arange(20.0).reshape(10, 2)


def windows_out(x, i):
    return x[i:i + 3], G[i * 2:i * 2 + 2], x[i:i + 3] * 2.0


def test_a_window_returned_is_the_callers_own():
    """A native program reads a row window in place (a pointer into the array): what it
    returns is still a fresh array, and the program's constants are never written."""
    f = myc.jit(windows_out)
    x = np.arange(30.0).reshape(10, 3)
    for i in [0, 1, 2, 3, 4, 1, 2]:
        got = f(x, i)
        for a, b in zip(got, windows_out(x, i), strict=True):
            np.testing.assert_array_equal(a, b)
        got[0][...] = -1.0
        got[1][...] = -1.0
    np.testing.assert_array_equal(G, np.arange(20.0).reshape(10, 2))
    np.testing.assert_array_equal(x, np.arange(30.0).reshape(10, 3))


def by_mod_and_floordiv(x, i):
    return np.sum(x[i % 3 * 2:i % 3 * 2 + 2]) + 10.0 * np.sum(x[i // 4 + 2:i // 4 + 4, 1:])


def test_python_rounding_of_run_time_mod_and_floordiv():
    """``%`` and ``//`` of a run-time int round towards -inf, as Python's (native code
    computes them: C's remainder and quotient round towards zero)."""
    f = myc.jit(by_mod_and_floordiv)
    for i in [0, 1, -1, -5, -4, 7, -9, 13, -13, 2]:
        np.testing.assert_allclose(f(X, i), by_mod_and_floordiv(X, i), rtol=1e-12)
    assert f._executable.ints.runtime and f.stats().native_calls >= 8
