"""An SIR epidemic model fitted to daily case counts, as epidemiology notebooks write
it: rates as ``np.exp`` of log-parameters in a dict, forward-Euler substeps
``for _ in range(int(1 / dt))`` inside a loop over days, the three compartments
updated by one tuple assignment ``S, I, R = ...``, daily incidence appended to a list and turned into an array, a
negative-binomial likelihood with ``scipy.special.gammaln`` and an overdispersion
parameter, and a keyword ``population=``; differentiated with respect to the dict."""

import numpy as np
from scipy.special import gammaln

import myc


def simulate(params, days, population=1000.0, i0=5.0, dt=0.25):
    beta, gamma = np.exp(params["log_beta"]), np.exp(params["log_gamma"])
    S, I, R = population - i0, i0, 0.0
    incidence = []
    for day in range(days):
        new_cases = 0.0
        for _ in range(int(1 / dt)):
            infections = beta * S * I / population * dt
            recoveries = gamma * I * dt
            S, I, R = S - infections, I + infections - recoveries, R + recoveries
            new_cases += infections
        incidence.append(new_cases)
    return np.array(incidence)


def neg_binom_nll(params, counts, population=1000.0):
    mu = simulate(params, len(counts), population=population) + 1e-9
    r = np.exp(params["log_r"])
    ll = (gammaln(counts + r) - gammaln(r) - gammaln(counts + 1)
          + r * np.log(r / (r + mu)) + counts * np.log(mu / (r + mu)))
    return -np.sum(ll)


def make_counts(days=20, seed=0):
    rng = np.random.default_rng(seed)
    truth = {"log_beta": np.log(0.6), "log_gamma": np.log(0.25), "log_r": np.log(10.0)}
    mu = simulate(truth, days)
    return rng.negative_binomial(10.0, 10.0 / (10.0 + mu)).astype(float)


def case():
    params = {"log_beta": np.log(0.5), "log_gamma": np.log(0.3), "log_r": np.log(5.0)}
    return dict(fn=neg_binom_nll, args=(params, make_counts()), argnums=0)


if __name__ == "__main__":
    counts = make_counts()
    params = {"log_beta": np.log(0.3), "log_gamma": np.log(0.3), "log_r": 0.0}
    g = myc.value_and_grad(neg_binom_nll)
    for _ in range(300):
        v, d = g(params, counts)
        params = {k: v_ - 1e-3 * d[k] for k, v_ in params.items()}
    print(v, {k: float(np.exp(v_)) for k, v_ in params.items()})
