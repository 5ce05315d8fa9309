"""A mixture density network (Bishop, 1994) on the inverted sine problem: a tanh MLP
outputs the weights, means and log scales of a Gaussian mixture per input, and the loss
is the negative log-likelihood by ``logsumexp`` over components."""

import numpy as np
from scipy.special import logsumexp

import myc


def mdn_outputs(params, x, n_components):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    logits = out[:, :n_components]
    mu = out[:, n_components:2 * n_components]
    log_sigma = out[:, 2 * n_components:]
    log_pi = logits - logsumexp(logits, axis=1, keepdims=True)
    return log_pi, mu, log_sigma


def nll(params, x, y, n_components=3):
    log_pi, mu, log_sigma = mdn_outputs(params, x, n_components)
    z = (y - mu) / np.exp(log_sigma)
    log_prob = log_pi - 0.5 * z ** 2 - log_sigma - 0.5 * np.log(2 * np.pi)
    return -np.mean(logsumexp(log_prob, axis=1))


def make_data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.uniform(-1, 1, size=(n, 1))
    x = np.sin(3 * y) + 0.3 * y + 0.05 * rng.standard_normal((n, 1))
    return x, y


def init_params(hidden=20, n_components=3, seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": rng.normal(size=(1, hidden)), "b1": np.zeros(hidden),
            "W2": 0.1 * rng.normal(size=(hidden, 3 * n_components)),
            "b2": np.zeros(3 * n_components)}


def case():
    x, y = make_data()
    return dict(fn=nll, args=(init_params(), x, y), argnums=0)


if __name__ == "__main__":
    c = case()
    params, x, y = c["args"]
    vg = myc.value_and_grad(nll)
    for _ in range(500):
        v, g = vg(params, x, y)
        params = {k: p - 0.05 * g[k] for k, p in params.items()}
    print(v)
