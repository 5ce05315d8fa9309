"""Multinomial logistic regression fitted by SciPy: the weights a flat vector reshaped
to ``(d, k)`` inside the loss, the data bound by ``functools.partial``, and
``scipy.optimize.minimize(fun, x0, jac=myc.grad(f), method="L-BFGS-B")`` -- also
``jac=True`` with ``myc.value_and_grad`` of the partial."""

import functools

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

import myc


def nll(w, X, y, k, l2=1e-2):
    W = w.reshape(X.shape[1], k)
    logits = X @ W
    logp = logits - logsumexp(logits, axis=1, keepdims=True)
    return -np.mean(logp[np.arange(len(y)), y]) + 0.5 * l2 * np.sum(W ** 2)


def make_data(n=90, d=4, k=3, seed=0):
    r = np.random.default_rng(seed)
    W = r.standard_normal((d, k))
    X = np.column_stack([np.ones(n), r.standard_normal((n, d - 1))])
    y = np.argmax(X @ W + r.gumbel(size=(n, k)), axis=1)
    return X, y


def fit(X, y, k=3):
    f = functools.partial(nll, X=X, y=y, k=k)
    x0 = np.zeros(X.shape[1] * k)
    res1 = minimize(f, x0, jac=myc.grad(f), method="L-BFGS-B")
    res2 = minimize(myc.value_and_grad(f), x0, jac=True, method="L-BFGS-B")
    return res1, res2


def case():
    X, y = make_data()
    f = functools.partial(nll, X=X, y=y, k=3)
    w0 = np.linspace(-0.5, 0.5, X.shape[1] * 3)
    return dict(fn=f, args=(w0,), argnums=0, gradient=myc.grad(f))


if __name__ == "__main__":
    X, y = make_data()
    print(fit(X, y)[0])
