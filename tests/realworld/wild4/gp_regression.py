"""Gaussian-process regression: the log marginal likelihood of a sum of an RBF and a
periodic kernel with learned log hyperparameters, by ``scipy.linalg.cho_factor``/
``cho_solve`` for the quadratic term and ``np.linalg.slogdet`` for the determinant;
the posterior mean by ``solve_triangular``; maximised by SciPy's L-BFGS-B."""

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from scipy.optimize import minimize

import myc


def kernel(log_hyp, A, B):
    ell, sf, ell_p, period, sp = np.exp(log_hyp[:5])
    d = A[:, None] - B[None, :]
    rbf = sf ** 2 * np.exp(-0.5 * d ** 2 / ell ** 2)
    per = sp ** 2 * np.exp(-2.0 * np.sin(np.pi * np.abs(d) / period) ** 2 / ell_p ** 2)
    return rbf + per


def neg_log_marginal(log_hyp, x, y):
    noise = np.exp(2 * log_hyp[5])
    K = kernel(log_hyp, x, x) + (noise + 1e-8) * np.eye(len(x))
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), y)
    sign, logdet = np.linalg.slogdet(K)
    return 0.5 * y @ alpha + 0.5 * logdet + 0.5 * len(x) * np.log(2 * np.pi)


def posterior_mean(log_hyp, x, y, xs):
    noise = np.exp(2 * log_hyp[5])
    K = kernel(log_hyp, x, x) + (noise + 1e-8) * np.eye(len(x))
    L = np.linalg.cholesky(K)
    alpha = solve_triangular(L.T, solve_triangular(L, y, lower=True), lower=False)
    return kernel(log_hyp, xs, x) @ alpha


def make_data(n=25, seed=0):
    r = np.random.default_rng(seed)
    x = np.sort(r.uniform(0, 6, n))
    y = np.sin(2 * x) + 0.3 * x + 0.1 * r.standard_normal(n)
    return x, y


def fit():
    x, y = make_data()
    res = minimize(neg_log_marginal, np.zeros(6), args=(x, y),
                   jac=myc.grad(neg_log_marginal), method="L-BFGS-B")
    return res


def case():
    x, y = make_data()
    return dict(fn=neg_log_marginal, args=(np.array([0.1, 0.0, 0.2, 0.5, -0.5, -1.0]), x, y),
                argnums=0)


if __name__ == "__main__":
    print(fit())
