"""The LSTM version of rnn.py: four gates from the shared ``affine`` helper, a local
``draw(*shape)`` closure over a RandomState for the parameter dict, and a per-step
(hidden, cell) pair returned from a nested function."""

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp

from myc import grad
from myc.misc.optimizers import adam
from tests.realworld.rnn import affine, build, sigmoid


def random_lstm(n_in, n_state, n_out, scale=0.01, rs=None):
    rs = npr.RandomState(0) if rs is None else rs

    def draw(*shape):
        return rs.randn(*shape) * scale

    gate_rows = n_in + n_state + 1
    return {"init cells": draw(1, n_state), "init hiddens": draw(1, n_state),
            "change": draw(gate_rows, n_state), "forget": draw(gate_rows, n_state),
            "ingate": draw(gate_rows, n_state), "outgate": draw(gate_rows, n_state),
            "predict": draw(n_state + 1, n_out)}


def lstm_log_probs(theta, seqs):
    def step(x, h, c):
        candidate = np.tanh(affine(theta["change"], x, h))
        keep = sigmoid(affine(theta["forget"], x, h))
        admit = sigmoid(affine(theta["ingate"], x, h))
        emit = sigmoid(affine(theta["outgate"], x, h))
        c = keep * c + admit * candidate
        return emit * np.tanh(c), c

    def readout(h):
        scores = affine(theta["predict"], h)
        return scores - logsumexp(scores, axis=1, keepdims=True)

    n_seqs = seqs.shape[1]
    h = np.repeat(theta["init hiddens"], n_seqs, axis=0)
    c = np.repeat(theta["init cells"], n_seqs, axis=0)
    per_step = [readout(h)]
    for x in seqs:
        h, c = step(x, h, c)
        per_step.append(readout(h))
    return per_step


def mean_log_lik(theta, seqs, targets):
    per_step = lstm_log_probs(theta, seqs)
    n_steps, n_seqs, _ = seqs.shape
    total = 0.0
    for s in range(n_steps):
        total += np.sum(per_step[s] * targets[s])
    return total / (n_steps * n_seqs)


def train(steps=100):
    seqs, theta = build("lstm.py", random_lstm)
    loss = lambda th, i: -mean_log_lik(th, seqs, seqs)
    return adam(grad(loss), theta, step_size=0.1, num_iters=steps)


def case():
    seqs, theta = build("lstm.py", random_lstm)

    def loss(th, i):
        return -mean_log_lik(th, seqs, seqs)

    return dict(fn=loss, args=(theta, 0), argnums=0)
