"""Expectation-maximisation for a discrete hidden Markov model, where the E step is
the gradient of the log partition function (forward algorithm in log space) with
respect to the log parameters: ``value_and_grad`` gives the log likelihood and the
expected counts at once.  Sequences are a Python list folded with ``map``/``partial``."""

import string
from functools import partial

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp

from myc import value_and_grad as vgrad


def rows_to_simplex(m):
    totals = m.sum(-1, keepdims=True)
    return m / np.where(totals > 0.0, totals, 1.0)


def log_partition(log_params, seqs):
    if isinstance(seqs, list):
        return sum(map(partial(log_partition, log_params), seqs))
    log_start, log_trans, log_emit = log_params
    log_fwd = log_start
    for symbol in seqs:
        log_fwd = logsumexp(log_fwd[:, None] + log_trans, axis=0) + log_emit[:, symbol]
    return logsumexp(log_fwd)


def em(params, seqs, report=None):
    def update(current):
        ll, counts = vgrad(log_partition)(list(map(np.log, current)), seqs)
        if report:
            report(ll, current)
        return list(map(rows_to_simplex, counts))

    def moved(old, new):
        close = partial(np.allclose, atol=1e-3, rtol=1e-3)
        return not all(map(close, old, new))

    new = update(params)
    while moved(params, new):
        params, new = new, update(new)
    return new


def random_hmm(n_states, n_symbols):
    return (rows_to_simplex(npr.rand(n_states)),
            rows_to_simplex(npr.rand(n_states, n_states)),
            rows_to_simplex(npr.rand(n_states, n_symbols)))


def encode_text(path, max_lines=-1):
    code = {ch: i for i, ch in enumerate(string.printable)}
    lines = [ln for ln in open(path).readlines() if len(ln) > 2][:max_lines]
    return [np.array([code.get(ch, len(code)) for ch in ln]) for ln in lines], len(code) + 1


def case():
    np.random.seed(0)
    log_params = list(map(np.log, random_hmm(3, 5)))
    seqs = [np.array([0, 1, 4, 2]), np.array([3, 3, 1])]  # short stand-ins for text lines
    return dict(fn=log_partition, args=(log_params, seqs), argnums=0,
                gradient=vgrad(log_partition), transform="value_and_grad")
