"""Independent component analysis with Student-t errors: observations are a weight
matrix times latent sources plus noise; weights, sources and the log noise scale are
all fitted.  Sampling sorts the sources with ``sorted(..., key=lambda ...)``."""

import numpy as np
import numpy.random as npr
from scipy.stats import t

from myc import value_and_grad


def ica_model(n_obs, n_src):
    n_weights = n_obs * n_src

    def mix(A, S):
        return np.dot(A, S).T

    def draw(A, n, noise_sd, rs):
        S = rs.randn(n_src, n)
        S = np.array(sorted(S.T, key=lambda col: col[0])).T
        return S, mix(A, S) + noise_sd * rs.randn(n, n_obs)

    def log_lik(A, S, noise_sd, X):
        return np.sum(t.logpdf(mix(A, S), 2.4, X, noise_sd))

    def as_matrix(flat):
        return np.reshape(flat, (n_obs, n_src))

    return n_weights, draw, log_lik, as_matrix


def scatter_by_order(ax, xs, ys):
    """The example's plotting helper; only reached with an axis."""
    shades = np.linspace(0, 1, len(ys))
    for x, y, c in zip(xs, ys, shades, strict=False):
        ax.scatter(x, y, c=[c])


def case():
    n_obs, n_src, noise_var, n = 5, 2, 1.0, 8
    n_weights, draw, log_lik, as_matrix = ica_model(n_obs, n_src)
    n_latent = n_src * n

    def split(params):
        A = as_matrix(params[:n_weights])
        S = np.reshape(params[n_weights:n_weights + n_latent], (n_src, n))
        return A, S, np.exp(params[-1])

    A_true = np.zeros((n_obs, n_src))
    for j in range(n_src):
        A_true[:, j] = np.sin(np.linspace(0, 4 + 3.2 * j, n_obs))
    _, X = draw(A_true, n, noise_var, npr.RandomState(0))

    def loss(params):
        A, S, noise_sd = split(params)
        return -log_lik(A, S, noise_sd, X) / n

    params0 = npr.RandomState(0).randn(n_weights + n_latent + 1)
    return dict(fn=loss, args=(params0,), argnums=0, gradient=value_and_grad(loss),
                transform="value_and_grad")
