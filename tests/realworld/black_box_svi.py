"""Black-box variational inference with a diagonal-Gaussian family: reparameterised
draws from a RandomState the closure holds, the entropy in closed form, and ``grad``
of the closure built where the closure is (the objective, its gradient and the
unpacker are handed back together)."""

import numpy as np
import numpy.random as npr
from scipy.stats import norm

from myc import grad
from myc.misc.optimizers import adam


def diag_gaussian_bbvi(log_target, dim, n_draws):
    rs = npr.RandomState(0)

    def split(lam):
        return lam[:dim], lam[dim:]

    def entropy(log_sd):
        return np.sum(log_sd) + 0.5 * dim * (1.0 + np.log(2 * np.pi))

    def neg_elbo(lam, t):
        mu, log_sd = split(lam)
        z = mu + np.exp(log_sd) * rs.randn(n_draws, dim)
        return -(entropy(log_sd) + np.mean(log_target(z, t)))

    return neg_elbo, grad(neg_elbo), split


def funnel(z, t):
    """A two-dimensional funnel: the scale of the first coordinate is exp(second)."""
    loc, log_scale = z[:, 0], z[:, 1]
    return norm.logpdf(log_scale, 0, 1.35) + norm.logpdf(loc, 0, np.exp(log_scale))


def fit(steps=1000):
    _, slope, _ = diag_gaussian_bbvi(funnel, 2, n_draws=20)
    return adam(slope, np.concatenate([-np.ones(2), -5 * np.ones(2)]), step_size=0.1,
                num_iters=steps)


def case():
    neg_elbo, slope, _ = diag_gaussian_bbvi(funnel, 2, n_draws=20)
    lam0 = np.concatenate([-1 * np.ones(2), -5 * np.ones(2)])
    return dict(fn=neg_elbo, args=(lam0, 0), argnums=0, gradient=slope)
