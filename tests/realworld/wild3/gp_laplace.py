"""Gaussian-process binary classification with the Laplace approximation (Rasmussen &
Williams, algorithms 3.1 and 5.1): Newton's method for the posterior mode in a ``while``
loop that stops on the change of the objective, with ``np.linalg.cholesky`` and
triangular solves, then the approximate log marginal likelihood, differentiated with
respect to the kernel's log-hyperparameters (through the Newton iterations)."""

import numpy as np
import scipy.linalg
from scipy.special import expit

import myc


def rbf(X, log_ell, log_sf):
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    return np.exp(2 * log_sf) * np.exp(-0.5 * d2 / np.exp(2 * log_ell))


def laplace_mode(K, y, tol=1e-10, max_iter=50):
    n = len(y)
    f = np.zeros(n)
    t = (y + 1) / 2
    obj_old = np.inf
    obj = 0.0
    it = 0
    while abs(obj_old - obj) > tol and it < max_iter:
        pi = expit(f)
        W = pi * (1 - pi)
        sW = np.sqrt(W)
        L = np.linalg.cholesky(np.eye(n) + sW[:, None] * K * sW[None, :])
        b = W * f + (t - pi)
        c = scipy.linalg.solve_triangular(L, sW * (K @ b), lower=True)
        a = b - sW * scipy.linalg.solve_triangular(L.T, c, lower=False)
        f = K @ a
        obj_old = obj
        obj = -0.5 * a @ f + np.sum(np.log(expit(y * f)))
        it += 1
    return f


def neg_log_marginal(log_params, X, y):
    K = rbf(X, log_params[0], log_params[1])
    f = laplace_mode(K, y)
    pi = expit(f)
    W = pi * (1 - pi)
    sW = np.sqrt(W)
    n = len(y)
    L = np.linalg.cholesky(np.eye(n) + sW[:, None] * K * sW[None, :])
    a = np.linalg.solve(K + 1e-9 * np.eye(n), f)
    return 0.5 * a @ f - np.sum(np.log(expit(y * f))) + np.sum(np.log(np.diag(L)))


def make_data(n=16, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, 1.0, -1.0)
    return X, y


def case():
    X, y = make_data()
    return dict(fn=neg_log_marginal, args=(np.array([0.1, 0.5]), X, y), argnums=0,
                fd_tol=1e-5)


if __name__ == "__main__":
    from scipy.optimize import minimize

    c = case()
    res = minimize(neg_log_marginal, c["args"][0], args=c["args"][1:],
                   jac=myc.grad(neg_log_marginal), method="L-BFGS-B")
    print(res.x, res.fun)
