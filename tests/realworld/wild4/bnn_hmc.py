"""A Bayesian neural network sampled by Hamiltonian Monte Carlo: the log posterior of a
one-hidden-layer regression net over a flat parameter vector (unpacked by slicing and
``reshape``), a leapfrog integrator calling ``myc.grad`` of it inside a ``for`` loop,
and a Metropolis accept with ``rng.uniform``.  The differentiated objective is the
Hamiltonian after the leapfrog trajectory: a gradient through gradients."""

import numpy as np

import myc

D_IN, D_HID = 2, 6
N_PARAMS = D_IN * D_HID + D_HID + D_HID + 1


def unpack(theta):
    i = 0
    W1 = theta[i:i + D_IN * D_HID].reshape(D_IN, D_HID)
    i += D_IN * D_HID
    b1 = theta[i:i + D_HID]
    i += D_HID
    w2 = theta[i:i + D_HID]
    b2 = theta[i + D_HID]
    return W1, b1, w2, b2


def log_posterior(theta, X, y, noise=0.1, prior=1.0):
    W1, b1, w2, b2 = unpack(theta)
    pred = np.tanh(X @ W1 + b1) @ w2 + b2
    loglik = -0.5 * np.sum((y - pred) ** 2) / noise ** 2
    return loglik - 0.5 * np.sum(theta ** 2) / prior ** 2


grad_log_posterior = myc.grad(log_posterior)


def leapfrog(theta, p, X, y, step, n_steps):
    p = p + 0.5 * step * grad_log_posterior(theta, X, y)
    for i in range(n_steps):
        theta = theta + step * p
        if i < n_steps - 1:
            p = p + step * grad_log_posterior(theta, X, y)
    p = p + 0.5 * step * grad_log_posterior(theta, X, y)
    return theta, p


def hamiltonian_after(theta, p, X, y, step=0.01, n_steps=5):
    theta_new, p_new = leapfrog(theta, p, X, y, step, n_steps)
    return -log_posterior(theta_new, X, y) + 0.5 * np.sum(p_new ** 2)


@myc.jit
def hmc_step(theta, X, y, rng, step=0.01, n_steps=10):
    p0 = rng.standard_normal(theta.shape)
    theta_new, p_new = leapfrog(theta, p0, X, y, step, n_steps)
    h0 = -log_posterior(theta, X, y) + 0.5 * np.sum(p0 ** 2)
    h1 = -log_posterior(theta_new, X, y) + 0.5 * np.sum(p_new ** 2)
    accept = np.log(rng.uniform()) < h0 - h1
    return np.where(accept, theta_new, theta), accept


def make_data(n=20, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(-1, 1, size=(n, D_IN))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.1 * r.standard_normal(n)
    return X, y


def sample(n=50, seed=1):
    X, y = make_data()
    rng = np.random.default_rng(seed)
    theta = 0.1 * rng.standard_normal(N_PARAMS)
    out, accepted = [], 0
    for _ in range(n):
        theta, acc = hmc_step(theta, X, y, rng)
        accepted += int(acc)
        out.append(theta)
    return np.array(out), accepted / n


def case():
    X, y = make_data()
    r = np.random.default_rng(2)
    return dict(fn=hamiltonian_after, args=(0.3 * r.standard_normal(N_PARAMS),
                                            r.standard_normal(N_PARAMS), X, y),
                argnums=(0, 1))


if __name__ == "__main__":
    samples, rate = sample()
    print(rate, samples.mean(axis=0))
