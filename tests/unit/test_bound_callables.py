"""Bound methods and ``functools.partial`` handed to ``jit``/``grad``/``vjp``/``jvp``
(``myc/runtime/bound.py``), and ``vjp``/``jvp`` keywords (``myc/api.py``)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import myc


def numerical_grad(f, x, eps=1e-6):
    """Central differences of scalar ``f`` at array ``x``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


class Model:
    def __init__(self, W, scale, act=np.tanh):
        self.W = W
        self.scale = scale
        self.act = act

    def hidden(self, x):
        return self.act(x @ self.W)

    def loss(self, x, y, l2=0.1):
        return self.scale * np.mean((self.hidden(x).sum(axis=1) - y) ** 2) + \
            l2 * np.sum(self.W ** 2)


def fit(w, X, y, reg=0.0, link=np.tanh):
    return np.sum((link(X @ w) - y) ** 2) + reg * (w @ w)


def _data():
    r = np.random.default_rng(0)
    return r.normal(size=(6, 3)), r.normal(size=(3, 2)), r.normal(size=6)


def test_jit_and_grad_of_a_bound_method():
    X, W, y = _data()
    m = Model(W, 2.0)
    assert np.isclose(myc.jit(m.loss)(X, y), m.loss(X, y), rtol=1e-13)
    assert np.isclose(myc.jit(m.loss)(X, y, l2=0.5), m.loss(X, y, 0.5), rtol=1e-13)
    gx = myc.grad(m.loss)(X, y)  # argnums count the parameters the caller sees
    np.testing.assert_allclose(gx, numerical_grad(lambda x: m.loss(x, y), X), atol=1e-7)
    gy = myc.grad(m.loss, 1)(X, y)
    np.testing.assert_allclose(gy, numerical_grad(lambda v: m.loss(X, v), y), atol=1e-7)


def test_a_rebound_attribute_of_self_is_seen():
    X, W, y = _data()
    m = Model(W, 2.0)
    f, g = myc.jit(m.loss), myc.jit(lambda x, v: m.loss(x, v))
    f(X, y), g(X, y)
    m.W = W * 3.0  # a training step rebinding the attribute: CPython sees the new W
    m.scale = 0.5
    assert np.isclose(f(X, y), m.loss(X, y), rtol=1e-13)
    assert np.isclose(g(X, y), m.loss(X, y), rtol=1e-13)


def test_partial_data_are_arguments_static_values_compiled_in():
    X, W, y = _data()
    w = W[:, 0]
    p = functools.partial(fit, X=X, y=y, link=np.sin)
    assert np.isclose(myc.jit(p)(w), fit(w, X, y, link=np.sin), rtol=1e-13)
    np.testing.assert_allclose(myc.grad(p)(w),
                               numerical_grad(lambda v: fit(v, X, y, link=np.sin), w),
                               atol=1e-7)
    # a keyword bound by partial given again at the call: the call's value (Python's rule)
    assert np.isclose(myc.jit(p)(w, y=2 * y), fit(w, X, 2 * y, link=np.sin), rtol=1e-13)
    # a new partial per batch reuses the program compiled for the first
    for i in range(3):
        g = myc.grad(functools.partial(fit, X=X + i, y=y, reg=0.1 * i))
        np.testing.assert_allclose(
            g(w), numerical_grad(lambda v, i=i: fit(v, X + i, y, 0.1 * i), w),
            rtol=1e-6, atol=1e-6)
    assert g.stats().compiles == 1


def test_positional_partials_nested_and_of_numpy_functions():
    X, W, y = _data()
    w = W[:, 0]
    p = functools.partial(functools.partial(fit, w), X)
    assert np.isclose(myc.jit(p)(y, 0.3), fit(w, X, y, 0.3), rtol=1e-13)
    np.testing.assert_allclose(myc.grad(p, 1)(y, 0.3), w @ w, rtol=1e-12)
    np.testing.assert_allclose(myc.jit(functools.partial(np.dot, X))(w), X @ w, rtol=1e-14)
    np.testing.assert_allclose(myc.jit(functools.partial(Model.hidden, Model(W, 1.0)))(X),
                               np.tanh(X @ W), rtol=1e-13)


def test_vjp_and_jvp_of_bound_callables_hold_the_bound_data_constant():
    X, W, y = _data()
    w = W[:, 0]
    p = functools.partial(fit, X=X, y=y)
    out, pull = myc.vjp(p, w)
    assert np.isclose(out, fit(w, X, y))
    (gw,) = pull(1.0)
    np.testing.assert_allclose(gw, myc.grad(fit)(w, X, y), rtol=1e-12)
    v = np.array([1.0, -2.0, 0.5])
    out, tan = myc.jvp(p, (w,), (v,))
    np.testing.assert_allclose(tan, gw @ v, rtol=1e-12)


def test_vjp_jvp_keywords_are_refused_with_how_to_bind_them():
    X, W, y = _data()
    w = W[:, 0]
    with pytest.raises(myc.MycTypeError, match="keyword argument 'y'.*positional primals"):
        myc.vjp(fit, w, X, y=y)
    with pytest.raises(myc.MycTypeError, match="functools.partial"):
        myc.jvp(fit, (w, X, y), (w, X, y), reg=1.0)


def test_vjp_and_jvp_has_aux_as_jax():
    w = np.array([0.5, -1.0, 2.0])

    def f(x):
        return np.sum(x ** 2), np.sin(x)

    out, pull, aux = myc.vjp(f, w, has_aux=True)
    assert np.isclose(out, w @ w)
    np.testing.assert_allclose(aux, np.sin(w))
    np.testing.assert_allclose(pull(1.0)[0], 2 * w)
    out, tan, aux = myc.jvp(f, (w,), (np.ones(3),), has_aux=True)
    assert np.isclose(tan, 2 * w.sum())
    np.testing.assert_allclose(aux, np.sin(w))


def test_a_bad_binding_is_a_myc_error():
    X, W, y = _data()
    with pytest.raises(myc.MycTypeError, match="positional arguments"):
        myc.jit(functools.partial(fit, 1, 2, 3, 4, 5, 6))
    with pytest.raises(myc.MycTypeError, match="unexpected keyword argument 'z'"):
        myc.grad(functools.partial(fit, z=1))


def test_grad_and_vjp_of_a_function_whose_parameter_defaults_to_a_function():
    # (myc/ad/grad.py lift_parameter: the default enters J(f) as its J image; it was
    # "tanh: unsupported operand of type Closure")
    X, W, y = _data()
    w = W[:, 0]
    want = numerical_grad(lambda v: fit(v, X, y), w)
    np.testing.assert_allclose(myc.grad(fit)(w, X, y), want, atol=1e-7)
    np.testing.assert_allclose(myc.value_and_grad(fit)(w, X, y)[1], want, atol=1e-7)
    np.testing.assert_allclose(myc.vjp(fit, w, X, y)[1](1.0)[0], want, atol=1e-7)
    np.testing.assert_allclose(myc.jit(myc.grad(fit))(w, X, y), want, atol=1e-7)


def test_an_attribute_holding_a_function_is_called_without_self():
    X, W, _ = _data()
    m = Model(W, 1.0, act=np.sin)
    np.testing.assert_allclose(myc.jit(lambda x: m.hidden(x))(X), np.sin(X @ W),
                               rtol=1e-13)


_MODEL = Model(np.array([[0.5, -0.3], [0.2, 0.1], [-0.4, 0.6]]), 1.5)


def test_grad_of_a_bound_method_inside_a_program():
    # (myc/frontend/lower.py _method_lambda: "the function passed to a myc transform
    # inside a program must be known where it is written")
    X, _, y = _data()
    inside = myc.jit(lambda x, v: myc.value_and_grad(_MODEL.loss, 1)(x, v))
    val, gy = inside(X, y)
    assert np.isclose(val, _MODEL.loss(X, y), rtol=1e-13)
    np.testing.assert_allclose(gy, numerical_grad(lambda v: _MODEL.loss(X, v), y), atol=1e-7)
