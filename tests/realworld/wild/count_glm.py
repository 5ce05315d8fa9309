"""Poisson and negative-binomial regression for counts (log link), the dispersion on a
log scale; the negative binomial's likelihood written with gammaln."""

import numpy as np
from scipy.special import gammaln

import myc


def poisson_nll(beta, X, y):
    eta = X @ beta
    return -np.sum(y * eta - np.exp(eta) - gammaln(y + 1))


def negbin_nll(params, X, y):
    beta, log_alpha = params[:-1], params[-1]
    mu = np.exp(X @ beta)
    r = np.exp(-log_alpha)                        # 1 / dispersion
    ll = (gammaln(y + r) - gammaln(r) - gammaln(y + 1)
          + r * np.log(r / (r + mu)) + y * np.log(mu / (r + mu)))
    return -ll.sum()


def make_data(n=60, seed=2):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.uniform(-1, 1, n)])
    mu = np.exp(X @ np.array([0.5, 0.4, -0.7]))
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    return X, y


def fit(nll, x0, X, y):
    from scipy.optimize import minimize

    return minimize(nll, x0, args=(X, y), jac=myc.grad(nll), method="L-BFGS-B")


def case():
    X, y = make_data()
    return dict(fn=negbin_nll, args=(np.array([0.3, 0.2, -0.4, np.log(0.6)]), X, y),
                argnums=0)


def poisson_case():
    X, y = make_data()
    return dict(fn=poisson_nll, args=(np.array([0.3, 0.2, -0.4]), X, y), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    print(fit(poisson_nll, np.zeros(3), X, y).x)
    print(fit(negbin_nll, np.zeros(4), X, y).x)
