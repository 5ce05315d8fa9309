"""A neural ODE fitted to a spiral trajectory: an MLP vector field integrated by a
hand-written fourth-order Runge-Kutta loop, the states at the observation times
collected in a list and stacked, a mean squared error against the data."""

import numpy as np

import myc


def mlp(params, z, t):
    h = np.tanh(z @ params["W1"] + t * params["wt"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def rk4_step(f, params, z, t, dt):
    k1 = f(params, z, t)
    k2 = f(params, z + 0.5 * dt * k1, t + 0.5 * dt)
    k3 = f(params, z + 0.5 * dt * k2, t + 0.5 * dt)
    k4 = f(params, z + dt * k3, t + dt)
    return z + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(params, z0, ts, substeps=4):
    zs = [z0]
    z = z0
    for k in range(len(ts) - 1):
        dt = (ts[k + 1] - ts[k]) / substeps
        t = ts[k]
        for _ in range(substeps):
            z = rk4_step(mlp, params, z, t, dt)
            t = t + dt
        zs.append(z)
    return np.stack(zs)


def loss(params, z0, ts, targets):
    pred = integrate(params, z0, ts)
    return np.mean((pred - targets) ** 2)


def spiral(ts):
    return np.column_stack([np.exp(-0.3 * ts) * np.cos(2 * ts),
                            np.exp(-0.3 * ts) * np.sin(2 * ts)])


def init_params(hidden=16, seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": 0.5 * rng.normal(size=(2, hidden)), "wt": 0.1 * rng.normal(size=hidden),
            "b1": np.zeros(hidden), "W2": 0.5 * rng.normal(size=(hidden, 2)),
            "b2": np.zeros(2)}


def case():
    ts = np.linspace(0.0, 3.0, 13)
    targets = spiral(ts)
    return dict(fn=loss, args=(init_params(), targets[0], ts, targets), argnums=0)


if __name__ == "__main__":
    c = case()
    params, z0, ts, targets = c["args"]
    vg = myc.value_and_grad(loss)
    for it in range(300):
        v, g = vg(params, z0, ts, targets)
        params = {k: p - 0.05 * g[k] for k, p in params.items()}
    print(v)
