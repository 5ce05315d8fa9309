"""k-means from scratch (the ML-from-scratch repositories' version): distances by
``np.linalg.norm(X[:, None] - centroids[None], axis=2)``, ``np.argmin(..., axis=1)``
labels, new centroids ``np.array([X[labels == k].mean(axis=0) for k in range(K)])``
with a boolean mask per cluster, a convergence test by ``np.allclose``; the inertia of a
fitted assignment differentiated w.r.t. the centroids (the labels are piecewise
constant), and one Lloyd step differentiated w.r.t. the data."""

import numpy as np


def assign(X, centroids):
    distances = np.linalg.norm(X[:, np.newaxis] - centroids[np.newaxis], axis=2)
    return np.argmin(distances, axis=1)


def update_centroids(X, labels, K):
    return np.array([X[labels == k].mean(axis=0) for k in range(K)])


def inertia(centroids, X):
    labels = assign(X, centroids)
    return np.sum((X - centroids[labels]) ** 2)


def lloyd_objective(X, centroids, K=3):
    """One Lloyd step: the new centroids' inertia, as a function of the data."""
    labels = assign(X, centroids)
    new_centroids = update_centroids(X, labels, K)
    return inertia(new_centroids, X)


def kmeans(X, K, max_iters=20, seed=0):
    rng = np.random.default_rng(seed)
    centroids = X[rng.choice(len(X), K, replace=False)]
    for _ in range(max_iters):
        labels = assign(X, centroids)
        new_centroids = update_centroids(X, labels, K)
        if np.allclose(new_centroids, centroids):
            break
        centroids = new_centroids
    return centroids, labels


def make_data(seed=5):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [3.0, 1.0], [0.5, 3.5]])
    return np.concatenate([c + 0.5 * rng.normal(size=(15, 2)) for c in centers])


def case():
    X = make_data()
    return dict(fn=lloyd_objective, args=(X, X[[0, 15, 30]] + 0.1), argnums=0)
