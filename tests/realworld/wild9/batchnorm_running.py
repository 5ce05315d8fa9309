"""Batch normalization forward with the running statistics kept in a dict the caller
owns: ``running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))``,
the momentum update, and ``bn_param["running_mean"] = running_mean`` written back into
the caller's dict (CPython mutates it: the next call in test mode sees the statistics);
a two-layer net ``affine - batchnorm - relu - affine`` whose loss is differentiated
w.r.t. its parameters dict."""

import numpy as np


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        mu = np.mean(x, axis=0)
        xmu = x - mu
        var = np.mean(xmu ** 2, axis=0)
        sqrtvar = np.sqrt(var + eps)
        ivar = 1. / sqrtvar
        xhat = xmu * ivar
        out = gamma * xhat + beta
        running_mean = momentum * running_mean + (1 - momentum) * mu
        running_var = momentum * running_var + (1 - momentum) * var
    elif mode == "test":
        xhat = (x - running_mean) / np.sqrt(running_var + eps)
        out = gamma * xhat + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)  # noqa: UP031
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out


def loss(params, X, y, bn_param):
    h = X @ params["W1"] + params["b1"]
    h = batchnorm_forward(h, params["gamma"], params["beta"], bn_param)
    h = np.maximum(h, 0)
    pred = h @ params["W2"] + params["b2"]
    return np.mean((pred.ravel() - y) ** 2)


def make_data(seed=9):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(16, 3))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    params = {"W1": 0.5 * rng.normal(size=(3, 8)), "b1": np.zeros(8),
              "gamma": np.ones(8), "beta": np.zeros(8),
              "W2": 0.5 * rng.normal(size=(8, 1)), "b2": np.zeros(1)}
    return params, X, y


def case():
    params, X, y = make_data()
    return dict(fn=loss, args=(params, X, y, {"mode": "train"}), argnums=0)
