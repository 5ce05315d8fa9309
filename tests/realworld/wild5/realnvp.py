"""RealNVP affine coupling layers on 2-D data: alternating binary masks
(``np.arange(d) % 2``, then ``1 - mask``), scale and translation networks held in a list
of dicts, ``x_masked = mask * x``, ``y = x_masked + (1 - mask) * (x * np.exp(s) + t)``
with a ``np.tanh``-bounded scale, the log-determinant ``np.sum((1 - mask) * s, axis=1)``
accumulated over the layers, a standard normal base density; the negative
log-likelihood, differentiated with respect to the list of dicts."""

import math

import numpy as np

import myc


def mlp(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def coupling_forward(layer, x, mask):
    x_masked = mask * x
    st = mlp(layer, x_masked)
    s, t = st[:, :x.shape[1]], st[:, x.shape[1]:]
    s = np.tanh(s) * (1 - mask)
    t = t * (1 - mask)
    y = x_masked + (1 - mask) * (x * np.exp(s) + t)
    return y, np.sum(s, axis=1)


def flow_forward(layers, x):
    mask = (np.arange(x.shape[1]) % 2).astype(x.dtype)
    log_det = np.zeros(x.shape[0])
    for layer in layers:
        x, ld = coupling_forward(layer, x, mask)
        log_det += ld
        mask = 1 - mask
    return x, log_det


def nll(layers, x):
    z, log_det = flow_forward(layers, x)
    log_pz = -0.5 * np.sum(z ** 2, axis=1) - 0.5 * z.shape[1] * math.log(2 * math.pi)
    return -np.mean(log_pz + log_det)


def init_layers(n_layers=4, d=2, hidden=8, seed=0):
    r = np.random.default_rng(seed)
    return [{"W1": 0.3 * r.standard_normal((d, hidden)), "b1": np.zeros(hidden),
             "W2": 0.1 * r.standard_normal((hidden, 2 * d)), "b2": np.zeros(2 * d)}
            for _ in range(n_layers)]


def two_moons(n=64, noise=0.1, seed=1):
    r = np.random.default_rng(seed)
    t = r.uniform(0, math.pi, n)
    upper = r.random(n) < 0.5
    x = np.where(upper, np.cos(t), 1 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    return np.stack([x, y], axis=1) + noise * r.standard_normal((n, 2))


def case():
    return dict(fn=nll, args=(init_layers(), two_moons()), argnums=0)


if __name__ == "__main__":
    layers, x = init_layers(), two_moons()
    g = myc.value_and_grad(nll)
    for i in range(50):
        v, d = g(layers, x)
        layers = [{k: p[k] - 0.05 * dp[k] for k in p} for p, dp in zip(layers, d)]
    print(v)
