"""A character-level recurrent net over one-hot text (this file's own first lines):
parameters in a dict, a Python loop over time steps collecting per-step log
probabilities in a list, a ``*args`` helper that appends a bias column with ``hstack``."""

from os.path import dirname, join

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp

from myc import grad
from myc.misc.optimizers import adam


def sigmoid(u):
    return 0.5 + 0.5 * np.tanh(u)


def affine(W, *parts):
    ones = np.ones((parts[0].shape[0], 1))
    return np.dot(np.hstack(parts + (ones,)), W)


def random_rnn(n_in, n_state, n_out, scale=0.01, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return {"init hiddens": rs.randn(1, n_state) * scale,
            "change": rs.randn(n_in + n_state + 1, n_state) * scale,
            "predict": rs.randn(n_state + 1, n_out) * scale}


def rnn_log_probs(theta, seqs):
    def step(x, h):
        return np.tanh(affine(theta["change"], x, h))

    def readout(h):
        scores = affine(theta["predict"], h)
        return scores - logsumexp(scores, axis=1, keepdims=True)

    h = np.repeat(theta["init hiddens"], seqs.shape[1], axis=0)
    per_step = [readout(h)]
    for x in seqs:
        h = step(x, h)
        per_step.append(readout(h))
    return per_step


def mean_log_lik(theta, seqs, targets):
    per_step = rnn_log_probs(theta, seqs)
    n_steps, n_seqs, _ = seqs.shape
    total = 0.0
    for s in range(n_steps):
        total += np.sum(per_step[s] * targets[s])
    return total / (n_steps * n_seqs)


def one_hot(text, n_symbols):
    codes = np.array([ord(ch) for ch in text])
    return np.array(codes[:, None] == np.arange(n_symbols)[None, :], dtype=int)


def decode(rows):
    return "".join(chr(np.argmax(r)) for r in rows)


def text_batch(path, length, n_symbols, max_lines=-1):
    with open(path) as fh:
        lines = fh.readlines()[:max_lines]
    lines = [ln for ln in lines if len(ln) > 2]
    batch = np.zeros((length, len(lines), n_symbols))
    for j, ln in enumerate(lines):
        batch[:, j, :] = one_hot((ln + " " * length)[:length], n_symbols)
    return batch


def build(module_file, make_params):
    seqs = text_batch(join(dirname(__file__), module_file), length=5, n_symbols=128,
                      max_lines=3)
    theta = make_params(n_in=128, n_state=6, n_out=128, scale=0.01)
    return seqs, theta


def train(steps=100):
    seqs, theta = build("rnn.py", random_rnn)
    loss = lambda th, i: -mean_log_lik(th, seqs, seqs)
    return adam(grad(loss), theta, step_size=0.1, num_iters=steps)


def case():
    seqs, theta = build("rnn.py", random_rnn)

    def loss(th, i):
        return -mean_log_lik(th, seqs, seqs)

    return dict(fn=loss, args=(theta, 0), argnums=0)
