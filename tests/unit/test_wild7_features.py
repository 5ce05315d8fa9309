"""What the seventh corpus (tests/realworld/wild7: PyTorch/JAX styles written in NumPy)
found, each refused or slow before: ``isinstance(layer, Linear)`` on an object of the
user's class; ``f(y, t, *args)`` with ``f`` a function passed in; ``for t0, t1 in
zip(ts[:-1], ts[1:])`` unrolled (an ODE fit's gradient took 18 s to compile); a
``*args``/keyword method or closure called through a value (``sampler.leapfrog(q, p,
X, y)`` into ``def leapfrog(self, q, p, *data)``: "takes 4 arguments but 5 were
given"); a ``functools.partial`` or ``myc.grad(partial(...))`` passed as an argument
("unsupported type partial").  Values against CPython, gradients against central
differences."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import myc
from tests.adversarial.common import fd_grad
from tests.backends import BACKENDS

R = np.random.default_rng(0)


class Layer:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Scaled(Layer):
    def __call__(self, x):
        return 2.0 * x @ self.W


class Act:
    def __call__(self, x):
        return np.sin(x)


def penalized(layers, x):
    out = x
    for layer in layers:
        out = layer(out)
    pen = sum(np.sum(layer.W ** 2) for layer in layers if isinstance(layer, Layer))
    plain = sum(1.0 for layer in layers if isinstance(layer, (Act, list)))
    exact = sum(1.0 for layer in layers if isinstance(layer, Scaled))
    return np.sum(out) + 0.1 * pen + plain + 10.0 * exact + isinstance(x, Layer)


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_with_the_users_classes(backend):
    layers = [Layer(R.standard_normal((3, 3))), Act(), Scaled(R.standard_normal((3, 2)))]
    x = R.standard_normal((4, 3))
    np.testing.assert_allclose(myc.jit(penalized, backend=backend)(layers, x),
                               penalized(layers, x), rtol=1e-12)
    g = myc.grad(penalized, argnums=1, backend=backend)(layers, x)
    np.testing.assert_allclose(g, fd_grad(penalized, (layers, x), 1), rtol=1e-6, atol=1e-8)


def step(f, y, t, dt, *args):
    return y + dt * f(y, t, *args)


def integrate(f, y0, ts, *args):
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        y = step(f, y, t0, t1 - t0, *args)
    return y


def decay(y, t, k, c):
    return -k * y + c * np.cos(t)


def fit(theta, f, y0, ts):
    return np.sum(integrate(f, y0, ts, *theta) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_star_args_into_a_function_argument_and_a_loop_over_zip(backend):
    ts = np.linspace(0.0, 2.0, 60)
    y0, theta = np.array([1.0, -0.5]), np.array([0.7, 0.3])
    np.testing.assert_allclose(myc.jit(fit, backend=backend)(theta, decay, y0, ts),
                               fit(theta, decay, y0, ts), rtol=1e-12)
    g = myc.grad(fit, backend=backend)(theta, decay, y0, ts)
    np.testing.assert_allclose(g, fd_grad(lambda th: fit(th, decay, y0, ts), (theta,), 0),
                               rtol=1e-6)


def test_a_loop_over_zip_of_arrays_is_a_loop_node_not_unrolled():
    ts = np.linspace(0.0, 2.0, 400)
    y0, theta = np.array([1.0, -0.5]), np.array([0.7, 0.3])
    typed = myc.ir(fit, theta, decay, y0, ts, stage="typed")
    assert "loop" in typed and typed.count("\n") < 400  # one body, not 399 copies


def test_zip_of_unequal_lengths_stops_at_the_shortest_and_reads_dict_keys():
    def f(xs, ws, d):
        total = 0.0
        for x, w, k in zip(xs, ws, d):
            total = total + w * np.sum(x) + len(k)
        return total

    xs, ws, d = R.standard_normal((5, 2)), [0.5, 2.0, -1.0], {"ab": 1, "c": 2, "def": 3}
    assert myc.jit(f)(xs, ws, d) == pytest.approx(f(xs, ws, d), rel=1e-12)


def make_mapper(f):
    def apply(*args, scale=1.0):
        return scale * np.array([f(*a) for a in zip(*args)])
    return apply


def pair_loss(w, x, y):
    return np.sum((x * w - y) ** 2)


def mapped(w, xs, ys):
    per = make_mapper(partial(pair_loss, w))
    return np.sum(per(xs, ys)) + np.sum(per(xs, ys, scale=0.5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_closure_with_star_args_and_keywords_called_through_a_value(backend):
    w, xs, ys = np.array([0.5, -1.0]), R.standard_normal((3, 2)), R.standard_normal((3, 2))
    np.testing.assert_allclose(myc.jit(mapped, backend=backend)(w, xs, ys),
                               mapped(w, xs, ys), rtol=1e-12)
    np.testing.assert_allclose(myc.grad(mapped, backend=backend)(w, xs, ys),
                               fd_grad(mapped, (w, xs, ys), 0), rtol=1e-6)


def log_joint(beta, X, y, scale=1.0):
    return -np.sum((X @ beta - y) ** 2) - 0.5 * np.sum(beta ** 2) / scale ** 2


def langevin_drift(x, log_p, grad_log_p, eps):
    return log_p(x + eps * grad_log_p(x)) - log_p(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_partial_and_a_grad_of_a_partial_passed_as_arguments(backend):
    X, y = R.standard_normal((6, 3)), R.standard_normal(6)
    x = np.array([0.2, -0.4, 0.1])
    log_p = partial(log_joint, X=X, y=y)
    args = (x, log_p, myc.grad(log_p), 0.05)
    want = log_p(x + 0.05 * myc.grad(log_p)(x)) - log_p(x)
    jf = myc.jit(langevin_drift, backend=backend)
    np.testing.assert_allclose(jf(*args), want, rtol=1e-12)
    g = myc.grad(langevin_drift, backend=backend)(*args)

    def numeric(v):  # the drift by CPython, with myc's gradient as a black box
        return log_p(v + 0.05 * myc.grad(log_p)(v)) - log_p(v)

    np.testing.assert_allclose(g, fd_grad(numeric, (x,), 0), rtol=1e-6, atol=1e-8)
    if backend != "interp":
        # new data bound by a new partial: the same program
        X2 = R.standard_normal((6, 3))
        lp2 = partial(log_joint, X=X2, y=y)
        np.testing.assert_allclose(jf(x, lp2, myc.grad(lp2), 0.05),
                                   lp2(x + 0.05 * myc.grad(lp2)(x)) - lp2(x), rtol=1e-12)
        assert jf.stats().compiles == 1
