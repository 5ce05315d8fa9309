"""Gaussian-process regression with a squared-exponential kernel: the hyperparameters
maximise the marginal likelihood (scipy's multivariate normal, numpy's solve)."""

import numpy as np
import numpy.random as npr
from numpy.linalg import solve
from scipy.stats import multivariate_normal as mvn

from myc import value_and_grad


def gp_regression(kernel, n_kernel_params):
    """Builds (parameter count, posterior, log evidence) for ``kernel(theta, a, b)``."""

    def split(theta):
        offset = theta[0]
        noise = np.exp(theta[1]) + 1e-4
        return offset, noise, theta[2:]

    def posterior(theta, x, y, x_new):
        offset, noise, k_theta = split(theta)
        K = kernel(k_theta, x, x) + noise * np.eye(len(y))
        K_cross = kernel(k_theta, x, x_new)
        weights = solve(K, K_cross).T
        mean = offset + np.dot(weights, y - offset)
        cov = kernel(k_theta, x_new, x_new) - np.dot(weights, K_cross)
        return mean, cov

    def log_evidence(theta, x, y):
        offset, noise, k_theta = split(theta)
        K = kernel(k_theta, x, x) + noise * np.eye(len(y))
        return mvn.logpdf(y, offset * np.ones(len(y)), K)

    return n_kernel_params + 2, posterior, log_evidence


def squared_exp(k_theta, a, b):
    amplitude = np.exp(k_theta[0])
    widths = np.exp(k_theta[1:])
    gaps = np.expand_dims(a / widths, 1) - np.expand_dims(b / widths, 0)
    return amplitude * np.exp(-0.5 * np.sum(gaps**2, axis=2))


def toy_data(D=1, n=20, noise=0.1):
    rs = npr.RandomState(0)
    half = n // 2
    x = np.concatenate([np.linspace(0, 3, num=half), np.linspace(6, 8, num=half)])
    y = (np.cos(x) + rs.randn(n) * noise) / 2.0
    x = ((x - 4.0) / 2.0).reshape((len(x), D))
    return x, y


def case():
    n_params, _, log_evidence = gp_regression(squared_exp, n_kernel_params=2)
    x, y = toy_data(D=1, n=8)
    loss = lambda theta: -log_evidence(theta, x, y)
    theta0 = 0.1 * npr.RandomState(0).randn(n_params)
    return dict(fn=loss, args=(theta0,), argnums=0, gradient=value_and_grad(loss),
                transform="value_and_grad")
