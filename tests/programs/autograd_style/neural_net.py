"""A multilayer perceptron whose parameters are a list of (weights, biases) pairs."""

import numpy as np


def init_random_params(scale, layer_sizes, rs):
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1)


def l2_norm(params):
    return sum(np.sum(W ** 2) + np.sum(b ** 2) for W, b in params)


def log_posterior(params, inputs, targets, l2_reg):
    log_prior = -l2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def objective(params, inputs, targets):
    return -log_posterior(params, inputs, targets, 0.1)


_rs = np.random.RandomState(1)
PARAMS = init_random_params(0.3, [4, 5, 3], _rs)
INPUTS = _rs.randn(6, 4)
TARGETS = np.eye(3)[_rs.randint(0, 3, 6)]
CASE = dict(fn=objective, args=(PARAMS, INPUTS, TARGETS), argnums=0)
