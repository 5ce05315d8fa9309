"""A Gaussian mixture fitted by EM, unrolled and differentiated: the E-step's
log-responsibilities by ``scipy.special.logsumexp(axis=1, keepdims=True)``, Gaussian
log-densities by ``np.linalg.slogdet``, ``np.linalg.inv`` and an ``np.einsum`` with an
ellipsis, the M-step's weights, means and covariances (``resp[:, k, None] * diff``), a
``for k in range(K)`` list ``np.stack``ed; the data's log-likelihood after a few EM
iterations, differentiated with respect to the initial means."""

import math

import numpy as np
from scipy.special import logsumexp

import myc


def gaussian_logpdf(X, mean, cov):
    d = X.shape[-1]
    diff = X - mean
    sign, logdet = np.linalg.slogdet(cov)
    maha = np.einsum("...i,ij,...j->...", diff, np.linalg.inv(cov), diff)
    return -0.5 * (d * math.log(2 * math.pi) + logdet + maha)


def e_step(X, weights, means, covs):
    K = len(weights)
    log_p = np.stack([np.log(weights[k]) + gaussian_logpdf(X, means[k], covs[k])
                      for k in range(K)], axis=1)
    log_norm = logsumexp(log_p, axis=1, keepdims=True)
    return np.exp(log_p - log_norm), np.sum(log_norm)


def m_step(X, resp, reg=1e-3):
    n, d = X.shape
    Nk = resp.sum(axis=0) + 10 * np.finfo(float).eps
    means = resp.T @ X / Nk[:, None]
    covs = []
    for k in range(resp.shape[1]):
        diff = X - means[k]
        covs.append((resp[:, k, None] * diff).T @ diff / Nk[k] + reg * np.eye(d))
    return Nk / n, means, np.stack(covs)


def em_loglik(means0, X, n_iter=4):
    K, d = means0.shape
    weights = np.full(K, 1.0 / K)
    covs = np.stack([np.eye(d)] * K)
    means = means0
    for _ in range(n_iter):
        resp, _ = e_step(X, weights, means, covs)
        weights, means, covs = m_step(X, resp)
    _, ll = e_step(X, weights, means, covs)
    return ll / X.shape[0]


def make_data(seed=0):
    r = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [3.0, 1.0], [-1.0, 3.0]])
    return np.concatenate([c + 0.6 * r.standard_normal((15, 2)) for c in centers])


def case():
    means0 = np.array([[0.5, 0.2], [2.0, 2.0], [-0.5, 2.0]])
    return dict(fn=em_loglik, args=(means0, make_data()), argnums=0)


if __name__ == "__main__":
    X = make_data()
    print(myc.jit(em_loglik)(X[:3].copy(), X, 20))
