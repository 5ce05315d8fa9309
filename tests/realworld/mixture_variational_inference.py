"""Black-box variational inference with a mixture of diagonal Gaussians as the
family: the bound is a weighted sum of per-component bounds, each estimated from that
component's own reparameterised draws (so the discrete choice is summed, not sampled);
the mixture density is a ``logsumexp`` over a ``vstack`` of per-component densities,
both built with list comprehensions over the rows of a reshaped parameter vector."""

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp
from scipy.stats import norm

from myc import grad
from myc.misc.optimizers import adam


def diag_normal_logpdf(x, mean, log_sd):
    return np.sum(norm.logpdf(x, mean, np.exp(log_sd)), axis=-1)


def halves(lam):
    d = np.shape(lam)[0] // 2
    return lam[:d], lam[d:]


def component_logpdf(lam, x):
    mean, log_sd = halves(lam)
    return diag_normal_logpdf(x, mean, log_sd)


def component_draw(lam, n, rs):
    mean, log_sd = halves(lam)
    return mean + np.exp(log_sd) * rs.randn(n, np.shape(mean)[0])


def generic_bound(lam, t, log_target, draw, log_q, n, rs):
    """The Monte Carlo bound for any family given its sampler and density."""
    z = draw(lam, n, rs)
    gap = np.reshape(log_target(z, t), (n, -1)) - np.reshape(log_q(lam, z), (n, -1))
    return np.mean(gap)


def component_start(dim, mean_at=-1, log_sd_at=-5, scale=0.1, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    mean = mean_at * np.ones(dim) + scale * rs.randn(dim)
    log_sd = log_sd_at * np.ones(dim) + scale * rs.randn(dim)
    return np.concatenate([mean, log_sd])


def mixture_bbvi(log_target, n, k=10, rs=None):
    rs = npr.RandomState(0) if rs is None else rs

    def split(mix):
        log_w = mix[:k] - logsumexp(mix[:k])
        return log_w, np.reshape(mix[k:], (k, -1))

    def start(dim, rs=None, **options):
        rs = npr.RandomState(0) if rs is None else rs
        parts = [component_start(dim, rs=rs, **options) for _ in range(k)]
        return np.concatenate([np.ones(k)] + parts)

    def draw(mix, n, rs):
        log_w, comps = split(mix)
        per_comp = np.concatenate(
            [component_draw(lam, n, rs)[:, np.newaxis, :] for lam in comps], axis=1)
        which = np.random.choice(k, size=n, p=np.exp(log_w))
        return np.array([per_comp[i, j, :] for i, j in enumerate(which)])

    def log_q(mix, z):
        log_w, comps = split(mix)
        table = np.vstack([component_logpdf(lam, z) for lam in comps]).T
        return logsumexp(table + log_w, axis=1, keepdims=False)

    def bound(mix, t):
        def one_component(lam):
            z = component_draw(lam, n, rs)
            gap = np.reshape(log_target(z, t), (n, -1)) - np.reshape(log_q(mix, z), (n, -1))
            return np.mean(gap)

        log_w, comps = split(mix)
        return np.sum(np.stack([one_component(lam) for lam in comps]) * np.exp(log_w))

    return start, bound, log_q, draw


def two_funnels(z, t):
    loc, log_scale = z[:, 0], z[:, 1]
    first = norm.logpdf(log_scale, 0, 1.35) + norm.logpdf(loc, -0.5, np.exp(log_scale))
    second = norm.logpdf(log_scale, 0.1, 1.35) + norm.logpdf(loc, 0.5, np.exp(log_scale))
    return np.logaddexp(first, second)


def fit(steps=100):
    start, bound, _, _ = mixture_bbvi(two_funnels, n=40, k=10)
    return adam(grad(lambda mix, t: -bound(mix, t)), start(2), step_size=0.1,
                num_iters=steps)


def case():
    start, bound, _, _ = mixture_bbvi(two_funnels, n=4, k=3)
    loss = lambda mix, t: -bound(mix, t)
    return dict(fn=loss, args=(start(2), 0), argnums=0)
