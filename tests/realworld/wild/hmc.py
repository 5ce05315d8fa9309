"""Hamiltonian Monte Carlo on a banana-shaped density: a jitted leapfrog integrator that
calls ``grad`` of the log-density at every step, and a Metropolis correction."""

import numpy as np

import myc


def log_density(q, curvature=0.5):
    x, y = q[0], q[1]
    return -0.5 * x**2 / 4.0 - 0.5 * (y - curvature * x**2) ** 2


score = myc.grad(log_density)


def kinetic(p, inv_mass):
    return 0.5 * np.sum(inv_mass * p**2)


def hamiltonian(q, p, inv_mass):
    return -log_density(q) + kinetic(p, inv_mass)


@myc.jit
def leapfrog(q, p, step, inv_mass, n_steps=10):
    p = p + 0.5 * step * score(q)
    for i in range(n_steps):
        q = q + step * inv_mass * p
        if i < n_steps - 1:
            p = p + step * score(q)
    p = p + 0.5 * step * score(q)
    return q, -p


def energy_error(q0, p0, step, inv_mass):
    """What the sampler's acceptance depends on: H(end) - H(start)."""
    q1, p1 = leapfrog(q0, p0, step, inv_mass)
    return hamiltonian(q1, p1, inv_mass) - hamiltonian(q0, p0, inv_mass)


def sample(q, n_samples, step=0.2, seed=0):
    rng = np.random.default_rng(seed)
    inv_mass = np.ones_like(q)
    out, accepted = [], 0
    for _ in range(n_samples):
        p = rng.standard_normal(q.shape)
        q_new, p_new = leapfrog(q, p, step, inv_mass)
        log_ratio = hamiltonian(q, p, inv_mass) - hamiltonian(q_new, p_new, inv_mass)
        if np.log(rng.uniform()) < log_ratio:
            q, accepted = q_new, accepted + 1
        out.append(q)
    return np.stack(out), accepted / n_samples


def case():
    q0 = np.array([0.7, -0.3])
    p0 = np.array([0.4, 1.1])
    return dict(fn=energy_error, args=(q0, p0, 0.15, np.array([1.0, 0.8])), argnums=(0, 1, 2))


if __name__ == "__main__":
    draws, rate = sample(np.zeros(2), 200)
    print("acceptance", rate, "mean", draws.mean(0))
