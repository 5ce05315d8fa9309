"""Objects of the user's own classes in compiled code (myc/frontend/objects.py).

An object read from a global or a closure is a static structure whose methods (plain,
``__call__``, inherited, overridden) and properties are compiled in; one passed as an
argument is a tree of its data attributes, and ``grad`` with respect to it returns an
object of its class.  Values are checked against CPython on every backend (interp, cpu, opencl where PyOpenCL is installed), gradients
against central differences; what stays refused names the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycNameError, MycTypeError, MycValueError
from tests.adversarial.common import fd_grad
from tests.backends import BACKENDS

RS = np.random.RandomState(7)


class Affine:
    def __init__(self, W, b, scale=1.0):
        self.W = W
        self.b = b
        self.scale = scale
        self.label = "affine"  # a string: fine unless compiled code reads it

    def pre(self, x):
        return x @ self.W + self.b

    def activate(self, z):
        return z

    def __call__(self, x):
        return self.scale * self.activate(self.pre(x))

    @property
    def width(self):
        return self.W.shape[1]

    @property
    def l2(self):
        return np.sum(self.W ** 2) / self.width


class TanhAffine(Affine):
    def activate(self, z):
        return np.tanh(z)


class Model:
    def __init__(self, layers, offsets):
        self.layers = layers            # a list of objects
        self.offsets = offsets          # a dict keyed by the layer objects themselves
        self.shape = (2, 3)
        self.seen = bytearray(2)        # no value in compiled code: an error if read

    def predict(self, x, extra=0.0):
        for layer in self.layers:
            x = layer(x) + self.offsets[layer]
        return x + extra

    def penalty(self):
        return sum([layer.l2 for layer in self.layers])

    def rename(self, name):
        self.label = name               # mutating an object: refused if it runs
        return 0.0


L1 = TanhAffine(RS.randn(3, 4), RS.randn(4), 0.5)
L2 = Affine(RS.randn(4, 2), RS.randn(2))
MODEL = Model([L1, L2], {L1: 0.25, L2: -1.0})
X = RS.randn(5, 3)


def global_model_loss(x):
    return np.sum(MODEL.predict(x) ** 2) + 0.1 * MODEL.penalty() + L1.width


def make_closure_loss(model):
    def loss(x, extra):
        return np.mean(np.sin(model.predict(x, extra)))
    return loss


def argument_loss(layer, x):
    return np.sum(np.tanh(x @ layer.W + layer.b) * layer.scale)


@pytest.mark.parametrize("backend", BACKENDS)
def test_methods_call_property_inheritance_and_object_keys(backend):
    ref = global_model_loss(X)
    got = myc.jit(global_model_loss, backend=backend)(X)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    loss = make_closure_loss(MODEL)
    np.testing.assert_allclose(myc.jit(loss, backend=backend)(X, 0.5), loss(X, 0.5),
                               rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_methods_matches_finite_differences(backend):
    g = myc.grad(global_model_loss, backend=backend)(X)
    np.testing.assert_allclose(g, fd_grad(global_model_loss, (X,), 0), rtol=1e-6,
                               atol=1e-7)
    loss = make_closure_loss(MODEL)
    gx, ge = myc.grad(loss, argnums=(0, 1), backend=backend)(X, 0.5)
    np.testing.assert_allclose(gx, fd_grad(loss, (X, 0.5), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ge, fd_grad(loss, (X, 0.5), 1), rtol=1e-6, atol=1e-7)


def test_forward_mode_through_methods():
    t = RS.randn(*X.shape)
    y, dy = myc.jvp(global_model_loss, (X,), (t,))
    eps = 1e-6
    fd = (global_model_loss(X + eps * t) - global_model_loss(X - eps * t)) / (2 * eps)
    np.testing.assert_allclose(y, global_model_loss(X), rtol=1e-12)
    np.testing.assert_allclose(dy, fd, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_object_argument_is_a_tree_and_its_gradient_an_object(backend):
    layer = Affine(RS.randn(3, 2), RS.randn(2), 2)  # scale an int: configuration
    np.testing.assert_allclose(myc.jit(argument_loss, backend=backend)(layer, X),
                               argument_loss(layer, X), rtol=1e-12)
    g = myc.grad(argument_loss, backend=backend)(layer, X)
    assert type(g) is Affine
    assert g.scale is None and g.label is None  # an int and a str get no gradient

    def of_w(W):
        return argument_loss(Affine(W, layer.b, layer.scale), X)

    def of_b(b):
        return argument_loss(Affine(layer.W, b, layer.scale), X)

    np.testing.assert_allclose(g.W, fd_grad(of_w, (layer.W,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g.b, fd_grad(of_b, (layer.b,), 0), rtol=1e-6, atol=1e-8)
    # the caller's object is untouched
    assert layer.scale == 2 and layer.label == "affine"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_methods_of_an_argument_are_called_and_differentiated(backend):
    def f(layer, x):
        return np.sum(layer(x) ** 2)  # __call__ -> self.activate(self.pre(x))

    for layer in (Affine(RS.randn(3, 2), RS.randn(2)),
                  TanhAffine(RS.randn(3, 2), RS.randn(2), 0.5)):  # inherited too
        np.testing.assert_allclose(myc.jit(f, backend=backend)(layer, X), f(layer, X),
                                   rtol=1e-12)
        g = myc.grad(f, backend=backend)(layer, X)
        assert type(g) is type(layer)

        def of_w(W, layer=layer):
            return f(type(layer)(W, layer.b, layer.scale), X)

        np.testing.assert_allclose(g.W, fd_grad(of_w, (layer.W,), 0), rtol=1e-6, atol=1e-8)
        dx = myc.grad(f, argnums=1, backend=backend)(layer, X)
        np.testing.assert_allclose(dx, fd_grad(lambda x, layer=layer: f(layer, x), (X,), 0),
                                   rtol=1e-6, atol=1e-8)


def test_new_arrays_in_an_argument_object_reuse_its_program():
    def f(layer, x):
        return np.sum(layer(x))

    jf = myc.jit(f)
    for k in range(3):
        layer = Affine(RS.randn(3, 2), RS.randn(2))
        np.testing.assert_allclose(jf(layer, X), f(layer, X), rtol=1e-12)
    assert jf.stats().compiles == 1


class WithStatics:
    def __init__(self, w):
        self.w = w

    @staticmethod
    def act(v):
        return np.tanh(v)

    @classmethod
    def make(cls):  # myc refuses classmethods only if called
        return cls(1.0)

    def loss(self, x):
        return np.sum(self.act(self.w * x))


def test_static_methods_of_an_argument_compile_once():
    def f(m, x):
        return m.loss(x)

    jf = myc.jit(f)
    for k in range(4):
        m = WithStatics(RS.randn(3))
        np.testing.assert_allclose(jf(m, X[0]), f(m, X[0]), rtol=1e-12)
    assert jf.stats().compiles == 1  # (a new wrapper graph per call was a compile per call)


def test_static_properties_of_an_argument_are_computed_data_ones_refused_at_the_line():
    # a config's derived size (an int) is computed by Python at the call, as an int
    # attribute is read; a property giving data (it may depend on the arrays being
    # differentiated) is refused rather than frozen into a constant
    def f(layer, x):
        return np.sum(x) * layer.width

    np.testing.assert_allclose(myc.jit(f)(L2, X), f(L2, X), rtol=1e-12)
    np.testing.assert_allclose(myc.grad(f, argnums=1)(L2, X), np.full(X.shape, 2.0))

    def g(layer, x):
        return np.sum(x) * layer.l2

    with pytest.raises(MycTypeError, match="property giving float64 data") as info:
        myc.jit(g)(L2, X)
    assert info.value.loc.line == g.__code__.co_firstlineno + 1


def test_mutating_an_object_is_refused_at_the_call():
    def f(x):
        return MODEL.rename("new") + np.sum(x)

    # a global object changed by its method (self.label = name): CPython's MODEL would
    # show the change; myc reads globals as values, so the call is refused
    with pytest.raises(MycValueError, match="changes the object 'MODEL'.*changes its "
                       "argument 'self' in place") as info:
        myc.jit(f)(X)
    assert info.value.loc.line == f.__code__.co_firstlineno + 1
    assert not hasattr(MODEL, "label")


def test_constructing_an_object_inside_is_refused_at_its_line():
    def f(x):
        return np.sum(Affine(x, 0.0)(x))

    with pytest.raises(MycNameError, match="constructing an object of class 'Affine'"):
        myc.jit(f)(np.ones((2, 2)))


def test_an_unsupported_attribute_is_an_error_only_when_read():
    def f(x):
        return np.sum(L2(x)) + len(L2.label) + len(MODEL.seen)

    with pytest.raises(MycTypeError, match="seen") as info:
        myc.jit(f)(RS.randn(2, 4))
    assert info.value.loc.line == f.__code__.co_firstlineno + 1


class Integrator:
    """PyTorch-style calls: keywords, defaults and ``*args`` on methods (found writing
    tests/realworld/wild7: ``sampler.leapfrog(q, p, X, y)`` into ``def leapfrog(self,
    q, p, *data)`` was "takes 4 arguments but 5 were given")."""

    def __init__(self, f, eps):
        self.f, self.eps = f, eps

    def step(self, y, *args, scale=1.0, **extra):
        return y + scale * self.eps * self.f(y, *args) + extra.get("shift", 0.0)

    def run(self, y, n, *args, damping=0.0):
        for _ in range(n):
            y = self.step(y, *args, scale=1.0 - damping)
        return y


def _rate(y, a, b):
    return -a * y + b * np.sin(y)


def method_keywords_loss(y, integ, a, b):
    return np.sum(integ.run(y, 3, a, b, damping=0.25) ** 2) + \
        np.sum(integ.step(y, a, b, shift=0.5)) + np.sum(MODEL.predict(y[:, :3], extra=1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_keywords_defaults_and_star_args_in_method_calls(backend):
    integ = Integrator(_rate, 0.1)
    y = RS.randn(5, 4)
    args = (y, integ, 0.7, 0.3)
    np.testing.assert_allclose(myc.jit(method_keywords_loss, backend=backend)(*args),
                               method_keywords_loss(*args), rtol=1e-12)
    g = myc.grad(method_keywords_loss, argnums=(0, 1, 2), backend=backend)(*args)
    f = method_keywords_loss
    np.testing.assert_allclose(g[0], fd_grad(f, args, 0), rtol=1e-6, atol=1e-7)
    assert type(g[1]) is Integrator and g[1].f is None
    np.testing.assert_allclose(g[1].eps, fd_grad(
        lambda e: f(y, Integrator(_rate, e), 0.7, 0.3), (0.1,), 0), rtol=1e-6)
    np.testing.assert_allclose(g[2], fd_grad(f, args, 2), rtol=1e-6)
    t = RS.randn(*y.shape)
    _, dy = myc.jvp(lambda v: f(v, integ, 0.7, 0.3), (y,), (t,))
    np.testing.assert_allclose(dy, np.sum(fd_grad(f, args, 0) * t), rtol=1e-6)


def test_a_wrong_keyword_to_a_method_is_named():
    def f(x):
        return np.sum(MODEL.predict(x, bias=1.0))

    with pytest.raises(MycTypeError, match="unexpected keyword argument"):
        myc.jit(f)(X)


class _Node:
    def __init__(self, w):
        self.w = w
        self.me = self  # a reference cycle


def test_an_argument_object_that_refers_to_itself():
    """Read as a tree cut at myc's nesting limit: the call does not recurse forever,
    and what Python reads through the cycle is there."""
    node = _Node(np.ones(3))
    assert myc.jit(lambda n: np.sum(n.w))(node) == 3.0
    assert myc.jit(lambda n: np.sum(n.me.me.w))(node) == 3.0


def test_a_torch_like_array_is_not_an_object():
    """An array of another library (``__array__``/``__dlpack__``) is not walked as an
    object of a user's class."""
    from myc.frontend.objects import is_user_object

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.ones(2)

    assert not is_user_object(ArrayLike())
    assert is_user_object(_Node(1.0))
