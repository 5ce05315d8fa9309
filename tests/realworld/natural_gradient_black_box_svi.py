"""The black-box VI of black_box_svi.py on a vector-valued model, with a natural
gradient: the plain gradient scaled by the inverse diagonal Fisher information of the
Gaussian family (a lambda over the closure's gradient)."""

import numpy as np
from scipy.stats import norm

from myc.misc.optimizers import sgd
from tests.realworld.black_box_svi import diag_gaussian_bbvi


def case():
    np.random.seed(42)
    k = 3
    observed = np.random.randn(k, k).dot(np.random.randn(k))

    def log_joint(z, t):
        loc, log_scale = z[:, :k], z[:, k:]
        prior = np.sum(norm.logpdf(log_scale, 0, 1.35), axis=1)
        lik = np.sum(norm.logpdf(observed, loc, np.exp(log_scale)), axis=1)
        return prior + lik

    dim = 2 * k
    neg_elbo, slope, split = diag_gaussian_bbvi(log_joint, dim, n_draws=10)

    def fisher_diagonal(lam):
        _, log_sd = split(lam)
        return np.concatenate([np.exp(-2.0 * log_sd), 2 * np.ones(len(log_sd))])

    natural_slope = lambda lam, i: slope(lam, i) / fisher_diagonal(lam)
    lam0 = np.concatenate([-np.ones(dim), -np.ones(dim)])
    return dict(fn=neg_elbo, args=(lam0, 0), argnums=0, gradient=slope,
                natural_gradient=natural_slope, fisher_diag=fisher_diagonal,
                descend=lambda steps: sgd(natural_slope, lam0, step_size=0.1,
                                          num_iters=steps))
