"""Type-II maximum likelihood for a Gaussian process with an ARD squared-exponential
kernel: the log marginal likelihood by Cholesky factor and triangular solves."""

from collections import namedtuple

import numpy as np
from scipy.linalg import solve_triangular

import myc

Hyper = namedtuple("Hyper", ["log_lengthscales", "log_signal", "log_noise"])


def ard_kernel(xa, xb, log_lengthscales, log_signal):
    ls = np.exp(log_lengthscales)
    diff = xa[:, None, :] / ls - xb[None, :, :] / ls
    return np.exp(2 * log_signal) * np.exp(-0.5 * np.sum(diff**2, axis=-1))


def log_marginal(hyp, X, y):
    n = X.shape[0]
    K = ard_kernel(X, X, hyp.log_lengthscales, hyp.log_signal)
    K = K + (np.exp(2 * hyp.log_noise) + 1e-8) * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = solve_triangular(L, y, lower=True)
    return -0.5 * alpha @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * n * np.log(2 * np.pi)


def neg_log_marginal(hyp, X, y):
    return -log_marginal(hyp, X, y)


def predict(hyp, X, y, Xs):
    K = ard_kernel(X, X, hyp.log_lengthscales, hyp.log_signal)
    L = np.linalg.cholesky(K + np.exp(2 * hyp.log_noise) * np.eye(len(X)))
    alpha = solve_triangular(L.T, solve_triangular(L, y, lower=True), lower=False)
    return ard_kernel(Xs, X, hyp.log_lengthscales, hyp.log_signal) @ alpha


def case():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(20, 2))
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.05 * rng.normal(size=20)
    hyp = Hyper(np.array([0.1, -0.2]), 0.0, np.log(0.1))
    return dict(fn=neg_log_marginal, args=(hyp, X, y), argnums=0)


if __name__ == "__main__":
    c = case()
    vg = myc.value_and_grad(neg_log_marginal)
    hyp = c["args"][0]
    for _ in range(100):
        val, g = vg(hyp, *c["args"][1:])
        hyp = Hyper(*[h - 0.01 * gh for h, gh in zip(hyp, g)])
    print(val, hyp)
