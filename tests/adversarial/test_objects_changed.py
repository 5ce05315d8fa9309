"""Objects made and changed inside compiled code, as "from scratch" teaching code writes
them (tests/realworld/wild9): ``Cls(args)`` running ``__init__``, methods that store
``self.inputs``/``self.output``, ``self.activation.forward(x)`` on an attribute, calls in
loops and branches.  Each value against CPython, each gradient against central
differences; what CPython would show through another name is refused at the line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from myc.errors import MycNameError, MycValueError
from tests.adversarial.common import fd_grad


class Dense:
    def __init__(self, n_in, n_out, scale=0.5):
        self.weights = scale * np.ones((n_in, n_out)) / n_in
        self.biases = np.zeros((1, n_out))

    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases


class Relu:
    def forward(self, inputs):
        self.output = np.maximum(0, inputs)


class Head:
    def __init__(self):
        self.activation = Relu()

    def forward(self, inputs):
        self.activation.forward(inputs)      # an attribute's method changing it
        self.output = self.activation.output
        return self.output


class Acc:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v


def _net(w, x):
    d = Dense(3, 2)
    d.weights = d.weights + w
    d.forward(x)
    h = Head()
    return np.sum(h.forward(d.output) ** 2)


def _layer_arg(layer, x):
    layer.forward(x)
    return np.sum(layer.output ** 2) + np.sum(layer.inputs)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_objects_made_inside_and_their_methods_setting_attributes(backend):
    x = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]])
    w = np.array([[0.2, -0.4], [0.1, 0.3], [-0.5, 0.2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not the evaluator's fallback
        assert myc.jit(_net, backend=backend)(w, x) == pytest.approx(_net(w, x), rel=1e-13)
        g = myc.grad(_net, backend=backend)(w, x)
    np.testing.assert_allclose(g, fd_grad(lambda v: _net(v, x), (w,), 0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_a_method_setting_attributes_of_an_argument_object(backend):
    x = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]])
    layer = Dense(3, 2)
    got = myc.jit(_layer_arg, backend=backend)(layer, x)
    assert not hasattr(layer, "output")  # myc never changes its arguments (docs/python.md)
    assert got == pytest.approx(_layer_arg(Dense(3, 2), x), rel=1e-13)
    g = myc.grad(_layer_arg, backend=backend)(layer, x)
    assert type(g) is Dense and set(vars(g)) == {"weights", "biases"}

    def f(W):
        d = Dense(3, 2)
        d.weights = W
        return _layer_arg(d, x)

    np.testing.assert_allclose(g.weights, fd_grad(f, (layer.weights,), 0), rtol=1e-6)


def _in_loops(x, n):
    a = Acc()
    for i in range(3):
        a.add(np.sum(x) * i)
    b = Acc()
    k = 0
    while np.sum(x) * k < n:      # a loop on data: the object is loop state
        b.add(np.sum(x ** 2))
        k += 1
    return a.total + b.total


def _in_branches(x, flag):
    a = Acc()
    if flag:
        a.add(np.sum(x))
    else:
        a.add(1.0)
    if np.sum(x) > 2:             # on data: both sides' objects merged
        a.add(5.0 * x[0])
    return a.total


def test_objects_changed_in_loops_and_branches_match_python():
    x = np.array([1.0, 0.5, 0.75])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert myc.jit(_in_loops)(x, 10.0) == pytest.approx(_in_loops(x, 10.0), rel=1e-13)
        for flag in (True, False):
            for v in (x, -x):
                assert myc.jit(_in_branches)(v, flag) == pytest.approx(
                    _in_branches(v, flag), rel=1e-13)
    np.testing.assert_allclose(myc.grad(_in_loops)(x, 10.0),
                               fd_grad(lambda v: _in_loops(v, 10.0), (x,), 0), rtol=1e-6)
    np.testing.assert_allclose(myc.grad(_in_branches)(x, True),
                               fd_grad(lambda v: _in_branches(v, True), (x,), 0), rtol=1e-6)


class Batch:
    """Nielsen's ``update_mini_batch`` shape: the attribute write follows a loop that
    calls another method of ``self``."""

    def __init__(self):
        self.w = np.ones(2)

    def grad_of(self, x):
        return self.w * x

    def update(self, batch, eta):
        total = np.zeros(2)
        for x in batch:
            total = total + self.grad_of(x)
        self.w = self.w - eta * total


def _write_after_loop(batch):
    net = Batch()
    net.update(batch, 0.5)      # the method's write after its loop
    total = np.zeros(2)
    for x in batch:             # the same inline: an argument object's attribute
        total = total + net.grad_of(x)
    net.w = net.w - total
    return net.w


def test_an_attribute_written_after_a_loop_reaches_the_caller():
    """Was silently the old object: the write after the loop was not seen as a write
    into ``self`` (``self`` after the loop is the loop's result), so no write-back."""
    batch = [np.ones(2), np.arange(2.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for backend in ("cpu", "interp"):
            np.testing.assert_allclose(myc.jit(_write_after_loop, backend=backend)(batch),
                                       _write_after_loop(batch), rtol=1e-15)


def _alias(x):
    a = Acc()
    c = a
    a.add(np.sum(x))
    return c.total          # CPython: the changed object


def _in_a_list(x):
    a = Acc()
    held = [a]
    a.add(np.sum(x))
    return held[0].total


def _loop_variable(x):
    accs = [Acc(), Acc()]
    for a in accs:
        a.add(np.sum(x))    # CPython changes the objects in the list
    return accs[0].total


GLOBAL_ACC = Acc()


def _global(x):
    GLOBAL_ACC.add(np.sum(x))
    return GLOBAL_ACC.total


@pytest.mark.parametrize("fn,line,match", [
    (_alias, 3, "'c' may be changed in place by the call"),
    (_in_a_list, 3, "'held' may be changed in place by the call"),
    (_loop_variable, 3, "changes the object 'a'"),
    (_global, 1, "changes the object 'GLOBAL_ACC'"),
])
def test_what_cpython_would_show_through_another_name_is_refused(fn, line, match):
    x = np.ones(3)
    fn(x)  # CPython runs it
    with pytest.raises(MycValueError, match=match) as info:
        myc.jit(fn)(x)
    assert "add() changes its argument 'self' in place (self.total" in str(info.value)
    assert info.value.loc.line == fn.__code__.co_firstlineno + line  # the call's line


class WithProperty:
    def __init__(self, w):
        self.w = w

    @property
    def norm(self):
        return np.sum(self.w ** 2)


def _made_with_property(x):
    return WithProperty(x).norm


def test_constructing_a_class_with_properties_is_refused_at_the_line():
    with pytest.raises(MycNameError, match="class 'WithProperty' .which has properties") as info:
        myc.jit(_made_with_property)(np.ones(2))
    assert info.value.loc.line == _made_with_property.__code__.co_firstlineno + 1


class Stats:
    def fit(self, X, labels, n_classes):
        self.mean = np.zeros((n_classes, X.shape[1]))
        self.count = np.zeros(n_classes)
        for c in range(n_classes):
            w = (labels == c).astype(float)
            self.count[c] = np.sum(w)
            self.mean[c, :] = w @ X / np.sum(w)
        return self


class Shared:
    def __init__(self, w):
        self.w = w                 # the caller's array

    def zero_first(self):
        self.w[0] = 0.0            # CPython changes the caller's array


def _fit_stats(X, labels):
    s = Stats().fit(X, labels, 3)
    return np.sum(s.mean ** 2) + np.sum(s.count)


def _shared(w):
    s = Shared(w)
    s.zero_first()
    return np.sum(w)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_item_assignment_through_an_attribute_the_method_made(backend):
    rng = np.random.default_rng(0)
    X, labels = rng.normal(size=(9, 2)), np.arange(9) % 3
    assert myc.jit(_fit_stats, backend=backend)(X, labels) == pytest.approx(
        _fit_stats(X, labels), rel=1e-13)
    np.testing.assert_allclose(myc.grad(_fit_stats, backend=backend)(X, labels),
                               fd_grad(lambda v: _fit_stats(v, labels), (X,), 0), rtol=1e-6)


def test_item_assignment_through_an_attribute_it_was_given_is_refused():
    w = np.ones(3)
    assert _shared(w.copy()) == 2.0  # CPython: the caller's w changed
    with pytest.raises(myc.MycError, match=r"item assignment through an attribute "
                       r"\(self.w\[...\] = ...\)") as info:
        myc.jit(_shared)(w)
    assert "zero_first" in str(info.value) or info.value.loc.line == \
        _shared.__code__.co_firstlineno + 2


class Viewed:
    def fill(self, x):
        self.buf = np.zeros(3)
        first = self.buf[:2]       # a view: CPython's shows the write below
        self.buf[0] = np.sum(x)
        return first


def _viewed(x):
    return np.sum(Viewed().fill(x))


def test_a_view_of_an_attribute_written_in_place_is_refused_when_read():
    with pytest.raises(MycValueError, match="'self.buf' was updated in place") as info:
        myc.jit(_viewed)(np.ones(3))
    assert info.value.loc.line == Viewed.fill.__code__.co_firstlineno + 4
