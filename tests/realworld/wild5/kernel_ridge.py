"""Kernel ridge regression and its Nystrom approximation, tuned by the validation error's
gradient in the log hyperparameters: ``scipy.spatial.distance.cdist(..., 'sqeuclidean')``
for the RBF kernel, ``np.linalg.solve`` for the exact dual coefficients,
``scipy.linalg.cho_factor``/``cho_solve`` for the landmarks' system, a ``**options`` dict
choosing the method and the jitter, ``np.exp`` of a parameter vector unpacked."""

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.spatial.distance import cdist

import myc


def rbf_kernel(A, B, lengthscale):
    return np.exp(-0.5 * cdist(A / lengthscale, B / lengthscale, "sqeuclidean"))


def fit_predict(log_params, X, y, X_test, **options):
    lengthscale, lam = np.exp(log_params)
    method = options.get("method", "exact")
    n = X.shape[0]
    if method == "exact":
        K = rbf_kernel(X, X, lengthscale)
        alpha = np.linalg.solve(K + lam * np.eye(n), y)
        return rbf_kernel(X_test, X, lengthscale) @ alpha
    # Nystrom: m landmarks, (Knm^T Knm + lam Kmm) beta = Knm^T y
    Z = X[::options.get("stride", 3)]
    Kmm = rbf_kernel(Z, Z, lengthscale) + options.get("jitter", 1e-8) * np.eye(len(Z))
    Knm = rbf_kernel(X, Z, lengthscale)
    c, low = cho_factor(Knm.T @ Knm + lam * Kmm)
    beta = cho_solve((c, low), Knm.T @ y)
    return rbf_kernel(X_test, Z, lengthscale) @ beta


def validation_error(log_params, X, y, Xv, yv, **options):
    pred = fit_predict(log_params, X, y, Xv, **options)
    return np.mean((pred - yv) ** 2)


def both_errors(log_params, X, y, Xv, yv):
    return (validation_error(log_params, X, y, Xv, yv) +
            validation_error(log_params, X, y, Xv, yv, method="nystrom", stride=3))


def make_data(n=30, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(-3, 3, size=(n, 2))
    y = np.sin(X[:, 0]) * np.cos(0.5 * X[:, 1]) + 0.1 * r.standard_normal(n)
    return X[:22], y[:22], X[22:], y[22:]


def case():
    return dict(fn=both_errors, args=(np.array([0.2, -2.0]), *make_data()), argnums=0)


if __name__ == "__main__":
    data = make_data()
    g = myc.value_and_grad(both_errors)
    p = np.array([0.2, -2.0])
    for _ in range(30):
        v, d = g(p, *data)
        p = p - 0.2 * d
    print(v, np.exp(p))
