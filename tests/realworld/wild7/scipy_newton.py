"""Fitting a robust (Student-t) regression with SciPy's optimizers driven by myc, as
JAX users write ``minimize(f, x0, jac=jax.grad(f), hess=jax.hessian(f))``:
``jac=myc.grad(f)`` for L-BFGS-B, ``hessp=myc.hessian_vector_product(f)`` for
Newton-CG (SciPy passes ``hessp(x, p, *args)``, autograd's order is the vector
last: a lambda swaps them), and ``hess=myc.hessian(f)`` for trust-exact, as JAX users
write it (it once was a helper stacking ``myc.jvp`` of ``myc.grad`` columns along
``np.eye`` rows, compiling again at every call).  Parameters are packed as ``(coef, log_scale)`` in one vector and unpacked by
slicing; the data ride in ``args=``."""

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln

import myc


def unpack(theta):
    return theta[:-1], theta[-1]


def neg_log_likelihood(theta, X, y, nu=4.0, l2=1e-2):
    coef, log_scale = unpack(theta)
    scale = np.exp(log_scale)
    r = (y - X @ coef) / scale
    logp = (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
            - log_scale - (nu + 1) / 2 * np.log1p(r ** 2 / nu))
    return -np.sum(logp) + 0.5 * l2 * coef @ coef


def make_data(n=80, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    y = X @ np.array([0.5, -1.0, 2.0]) + 0.3 * rng.standard_t(3, size=n)
    return X, y


def fit(method, X, y):
    x0 = np.zeros(X.shape[1] + 1)
    f = neg_log_likelihood
    if method == "L-BFGS-B":
        return minimize(f, x0, args=(X, y), jac=myc.grad(f), method=method)
    if method == "Newton-CG":
        hvp = myc.hessian_vector_product(f)    # autograd's order: hvp(*args, vector)
        return minimize(f, x0, args=(X, y), jac=myc.grad(f),
                        hessp=lambda x, p, *args: hvp(x, *args, p), method=method)
    return minimize(f, x0, args=(X, y), jac=myc.grad(f), hess=myc.hessian(f), method=method)


def case():
    X, y = make_data()
    theta = np.array([0.3, -0.5, 1.5, -0.7])
    return dict(fn=neg_log_likelihood, args=(theta, X, y), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    for method in ("L-BFGS-B", "Newton-CG", "trust-exact"):
        res = fit(method, X, y)
        print(method, res.x, res.fun, res.nit)
