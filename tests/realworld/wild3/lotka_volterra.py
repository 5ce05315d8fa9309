"""Lotka-Volterra predator-prey parameters fitted to noisy population counts: the model
integrated by ``scipy.integrate.odeint`` at the observation times, a Gaussian
log-likelihood on log-populations, parameters on log scale; SciPy's BFGS with
``jac=myc.grad(f)``."""

import numpy as np
from scipy.integrate import odeint

import myc


def lotka_volterra(z, t, alpha, beta, delta, gamma):
    prey, predator = z[0], z[1]
    return np.array([alpha * prey - beta * prey * predator,
                     delta * prey * predator - gamma * predator])


def simulate(log_theta, z0, ts):
    alpha, beta, delta, gamma = np.exp(log_theta)
    return odeint(lotka_volterra, z0, ts, args=(alpha, beta, delta, gamma),
                  rtol=1e-10, atol=1e-10)


def neg_log_likelihood(log_theta, z0, ts, observed, sigma=0.1):
    pred = simulate(log_theta, z0, ts)
    resid = np.log(observed) - np.log(pred)
    return 0.5 * np.sum(resid ** 2) / sigma ** 2


def make_data(seed=0):
    truth = np.log(np.array([1.0, 0.4, 0.3, 0.8]))
    z0 = np.array([3.0, 1.0])
    ts = np.linspace(0.0, 8.0, 17)
    rng = np.random.default_rng(seed)
    observed = simulate(truth, z0, ts) * np.exp(0.05 * rng.standard_normal((17, 2)))
    return truth, z0, ts, observed


def case():
    truth, z0, ts, observed = make_data()
    # the value: myc's Dormand-Prince against SciPy's LSODA, both to rtol 1e-10
    return dict(fn=neg_log_likelihood, args=(truth + 0.1, z0, ts, observed), argnums=0,
                fd_tol=1e-4, value_tol=1e-7)


if __name__ == "__main__":
    from scipy.optimize import minimize

    c = case()
    res = minimize(neg_log_likelihood, c["args"][0], args=c["args"][1:],
                   jac=myc.grad(neg_log_likelihood), method="BFGS")
    print(np.exp(res.x))
