"""The course's regularization notebook: a three-layer network whose
``forward_propagation_with_dropout`` draws ``D1 = np.random.rand(A1.shape[0], A1.shape[1])``
after ``np.random.seed(1)``, keeps ``D1 = (D1 < keep_prob).astype(int)`` and rescales
``A1 = A1 / keep_prob``, returning a long ``cache`` tuple; the cost
``compute_cost_with_regularization`` adds ``lambd / (2 * m)`` times the squared weights,
read ``parameters["W1"]``... by name; ``np.nansum`` of the cross-entropy's terms as the
notebook's ``compute_cost`` does.  Differentiated w.r.t. the parameters dict."""

import numpy as np


def relu(x):
    return np.maximum(0, x)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def initialize_parameters(layer_dims, seed=3):
    np.random.seed(seed)
    parameters = {}
    for l in range(1, len(layer_dims)):
        parameters['W' + str(l)] = np.random.randn(layer_dims[l], layer_dims[l - 1]) / \
            np.sqrt(layer_dims[l - 1])
        parameters['b' + str(l)] = np.zeros((layer_dims[l], 1))
    return parameters


def forward_propagation_with_dropout(X, parameters, keep_prob=0.5):
    np.random.seed(1)
    W1 = parameters["W1"]
    b1 = parameters["b1"]
    W2 = parameters["W2"]
    b2 = parameters["b2"]
    W3 = parameters["W3"]
    b3 = parameters["b3"]
    Z1 = np.dot(W1, X) + b1
    A1 = relu(Z1)
    D1 = np.random.rand(A1.shape[0], A1.shape[1])
    D1 = (D1 < keep_prob).astype(int)
    A1 = A1 * D1
    A1 = A1 / keep_prob
    Z2 = np.dot(W2, A1) + b2
    A2 = relu(Z2)
    D2 = np.random.rand(A2.shape[0], A2.shape[1])
    D2 = (D2 < keep_prob).astype(int)
    A2 = A2 * D2
    A2 = A2 / keep_prob
    Z3 = np.dot(W3, A2) + b3
    A3 = sigmoid(Z3)
    cache = (Z1, D1, A1, W1, b1, Z2, D2, A2, W2, b2, Z3, A3, W3, b3)
    return A3, cache


def compute_cost(a3, Y):
    m = Y.shape[1]
    logprobs = np.multiply(-np.log(a3), Y) + np.multiply(-np.log(1 - a3), 1 - Y)
    cost = 1. / m * np.nansum(logprobs)
    return cost


def compute_cost_with_regularization(A3, Y, parameters, lambd):
    m = Y.shape[1]
    W1 = parameters["W1"]
    W2 = parameters["W2"]
    W3 = parameters["W3"]
    cross_entropy_cost = compute_cost(A3, Y)
    L2_regularization_cost = (1. / m) * (lambd / 2) * (
        np.sum(np.square(W1)) + np.sum(np.square(W2)) + np.sum(np.square(W3)))
    cost = cross_entropy_cost + L2_regularization_cost
    return cost


def model_cost(parameters, X, Y, lambd=0.7, keep_prob=0.86):
    a3, cache = forward_propagation_with_dropout(X, parameters, keep_prob)
    return compute_cost_with_regularization(a3, Y, parameters, lambd)


def make_data(m=50, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2, m))
    Y = (np.sum(X ** 2, axis=0, keepdims=True) < 1.2).astype(float)
    return X, Y


def case():
    X, Y = make_data()
    return dict(fn=model_cost, args=(initialize_parameters([2, 12, 6, 1]), X, Y), argnums=0)
