"""A Gaussian-process latent-variable model: each observed column is a GP of latent
points that are themselves parameters (standard-normal prior), the functions integrated
out; the loss sums per-column evidences with ``sum`` of a list comprehension."""

import numpy as np
import numpy.random as npr
from scipy.stats import norm

from myc import value_and_grad
from tests.realworld.gaussian_process import gp_regression, squared_exp


def case():
    obs_dim, latent_dim = 2, 2
    per_gp, _, log_evidence = gp_regression(squared_exp, n_kernel_params=latent_dim + 1)
    n_gp_params = obs_dim * per_gp
    Y = npr.RandomState(2).randn(6, 2)  # a small stand-in for the example's pinwheel data
    n_points = Y.shape[0]

    def split(params):
        thetas = np.reshape(params[:n_gp_params], (obs_dim, per_gp))
        Z = np.reshape(params[n_gp_params:], (n_points, latent_dim))
        return thetas, Z

    def neg_joint(params):
        thetas, Z = split(params)
        evidence = sum([log_evidence(thetas[d], Z, Y[:, d]) for d in range(obs_dim)])
        return -evidence - np.sum(norm.logpdf(Z))

    params0 = npr.RandomState(1).randn(n_gp_params + n_points * latent_dim) * 0.1
    return dict(fn=neg_joint, args=(params0,), argnums=0, gradient=value_and_grad(neg_joint),
                transform="value_and_grad")
