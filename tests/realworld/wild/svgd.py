"""Stein variational gradient descent for a two-component Gaussian mixture: an RBF
kernel over pairwise differences, its gradient, and the score of every particle."""

import numpy as np
from scipy.special import logsumexp

import myc

MEANS = np.array([[-2.0, 0.0], [2.0, 1.0]])
LOG_WEIGHTS = np.log(np.array([0.3, 0.7]))


def log_target(x):
    diffs = x[:, None, :] - MEANS[None, :, :]
    comp = -0.5 * np.sum(diffs**2, axis=-1) - np.log(2 * np.pi) + LOG_WEIGHTS
    return logsumexp(comp, axis=1)


def total_log_target(x):
    return np.sum(log_target(x))


scores = myc.grad(total_log_target)


def rbf_kernel(x, bandwidth):
    diff = x[:, None, :] - x[None, :, :]
    sq = np.sum(diff**2, axis=-1)
    k = np.exp(-sq / bandwidth)
    grad_k = -2.0 / bandwidth * np.einsum("ij,ijd->jd", k, diff)
    return k, grad_k


def stein_direction(x, bandwidth=1.0):
    k, grad_k = rbf_kernel(x, bandwidth)
    n = x.shape[0]
    return (k @ scores(x) - grad_k) / n


def discrepancy(x, bandwidth):
    phi = stein_direction(x, bandwidth)
    return np.mean(phi**2)


def run(particles, steps=100, lr=0.1):
    step_fn = myc.jit(stein_direction)
    for _ in range(steps):
        h = np.median(np.sum((particles[:, None] - particles[None]) ** 2, -1))
        particles = particles + lr * step_fn(particles, h / np.log(len(particles) + 1))
    return particles


def case():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12, 2))
    return dict(fn=discrepancy, args=(x, 1.3), argnums=(0, 1))


if __name__ == "__main__":
    out = run(np.random.default_rng(0).normal(size=(50, 2)))
    print(out.mean(0))
