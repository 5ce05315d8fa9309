"""The exact log-likelihood of a linear-Gaussian state-space model (a damped oscillator
observed with noise), by a Kalman filter over the time steps; parameters on log scale."""

import numpy as np

import myc


def system(theta, dt=0.1):
    omega, damping, log_q, log_r = theta
    A = np.array([[1.0, dt], [-(omega**2) * dt, 1.0 - damping * dt]])
    Q = np.exp(log_q) * np.array([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
    H = np.array([[1.0, 0.0]])
    R = np.exp(log_r) * np.eye(1)
    return A, Q, H, R


def log_likelihood(theta, ys, m0, P0):
    A, Q, H, R = system(theta)
    m, P = m0, P0
    total = 0.0
    for y in ys:
        m = A @ m
        P = A @ P @ A.T + Q
        S = H @ P @ H.T + R
        v = y - H @ m
        sign, logdet = np.linalg.slogdet(2 * np.pi * S)
        total = total - 0.5 * (logdet + v @ np.linalg.solve(S, v))
        K = P @ H.T @ np.linalg.inv(S)
        m = m + K @ v
        P = (np.eye(2) - K @ H) @ P
    return total


def negative_log_likelihood(theta, ys, m0, P0):
    return -log_likelihood(theta, ys, m0, P0)


def simulate(theta, T, seed=0):
    A, Q, H, R = system(theta)
    rng = np.random.default_rng(seed)
    x = np.array([1.0, 0.0])
    ys = []
    for _ in range(T):
        x = A @ x + rng.multivariate_normal(np.zeros(2), Q)
        ys.append(H @ x + rng.normal(scale=np.sqrt(R[0, 0]), size=1))
    return np.array(ys)


def case():
    truth = np.array([2.0, 0.3, np.log(0.05), np.log(0.01)])
    ys = simulate(truth, 25)
    theta = truth + np.array([0.1, -0.05, 0.2, 0.1])
    return dict(fn=negative_log_likelihood, args=(theta, ys, np.zeros(2), np.eye(2)),
                argnums=0)


if __name__ == "__main__":
    from scipy.optimize import minimize

    c = case()
    f = c["fn"]
    res = minimize(f, c["args"][0], args=c["args"][1:], jac=myc.grad(f), method="BFGS")
    print(res.x)
