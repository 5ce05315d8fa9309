"""Learning to rank from query groups: ListMLE (items ordered by ``np.argsort(-labels)``,
scores rearranged by ``np.take_along_axis``, the Plackett-Luce normalisers as a reversed
log-cumulative-sum-exp ``np.log(np.cumsum(np.exp(s[:, ::-1]), axis=1))[:, ::-1]``),
ListNet's softmax cross-entropy, RankNet's pairwise logistic loss over an ``np.triu``
mask of label-ordered pairs, and NDCG by ``np.sort`` with ``np.log2`` discounts; a linear
scorer on (queries, items, features) data, differentiated with respect to its weights."""

import numpy as np

import myc


def listmle(scores, labels):
    order = np.argsort(-labels, axis=1)
    s = np.take_along_axis(scores, order, axis=1)
    s = s - s.max(axis=1, keepdims=True)
    log_norms = np.log(np.cumsum(np.exp(s[:, ::-1]), axis=1))[:, ::-1]
    return np.mean(np.sum(log_norms - s, axis=1))


def listnet(scores, labels, temperature=1.0):
    p_true = np.exp(labels / temperature)
    p_true = p_true / p_true.sum(axis=1, keepdims=True)
    z = scores - scores.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.mean(np.sum(p_true * log_p, axis=1))


def ranknet(scores, labels, sigma=1.0):
    n = scores.shape[1]
    s_diff = scores[:, :, None] - scores[:, None, :]
    better = (labels[:, :, None] > labels[:, None, :]).astype(float)
    pairs = better * np.triu(np.ones((n, n)), k=1) + better * np.tril(np.ones((n, n)), k=-1)
    return np.sum(pairs * np.logaddexp(0.0, -sigma * s_diff)) / max(np.sum(pairs), 1.0)


def dcg(gains, k):
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    return np.sum((2.0 ** gains[:, :k] - 1.0) * discounts, axis=1)


def ndcg(scores, labels, k=5):
    order = np.argsort(-scores, axis=1)
    ideal = -np.sort(-labels, axis=1)
    return np.mean(dcg(np.take_along_axis(labels, order, axis=1), k) / dcg(ideal, k))


def ranking_loss(w, X, labels, weights=(1.0, 0.5, 0.5)):
    scores = X @ w
    a, b, c = weights
    return a * listmle(scores, labels) + b * listnet(scores, labels) + c * ranknet(scores, labels)


def make_data(q=6, n=8, d=5, seed=0):
    r = np.random.default_rng(seed)
    X = r.standard_normal((q, n, d))
    w_true = r.standard_normal(d)
    labels = np.clip(np.round(X @ w_true + 0.5 * r.standard_normal((q, n))), 0, 3)
    return X, labels


def case():
    X, labels = make_data()
    return dict(fn=ranking_loss, args=(0.1 * np.arange(5.0) - 0.2, X, labels), argnums=0)


if __name__ == "__main__":
    X, labels = make_data()
    w = np.zeros(X.shape[2])
    g = myc.grad(ranking_loss)
    for _ in range(50):
        w = w - 0.2 * g(w, X, labels)
    print(ranking_loss(w, X, labels), myc.jit(ndcg)(X @ w, labels))
