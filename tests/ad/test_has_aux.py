"""``grad``/``value_and_grad`` with ``has_aux=True`` (JAX's): the function returns
``(loss, aux)``; only ``loss`` is differentiated and ``aux`` comes back beside the
gradients -- also through a data-dependent loop (the typed adjoint route), inside
compiled code, on every backend, and pickled."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def loss_and_stats(w, x):
    pred = np.tanh(x @ w)
    err = pred - 1.0
    return np.mean(err ** 2), {"pred": pred, "max": np.max(np.abs(err))}


def loss_np(w, x):
    return np.mean((np.tanh(x @ w) - 1.0) ** 2)


def central(f, w, x, eps=1e-6):
    g = np.zeros_like(w)
    for i in range(w.size):
        d = np.zeros_like(w)
        d.flat[i] = eps
        g.flat[i] = (f(w + d, x) - f(w - d, x)) / (2 * eps)
    return g


def args():
    rng = np.random.default_rng(0)
    return rng.standard_normal(3), rng.standard_normal((5, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_and_value_and_grad_return_aux(backend):
    w, x = args()
    g, aux = myc.grad(loss_and_stats, has_aux=True, backend=backend)(w, x)
    np.testing.assert_allclose(g, central(loss_np, w, x), atol=1e-8)
    np.testing.assert_allclose(aux["pred"], np.tanh(x @ w), rtol=1e-12)
    assert set(aux) == {"pred", "max"}
    (v, aux2), g2 = myc.value_and_grad(loss_and_stats, has_aux=True, backend=backend)(w, x)
    assert v == pytest.approx(loss_np(w, x), rel=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-12)
    np.testing.assert_allclose(aux2["max"], np.max(np.abs(np.tanh(x @ w) - 1.0)), rtol=1e-12)


def newton_sqrt(a, n):
    x = a
    steps = 0
    while abs(x * x - a) > 1e-12 and steps < n:  # a data-dependent loop
        x = 0.5 * (x + a / x)
        steps += 1
    return x * x * 3.0, steps


def test_aux_through_a_data_dependent_loop():
    (v, steps), g = myc.value_and_grad(newton_sqrt, has_aux=True)(2.0, 50)
    assert steps == 5 and v == pytest.approx(6.0)
    assert g == pytest.approx(3.0, rel=1e-9)  # d/da 3 * sqrt(a)^2


def test_has_aux_inside_a_compiled_function_and_argnums():
    @myc.jit
    def step(w, x):
        (gw, gx), aux = myc.grad(loss_and_stats, argnums=(0, 1), has_aux=True)(w, x)
        return w - 0.1 * gw, aux["max"], gx

    w, x = args()
    new_w, m, gx = step(w, x)
    np.testing.assert_allclose(new_w, w - 0.1 * central(loss_np, w, x), atol=1e-8)
    assert m == pytest.approx(np.max(np.abs(np.tanh(x @ w) - 1.0)))
    assert gx.shape == x.shape


def not_a_pair(w, x):
    return np.mean(x @ w)


def test_a_function_not_returning_a_pair_is_a_clear_error():
    w, x = args()
    with pytest.raises(myc.MycTypeError, match="has_aux=True needs a function returning a "
                                               "pair"):
        myc.grad(not_a_pair, has_aux=True)(w, x)
    with pytest.raises(myc.MycTypeError, match="has_aux must be True or False"):
        myc.grad(loss_and_stats, has_aux="yes")


def test_pickled_with_its_aux():
    w, x = args()
    f = pickle.loads(pickle.dumps(myc.value_and_grad(loss_and_stats, has_aux=True)))
    (v, aux), g = f(w, x)
    assert v == pytest.approx(loss_np(w, x)) and "pred" in aux
