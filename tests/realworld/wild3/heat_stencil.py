"""Inverse problem for the 2-D heat equation: an explicit finite-difference solver
updating the interior in place with slices (``u[1:-1, 1:-1] = ...``), periodic
``np.roll`` neighbours along one axis, a Dirichlet boundary set by assignment each step;
the initial condition fitted to a final snapshot with a smoothness penalty."""

import numpy as np

import myc


def laplacian_periodic_x(u, dx):
    return (np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 2 * u) / dx ** 2


def solve_heat(u0, kappa, dt, dx, steps):
    u = u0.copy()
    for _ in range(steps):
        lap_x = laplacian_periodic_x(u, dx)
        lap_y = np.zeros_like(u)
        lap_y[1:-1, :] = (u[2:, :] + u[:-2, :] - 2 * u[1:-1, :]) / dx ** 2
        u[1:-1, :] = u[1:-1, :] + dt * kappa * (lap_x[1:-1, :] + lap_y[1:-1, :])
        u[0, :] = 0.0
        u[-1, :] = 0.0
    return u


def objective(u0, target, kappa=0.1, dt=0.1, dx=0.5, steps=15, reg=1e-3):
    u = solve_heat(u0, kappa, dt, dx, steps)
    smooth = np.sum(np.diff(u0, axis=0) ** 2) + np.sum(np.diff(u0, axis=1) ** 2)
    return 0.5 * np.sum((u - target) ** 2) + reg * smooth


def case():
    n = 12
    yy, xx = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    truth = np.exp(-4 * (xx ** 2 + yy ** 2))
    truth[0, :] = 0.0
    truth[-1, :] = 0.0
    target = solve_heat(truth, 0.1, 0.1, 0.5, 15)
    u0 = 0.5 * truth + 0.1
    return dict(fn=objective, args=(u0, target), argnums=0)


if __name__ == "__main__":
    c = case()
    u0, target = c["args"]
    g = myc.grad(objective)
    for _ in range(100):
        u0 = u0 - 0.5 * g(u0, target)
    print(objective(u0, target))
