"""Differentially-private SGD for logistic regression, the NumPy way: per-example
gradients as rows ``(expit(X @ w) - y)[:, None] * X``, each clipped to norm ``C`` by
``np.clip(C / norms, None, 1.0)`` with ``np.linalg.norm(axis=1, keepdims=True)``, summed,
Gaussian noise from a generator argument, averaged; several steps in a ``for`` loop.
The objective differentiated is the validation loss after the private steps, with
respect to the initial weights (a gradient through the clipping)."""

import numpy as np
from scipy.special import expit

import myc


def per_example_grads(w, X, y):
    return (expit(X @ w) - y)[:, None] * X


def private_gradient(w, X, y, rng, l2_norm_clip=1.0, noise_multiplier=1.1):
    grads = per_example_grads(w, X, y)
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads * np.clip(l2_norm_clip / (norms + 1e-12), None, 1.0)
    noise = rng.normal(0.0, l2_norm_clip * noise_multiplier, size=w.shape)
    return (np.sum(clipped, axis=0) + noise) / X.shape[0]


def nll(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def private_train_loss(w0, X, y, Xv, yv, rng, lr=0.5, steps=5, batch_size=8):
    w = w0
    for step in range(steps):
        lo = (step * batch_size) % X.shape[0]
        w = w - lr * private_gradient(w, X[lo:lo + batch_size], y[lo:lo + batch_size], rng)
    return nll(w, Xv, yv)


def make_data(n=40, d=6, seed=0):
    r = np.random.default_rng(seed)
    X = r.standard_normal((n, d))
    w_true = r.standard_normal(d)
    y = (X @ w_true + 0.5 * r.standard_normal(n) > 0).astype(float)
    return X[:32], y[:32], X[32:], y[32:]


def case():
    X, y, Xv, yv = make_data()
    w0 = 0.3 * np.ones(X.shape[1])
    return dict(fn=private_train_loss, args=(w0, X, y, Xv, yv, np.random.default_rng(5)),
                argnums=0)


if __name__ == "__main__":
    X, y, Xv, yv = make_data()
    rng = np.random.default_rng(1)
    w = np.zeros(X.shape[1])
    step = myc.jit(lambda w, X, y, rng: w - 0.5 * private_gradient(w, X, y, rng))
    for i in range(40):
        w = step(w, X, y, rng)
    print(nll(w, Xv, yv))
