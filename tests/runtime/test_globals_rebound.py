"""A module global (or closure variable) rebound after the first call is read again:
the compiled program is dropped and the call compiles with the new value
(``myc.frontend.globals_watch``).  In-place mutation of a global array keeps its identity
and is still not seen (documented in the README)."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS

SCALE = 2.0
OFFSET = np.ones(2)
LAYERS = [np.eye(2)]


def helper(x):
    return x * SCALE


def model(x):
    return helper(x) + OFFSET


def deep(x):
    for W in LAYERS:
        x = x @ W
    return x


@pytest.fixture(autouse=True)
def _restore_globals():
    global SCALE, OFFSET, LAYERS, helper
    saved = SCALE, OFFSET, LAYERS, helper
    yield
    SCALE, OFFSET, LAYERS, helper = saved


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebound_globals_are_read_again(backend):
    global SCALE, OFFSET
    f = myc.jit(model, backend=backend)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(f(x), model(x))
    SCALE = 3.0  # read by a callee
    np.testing.assert_allclose(f(x), model(x))
    OFFSET = np.zeros(2)  # read by the function itself
    np.testing.assert_allclose(f(x), model(x))
    np.testing.assert_allclose(myc.jit(model, backend=backend)(x), model(x))  # a new wrapper


def test_rebound_function_and_list_global():
    global helper, LAYERS
    f = myc.jit(model)
    g = myc.jit(deep)
    x = np.array([1.0, 2.0])
    f(x), g(x)
    helper = lambda v: v - 1.0  # noqa: E731
    LAYERS = [np.eye(2) * 2.0, np.eye(2) * 3.0]
    np.testing.assert_allclose(f(x), model(x))
    np.testing.assert_allclose(g(x), deep(x))


def test_gradients_see_rebound_globals():
    global SCALE

    def loss(x):
        return np.sum(model(x) ** 2)

    g = myc.grad(loss)
    v = myc.value_and_grad(loss)
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(g(x), 2 * model(x) * SCALE)
    SCALE = 5.0
    np.testing.assert_allclose(g(x), 2 * model(x) * SCALE)
    np.testing.assert_allclose(v(x)[0], loss(x))


def test_rebound_closure_variable():
    def make():
        k = 2.0

        def f(x):
            return x * k

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = make()
    jf = myc.jit(f)
    assert jf(1.5) == 3.0
    set_k(4.0)
    assert jf(1.5) == 6.0


def test_unchanged_globals_do_not_recompile():
    f = myc.jit(model)
    x = np.array([1.0, 2.0])
    for _ in range(3):
        f(x)
    s = f.stats()  # one compiled program served the three calls (stats live in it)
    assert s.compiled_calls == 3 and s.compiles <= 1
