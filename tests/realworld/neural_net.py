"""A tanh MLP classifier: parameters are a list of (W, b) pairs built by a list
comprehension, the L2 penalty flattens them with ``myc.misc.flatten``, the output is
normalised with scipy's ``logsumexp``."""

import itertools

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp

from myc import grad
from myc.misc.flatten import flatten
from myc.misc.optimizers import adam


def random_layers(scale, widths, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return [(scale * rs.randn(fan_in, fan_out), scale * rs.randn(fan_out))
            for fan_in, fan_out in itertools.pairwise(widths)]


def class_log_probs(layers, x):
    for W, b in layers:
        z = np.dot(x, W) + b
        x = np.tanh(z)
    return z - logsumexp(z, axis=1, keepdims=True)


def squared_norm(layers):
    v, _ = flatten(layers)
    return np.dot(v, v)


def log_posterior(layers, x, onehot, penalty):
    return np.sum(class_log_probs(layers, x) * onehot) - penalty * squared_norm(layers)


def hit_rate(layers, x, onehot):
    return np.mean(np.argmax(class_log_probs(layers, x), axis=1) == np.argmax(onehot, axis=1))


def build():
    rs = npr.RandomState(0)
    layers = random_layers(0.1, [6, 5, 3], rs)
    x = rs.randn(8, 6)
    onehot = np.eye(3)[rs.randint(0, 3, 8)]
    loss = lambda layers, step: -log_posterior(layers, x, onehot, 1.0)
    return loss, layers, x, onehot


def train(steps=100):
    loss, layers, x, onehot = build()
    trained = adam(grad(loss), layers, step_size=0.01, num_iters=steps)
    return hit_rate(trained, x, onehot)


def case():
    loss, layers, _, _ = build()
    return dict(fn=loss, args=(layers, 0), argnums=0)
