"""The ninth corpus (tests/realworld/wild9): "from scratch" teaching code.  Each
program's gradient against central differences and its value against NumPy (cpu), the
interpreter backend's value and gradient, myc's gradients against the programs' own
hand-written backward passes, and what stays refused names the user's line."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import myc
from tests.realworld.wild.run import check, check_interpreter
from tests.realworld.wild9 import PROGRAMS

PACKAGE = "tests.realworld.wild9"
REFUSED = {"naive_bayes": "np.unique is not supported by myc on array or float data"}


def _mod(name):
    return importlib.import_module(f"{PACKAGE}.{name}")


@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in REFUSED])
def test_value_and_gradient_match_numpy(name):
    check(name, PACKAGE)


@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in REFUSED])
def test_interpreter_backend_agrees(name):
    check_interpreter(_mod(name).case())


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_at_the_users_line(name):
    case = _mod(name).case()
    with pytest.raises(myc.MycError, match=REFUSED[name]) as info:
        myc.grad(case["fn"], case["argnums"])(*case["args"])
    assert info.value.loc.filename.endswith(f"{name}.py")


def test_deep_nn_gradient_equals_the_hand_written_backward_pass():
    m = _mod("dlai_deep_nn")
    X, Y = m.make_data()
    params = m.initialize_parameters_deep([5, 7, 4, 1])
    g = myc.grad(m.cost_of)(params, X, Y)
    hand = m.hand_gradients(params, X, Y)
    assert list(g) == list(params)
    for k, v in g.items():
        np.testing.assert_allclose(v, hand["d" + k], rtol=1e-10, atol=1e-13)
    # the notebook's update_parameters starts with params.copy() (a dict's copy): refused
    # at its line, naming dict(d)
    with pytest.raises(myc.MycError, match=r"'dict.copy\(\)' is not supported") as info:
        myc.jit(m.train_step)(params, X, Y)
    assert "params.copy()" in str(info.value)


def test_nnfs_gradient_equals_the_books_backward_pass_and_accuracy():
    m = _mod("nnfs_classes")
    d1, d2, X, y = m.case()["args"]
    g1, g2 = myc.grad(m.loss_of, (0, 1))(d1, d2, X, y)
    (w1, b1), (w2, b2) = m.backward_pass(d1, d2, X, y)
    for got, want in ((g1.weights, w1), (g1.biases, b1), (g2.weights, w2), (g2.biases, b2)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-13)
    assert myc.jit(m.accuracy_of)(d1, d2, X, y) == m.accuracy_of(d1, d2, X, y)
    onehot = np.eye(3)[y]  # the len(y_true.shape) == 2 branch
    assert myc.jit(m.loss_of)(d1, d2, X, onehot) == pytest.approx(
        m.loss_of(d1, d2, X, onehot), rel=1e-13)


def test_uint8_labels_are_refused_at_the_call_naming_the_argument():
    m = _mod("nnfs_classes")
    d1, d2, X, y = m.case()["args"]
    with pytest.raises(myc.MycError, match="argument 4 .'y'. is an array of unsupported "
                       "dtype uint8"):
        myc.jit(m.loss_of)(d1, d2, X, y.astype(np.uint8))


def test_mlfs_gradient_equals_the_repositorys_backward_pass():
    m = _mod("mlfs_layers")
    X, y = m.make_data()
    model = m.MultilayerPerceptron(4, 8, 3)
    g = myc.grad(m.total_loss)(model, X, y)
    gw, gw0, gv, gv0 = model.manual_gradients(X, y)
    # the repository's output layer uses the softmax's diagonal p * (1 - p) only (not
    # the full Jacobian): its hand-written gradient differs from the loss's true one
    assert np.abs(g.V - gv).max() > 1e-3
    np.testing.assert_allclose(g.W.shape, gw.shape)


def test_blog_network_trains_and_its_feedforward_compiles():
    m = _mod("two_layer_blog")
    nn = m.make_network()
    before = m.squared_error(nn)
    g = myc.grad(m.squared_error)(nn)
    nn.feedforward()
    nn.backprop()  # the blog's step is gradient *ascent* on -loss: d_weights = -grad / 1
    assert m.squared_error(nn) < before
    assert type(g) is m.NeuralNetwork


def test_logistic_regression_gradient_equals_the_hand_written_one():
    m = _mod("logreg_scratch")
    X, y = m.make_data()
    theta = np.array([[0.1], [-0.2], [0.3], [0.05]])
    np.testing.assert_allclose(myc.grad(m.cost_function)(theta, X, y),
                               m.gradient(theta, X, y), rtol=1e-10)
    t1, hist = m.gradient_descent(X, y, theta, 0.5, 30)
    t2, hist2 = myc.jit(m.gradient_descent)(X, y, theta, 0.5, 30)
    np.testing.assert_allclose(t2, t1, rtol=1e-12)
    np.testing.assert_allclose(hist2, hist, rtol=1e-12)


def test_batchnorm_running_statistics_are_not_written_into_the_callers_dict():
    m = _mod("batchnorm_running")
    params, X, y = m.make_data()
    bn, bn_myc = {"mode": "train"}, {"mode": "train"}
    assert myc.jit(m.loss)(params, X, y, bn_myc) == pytest.approx(
        m.loss(params, X, y, bn), rel=1e-13)
    assert "running_mean" in bn        # CPython's function changed the caller's dict
    assert "running_mean" not in bn_myc  # myc never changes its arguments (docs/python.md)
