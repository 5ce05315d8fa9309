"""A generative adversarial net: generator and discriminator are lists of (W, b)
pairs with batch normalisation in the hidden layers; the minimax objective is
differentiated in both players at once (``grad`` with a tuple ``argnum``), and a
two-sided Adam written over ``myc.misc.flatten`` ascends one and descends the other."""

import itertools

import numpy as np
import numpy.random as npr

from myc import grad
from myc.misc import flatten


def relu(u):
    return np.maximum(0, u)


def sigmoid(u):
    return 0.5 * (1.0 + np.tanh(u))


def log_sigmoid(u):
    return u - np.logaddexp(0, u)


def random_layers(scale, widths, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return [(scale * rs.randn(fan_in, fan_out), scale * rs.randn(fan_out))
            for fan_in, fan_out in itertools.pairwise(widths)]


def standardise(h):
    centred = h - np.mean(h, axis=0, keepdims=True)
    return centred / (1 + np.std(h, axis=0, keepdims=True))


def net(layers, x):
    W_in, b_in = layers[0]
    h = relu(np.dot(x, W_in) + b_in)
    for W, b in layers[1:-1]:
        h = relu(standardise(np.dot(h, W) + b))
    W_out, b_out = layers[-1]
    return np.dot(h, W_out) + b_out


def fake_batch(gen, n, noise_dim, rs):
    return sigmoid(net(gen, rs.rand(n, noise_dim)))


def game_value(gen, disc, real, n, noise_dim, rs):
    fake = fake_batch(gen, n, noise_dim, rs)
    return np.mean(log_sigmoid(net(disc, real))) - np.mean(log_sigmoid(net(disc, fake)))


def adam_two_sided(slopes, up0, down0, steps=100, rate_up=0.001, rate_down=0.001,
                   b1=0.9, b2=0.999, eps=1e-8):
    """Adam ascending in the first player's parameters and descending in the second's."""
    up, unflat_up = flatten(up0)
    down, unflat_down = flatten(down0)
    moments = {"up": [np.zeros(len(up)), np.zeros(len(up))],
               "down": [np.zeros(len(down)), np.zeros(len(down))]}

    def scaled(key, g, i):
        m, v = moments[key]
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        moments[key] = [m, v]
        return (m / (1 - b1 ** (i + 1))) / (np.sqrt(v / (1 - b2 ** (i + 1))) + eps)

    for i in range(steps):
        g_up, g_down = slopes(unflat_up(up), unflat_down(down), i)
        up = up + rate_up * scaled("up", flatten(g_up)[0], i)
        down = down - rate_down * scaled("down", flatten(g_down)[0], i)
    return unflat_up(up), unflat_down(down)


def case():
    noise_dim, batch = 3, 4
    rs = npr.RandomState(4)
    images = rs.rand(8, 6)  # a small stand-in for the example's MNIST digits
    gen0 = random_layers(0.1, [noise_dim, 5, 6])
    disc0 = random_layers(0.1, [6, 5, 1])
    n_batches = int(np.ceil(len(images) / batch))

    def rows(i):
        j = i % n_batches
        return slice(j * batch, (j + 1) * batch)

    noise_rs = npr.RandomState(0)

    def value(gen, disc, i):
        return game_value(gen, disc, images[rows(i)], batch, noise_dim, noise_rs)

    both = grad(value, argnum=(0, 1))
    return dict(fn=value, args=(gen0, disc0, 0), argnums=(0, 1), gradient=both,
                train=lambda steps: adam_two_sided(both, gen0, disc0, steps=steps))
