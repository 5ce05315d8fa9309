"""Functions passed as arguments (``myc/runtime/static_args.py``): compiled in, part of
the signature by identity, never differentiated; and lifted for gradients (``J``/``F``
images, ``myc/ad/passed.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import myc
from myc.errors import MycTypeError
from tests.adversarial.common import fd_grad
from tests.backends import BACKENDS

X = np.linspace(-1.2, 1.5, 5)


def apply_sum(f, x):
    return np.sum(f(x))


def cube(v):
    return v * v * v


def fit(loss, w, x, steps):
    for _ in range(steps):
        w = w - 0.1 * myc.grad(loss)(w, x)
    return w


def quad(w, x):
    return np.sum((w - x) ** 2)


def shifted(w, x):
    return np.sum(np.tanh(w - x) ** 2)


FUNCTIONS = [np.tanh, np.sin, cube, lambda v: np.exp(v) - v, myc.jit(cube),
             scipy.special.expit]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_argument_runs_compiled_and_is_differentiated_through(backend):
    jf = myc.jit(apply_sum, backend=backend)
    gf = myc.grad(apply_sum, argnums=1, backend=backend)
    for f in FUNCTIONS:
        np.testing.assert_allclose(jf(f, X), apply_sum(f, X), rtol=1e-12)
        np.testing.assert_allclose(gf(f, X), fd_grad(lambda x, f=f: apply_sum(f, x), (X,), 0),
                                   rtol=1e-6, atol=1e-8)
    if backend != "interp":
        # one per function, none mixed up (cube and myc.jit(cube): one graph)
        assert jf.stats().compiles == len(FUNCTIONS) - 1


def test_each_transform_takes_a_function_argument():
    fd = fd_grad(lambda x: apply_sum(cube, x), (X,), 0)
    value, g = myc.value_and_grad(apply_sum, argnums=1)(cube, X)
    np.testing.assert_allclose(value, apply_sum(cube, X), rtol=1e-12)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    both = myc.grad(apply_sum, argnums=(0, 1))(cube, X)
    assert both[0] is None  # a function gets no gradient
    out, pull = myc.vjp(apply_sum, cube, X)
    assert pull(1.0)[0] is None
    np.testing.assert_allclose(pull(1.0)[1], fd, rtol=1e-6)
    t = np.linspace(0.1, 0.5, 5)
    for f in (cube, np.sin):
        y, ty = myc.jvp(apply_sum, (f, X), (None, t))
        np.testing.assert_allclose(y, apply_sum(f, X), rtol=1e-12)
        fdf = fd_grad(lambda x, f=f: apply_sum(f, x), (X,), 0)
        np.testing.assert_allclose(ty, fdf @ t, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_transform_of_a_function_argument_inside_a_program_runs(backend):
    # (myc.grad(loss) with loss a parameter: transformed when the program specializes,
    # each function passed its own program)
    for loss in (quad, shifted):
        w = myc.jit(fit, backend=backend)(loss, np.zeros(5), X, 3)
        np.testing.assert_allclose(w, fit(loss, np.zeros(5), X, 3), rtol=1e-12)


def value_and_slope(f, w, x):
    v, g = myc.value_and_grad(f, argnums=1)(w, x)
    return v + np.sum(g)


def descend_inside(w, x):
    return np.sum(fit(quad, w, x, 2) ** 2)


def fit_made_inside(w, x):
    c = 2.0
    return fit(lambda a, b: c * np.sum((a - b) ** 2), w, x, 1)


def test_transform_options_of_a_function_argument_and_what_is_refused():
    w = np.linspace(0.0, 0.4, 5)
    got = myc.jit(value_and_slope)(shifted, w, X)
    v, g = myc.value_and_grad(shifted, argnums=1)(w, X)
    np.testing.assert_allclose(got, v + np.sum(g), rtol=1e-12)
    # a derivative of a program that transforms a function passed in: refused, clearly
    with pytest.raises(MycTypeError, match="itself differentiated") as info:
        myc.grad(descend_inside)(w, X)
    assert info.value.loc.line == fit.__code__.co_firstlineno + 2
    with pytest.raises(MycTypeError, match="made inside the program"):
        myc.jit(fit_made_inside)(w, X)


def test_the_same_name_in_two_places_is_two_functions(tmp_path, monkeypatch):
    # two functions both called ``g``: the signature (and the disk cache) tells them apart
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))

    def make(k):
        def g(v):
            return v * k
        return g

    for k in (2.0, 3.0, 2.0):
        assert myc.jit(apply_sum)(make(k), X) == pytest.approx(apply_sum(make(k), X))


def test_a_function_myc_cannot_compile_is_named():
    def reads_a_file(v):
        return open(v)

    with pytest.raises(MycTypeError, match="argument 1 .'f'. is the function 'test_a_"):
        myc.jit(apply_sum)(reads_a_file, X)
    with pytest.raises(MycTypeError, match="unsupported type"):
        myc.jit(apply_sum)(print, X)  # a builtin myc does not know


def test_a_new_lambda_per_call_compiles_per_call_and_says_so():
    jf = myc.jit(apply_sum)
    with pytest.warns(RuntimeWarning, match="argument 'f' took 8 functions"):
        for k in range(8):
            assert jf(lambda v, k=k: v * k, X) == pytest.approx(np.sum(X) * k)


class Quadratic:
    def __init__(self, scale, loss=None):
        self.scale = scale
        self.f = loss

    def loss(self, w, x):
        return self.scale * np.sum((w - x) ** 2)

    def step(self, w, x):
        return w - 0.1 * myc.grad(self.loss)(w, x)

    def both(self, w, x):
        v, (gw, gx) = myc.value_and_grad(self.loss, argnums=(0, 1))(w, x)
        return v + np.sum(gw) - np.sum(gx)

    def through_attribute(self, w, x):
        return myc.grad(self.f, argnums=1)(w, x)


def run_step(model, w, x):
    return model.step(w, x)


def run_both(model, w, x):
    return model.both(w, x)


def run_attribute(model, w, x):
    return model.through_attribute(w, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_transform_of_a_method_of_an_object_argument_runs(backend):
    # (``self`` is the transformed method's first parameter: argnums count past it)
    w = np.linspace(0.0, 0.4, 5)
    m = Quadratic(3.0, shifted)
    for run in (run_step, run_both, run_attribute):
        np.testing.assert_allclose(myc.jit(run, backend=backend)(m, w, X), run(m, w, X),
                                   rtol=1e-12)
