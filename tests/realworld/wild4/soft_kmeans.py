"""k-means two ways: Lloyd's algorithm with hard assignments (``np.argmin`` of squared
distances, one-hot rows from ``np.eye(k)[labels]``, centroid means by a matrix product)
run in a ``while`` loop until the assignments stop changing, and the differentiable
soft k-means objective (responsibilities by a temperature softmax) whose gradient with
respect to the centroids is checked."""

import numpy as np

import myc


def sq_dists(X, C):
    return np.sum(X ** 2, axis=1)[:, None] - 2 * X @ C.T + np.sum(C ** 2, axis=1)[None, :]


@myc.jit
def lloyd(X, C, max_iter=50):
    k = C.shape[0]
    labels = np.argmin(sq_dists(X, C), axis=1)
    it, changed = 0, True
    while changed and it < max_iter:
        onehot = np.eye(k)[labels]
        counts = onehot.sum(axis=0)
        C = (onehot.T @ X) / np.maximum(counts, 1.0)[:, None]
        new = np.argmin(sq_dists(X, C), axis=1)
        changed = np.any(new != labels)
        labels = new
        it += 1
    return C, labels, it


def soft_kmeans_loss(C, X, temperature=0.5):
    D = sq_dists(X, C)
    logits = -D / temperature
    logits = logits - logits.max(axis=1, keepdims=True)
    R = np.exp(logits)
    R = R / R.sum(axis=1, keepdims=True)
    return np.sum(R * D) / len(X)


def make_data(n=60, seed=0):
    r = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [3.0, 3.0], [-3.0, 2.0]])
    return centers[r.integers(0, 3, n)] + 0.5 * r.standard_normal((n, 2))


def case():
    X = make_data()
    return dict(fn=soft_kmeans_loss, args=(X[[0, 1, 2]] + 0.1, X), argnums=0)


if __name__ == "__main__":
    X = make_data()
    print(lloyd(X, X[:3]))
