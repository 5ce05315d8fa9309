"""A mini-batch MLP classifier trained by gradient steps, written as NumPy code that
runs unchanged under CPython: each step's batch is a slice of the training set chosen
by the step's number (``step % batches``), so the step -- an int argument -- decides
the slice's bounds but never its length.  The program of issue 15 (real NumPy code) and
issue 16 (an int specialized by value only where its value decides shapes): one
compiled program serves every step (``myc.infer.dynslice``)."""

from __future__ import annotations

import math

import numpy as np


def init_layers(widths, scale, rs):
    return [(scale * rs.randn(m, n), scale * rs.randn(n)) for m, n in zip(widths[:-1], widths[1:])]


def forward(layers, x):
    for w, b in layers:
        z = x @ w + b
        x = np.tanh(z)
    zmax = np.max(z, axis=1, keepdims=True)
    return z - zmax - np.log(np.sum(np.exp(z - zmax), axis=1, keepdims=True))


def penalty(layers):
    return sum(np.sum(w * w) + np.sum(b * b) for w, b in layers)


def build(n_images=40, n_features=12, widths=(8, 5), batch=8, seed=0, l2=0.01):
    """The training objective ``loss(layers, step)``, its data and first parameters."""
    rs = np.random.RandomState(seed)
    images = rs.randn(n_images, n_features)
    labels = np.eye(widths[-1])[rs.randint(0, widths[-1], n_images)]
    batches = int(math.ceil(n_images / batch))

    def window(step):
        k = step % batches
        return slice(k * batch, (k + 1) * batch)

    def loss(layers, step):
        rows = window(step)
        logp = forward(layers, images[rows])
        return -(np.sum(logp * labels[rows]) - l2 * penalty(layers))

    layers = init_layers((n_features, *widths), 0.1, rs)
    return loss, layers


def train(gradient, layers, steps, lr=0.01):
    """Plain gradient steps; the objective's gradient at each step's batch."""
    for step in range(steps):
        g = gradient(layers, step)
        layers = [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(layers, g)]
    return layers

