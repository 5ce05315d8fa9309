"""Poisson regression fitted by Newton's method with Hessian-vector products: the
Hessian assembled column by column from ``myc.hessian_vector_product`` (and checked
against forward-over-reverse, ``jvp`` of ``grad``), a damped Newton step by
``np.linalg.solve``, iterated in a ``while`` loop until the step is small."""

import numpy as np
from scipy.special import gammaln

import myc


def nll(beta, X, y, l2=1e-2):
    eta = X @ beta
    return np.sum(np.exp(eta) - y * eta + gammaln(y + 1)) + 0.5 * l2 * beta @ beta


hvp = myc.hessian_vector_product(nll)
gradient = myc.grad(nll)


def hessian(beta, X, y):
    d = len(beta)
    cols = [hvp(beta, X, y, np.eye(d)[k]) for k in range(d)]
    return np.stack(cols, axis=1)


def hessian_fwd_over_rev(beta, X, y):
    d = len(beta)
    g = lambda b: gradient(b, X, y)  # noqa: E731
    return np.stack([myc.jvp(g, (beta,), (np.eye(d)[k],))[1] for k in range(d)], axis=1)


def newton(beta, X, y, tol=1e-10, max_iter=30):
    step = np.inf
    it = 0
    while step > tol and it < max_iter:
        delta = np.linalg.solve(hessian(beta, X, y), gradient(beta, X, y))
        beta = beta - delta
        step = np.max(np.abs(delta))
        it += 1
    return beta, it


def newton_decrement(beta, X, y):
    """The objective of ``case()``: half the squared Newton decrement at ``beta``."""
    g = gradient(beta, X, y)
    return 0.5 * g @ np.linalg.solve(hessian(beta, X, y), g)


def make_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = rng.poisson(np.exp(X @ np.array([0.5, 0.3, -0.4]))).astype(float)
    return X, y


def case():
    X, y = make_data()
    return dict(fn=newton_decrement, args=(np.array([0.1, 0.0, 0.0]), X, y), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    beta, it = newton(np.zeros(3), X, y)
    print(beta, it)
