"""Maximum likelihood for a negative binomial: scipy's Newton iteration finds a zero
of d/dr of the profile log likelihood, with myc's ``grad`` for its first and
``grad(grad(...))`` for its second derivative; the function differentiated is a lambda
that itself calls ``grad``."""

import numpy as np
import numpy.random as npr
import scipy.optimize
from scipy.special import gammaln

from myc import grad


def newton_root(f, start):
    return scipy.optimize.newton(f, start, fprime=grad(f), fprime2=grad(grad(f)))


def nb_log_pmf(r, p, k):
    return gammaln(k + r) - gammaln(k + 1) - gammaln(r) + r * np.log(1 - p) + k * np.log(p)


def nb_draw(r, p, size):
    """Poisson counts whose rates are gamma distributed."""
    return npr.poisson(npr.gamma(r, p / (1 - p), size=size))


def fit_nb(k, r_start):
    assert np.var(k) > np.mean(k), "the data are not overdispersed: no maximum exists"
    total = lambda r, p: np.sum(nb_log_pmf(r, p, k))
    best_p = lambda r: np.sum(k) / np.sum(k + r)
    slope_in_r = lambda r: grad(total)(r, best_p(r))
    r = newton_root(slope_in_r, r_start)
    return r, best_p(r)


def case():
    npr.seed(0)
    counts = nb_draw(r=5, p=0.5, size=60)
    total = lambda r, p: np.sum(nb_log_pmf(r, p, counts))
    return dict(fn=total, args=(2.0, 0.4), argnums=(0, 1), data=counts)
