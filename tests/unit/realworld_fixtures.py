"""Functions for tests/unit/test_realworld_features.py (myc compiles from source files)."""

import functools
from functools import partial

import numpy as np

from myc.misc import flatten


def batch_sum(x, it, batch):
    s = slice(it * batch, (it + 1) * batch)
    return np.sum(x[s] ** 2) + np.sum(x[slice(batch)])


def by_kind(data, w):
    if isinstance(data, list):
        return sum(map(lambda d: by_kind(d, w), data))
    if isinstance(data, (tuple, dict)):
        return 10.0 * np.sum(w)
    return np.sum(data * w)


def mapped(xs, ys, w):
    return sum(map(lambda a, b: np.sum(a * b * w), xs, ys))


def _affine(w, x, b, scale=1.0):
    return np.sum(np.tanh(x @ w + b)) * scale


def partial_fixed(w, xs):
    f = partial(_affine, w, b=0.5)
    return sum(map(f, xs))


def _star(w, *xs, **kw):
    return sum(np.sum(x * w) for x in xs) * kw.get("c", 1.0)


def partial_star(w, x):
    f = functools.partial(_star, w, c=2.0)
    return f(x, x)


def star_draw(m, rs):
    return np.sum(rs.randn(*m.shape) * m) + np.sum(rs.rand(2, *m.shape) * m)


def flat_loss(params):
    flat, _ = flatten(params)
    return np.sum(flat ** 2 * np.arange(flat.shape[0]))


def flat_unflatten(params):
    flat, unflatten = flatten(params)
    return unflatten(flat)


def _pairs(w):
    for i in range(len(w) - 1):
        yield w[i], w[i + 1]
        w = w * 2.0


def yields(w):
    tot = 0.0
    for a, b in _pairs(w):
        tot = tot + a * b

    def squares(n):
        for k in range(n):
            if k == 2:
                return
            yield w[k] ** 2

    return tot + sum(squares(3))


def _yield_value(w):
    x = yield w
    return x


def yield_expression(w):
    return list(_yield_value(w))


def quadratic(x, a):
    return np.sum(a * x ** 2) + np.sum(np.sin(x) * x[0])


def _simulate(x, ax=None):
    y = np.sum(x ** 2)
    if ax:
        ax.plot(x, y)
        plt.pause(f"{y}")  # noqa: F821 - matplotlib never imported, as in a script
    return y


def plotting_branch(x):
    return _simulate(x)


class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return x @ self.w


LAYERS = [Layer(np.ones((2, 2)))]


def object_loss(x):
    for layer in LAYERS:
        x = layer.forward(x)
    return np.sum(x)


def object_built_inside(x):
    layer = Layer(x)
    return np.sum(layer.forward(x))


def partial_draw(w, rs):
    f = partial(_affine, w, b=rs.randn(2))
    return f(np.ones((1, 3))) + f(np.ones((1, 3)))
