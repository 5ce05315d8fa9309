"""L2-regularised logistic regression with an intercept, fitted by SciPy's L-BFGS-B with
myc's gradient as the Jacobian; the likelihood written with expit and log1p."""

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

import myc


def penalized_nll(w, X, y, l2=1.0):
    b, coef = w[0], w[1:]
    z = X @ coef + b
    p = expit(z)
    eps = 1e-12
    nll = -np.sum(y * np.log(p + eps) + (1 - y) * np.log1p(-p + eps))
    return nll + 0.5 * l2 * coef @ coef


def fit(X, y, l2=1.0):
    x0 = np.zeros(X.shape[1] + 1)
    res = minimize(penalized_nll, x0, args=(X, y, l2), jac=myc.grad(penalized_nll),
                   method="L-BFGS-B")
    return res


def make_data(n=80, d=5, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = (rng.uniform(size=n) < expit(X @ w - 0.3)).astype(np.float64)
    return X, y


def case():
    X, y = make_data()
    w = np.linspace(-0.5, 0.5, X.shape[1] + 1)
    return dict(fn=penalized_nll, args=(w, X, y, 0.7), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    print(fit(X, y).x)
