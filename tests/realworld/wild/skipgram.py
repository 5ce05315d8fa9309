"""Word2vec's skip-gram with negative sampling on a toy corpus: embedding lookups by
integer arrays, log-sigmoid by logaddexp, and a sparse SGD update with np.add.at."""

import numpy as np

import myc

CORPUS = ("the cat sat on the mat the dog sat on the log "
          "a cat and a dog met on a mat").split()


def build_pairs(words, window=2):
    vocab = sorted(set(words))
    index = {w: i for i, w in enumerate(vocab)}
    ids = [index[w] for w in words]
    centers, contexts = [], []
    for pos, c in enumerate(ids):
        for off in range(-window, window + 1):
            if off != 0 and 0 <= pos + off < len(ids):
                centers.append(c)
                contexts.append(ids[pos + off])
    return vocab, np.array(centers), np.array(contexts)


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def sgns_loss(emb_in, emb_out, centers, contexts, negatives):
    v = emb_in[centers]                                  # (B, d)
    pos = np.sum(v * emb_out[contexts], axis=-1)         # (B,)
    neg = np.einsum("bd,bkd->bk", v, emb_out[negatives])  # (B, K)
    return -np.mean(log_sigmoid(pos) + np.sum(log_sigmoid(-neg), axis=-1))


loss_grad = myc.grad(sgns_loss, argnums=(0, 1))


def train(vocab, centers, contexts, dim=8, k=3, epochs=20, lr=0.5, seed=0):
    rng = np.random.default_rng(seed)
    emb_in = 0.1 * rng.standard_normal((len(vocab), dim))
    emb_out = np.zeros((len(vocab), dim))
    for _ in range(epochs):
        negatives = rng.integers(0, len(vocab), size=(len(centers), k))
        g_in, g_out = loss_grad(emb_in, emb_out, centers, contexts, negatives)
        rows = np.unique(centers)
        upd = np.zeros_like(emb_in)
        np.add.at(upd, rows, g_in[rows])
        emb_in = emb_in - lr * upd
        emb_out = emb_out - lr * g_out
    return emb_in, emb_out


def case():
    vocab, centers, contexts = build_pairs(CORPUS)
    rng = np.random.default_rng(1)
    emb_in = 0.3 * rng.standard_normal((len(vocab), 6))
    emb_out = 0.3 * rng.standard_normal((len(vocab), 6))
    negatives = rng.integers(0, len(vocab), size=(len(centers), 4))
    return dict(fn=sgns_loss, args=(emb_in, emb_out, centers, contexts, negatives),
                argnums=(0, 1), gradient=loss_grad)


if __name__ == "__main__":
    vocab, c, x = build_pairs(CORPUS)
    e_in, e_out = train(vocab, c, x)
    print(vocab, e_in[:2])
