"""A two-layer graph convolutional network (Kipf & Welling) for semi-supervised node
classification, the NumPy way: the adjacency built from an edge list by index
assignment ``A[src, dst] = 1.0`` (both directions), self loops ``A + np.eye(n)``, the
symmetric normalisation ``D^-1/2 (A + I) D^-1/2`` by broadcasting the inverse square
roots of the degrees, ReLU layers in a dict of parameters, dropout-free, and the
cross-entropy on the labelled nodes picked by a boolean mask ``logits[train_mask]``;
an L2 penalty on the first layer's weights only (as the paper does)."""

import numpy as np
from scipy.special import logsumexp

import myc


def normalized_adjacency(edges, n):
    A = np.zeros((n, n))
    src, dst = edges[:, 0], edges[:, 1]
    A[src, dst] = 1.0
    A[dst, src] = 1.0
    A_hat = A + np.eye(n)
    d_inv_sqrt = 1.0 / np.sqrt(A_hat.sum(axis=1))
    return d_inv_sqrt[:, None] * A_hat * d_inv_sqrt[None, :]


def forward(params, A_norm, X):
    h = np.maximum(A_norm @ X @ params["W0"] + params["b0"], 0.0)
    return A_norm @ h @ params["W1"] + params["b1"]


def loss(params, edges, X, labels, train_mask, weight_decay=5e-4):
    A_norm = normalized_adjacency(edges, X.shape[0])
    logits = forward(params, A_norm, X)
    log_probs = logits - logsumexp(logits, axis=1, keepdims=True)
    picked = log_probs[np.arange(len(labels)), labels]
    nll = -np.mean(picked[train_mask])
    return nll + weight_decay * np.sum(params["W0"] ** 2)


def accuracy(params, edges, X, labels, mask):
    logits = forward(params, normalized_adjacency(edges, X.shape[0]), X)
    return np.mean(np.argmax(logits, axis=1)[mask] == labels[mask])


def make_graph(n=24, n_classes=3, n_feat=5, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % n_classes
    edges = []
    for i in range(n):
        for j in range(i + 1, n):
            p = 0.4 if labels[i] == labels[j] else 0.03
            if rng.random() < p:
                edges.append((i, j))
    edges = np.array(edges)
    X = rng.normal(size=(n, n_feat)) + 0.5 * np.eye(n_classes, n_feat)[labels]
    train_mask = np.zeros(n, dtype=bool)
    train_mask[:9] = True
    return edges, X, labels, train_mask


def init_params(n_feat=5, hidden=8, n_classes=3, seed=1):
    rng = np.random.default_rng(seed)
    return {"W0": rng.normal(scale=0.5, size=(n_feat, hidden)), "b0": np.zeros(hidden),
            "W1": rng.normal(scale=0.5, size=(hidden, n_classes)), "b1": np.zeros(n_classes)}


def case():
    edges, X, labels, train_mask = make_graph()
    return dict(fn=loss, args=(init_params(), edges, X, labels, train_mask), argnums=0)


if __name__ == "__main__":
    edges, X, labels, mask = make_graph()
    params = init_params()
    g = myc.value_and_grad(loss)
    for step in range(200):
        v, d = g(params, edges, X, labels, mask)
        params = {k: params[k] - 0.1 * d[k] for k in params}
    print(v, accuracy(params, edges, X, labels, ~mask))
