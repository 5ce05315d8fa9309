"""Fitting the parameters of an ODE through a hand-written integrator that takes the
dynamics as a function, ``rk4(f, y0, ts, *args)``, as JAX users write with
``odeint(f, y0, ts, *args)``: Lotka-Volterra predator-prey dynamics
``lotka_volterra(y, t, alpha, beta, gamma, delta)``, sub-steps per observation
interval, states appended to a list and ``np.stack``ed, a log-space squared error
against noisy counts; the objective takes the dynamics function as its argument, so
the same code fits another model (a damped oscillator) unchanged."""

import numpy as np

import myc


def rk4_step(f, y, t, dt, *args):
    k1 = f(y, t, *args)
    k2 = f(y + 0.5 * dt * k1, t + 0.5 * dt, *args)
    k3 = f(y + 0.5 * dt * k2, t + 0.5 * dt, *args)
    k4 = f(y + dt * k3, t + dt, *args)
    return y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4(f, y0, ts, *args, substeps=4):
    ys = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        dt = (t1 - t0) / substeps
        for k in range(substeps):
            y = rk4_step(f, y, t0 + k * dt, dt, *args)
        ys.append(y)
    return np.stack(ys)


def lotka_volterra(y, t, alpha, beta, gamma, delta):
    prey, pred = y
    return np.array([alpha * prey - beta * prey * pred,
                     delta * prey * pred - gamma * pred])


def damped_oscillator(y, t, omega, zeta):
    x, v = y
    return np.array([v, -2 * zeta * omega * v - omega ** 2 * x])


def fit_loss(log_params, dynamics, y0, ts, observed):
    params = np.exp(log_params)
    pred = rk4(dynamics, y0, ts, *params)
    return np.mean((np.log(pred) - np.log(observed)) ** 2)


def oscillator_loss(params, dynamics, y0, ts, observed):
    pred = rk4(dynamics, y0, ts, *params)
    return np.mean((pred - observed) ** 2)


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    ts = np.linspace(0.0, 6.0, 16)
    true = (1.0, 0.4, 0.8, 0.2)
    ys = rk4(lotka_volterra, np.array([4.0, 2.0]), ts, *true, substeps=20)
    return ts, ys * np.exp(0.05 * rng.normal(size=ys.shape))


def case():
    ts, observed = make_data()
    log_params = np.log(np.array([0.8, 0.5, 0.7, 0.25]))
    return dict(fn=fit_loss, args=(log_params, lotka_volterra, np.array([4.0, 2.0]), ts,
                                   observed), argnums=0)


if __name__ == "__main__":
    ts, observed = make_data()
    theta = np.log(np.array([0.8, 0.5, 0.7, 0.25]))
    g = myc.value_and_grad(fit_loss)
    for _ in range(200):
        v, d = g(theta, lotka_volterra, np.array([4.0, 2.0]), ts, observed)
        theta -= 0.05 * d
    print(v, np.exp(theta))
