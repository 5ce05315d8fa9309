"""A Gaussian mixture fit by gradient ascent on its log likelihood: parameters in a
dict with string keys, components iterated with ``zip(*...)``, each covariance a
Cholesky-like factor's product, densities from scipy's multivariate normal and
``logsumexp`` over a ``vstack`` of a Python list."""

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp
from scipy.stats import multivariate_normal as mvn

from myc import grad, hessian_vector_product
from myc.misc.flatten import flatten_func


def random_mixture(k, dim, scale, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return {"log proportions": rs.randn(k) * scale,
            "means": rs.randn(k, dim) * scale,
            "lower triangles": np.zeros((k, dim, dim)) + np.eye(dim)}


def components(mix):
    log_w = mix["log proportions"]
    return log_w - logsumexp(log_w), mix["means"], mix["lower triangles"]


def mixture_log_lik(mix, X):
    per_component = []
    for log_w, centre, factor in zip(*components(mix)):
        cov = np.dot(factor.T, factor)
        per_component.append(log_w + mvn.logpdf(X, centre, cov))
    return np.sum(logsumexp(np.vstack(per_component), axis=0))


def draw_ellipses(mix, ax, n=100):
    """Never called with an axis in the tests; kept as the example's plotting path."""
    turn = np.linspace(0, 2 * np.pi, n)
    ring = 2.0 * np.vstack([np.cos(turn), np.sin(turn)]).T
    for log_w, centre, factor in zip(*components(mix)):
        pts = centre + np.dot(ring, factor)
        ax.plot(pts[:, 0], pts[:, 1], "-", alpha=min(1.0, 10 * np.exp(log_w)))


def newton_pieces(mix, X):
    """Flat-vector objective, its gradient and Hessian-vector product (trust-region use)."""
    loss = lambda m: -mixture_log_lik(m, X)
    flat_loss, _, x0 = flatten_func(loss, mix)
    return flat_loss, grad(flat_loss), hessian_vector_product(flat_loss), x0


def case():
    mix = random_mixture(k=3, dim=2, scale=0.1)
    X = npr.RandomState(1).randn(12, 2)  # a small stand-in for the example's pinwheel data
    loss = lambda m: -mixture_log_lik(m, X)
    return dict(fn=loss, args=(mix,), argnums=0)
