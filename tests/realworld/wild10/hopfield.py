"""A Hopfield network as course notebooks build it: Hebbian weights ``W = patterns.T @
patterns / n`` with ``np.fill_diagonal(W, 0)``, the energy ``-0.5 * s @ W @ s``,
asynchronous recall visiting units in ``rng.permutation(n)`` order with ``np.sign``
and a ``while`` loop until no unit changes, and the continuous (tanh) network's
relaxation ``s = np.tanh(beta * W @ s)``.  The objective -- the continuous network's
energy after relaxation from a noisy cue -- is differentiated w.r.t. the stored
patterns and the gain."""

import numpy as np


def train_hebbian(patterns):
    n = patterns.shape[1]
    W = patterns.T @ patterns / n
    np.fill_diagonal(W, 0)
    return W


def energy(W, s):
    return -0.5 * s @ W @ s


def recall(W, state, rng, max_sweeps=10):
    """Asynchronous updates in random order until a sweep changes nothing."""
    s = state.copy()
    n = len(s)
    sweeps = 0
    changed = True
    while changed and sweeps < max_sweeps:
        changed = False
        for i in rng.permutation(n):
            new = 1.0 if W[i] @ s >= 0 else -1.0
            if new != s[i]:
                s[i] = new
                changed = True
        sweeps += 1
    return s


def relax(W, s, beta, steps=8):
    for _ in range(steps):
        s = np.tanh(beta * W @ s)
    return s


def relaxed_energy(params, cue):
    patterns, log_beta = params
    W = train_hebbian(patterns)
    s = relax(W, cue, np.exp(log_beta))
    return energy(W, s) + 0.1 * np.sum((s - patterns[0]) ** 2)


def make_patterns(k=3, n=16, seed=0):
    rng = np.random.default_rng(seed)
    return np.sign(rng.standard_normal((k, n)))


def noisy_cue(pattern, flips=3, seed=1):
    cue = pattern.copy()
    idx = np.random.default_rng(seed).choice(len(cue), flips, replace=False)
    cue[idx] *= -1
    return cue


def case():
    patterns = make_patterns()
    cue = noisy_cue(patterns[0])
    return dict(fn=relaxed_energy, args=((patterns * 0.9, np.log(2.0)), cue), argnums=0)
