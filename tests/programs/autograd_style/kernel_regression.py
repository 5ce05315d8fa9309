"""Gaussian-process style regression: an RBF kernel with dict hyperparameters, the
posterior mean by a fixed number of conjugate-gradient steps (a static loop), and the
data fit of the prediction as the loss."""

import numpy as np


def rbf_covariance(hyper, x, xp):
    output_scale = np.exp(hyper["log scale"])
    lengthscales = np.exp(hyper["log lengths"])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


def conjugate_gradient(A, b, steps):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r
    rs = np.sum(r * r)
    for _ in range(steps):
        Ap = A @ p
        alpha = rs / np.sum(p * Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = np.sum(r * r)
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def predictive_mean(hyper, x, y, xstar):
    noise = np.exp(hyper["log noise"]) + 1e-6
    K = rbf_covariance(hyper, x, x) + noise * np.eye(x.shape[0])
    alpha = conjugate_gradient(K, y - hyper["mean"], 6)
    return rbf_covariance(hyper, xstar, x) @ alpha + hyper["mean"]


def objective(hyper, x, y, xstar, ystar):
    return np.mean((predictive_mean(hyper, x, y, xstar) - ystar) ** 2)


_rs = np.random.RandomState(4)
HYPER = {"mean": 0.1, "log scale": 0.2, "log lengths": np.array([0.1, -0.2]),
         "log noise": -1.0}
X = _rs.randn(6, 2)
Y = np.sin(X[:, 0]) + 0.1 * _rs.randn(6)
XSTAR = _rs.randn(3, 2)
YSTAR = np.sin(XSTAR[:, 0])
CASE = dict(fn=objective, args=(HYPER, X, Y, XSTAR, YSTAR), argnums=0)
