"""t-SNE's objective: Gaussian affinities in the data space (calibrated once, outside),
Student-t affinities in the embedding, with the diagonal zeroed by fill_diagonal."""

import numpy as np

import myc


def pairwise_sq_dists(x):
    sq = np.sum(x**2, axis=1)
    return np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0)


def joint_probabilities(data, sigma=1.0):
    p = np.exp(-pairwise_sq_dists(data) / (2 * sigma**2))
    np.fill_diagonal(p, 0.0)
    p = p / p.sum(axis=1, keepdims=True)
    return (p + p.T) / (2 * p.shape[0])


def kl_divergence(y, P, dof=1.0):
    num = (1.0 + pairwise_sq_dists(y) / dof) ** (-(dof + 1) / 2)
    np.fill_diagonal(num, 0.0)
    Q = np.maximum(num / np.sum(num), 1e-12)
    return np.sum(P * np.log(np.maximum(P, 1e-12) / Q))


kl_grad = myc.grad(kl_divergence)


def embed(data, n_iter=200, lr=50.0, seed=0):
    P = joint_probabilities(data)
    y = 1e-2 * np.random.default_rng(seed).standard_normal((data.shape[0], 2))
    velocity = np.zeros_like(y)
    for it in range(n_iter):
        momentum = 0.5 if it < 50 else 0.8
        velocity = momentum * velocity - lr * kl_grad(y, P)
        y = y + velocity
    return y


def case():
    rng = np.random.default_rng(7)
    data = np.concatenate([rng.normal(0, 1, (8, 5)), rng.normal(4, 1, (8, 5))])
    y = rng.normal(size=(16, 2))
    return dict(fn=kl_divergence, args=(y, joint_probabilities(data)), argnums=0)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    print(embed(rng.normal(size=(30, 4)))[:3])
