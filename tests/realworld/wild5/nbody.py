"""A softened gravitational n-body simulation by velocity Verlet: pairwise
differences by broadcasting, ``np.linalg.norm(diff, axis=-1)``, accelerations by an
``np.einsum``, the angular momentum ``np.cross(pos, vel)``, the total energy with
``np.triu_indices``; shooting: the distance of the final positions from targets plus
the drift of the angular momentum, differentiated with respect to the initial
velocities."""

import numpy as np

import myc


def accelerations(pos, masses, G=1.0, softening=0.1):
    diff = pos[None, :, :] - pos[:, None, :]            # (n, n, 3): r_j - r_i
    dist = np.linalg.norm(diff, axis=-1)
    inv_r3 = (dist ** 2 + softening ** 2) ** -1.5
    return G * np.einsum("ijk,ij,j->ik", diff, inv_r3, masses)


def energy(pos, vel, masses, G=1.0, softening=0.1):
    kinetic = 0.5 * np.sum(masses[:, None] * vel ** 2)
    i, j = np.triu_indices(len(masses), k=1)
    r = np.sqrt(np.sum((pos[i] - pos[j]) ** 2, axis=-1) + softening ** 2)
    return kinetic - G * np.sum(masses[i] * masses[j] / r)


def angular_momentum(pos, vel, masses):
    return np.sum(masses[:, None] * np.cross(pos, vel), axis=0)


def simulate(pos, vel, masses, dt=0.01, n_steps=20):
    acc = accelerations(pos, masses)
    for _ in range(n_steps):
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = accelerations(pos, masses)
        vel = vel + 0.5 * dt * acc
    return pos, vel


def shooting_loss(vel0, pos0, masses, target):
    L0 = angular_momentum(pos0, vel0, masses)
    pos, vel = simulate(pos0, vel0, masses)
    drift = angular_momentum(pos, vel, masses) - L0
    return np.sum((pos - target) ** 2) + 10.0 * np.sum(drift ** 2)


def make_system(n=5, seed=0):
    r = np.random.default_rng(seed)
    pos = r.standard_normal((n, 3))
    vel = 0.3 * r.standard_normal((n, 3))
    masses = r.uniform(0.5, 1.5, n)
    return pos, vel, masses, pos + 0.25 * r.standard_normal((n, 3))


def case():
    pos, vel, masses, target = make_system()
    return dict(fn=shooting_loss, args=(vel, pos, masses, target), argnums=0)


if __name__ == "__main__":
    pos, vel, masses, target = make_system()
    e0 = energy(pos, vel, masses)
    p, v = myc.jit(simulate)(pos, vel, masses)
    print(energy(p, v, masses) - e0)
