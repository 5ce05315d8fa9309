"""Training with an optimizer written as a class, as ``torch.optim.Adam`` is used:
``opt = Adam(params, lr=...)`` keeps its moments in lists, ``opt.step(grads)`` updates
the parameter arrays in place and counts steps in ``self.t``; the loop is plain Python
around ``myc.value_and_grad`` of a loss over a list of ``(W, b)`` pairs.  Hyper-
parameter tuning differentiates the loss reached after a few steps of a functional
twin of the same optimizer (``AdamState`` a NamedTuple, ``update`` a pure method)
with respect to the starting parameters."""

from typing import NamedTuple

import numpy as np

import myc


class Adam:
    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8):
        self.params = params
        self.lr = lr
        self.b1, self.b2 = betas
        self.eps = eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            m_hat = m / (1 - self.b1 ** self.t)
            v_hat = v / (1 - self.b2 ** self.t)
            p -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


class AdamState(NamedTuple):
    m: list
    v: list
    t: int


class FunctionalAdam:
    def __init__(self, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps

    def init(self, params):
        return AdamState([np.zeros_like(p) for p in params],
                         [np.zeros_like(p) for p in params], 0)

    def update(self, params, grads, state):
        t = state.t + 1
        m = [self.b1 * m + (1 - self.b1) * g for m, g in zip(state.m, grads)]
        v = [self.b2 * v + (1 - self.b2) * g ** 2 for v, g in zip(state.v, grads)]
        new = [p - self.lr * (mi / (1 - self.b1 ** t)) /
               (np.sqrt(vi / (1 - self.b2 ** t)) + self.eps)
               for p, mi, vi in zip(params, m, v)]
        return new, AdamState(m, v, t)


def flat_params(layers):
    return [p for layer in layers for p in layer]


def as_layers(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def mse_loss(flat, x, y):
    h = x
    layers = as_layers(flat)
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    W, b = layers[-1]
    return np.mean((h @ W + b - y) ** 2)


def unrolled_loss(flat, x, y, opt, steps=4):
    g = myc.grad(mse_loss)
    state = opt.init(flat)
    for _ in range(steps):
        flat, state = opt.update(flat, g(flat, x, y), state)
    return mse_loss(flat, x, y)


def make_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 1))
    return x, np.sin(2 * x) + 0.1 * rng.normal(size=(n, 1))


def init_params(sizes=(1, 12, 12, 1), seed=3):
    rng = np.random.default_rng(seed)
    return flat_params([(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
                        for m, n in zip(sizes[:-1], sizes[1:])])


def train(params, x, y, steps=100, lr=0.02):
    opt = Adam(params, lr=lr)
    value_and_grad = myc.value_and_grad(mse_loss)
    history = []
    for _ in range(steps):
        loss, grads = value_and_grad(params, x, y)
        opt.step(grads)
        history.append(loss)
    return params, history


def case():
    x, y = make_data()
    return dict(fn=unrolled_loss, args=(init_params(), x, y, FunctionalAdam(lr=0.05)),
                argnums=0)


if __name__ == "__main__":
    x, y = make_data()
    params, history = train(init_params(), x, y)
    print(history[0], history[-1])
