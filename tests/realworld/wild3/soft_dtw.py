"""Soft dynamic time warping (Cuturi & Blondel, 2017) between two multivariate series:
the table ``R[i, j]`` filled cell by cell in nested loops with a soft minimum, and a
barycenter-style objective averaging soft-DTW to a few reference series."""

import numpy as np
from scipy.special import logsumexp

import myc


def pairwise_sq_dists(X, Y):
    return np.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)


def softmin3(a, b, c, gamma):
    return -gamma * logsumexp(np.array([-a / gamma, -b / gamma, -c / gamma]))


def soft_dtw(X, Y, gamma=0.1):
    D = pairwise_sq_dists(X, Y)
    n, m = D.shape
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            R[i, j] = D[i - 1, j - 1] + softmin3(R[i - 1, j - 1], R[i - 1, j],
                                                  R[i, j - 1], gamma)
    return R[n, m]


def barycenter_loss(Z, references, gamma=0.1):
    return sum(soft_dtw(Z, ref, gamma) for ref in references) / len(references)


def make_references(seed=0, count=3, length=12):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, length)
    refs = []
    for _ in range(count):
        shift = rng.uniform(-0.5, 0.5)
        refs.append(np.column_stack([np.sin(t + shift), np.cos(2 * t + shift)])
                    + 0.05 * rng.standard_normal((length, 2)))
    return refs


def case():
    refs = make_references()
    Z = np.column_stack([np.sin(np.linspace(0, 2 * np.pi, 10)),
                         np.zeros(10)]) + 0.1
    return dict(fn=barycenter_loss, args=(Z, refs), argnums=0)


if __name__ == "__main__":
    c = case()
    Z, refs = c["args"]
    step = myc.grad(barycenter_loss)
    for it in range(50):
        Z = Z - 0.05 * step(Z, refs)
    print(barycenter_loss(Z, refs))
