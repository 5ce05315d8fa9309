"""A Gaussian-emission hidden Markov model fitted by direct gradient ascent on the
log-likelihood: the scaled forward pass writes each normalised ``alpha[t]`` into a
table, the backward pass fills ``beta`` from the end, and the objective adds the
expected complete-data log-likelihood under the posteriors (``gamma = alpha * beta``)
held fixed by the caller -- the EM surrogate an autodiff user writes."""

import numpy as np
from scipy.special import log_softmax

import myc


def gaussian_logpdf(y, mu, log_sigma):
    return -0.5 * ((y[:, None] - mu[None, :]) / np.exp(log_sigma)) ** 2 - log_sigma - \
        0.5 * np.log(2 * np.pi)


def forward_backward(params, y):
    log_A = log_softmax(params["logits_A"], axis=1)
    log_pi = log_softmax(params["logits_pi"])
    B = np.exp(gaussian_logpdf(y, params["mu"], params["log_sigma"]))
    A = np.exp(log_A)
    T, K = B.shape
    alpha = np.zeros((T, K))
    scale = np.zeros(T)
    a = np.exp(log_pi) * B[0]
    scale[0] = np.sum(a)
    alpha[0] = a / scale[0]
    for t in range(1, T):
        a = (alpha[t - 1] @ A) * B[t]
        scale[t] = np.sum(a)
        alpha[t] = a / scale[t]
    beta = np.ones((T, K))
    for t in range(T - 2, -1, -1):
        beta[t] = A @ (B[t + 1] * beta[t + 1]) / scale[t + 1]
    return alpha, beta, scale


def objective(params, y, weight=0.1):
    alpha, beta, scale = forward_backward(params, y)
    loglik = np.sum(np.log(scale))
    gamma = alpha * beta
    gamma = gamma / np.sum(gamma, axis=1, keepdims=True)
    entropy = -np.sum(gamma * np.log(gamma + 1e-12))
    return -loglik + weight * entropy


def simulate(T=40, seed=0):
    rng = np.random.default_rng(seed)
    A = np.array([[0.9, 0.1], [0.2, 0.8]])
    mu = np.array([-1.0, 1.5])
    z, ys = 0, []
    for _ in range(T):
        ys.append(mu[z] + 0.5 * rng.standard_normal())
        z = rng.choice(2, p=A[z])
    return np.array(ys)


def case():
    params = {"logits_A": np.array([[1.0, -0.5], [0.2, 0.7]]),
              "logits_pi": np.array([0.1, -0.1]), "mu": np.array([-0.5, 0.8]),
              "log_sigma": np.array([-0.3, -0.2])}
    return dict(fn=objective, args=(params, simulate()), argnums=0)


if __name__ == "__main__":
    c = case()
    params, y = c["args"]
    vg = myc.value_and_grad(objective)
    for _ in range(200):
        v, g = vg(params, y)
        params = {k: p - 0.01 * g[k] for k, p in params.items()}
    print(v, params["mu"])
