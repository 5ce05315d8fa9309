"""An L-layer network the way the deep-learning course notebooks write it: parameters in
a dict keyed ``"W" + str(l)``, ``initialize_parameters_deep(layer_dims)``,
``linear_activation_forward`` returning ``(A, (linear_cache, activation_cache))``,
``caches.append(cache)`` in ``L_model_forward``, ``compute_cost`` with ``np.multiply``
and ``np.squeeze``, and the hand-written ``L_model_backward`` filling
``grads["dA" + str(l)]``.  ``myc.grad`` of the cost w.r.t. the parameters dict is
checked against the hand-written backward pass (tests) and central differences."""

import numpy as np


def initialize_parameters_deep(layer_dims):
    np.random.seed(3)
    parameters = {}
    L = len(layer_dims)
    for l in range(1, L):
        parameters["W" + str(l)] = np.random.randn(layer_dims[l], layer_dims[l - 1]) * 0.3
        parameters["b" + str(l)] = np.zeros((layer_dims[l], 1))
        assert parameters["W" + str(l)].shape == (layer_dims[l], layer_dims[l - 1])
        assert parameters["b" + str(l)].shape == (layer_dims[l], 1)
    return parameters


def sigmoid(Z):
    A = 1 / (1 + np.exp(-Z))
    cache = Z
    return A, cache


def relu(Z):
    A = np.maximum(0, Z)
    assert A.shape == Z.shape
    cache = Z
    return A, cache


def relu_backward(dA, cache):
    Z = cache
    dZ = np.array(dA, copy=True)
    dZ[Z <= 0] = 0
    return dZ


def sigmoid_backward(dA, cache):
    Z = cache
    s = 1 / (1 + np.exp(-Z))
    dZ = dA * s * (1 - s)
    return dZ


def linear_forward(A, W, b):
    Z = np.dot(W, A) + b
    cache = (A, W, b)
    return Z, cache


def linear_activation_forward(A_prev, W, b, activation):
    if activation == "sigmoid":
        Z, linear_cache = linear_forward(A_prev, W, b)
        A, activation_cache = sigmoid(Z)
    elif activation == "relu":
        Z, linear_cache = linear_forward(A_prev, W, b)
        A, activation_cache = relu(Z)
    cache = (linear_cache, activation_cache)
    return A, cache


def L_model_forward(X, parameters):
    caches = []
    A = X
    L = len(parameters) // 2
    for l in range(1, L):
        A_prev = A
        A, cache = linear_activation_forward(A_prev, parameters["W" + str(l)],
                                             parameters["b" + str(l)], activation="relu")
        caches.append(cache)
    AL, cache = linear_activation_forward(A, parameters["W" + str(L)],
                                          parameters["b" + str(L)], activation="sigmoid")
    caches.append(cache)
    assert AL.shape == (1, X.shape[1])
    return AL, caches


def compute_cost(AL, Y):
    m = Y.shape[1]
    cost = (-1 / m) * np.sum(np.multiply(Y, np.log(AL)) + np.multiply(1 - Y, np.log(1 - AL)))
    cost = np.squeeze(cost)
    assert cost.shape == ()
    return cost


def linear_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    dW = 1 / m * np.dot(dZ, A_prev.T)
    db = 1 / m * np.sum(dZ, axis=1, keepdims=True)
    dA_prev = np.dot(W.T, dZ)
    return dA_prev, dW, db


def linear_activation_backward(dA, cache, activation):
    linear_cache, activation_cache = cache
    if activation == "relu":
        dZ = relu_backward(dA, activation_cache)
    elif activation == "sigmoid":
        dZ = sigmoid_backward(dA, activation_cache)
    dA_prev, dW, db = linear_backward(dZ, linear_cache)
    return dA_prev, dW, db


def L_model_backward(AL, Y, caches):
    grads = {}
    L = len(caches)
    Y = Y.reshape(AL.shape)
    dAL = - (np.divide(Y, AL) - np.divide(1 - Y, 1 - AL))
    current_cache = caches[L - 1]
    grads["dA" + str(L - 1)], grads["dW" + str(L)], grads["db" + str(L)] = \
        linear_activation_backward(dAL, current_cache, "sigmoid")
    for l in reversed(range(L - 1)):
        current_cache = caches[l]
        dA_prev_temp, dW_temp, db_temp = linear_activation_backward(
            grads["dA" + str(l + 1)], current_cache, "relu")
        grads["dA" + str(l)] = dA_prev_temp
        grads["dW" + str(l + 1)] = dW_temp
        grads["db" + str(l + 1)] = db_temp
    return grads


def update_parameters(params, grads, learning_rate):
    parameters = params.copy()
    L = len(parameters) // 2
    for l in range(L):
        parameters["W" + str(l + 1)] = parameters["W" + str(l + 1)] - \
            learning_rate * grads["dW" + str(l + 1)]
        parameters["b" + str(l + 1)] = parameters["b" + str(l + 1)] - \
            learning_rate * grads["db" + str(l + 1)]
    return parameters


def cost_of(parameters, X, Y):
    """What a user differentiates: the cost of the forward pass."""
    AL, caches = L_model_forward(X, parameters)
    return compute_cost(AL, Y)


def hand_gradients(parameters, X, Y):
    """The notebook's own backward pass, keyed ``dW1``, ``db1``, ..."""
    AL, caches = L_model_forward(X, parameters)
    return L_model_backward(AL, Y, caches)


def train_step(parameters, X, Y, learning_rate=0.1):
    AL, caches = L_model_forward(X, parameters)
    cost = compute_cost(AL, Y)
    grads = L_model_backward(AL, Y, caches)
    return update_parameters(parameters, grads, learning_rate), cost


def make_data(m=40, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5, m))
    Y = ((X[0] * X[1] + X[2]) > 0).astype(float).reshape(1, m)
    return X, Y


def case():
    X, Y = make_data()
    return dict(fn=cost_of, args=(initialize_parameters_deep([5, 7, 4, 1]), X, Y), argnums=0)
