"""A linear-chain conditional random field for sequence tagging: emission scores from a
linear model of each token's features, a transition matrix, the log-partition by the
forward algorithm (``logsumexp`` over the previous tag, a loop over time), and Viterbi
decoding with a backpointer table filled in place and followed back (not differentiated;
jitted)."""

import numpy as np
from scipy.special import logsumexp

import myc


def emissions(params, X):
    return X @ params["W"] + params["b"]


def log_partition(E, trans, start):
    alpha = start + E[0]
    for t in range(1, E.shape[0]):
        alpha = logsumexp(alpha[:, None] + trans, axis=0) + E[t]
    return logsumexp(alpha)


def path_score(E, trans, start, tags):
    score = start[tags[0]] + E[0, tags[0]]
    for t in range(1, len(tags)):
        score = score + trans[tags[t - 1], tags[t]] + E[t, tags[t]]
    return score


def neg_log_likelihood(params, sentences, l2=1e-2):
    total = 0.0
    for X, tags in sentences:
        E = emissions(params, X)
        total += log_partition(E, params["trans"], params["start"]) - \
            path_score(E, params["trans"], params["start"], tags)
    return total / len(sentences) + l2 * np.sum(params["W"] ** 2)


@myc.jit
def viterbi(E, trans, start):
    T, K = E.shape
    delta = start + E[0]
    back = np.zeros((T, K), dtype=np.int64)
    for t in range(1, T):
        cand = delta[:, None] + trans
        back[t] = np.argmax(cand, axis=0)
        delta = np.max(cand, axis=0) + E[t]
    path = np.zeros(T, dtype=np.int64)
    path[T - 1] = np.argmax(delta)
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path, np.max(delta)


def make_data(seed=0, n_sentences=4, n_features=5, n_tags=3):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_features, n_tags))
    sentences = []
    for s in range(n_sentences):
        T = 6 + s
        X = rng.normal(size=(T, n_features))
        tags = np.argmax(X @ W + 0.5 * rng.normal(size=(T, n_tags)), axis=1)
        sentences.append((X, tags))
    return sentences


def init_params(n_features=5, n_tags=3, seed=1):
    rng = np.random.default_rng(seed)
    return {"W": 0.1 * rng.normal(size=(n_features, n_tags)), "b": np.zeros(n_tags),
            "trans": 0.1 * rng.normal(size=(n_tags, n_tags)), "start": np.zeros(n_tags)}


def case():
    return dict(fn=neg_log_likelihood, args=(init_params(), make_data()), argnums=0)


if __name__ == "__main__":
    params, data = init_params(), make_data()
    g = myc.grad(neg_log_likelihood)
    for _ in range(100):
        grads = g(params, data)
        params = {k: v - 0.1 * grads[k] for k, v in params.items()}
    X, tags = data[0]
    print(viterbi(emissions(params, X), params["trans"], params["start"])[0], tags)
