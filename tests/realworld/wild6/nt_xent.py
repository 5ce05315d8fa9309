"""SimCLR's NT-Xent contrastive loss on a small MLP encoder, as contrastive-learning
tutorials write it in NumPy: two augmented views (noise and feature dropout from a
generator passed in) stacked by ``np.concatenate``, embeddings L2-normalised by
``np.linalg.norm(..., axis=1, keepdims=True)``, the cosine similarity matrix
``z @ z.T / tau``, its diagonal removed by boolean assignment ``sim[np.eye(2n,
dtype=bool)] = -np.inf``, the positive of row ``i`` at ``(i + n) % (2n)``, and
``scipy.special.logsumexp`` over rows; a list of ``(W, b)`` layers with ``tanh``."""

import numpy as np
from scipy.special import logsumexp

import myc


def encode(layers, x):
    for i, (W, b) in enumerate(layers):
        x = x @ W + b
        if i < len(layers) - 1:
            x = np.tanh(x)
    return x


def augment(x, rng, noise=0.1, drop=0.2):
    keep = rng.random(x.shape) > drop
    return (x + noise * rng.standard_normal(x.shape)) * keep


def nt_xent(layers, x, rng, tau=0.5):
    n = x.shape[0]
    views = np.concatenate([augment(x, rng), augment(x, rng)], axis=0)
    z = encode(layers, views)
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    sim = z @ z.T / tau
    sim[np.eye(2 * n, dtype=bool)] = -np.inf
    positives = (np.arange(2 * n) + n) % (2 * n)
    log_prob = sim[np.arange(2 * n), positives] - logsumexp(sim, axis=1)
    return -np.mean(log_prob)


def init_layers(sizes=(6, 10, 4), seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(scale=1 / np.sqrt(m), size=(m, k)), np.zeros(k))
            for m, k in zip(sizes[:-1], sizes[1:])]


def make_data(n=8, d=6, seed=1):
    return np.random.default_rng(seed).normal(size=(n, d))


def case():
    return dict(fn=nt_xent, args=(init_layers(), make_data(), np.random.default_rng(2)),
                argnums=0)


if __name__ == "__main__":
    layers, x, rng = init_layers(), make_data(), np.random.default_rng(0)
    g = myc.value_and_grad(nt_xent)
    for _ in range(50):
        v, d = g(layers, x, rng)
        layers = [(W - 0.1 * dW, b - 0.1 * db) for (W, b), (dW, db) in zip(layers, d)]
    print(v)
