"""GloVe word vectors: the weighted least-squares objective over the nonzero cells of a
co-occurrence matrix, read through index arrays ``W[rows]``, ``C[cols]``, biases
``bw[rows]``, the weighting ``np.minimum((X / x_max) ** alpha, 1)``; parameters a
tuple, trained by AdaGrad with ``np.add.at``-free dense gradients."""

import numpy as np

import myc


def glove_loss(params, rows, cols, counts, x_max=10.0, alpha=0.75):
    W, C, bw, bc = params
    weight = np.minimum((counts / x_max) ** alpha, 1.0)
    diff = np.sum(W[rows] * C[cols], axis=1) + bw[rows] + bc[cols] - np.log(counts)
    return 0.5 * np.sum(weight * diff ** 2)


def cooccurrence(vocab=15, n_tokens=300, window=2, seed=0):
    r = np.random.default_rng(seed)
    corpus = np.minimum(r.zipf(1.5, size=n_tokens) - 1, vocab - 1)
    X = np.zeros((vocab, vocab))
    for i, w in enumerate(corpus):
        for j in range(max(0, i - window), min(len(corpus), i + window + 1)):
            if j != i:
                X[w, corpus[j]] += 1.0 / abs(i - j)
    rows, cols = np.nonzero(X)
    return rows, cols, X[rows, cols]


def init_params(vocab=15, dim=4, seed=1):
    r = np.random.default_rng(seed)
    return (0.1 * r.standard_normal((vocab, dim)), 0.1 * r.standard_normal((vocab, dim)),
            np.zeros(vocab), np.zeros(vocab))


def train(steps=50, lr=0.1):
    rows, cols, counts = cooccurrence()
    params = init_params()
    hist = tuple(np.full_like(p, 1e-8) for p in params)
    g = myc.value_and_grad(glove_loss)
    losses = []
    for _ in range(steps):
        loss, grads = g(params, rows, cols, counts)
        hist = tuple(h + d ** 2 for h, d in zip(hist, grads))
        params = tuple(p - lr * d / np.sqrt(h) for p, d, h in zip(params, grads, hist))
        losses.append(loss)
    return params, losses


def case():
    rows, cols, counts = cooccurrence()
    return dict(fn=glove_loss, args=(init_params(), rows, cols, counts), argnums=0,
                transform="value_and_grad")


if __name__ == "__main__":
    print(train()[1][::10])
