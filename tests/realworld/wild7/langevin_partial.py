"""Langevin samplers (unadjusted and Metropolis-adjusted) over a log-density handed in
as a function, as JAX users write samplers around ``functools.partial``: the data are
bound with ``partial(log_joint, X=X, y=y)``, ``grad_log_p = myc.grad(log_p)`` is built
once, and ``mala_step(log_p, grad_log_p, x, rng, eps)`` takes both as arguments (the
step jitted with the functions as arguments: compiled in, by identity).  The target is
a Poisson regression with a Gaussian prior; the case differentiates the step's
Metropolis log-acceptance ratio, with the proposal's noise fixed, w.r.t. the position."""

from functools import partial

import numpy as np

import myc


def log_joint(beta, X, y, prior_scale=1.0):
    eta = X @ beta
    return np.sum(y * eta - np.exp(eta)) - 0.5 * np.sum(beta ** 2) / prior_scale ** 2


def log_q(x_to, x_from, grad_from, eps):
    diff = x_to - x_from - 0.5 * eps ** 2 * grad_from
    return -0.5 * np.sum(diff ** 2) / eps ** 2


def log_accept_ratio(x, noise, log_p, grad_log_p, eps):
    g = grad_log_p(x)
    prop = x + 0.5 * eps ** 2 * g + eps * noise
    g_prop = grad_log_p(prop)
    return (log_p(prop) + log_q(x, prop, g_prop, eps)
            - log_p(x) - log_q(prop, x, g, eps))


def mala_step(log_p, grad_log_p, x, noise, u, eps):
    g = grad_log_p(x)
    prop = x + 0.5 * eps ** 2 * g + eps * noise
    accept = np.log(u) < log_accept_ratio(x, noise, log_p, grad_log_p, eps)
    return np.where(accept, prop, x), accept


def ula(grad_log_p, x0, n_steps, eps, rng):
    xs = [x0]
    x = x0
    for _ in range(n_steps):
        x = x + 0.5 * eps ** 2 * grad_log_p(x) + eps * rng.normal(size=x.shape)
        xs.append(x)
    return np.array(xs)


def mala(log_p, x0, n_steps, eps, rng):
    grad_log_p = myc.grad(log_p)
    step = myc.jit(mala_step)
    x, chain, n_acc = x0, [], 0
    for _ in range(n_steps):
        x, acc = step(log_p, grad_log_p, x, rng.normal(size=x.shape), rng.uniform(), eps)
        n_acc += int(acc)
        chain.append(x)
    return np.array(chain), n_acc / n_steps


def make_data(n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2)) * 0.5])
    y = rng.poisson(np.exp(X @ np.array([0.5, 0.8, -0.4]))).astype(float)
    return X, y


def case():
    X, y = make_data()
    log_p = partial(log_joint, X=X, y=y)
    grad_log_p = myc.grad(log_p)
    noise = np.random.default_rng(3).normal(size=3)
    return dict(fn=log_accept_ratio, args=(np.array([0.3, 0.5, -0.2]), noise, log_p,
                                           grad_log_p, 0.15), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    chain, rate = mala(partial(log_joint, X=X, y=y), np.zeros(3), 300, 0.15,
                       np.random.default_rng(1))
    print(chain[100:].mean(axis=0), rate)
