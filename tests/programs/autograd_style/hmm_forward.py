"""The forward algorithm of a hidden Markov model with Gaussian emissions: the
parameters are a dict of unnormalized logits, the filtered messages a list."""

import numpy as np


def log_normalize(logits, axis):
    m = np.max(logits, axis=axis, keepdims=True)
    return logits - m - np.log(np.sum(np.exp(logits - m), axis=axis, keepdims=True))


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def emission_log_probs(params, y):
    return -0.5 * (y - params["emission means"]) ** 2 - 0.5 * np.log(2 * np.pi)


def hmm_log_likelihood(params, observations):
    log_pi = log_normalize(params["initial"], 0)
    log_A = log_normalize(params["transition"], 1)
    alphas = [log_pi + emission_log_probs(params, observations[0])]
    for y in observations[1:]:
        prev = alphas[-1]
        alpha = np.array([logsumexp(prev + log_A[:, j]) for j in range(log_A.shape[1])])
        alphas.append(alpha + emission_log_probs(params, y))
    return logsumexp(alphas[-1])


def objective(params, observations):
    return -hmm_log_likelihood(params, observations)


_rs = np.random.RandomState(7)
PARAMS = {"initial": 0.1 * _rs.randn(3), "transition": 0.5 * _rs.randn(3, 3),
          "emission means": np.array([-1.0, 0.0, 1.5])}
OBS = _rs.randn(6)
CASE = dict(fn=objective, args=(PARAMS, OBS), argnums=0)
