"""A Bayesian MLP fit by black-box VI: the network is vectorised over weight samples
(a generator yields each layer's weights cut from one flat row per sample, ``einsum``
applies them), with an RBF nonlinearity passed as a lambda."""

import itertools

import numpy as np
import numpy.random as npr

from myc.misc.optimizers import adam
from tests.realworld.black_box_svi import diag_gaussian_bbvi


def batched_mlp(sizes, l2, noise_var, act=np.tanh):
    dims = list(itertools.pairwise(sizes))
    n_weights = sum((a + 1) * b for a, b in dims)

    def layers(flat):
        S = len(flat)
        for a, b in dims:
            W = flat[:, :a * b].reshape((S, a, b))
            bias = flat[:, a * b:a * b + b].reshape((S, 1, b))
            yield W, bias
            flat = flat[:, (a + 1) * b:]

    def forward(flat, x):
        h = np.expand_dims(x, 0)
        for W, bias in layers(flat):
            pre = np.einsum("mnd,mdo->mno", h, W) + bias
            h = act(pre)
        return pre

    def log_joint(flat, x, y):
        prior = -l2 * np.sum(flat**2, axis=1)
        sq = np.sum((forward(flat, x) - y) ** 2, axis=1)[:, 0]
        return prior - sq / noise_var

    return n_weights, forward, log_joint


def gap_data(n=40, noise=0.1):
    rs = npr.RandomState(0)
    half = n // 2
    x = np.concatenate([np.linspace(0, 2, num=half), np.linspace(6, 8, num=half)])
    y = np.cos(x) + rs.randn(n) * noise
    x = (x - 4.0) / 4.0
    return x.reshape((len(x), 1)), y.reshape((len(y), 1))


def build(n_points, n_draws):
    bump = lambda u: np.exp(-(u**2))
    n_weights, _, log_joint = batched_mlp([1, 4, 4, 1], l2=0.1, noise_var=0.01, act=bump)
    x, y = gap_data(n=n_points)
    neg_elbo, slope, _ = diag_gaussian_bbvi(lambda w, t: log_joint(w, x, y), n_weights,
                                            n_draws)
    rs = npr.RandomState(0)
    lam0 = np.concatenate([rs.randn(n_weights), -5 * np.ones(n_weights)])
    return neg_elbo, slope, lam0


def fit(steps=1000):
    _, slope, lam0 = build(40, 20)
    return adam(slope, lam0, step_size=0.1, num_iters=steps)


def case():
    neg_elbo, slope, lam0 = build(n_points=6, n_draws=3)
    return dict(fn=neg_elbo, args=(lam0, 0), argnums=0, gradient=slope)
