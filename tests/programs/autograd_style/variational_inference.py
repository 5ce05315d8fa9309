"""Black-box variational inference with the reparameterization trick: the variational
parameters are a list [mean, log_std]; the standard-normal draws are an argument."""

import numpy as np


def log_density(x):
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = -0.5 * (log_sigma / 1.35) ** 2
    mu_density = -0.5 * (mu / np.exp(log_sigma)) ** 2 - log_sigma
    return sigma_density + mu_density


def gaussian_entropy(log_std):
    return 0.5 * log_std.shape[0] * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)


def variational_objective(params, eps):
    mean, log_std = params
    samples = eps * np.exp(log_std) + mean
    lower_bound = gaussian_entropy(log_std) + np.mean(log_density(samples))
    return -lower_bound


_rs = np.random.RandomState(5)
PARAMS = [np.array([-1.0, -1.0]), np.array([-2.0, -1.5])]
EPS = _rs.randn(20, 2)
CASE = dict(fn=variational_objective, args=(PARAMS, EPS), argnums=0)
