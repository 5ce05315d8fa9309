"""A second-order factorization machine (Rendle) for click prediction: the pairwise
interactions in linear time ``0.5 * sum((X @ V) ** 2 - (X ** 2) @ (V ** 2))``, the
bias, linear and factor parameters as a tuple ``(w0, w, V)`` unpacked in the model, the
logistic loss ``np.logaddexp(0, -y * s)`` with labels in {-1, +1}, per-group L2
penalties from a dict of keyword defaults, ``value_and_grad`` in a mini-batch loop that
slices ``X[idx]`` by a permutation from a generator."""

import numpy as np

import myc


def fm_scores(params, X):
    w0, w, V = params
    linear = w0 + X @ w
    XV = X @ V
    interactions = 0.5 * np.sum(XV ** 2 - (X ** 2) @ (V ** 2), axis=1)
    return linear + interactions


def fm_loss(params, X, y, reg=None):
    reg = reg or {"w": 1e-3, "V": 1e-2}
    s = fm_scores(params, X)
    _, w, V = params
    data = np.mean(np.logaddexp(0.0, -y * s))
    return data + reg["w"] * np.sum(w * w) + reg["V"] * np.sum(V * V)


def pairwise_reference(params, X):
    """The O(d^2) definition, for the test: sum_{i<j} <v_i, v_j> x_i x_j."""
    w0, w, V = params
    d = X.shape[1]
    out = w0 + X @ w
    for i in range(d):
        for j in range(i + 1, d):
            out = out + (V[i] @ V[j]) * X[:, i] * X[:, j]
    return out


def make_data(n=60, d=7, k=3, seed=4):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.35).astype(float) * rng.uniform(0.5, 1.5, (n, d))
    V_true = rng.normal(scale=0.8, size=(d, k))
    s = fm_scores((0.1, rng.normal(size=d), V_true), X)
    y = np.where(s + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def init_params(d=7, k=3, seed=5):
    rng = np.random.default_rng(seed)
    return (0.0, 0.1 * rng.normal(size=d), 0.1 * rng.normal(size=(d, k)))


def case():
    X, y = make_data()
    return dict(fn=fm_loss, args=(init_params(), X, y), argnums=0,
                transform="value_and_grad")


if __name__ == "__main__":
    X, y = make_data()
    params = init_params()
    rng = np.random.default_rng(0)
    g = myc.value_and_grad(fm_loss)
    for epoch in range(30):
        perm = rng.permutation(len(y))
        for start in range(0, len(y), 20):
            idx = perm[start:start + 20]
            v, grads = g(params, X[idx], y[idx])
            params = tuple(p - 0.3 * dp for p, dp in zip(params, grads))
    print(v)
