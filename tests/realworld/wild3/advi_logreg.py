"""Bayesian logistic regression by automatic differentiation variational inference
(ADVI): a mean-field Gaussian posterior, reparameterised draws ``w = mu + sigma * eps``
from a generator the objective reads from its module, the negative ELBO by Monte Carlo
with ``scipy.stats.norm.logpdf`` for the prior."""

import numpy as np
from scipy.special import log_expit
from scipy.stats import norm

import myc

rng = np.random.default_rng(0)


def log_joint(w, X, y, prior_scale=2.0):
    logits = X @ w
    return np.sum(y * log_expit(logits) + (1 - y) * log_expit(-logits)) + \
        np.sum(norm.logpdf(w, 0.0, prior_scale))


def negative_elbo(var_params, X, y, n_samples=8):
    mu, log_sigma = var_params[0], var_params[1]
    sigma = np.exp(log_sigma)
    total = 0.0
    for _ in range(n_samples):
        eps = rng.standard_normal(mu.shape)
        w = mu + sigma * eps
        total = total + log_joint(w, X, y)
    entropy = np.sum(log_sigma) + 0.5 * len(mu) * (1 + np.log(2 * np.pi))
    return -(total / n_samples + entropy)


def make_data(n=50, d=3, seed=1):
    r = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), r.normal(size=(n, d - 1))])
    w = np.array([0.5, -1.0, 2.0])[:d]
    y = (r.uniform(size=n) < 1 / (1 + np.exp(-X @ w))).astype(float)
    return X, y


def case():
    X, y = make_data()
    return dict(fn=negative_elbo, args=(np.array([[0.1, -0.2, 0.3], [-1.0, -1.0, -1.0]]),
                                        X, y), argnums=0)


if __name__ == "__main__":
    c = case()
    v, X, y = c["args"]
    g = myc.grad(negative_elbo)
    for _ in range(300):
        v = v - 0.01 * g(v, X, y)
    print(v)
