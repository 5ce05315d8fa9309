"""The 1-D heat equation by the explicit (FTCS) scheme, as numerical-methods course code
writes it: a grid from ``np.linspace``, the time step from the stability limit ``dt =
0.4 * dx**2 / kappa``, a check ``if r > 0.5: raise ValueError``, ``u_new =
np.empty_like(u)``, the stencil on ``u_new[1:-1]``, Dirichlet ends by the chained
assignment ``u_new[0] = u_new[-1] = 0.0``, ``u = u_new.copy()`` and a ``while t <
t_end`` loop on float time.  The objective is the misfit to a measured profile at
``t_end``, differentiated w.r.t. the initial condition (the diffusivity only sets the
number of steps and is held fixed)."""

import numpy as np


def solve_heat(u0, kappa=1.0, t_end=0.02, L=1.0):
    nx = len(u0)
    x = np.linspace(0, L, nx)
    dx = x[1] - x[0]
    dt = 0.4 * dx ** 2 / kappa
    r = kappa * dt / dx ** 2
    if r > 0.5:
        raise ValueError(f"unstable: r = {r:.3f} > 0.5")
    u = u0.copy()
    u_new = np.empty_like(u)
    t = 0.0
    while t < t_end:
        u_new[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_new[0] = u_new[-1] = 0.0
        u = u_new.copy()
        t += dt
    return u


def misfit(u0, measured):
    u = solve_heat(u0)
    return 0.5 * np.sum((u - measured) ** 2) + 0.01 * np.sum(np.diff(u0) ** 2)


def make_problem(nx=21):
    x = np.linspace(0, 1, nx)
    truth = np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x)
    measured = solve_heat(truth)
    guess = np.sin(np.pi * x) * 0.8
    return guess, measured


def case():
    guess, measured = make_problem()
    return dict(fn=misfit, args=(guess, measured), argnums=0)
