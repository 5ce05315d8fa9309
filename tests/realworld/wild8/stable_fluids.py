"""Stam's stable fluids ("Real-Time Fluid Dynamics for Games", 2003) as the published
NumPy port albertosantini/python-fluid (MIT) writes it -- scalar loops over grid cells,
as in the C original -- re-expressed here with the same data flow: a boundary routine
looping over the edge cells with per-cell branches on a static ``mode`` int, a
Gauss-Seidel-style relaxation of 20 sweeps that calls it on the grid it changes in
place, semi-Lagrangian advection tracing each cell back with ``int()`` of a clamped
float and a bilinear gather, and the pressure projection.  The objective is the sum of
squares of one density step and of one projected velocity field."""

import numpy as np

N = 8  # inner cells per side (the grid is (N + 2) x (N + 2) with its walls)


def walls(n, mode, grid):
    """Edge cells copy their inner neighbour; the velocity component normal to a wall
    (mode 1: across rows, mode 2: across columns) is negated there."""
    for k in range(1, n + 1):
        if mode == 1:
            grid[0, k] = -grid[1, k]
            grid[n + 1, k] = -grid[n, k]
        else:
            grid[0, k] = grid[1, k]
            grid[n + 1, k] = grid[n, k]
        if mode == 2:
            grid[k, 0] = -grid[k, 1]
            grid[k, n + 1] = -grid[k, n]
        else:
            grid[k, 0] = grid[k, 1]
            grid[k, n + 1] = grid[k, n]
    grid[0, 0] = 0.5 * (grid[1, 0] + grid[0, 1])
    grid[0, n + 1] = 0.5 * (grid[1, n + 1] + grid[0, n])
    grid[n + 1, 0] = 0.5 * (grid[n, 0] + grid[n + 1, 1])
    grid[n + 1, n + 1] = 0.5 * (grid[n, n + 1] + grid[n + 1, n])


def relax(n, mode, grid, rhs, a, c):
    """20 Jacobi sweeps of ``c * g - a * (neighbours) = rhs``, walls after each."""
    inner = slice(1, n + 1)
    for _ in range(20):
        around = grid[0:n, inner] + grid[2:n + 2, inner] + grid[inner, 0:n] + \
            grid[inner, 2:n + 2]
        grid[inner, inner] = (rhs[inner, inner] + a * around) / c
        walls(n, mode, grid)


def spread(n, mode, grid, before, rate, dt):
    a = dt * rate * n * n
    relax(n, mode, grid, before, a, 1 + 4 * a)


def carry(n, mode, grid, before, u, v, dt):
    """Each cell takes the value found by tracing the flow back one step: the point is
    clamped inside the walls and read bilinearly from its four neighbouring cells."""
    reach = dt * n
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            px = i - reach * u[i, j]
            py = j - reach * v[i, j]
            if px < 0.5:
                px = 0.5
            if px > n + 0.5:
                px = n + 0.5
            if py < 0.5:
                py = 0.5
            if py > n + 0.5:
                py = n + 0.5
            r, s = int(px), int(py)
            fr, fs = px - r, py - s
            low = (1 - fs) * before[r, s] + fs * before[r, s + 1]
            high = (1 - fs) * before[r + 1, s] + fs * before[r + 1, s + 1]
            grid[i, j] = (1 - fr) * low + fr * high
    walls(n, mode, grid)


def divergence_free(n, u, v, p, div):
    """Removes the gradient of the pressure solving ``laplace(p) = div(u, v)``."""
    h = 1.0 / n
    inner = slice(1, n + 1)
    div[inner, inner] = -0.5 * h * (u[2:n + 2, inner] - u[0:n, inner] +
                                    v[inner, 2:n + 2] - v[inner, 0:n])
    p[inner, inner] = 0
    walls(n, 0, div)
    walls(n, 0, p)
    relax(n, 0, p, div, 1, 4)
    u[inner, inner] -= 0.5 * (p[2:n + 2, inner] - p[0:n, inner]) / h
    v[inner, inner] -= 0.5 * (p[inner, 2:n + 2] - p[inner, 0:n]) / h
    walls(n, 1, u)
    walls(n, 2, v)


def density_step(n, dens, source, u, v, rate, dt):
    """One density step; the port's buffer swaps written as which buffer each call
    fills (``source`` ends holding the diffused density)."""
    dens = dens.copy()
    source = source.copy()
    dens[:, :] += dt * source
    spread(n, 0, source, dens, rate, dt)
    carry(n, 0, dens, source, u, v, dt)
    return dens


def velocity_step(n, u, v):
    u = u.copy()
    v = v.copy()
    divergence_free(n, u, v, np.zeros_like(u), np.zeros_like(u))
    return u, v


def objective(dens, source, u, v):
    d = density_step(N, dens, source, u, v, 0.001, 0.1)
    pu, pv = velocity_step(N, u, v)
    return np.sum(d ** 2) + np.sum(pu ** 2) + 0.5 * np.sum(pv ** 2)


def make_state(n=N, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n + 2, n + 2)
    return (rng.random(shape), rng.random(shape), 0.3 * rng.standard_normal(shape),
            0.3 * rng.standard_normal(shape))


def case():
    return dict(fn=objective, args=make_state(), argnums=(1, 2))


if __name__ == "__main__":
    state = make_state(32)
    d = state[0]
    for _ in range(10):
        d = density_step(32, d, state[1], state[2], state[3], 0.001, 0.1)
    print(float(np.sum(d)))
