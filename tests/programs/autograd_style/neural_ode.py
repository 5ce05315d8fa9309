"""A neural ODE integrated by Euler steps: the trajectory is a list built by append,
the dynamics' parameters a list of layers."""

import numpy as np


def dynamics(params, z):
    for W, b in params[:-1]:
        z = np.tanh(z @ W + b)
    W, b = params[-1]
    return z @ W + b


def trajectory(params, z0, steps, dt):
    states = [z0]
    z = z0
    for _ in range(steps):
        z = z + dt * dynamics(params, z)
        states.append(z)
    return np.stack(states)


def objective(params, z0, targets):
    traj = trajectory(params, z0, len(targets) - 1, 0.1)
    return sum(np.sum((s - t) ** 2) for s, t in zip(traj, targets))


_rs = np.random.RandomState(6)
PARAMS = [(0.5 * _rs.randn(2, 8), np.zeros(8)), (0.5 * _rs.randn(8, 2), np.zeros(2))]
Z0 = np.array([1.0, 0.0])
TARGETS = [np.array([np.cos(0.1 * t), np.sin(0.1 * t)]) for t in range(5)]
CASE = dict(fn=objective, args=(PARAMS, Z0, TARGETS), argnums=0)
