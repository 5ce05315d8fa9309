"""A variational autoencoder on binary data: an MLP encoder giving the mean and log
variance of a diagonal Gaussian, the reparameterisation trick ``z = mu + exp(lv / 2) *
eps`` with draws from a generator passed in, a Bernoulli decoder by ``log_expit``, and
the analytic KL term; parameters in a dict."""

import numpy as np
from scipy.special import expit, log_expit

import myc


def init_params(d_in=12, d_hid=8, d_z=2, seed=0):
    r = np.random.default_rng(seed)
    s = 0.3
    return {
        "enc_W": s * r.standard_normal((d_in, d_hid)), "enc_b": np.zeros(d_hid),
        "mu_W": s * r.standard_normal((d_hid, d_z)), "mu_b": np.zeros(d_z),
        "lv_W": s * r.standard_normal((d_hid, d_z)), "lv_b": np.zeros(d_z),
        "dec_W1": s * r.standard_normal((d_z, d_hid)), "dec_b1": np.zeros(d_hid),
        "dec_W2": s * r.standard_normal((d_hid, d_in)), "dec_b2": np.zeros(d_in),
    }


def encode(params, x):
    h = np.tanh(x @ params["enc_W"] + params["enc_b"])
    return h @ params["mu_W"] + params["mu_b"], h @ params["lv_W"] + params["lv_b"]


def decode(params, z):
    h = np.tanh(z @ params["dec_W1"] + params["dec_b1"])
    return h @ params["dec_W2"] + params["dec_b2"]  # logits


def bernoulli_loglik(x, logits):
    return np.sum(x * log_expit(logits) + (1 - x) * log_expit(-logits), axis=-1)


def gaussian_kl(mu, log_var):
    return -0.5 * np.sum(1 + log_var - mu ** 2 - np.exp(log_var), axis=-1)


def negative_elbo(params, x, rng, n_samples=2):
    mu, log_var = encode(params, x)
    rec = 0.0
    for _ in range(n_samples):
        eps = rng.standard_normal(mu.shape)
        z = mu + np.exp(0.5 * log_var) * eps
        rec = rec + bernoulli_loglik(x, decode(params, z))
    elbo = rec / n_samples - gaussian_kl(mu, log_var)
    return -np.mean(elbo)


def make_data(n=16, d=12, seed=1):
    r = np.random.default_rng(seed)
    protos = (r.uniform(size=(3, d)) < 0.5).astype(float)
    picks = r.integers(0, 3, size=n)
    flip = r.uniform(size=(n, d)) < 0.1
    return np.abs(protos[picks] - flip)


def case():
    return dict(fn=negative_elbo, args=(init_params(), make_data(), np.random.default_rng(3)),
                argnums=0)


def train(steps=100, lr=0.05):
    params, x = init_params(), make_data()
    g = myc.value_and_grad(negative_elbo)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        loss, grads = g(params, x, rng)
        params = {k: params[k] - lr * grads[k] for k in params}
        losses.append(loss)
    return params, losses


if __name__ == "__main__":
    params, losses = train()
    print(losses[0], losses[-1], expit(decode(params, encode(params, make_data())[0]))[0])
