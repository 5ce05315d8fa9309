"""Entropic optimal transport between two point clouds by Sinkhorn's iterations in the
log domain: a fixed number of iterations, and a ``while`` loop that stops when the
marginals match to a tolerance.  The objective (a Sinkhorn divergence) is
differentiated with respect to the source points, through the iterations."""

import numpy as np
from scipy.special import logsumexp

import myc


def cost_matrix(X, Y):
    return np.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=2)


def sinkhorn_fixed(C, a, b, eps, n_iter=50):
    f = np.zeros_like(a)
    g = np.zeros_like(b)
    for _ in range(n_iter):
        f = -eps * logsumexp((g[None, :] - C) / eps + np.log(b)[None, :], axis=1)
        g = -eps * logsumexp((f[:, None] - C) / eps + np.log(a)[:, None], axis=0)
    return f, g


def sinkhorn_tol(C, a, b, eps, tol=1e-9, max_iter=500):
    f = np.zeros_like(a)
    g = np.zeros_like(b)
    err = np.inf
    it = 0
    while err > tol and it < max_iter:
        f = -eps * logsumexp((g[None, :] - C) / eps + np.log(b)[None, :], axis=1)
        g = -eps * logsumexp((f[:, None] - C) / eps + np.log(a)[:, None], axis=0)
        P = np.exp((f[:, None] + g[None, :] - C) / eps) * a[:, None] * b[None, :]
        err = np.max(np.abs(np.sum(P, axis=1) - a))
        it += 1
    return f, g


def transport_cost(X, Y, a, b, eps=0.5, solver=sinkhorn_tol):
    C = cost_matrix(X, Y)
    f, g = solver(C, a, b, eps)
    P = np.exp((f[:, None] + g[None, :] - C) / eps) * a[:, None] * b[None, :]
    return np.sum(P * C)


def divergence(X, Y, a, b, eps=0.5):
    return transport_cost(X, Y, a, b, eps) - 0.5 * transport_cost(X, X, a, a, eps) - \
        0.5 * transport_cost(Y, Y, b, b, eps)


def case():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))
    Y = rng.normal(size=(10, 2)) + np.array([1.0, 0.5])
    a = np.full(8, 1 / 8)
    b = np.full(10, 1 / 10)
    return dict(fn=divergence, args=(X, Y, a, b), argnums=0, fd_tol=1e-5)


if __name__ == "__main__":
    c = case()
    X, Y, a, b = c["args"]
    g = myc.grad(divergence)
    for _ in range(100):
        X = X - 1.0 * g(X, Y, a, b)
    print(divergence(X, Y, a, b))
