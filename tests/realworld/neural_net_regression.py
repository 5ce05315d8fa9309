"""Regression with a small tanh MLP: a Gaussian likelihood (``norm.logpdf``) plus a
Gaussian prior over all weights, the weights flattened by ``myc.misc.flatten``; the
nonlinearity is a default argument."""

import itertools

import numpy as np
import numpy.random as npr
from scipy.stats import norm

from myc import grad
from myc.misc import flatten
from myc.misc.optimizers import adam


def random_layers(scale, widths, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return [(rs.randn(fan_in, fan_out) * scale, rs.randn(fan_out) * scale)
            for fan_in, fan_out in itertools.pairwise(widths)]


def mlp(layers, x, act=np.tanh):
    for W, b in layers:
        z = np.dot(x, W) + b
        x = act(z)
    return z


def log_prior(layers, sd):
    v, _ = flatten(layers)
    return np.sum(norm.logpdf(v, 0, sd))


def log_lik(layers, x, y, noise_sd=0.1):
    return np.sum(norm.logpdf(mlp(layers, x), y, noise_sd))


def gap_data(n=80, noise=0.1):
    rs = npr.RandomState(0)
    half = n // 2
    x = np.concatenate([np.linspace(0, 3, num=half), np.linspace(6, 8, num=half)])
    y = np.cos(x) + rs.randn(n) * noise
    x = ((x - 4.0) / 2.0)[:, np.newaxis]
    return x, y[:, np.newaxis] / 2.0


def build(n):
    layers = random_layers(0.1, widths=[1, 4, 4, 1])
    x, y = gap_data(n=n)
    loss = lambda layers, step: -log_lik(layers, x, y) - log_prior(layers, 10.0)
    return loss, layers


def train(steps=200):
    loss, layers = build(80)
    return adam(grad(loss), layers, step_size=0.01, num_iters=steps)


def case():
    loss, layers = build(8)
    return dict(fn=loss, args=(layers, 0), argnums=0)
