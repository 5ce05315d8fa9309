"""Optimising the initial velocity field of a smoke simulation (Stam's stable fluids:
semi-Lagrangian advection with bilinear interpolation through integer gathers, a
Gauss-Seidel pressure projection with ``np.roll``, in-place ``-=``) so that the smoke
ends close to a target image.  The plotting branch is taken only when an axis is given."""

import numpy as np

from myc import value_and_grad


def make_incompressible(u, v):
    cell = 1.0 / u.shape[0]
    div = -0.5 * cell * (np.roll(u, -1, axis=0) - np.roll(u, 1, axis=0)
                         + np.roll(v, -1, axis=1) - np.roll(v, 1, axis=1))
    pressure = np.zeros(u.shape)
    for _ in range(10):
        neighbours = (np.roll(pressure, 1, axis=0) + np.roll(pressure, -1, axis=0)
                      + np.roll(pressure, 1, axis=1) + np.roll(pressure, -1, axis=1))
        pressure = (div + neighbours) / 4.0
    u -= 0.5 * (np.roll(pressure, -1, axis=0) - np.roll(pressure, 1, axis=0)) / cell
    v -= 0.5 * (np.roll(pressure, -1, axis=1) - np.roll(pressure, 1, axis=1)) / cell
    return u, v


def carry(field, u, v):
    n_rows, n_cols = field.shape
    grid_y, grid_x = np.meshgrid(np.arange(n_rows), np.arange(n_cols))
    src_x = (grid_x - u).ravel()
    src_y = (grid_y - v).ravel()
    x0 = np.floor(src_x).astype(int)
    y0 = np.floor(src_y).astype(int)
    fx = src_x - x0
    fy = src_y - y0
    x0 = np.mod(x0, n_rows)
    x1 = np.mod(x0 + 1, n_rows)
    y0 = np.mod(y0, n_cols)
    y1 = np.mod(y0 + 1, n_cols)
    near = (1 - fy) * field[x0, y0] + fy * field[x0, y1]
    far = (1 - fy) * field[x1, y0] + fy * field[x1, y1]
    return np.reshape((1 - fx) * near + fx * far, (n_rows, n_cols))


def run_smoke(u, v, smoke, n_steps, ax=None):
    print("simulating")
    for step in range(n_steps):
        if ax:
            show(ax, smoke, step)
        u, v = make_incompressible(carry(u, u, v), carry(v, u, v))
        smoke = carry(smoke, u, v)
    if ax:
        show(ax, smoke, n_steps)
    return smoke


def show(ax, image, step):
    ax.clear()
    ax.matshow(image)
    ax.set_title(f"step {step}")
    plt.pause(0.001)  # noqa: F821 -- as in the example, pyplot is never imported here


def case():
    n_steps, side = 3, 6
    rs = np.random.RandomState(0)
    smoke0 = rs.rand(side, side)  # stand-ins for the example's two images
    goal = rs.rand(side, side)

    def velocities(flat):
        return (np.reshape(flat[:side * side], (side, side)),
                np.reshape(flat[side * side:], (side, side)))

    def mismatch(flat):
        u, v = velocities(flat)
        return np.mean((goal - run_smoke(u, v, smoke0, n_steps)) ** 2)

    flat0 = 0.3 * rs.randn(2 * side * side)  # away from zero, where the gathers are exact
    return dict(fn=mismatch, args=(flat0,), argnums=0, gradient=value_and_grad(mismatch),
                transform="value_and_grad", fd_eps=1e-7)
