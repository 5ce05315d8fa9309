"""Hamiltonian Monte Carlo as a sampler class taking the target's ``log_prob`` as a
function, in the style of PyTorch/NumPyro sampler objects: ``HMC(log_prob, step_size,
n_leapfrog)`` stores ``self.grad_log_prob = myc.grad(log_prob)`` at construction,
``leapfrog`` is a method calling it (jitted by ``myc.jit(self.leapfrog)``), and
``sample`` is the Python Metropolis loop with ``rng.uniform``.  The target is a
Bayesian logistic regression's posterior.  Step-size adaptation differentiates the
energy error of one trajectory with respect to the starting position, the sampler
object passed in."""

import numpy as np

import myc


def log_posterior(w, X, y, prior_scale=2.0):
    logits = X @ w
    return (np.sum(y * logits - np.logaddexp(0.0, logits))
            - 0.5 * np.sum(w ** 2) / prior_scale ** 2)


class HMC:
    def __init__(self, log_prob, step_size=0.05, n_leapfrog=10):
        self.log_prob = log_prob
        self.grad_log_prob = myc.grad(log_prob)
        self.step_size = step_size
        self.n_leapfrog = n_leapfrog

    def hamiltonian(self, q, p, *data):
        return -self.log_prob(q, *data) + 0.5 * np.sum(p ** 2)

    def leapfrog(self, q, p, *data):
        eps = self.step_size
        p = p + 0.5 * eps * self.grad_log_prob(q, *data)
        for _ in range(self.n_leapfrog - 1):
            q = q + eps * p
            p = p + eps * self.grad_log_prob(q, *data)
        q = q + eps * p
        p = p + 0.5 * eps * self.grad_log_prob(q, *data)
        return q, p

    def sample(self, q0, n_samples, rng, *data):
        step = myc.jit(self.leapfrog)
        samples, accepted = [], 0
        q = q0
        for _ in range(n_samples):
            p0 = rng.normal(size=q.shape)
            q_new, p_new = step(q, p0, *data)
            log_accept = self.hamiltonian(q, p0, *data) - self.hamiltonian(q_new, p_new,
                                                                           *data)
            if np.log(rng.uniform()) < log_accept:
                q, accepted = q_new, accepted + 1
            samples.append(q)
        return np.array(samples), accepted / n_samples


def energy_error(q, p, sampler, X, y):
    q1, p1 = sampler.leapfrog(q, p, X, y)
    return (sampler.hamiltonian(q1, p1, X, y) - sampler.hamiltonian(q, p, X, y)) ** 2


def make_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ np.array([0.3, 1.5, -1.0])))) * 1.0
    return X, y


def case():
    X, y = make_data()
    sampler = HMC(log_posterior, step_size=0.08, n_leapfrog=8)
    return dict(fn=energy_error, args=(np.array([0.1, 1.0, -0.5]),
                                       np.array([0.3, -0.2, 0.5]), sampler, X, y),
                argnums=(0, 1))


if __name__ == "__main__":
    X, y = make_data()
    sampler = HMC(log_posterior)
    samples, rate = sampler.sample(np.zeros(3), 200, np.random.default_rng(1), X, y)
    print(samples[50:].mean(axis=0), rate)
