"""Random-walk Metropolis as statistics course code writes it, with the Generator passed
in: ``proposal = x + step * rng.normal(size=x.shape)``, ``log_alpha = log_target(
proposal) - log_target(x)``, ``if np.log(rng.uniform()) < log_alpha: x = proposal;
accepted += 1``, the chain stored into ``samples[i] = x``, burn-in sliced off, and the
acceptance rate returned beside the mean.  The target is a correlated Gaussian whose
mean is the parameter: the objective (the chain's Monte Carlo estimate of E[x0 * x1] +
the mean of x0, the chain started at the mode) is differentiated pathwise through the
accepted moves."""

import numpy as np


def log_target(x, mu, prec):
    d = x - mu
    return -0.5 * d @ prec @ d


def metropolis(mu, rng, n_samples=300, step=0.8, burn_in=50):
    prec = np.linalg.inv(np.array([[1.0, 0.6], [0.6, 1.0]]))
    x = mu.copy()  # start the chain at the mode
    samples = np.zeros((n_samples, len(mu)))
    accepted = 0
    for i in range(n_samples):
        proposal = x + step * rng.normal(size=x.shape)
        log_alpha = log_target(proposal, mu, prec) - log_target(x, mu, prec)
        if np.log(rng.uniform()) < log_alpha:
            x = proposal
            accepted += 1
        samples[i] = x
    return samples[burn_in:], accepted / n_samples


def estimate(mu, rng):
    samples, rate = metropolis(mu, rng)
    return np.mean(samples[:, 0] * samples[:, 1]) + np.mean(samples[:, 0])


def acceptance_rate(mu, rng):
    return metropolis(mu, rng)[1]


def case():
    return dict(fn=estimate, args=(np.array([0.5, -0.3]), np.random.default_rng(12)), argnums=0)
