"""A character-level LSTM language model over a list of one-hot time steps: the gates
computed with ``np.split`` of one product, the hidden states appended to a list and
stacked, a softmax cross-entropy of the next character."""

import numpy as np
from scipy.special import expit, logsumexp

import myc

TEXT = "the quick brown fox jumps over the lazy dog"


def one_hot_steps(text, vocab):
    idx = {ch: i for i, ch in enumerate(vocab)}
    return [np.eye(len(vocab))[idx[ch]][None, :] for ch in text]


def lstm_step(params, h, c, x):
    z = np.concatenate([x, h], axis=1) @ params["W"] + params["b"]
    i, f, o, g = np.split(z, 4, axis=1)
    c = expit(f) * c + expit(i) * np.tanh(g)
    h = expit(o) * np.tanh(c)
    return h, c


def lstm_outputs(params, steps):
    hidden = params["W"].shape[1] // 4
    h = np.zeros((1, hidden))
    c = np.zeros((1, hidden))
    hs = []
    for x in steps:
        h, c = lstm_step(params, h, c, x)
        hs.append(h)
    return np.stack(hs)[:, 0, :]


def loss(params, steps):
    H = lstm_outputs(params, steps[:-1])
    logits = H @ params["V"] + params["c"]
    targets = np.concatenate(steps[1:], axis=0)
    logp = logits - logsumexp(logits, axis=1, keepdims=True)
    return -np.sum(logp * targets) / len(steps)


def init_params(vocab_size, hidden=12, seed=0):
    rng = np.random.default_rng(seed)
    s = 1 / np.sqrt(vocab_size + hidden)
    return {"W": s * rng.normal(size=(vocab_size + hidden, 4 * hidden)),
            "b": np.zeros(4 * hidden), "V": s * rng.normal(size=(hidden, vocab_size)),
            "c": np.zeros(vocab_size)}


def case():
    text = TEXT[:24]
    vocab = sorted(set(TEXT))
    return dict(fn=loss, args=(init_params(len(vocab)), one_hot_steps(text, vocab)),
                argnums=0)


if __name__ == "__main__":
    c = case()
    params, steps = c["args"]
    g = myc.grad(loss)
    for _ in range(100):
        grads = g(params, steps)
        params = {k: v - 0.5 * grads[k] for k, v in params.items()}
    print(loss(params, steps))
