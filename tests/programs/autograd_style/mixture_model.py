"""A Gaussian mixture with diagonal covariances, its parameters in a dict."""

import numpy as np


def logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def unpack_params(params):
    normalized_log_proportions = params["log proportions"] - logsumexp(
        params["log proportions"], 0)
    return normalized_log_proportions, params["means"], params["log stds"]


def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(-0.5 * ((x - mu) / np.exp(log_std)) ** 2 - log_std
                  - 0.5 * np.log(2 * np.pi), axis=-1)


def mixture_log_density(params, data):
    log_weights, means, log_stds = unpack_params(params)
    cluster_lls = [log_w + diag_gaussian_log_density(data, mu, ls)
                   for log_w, mu, ls in zip(log_weights, means, log_stds)]
    return logsumexp(np.stack(cluster_lls, axis=1), 1)


def objective(params, data):
    return -np.mean(mixture_log_density(params, data))


_rs = np.random.RandomState(3)
PARAMS = {"log proportions": 0.1 * _rs.randn(3),
          "means": _rs.randn(3, 2),
          "log stds": 0.1 * _rs.randn(3, 2)}
DATA = _rs.randn(10, 2)
CASE = dict(fn=objective, args=(PARAMS, DATA), argnums=0)
