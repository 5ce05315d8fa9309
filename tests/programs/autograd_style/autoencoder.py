"""A tanh autoencoder whose layers are namedtuples; the encoder and decoder are lists."""

from collections import namedtuple

import numpy as np

Layer = namedtuple("Layer", ["weights", "bias"])


def apply_layers(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer.weights + layer.bias)
    return x


def reconstruction_loss(params, data):
    code = apply_layers(params["encoder"], data)
    recon = apply_layers(params["decoder"], code)
    penalty = 1e-3 * sum(np.sum(layer.weights ** 2) for layer in params["encoder"])
    return np.mean((recon - data) ** 2) + penalty


def init(sizes, rs):
    return [Layer(0.3 * rs.randn(m, n), np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]


_rs = np.random.RandomState(8)
PARAMS = {"encoder": init([4, 3, 2], _rs), "decoder": init([2, 3, 4], _rs)}
DATA = np.tanh(_rs.randn(7, 4))
CASE = dict(fn=reconstruction_loss, args=(PARAMS, DATA), argnums=0)
