"""The Kalman filter log-likelihood of a constant-velocity model, in the style of
time-series course code: the noise scales in log-space, ``F.dot(P).dot(F.T) + Q``
chains, missing observations as ``np.nan`` skipped by ``if np.isnan(y[t]): ...``,
``np.linalg.inv(S)`` and ``np.log(np.linalg.det(S))`` in the Gaussian term, the
filtered means written into ``x_filt[t]``, and the log-likelihood accumulated in a
Python float.  Different from the second corpus's ``kalman`` (which solves, has no
gaps and reads rows by ``for y in ys``)."""

import numpy as np


def kalman_loglik(log_params, y, dt=1.0):
    q, r = np.exp(log_params)
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    R = np.array([[r]])
    n = len(y)
    x = np.array([y[0], 0.0])
    P = np.eye(2) * 10.0
    x_filt = np.zeros((n, 2))
    loglik = 0.0
    for t in range(n):
        # predict
        x = F.dot(x)
        P = F.dot(P).dot(F.T) + Q
        if np.isnan(y[t]):
            x_filt[t] = x  # no observation: the prediction is the estimate
            continue
        # update
        v = y[t] - H.dot(x)
        S = H.dot(P).dot(H.T) + R
        Sinv = np.linalg.inv(S)
        K = P.dot(H.T).dot(Sinv)
        x = x + K.dot(v)
        P = (np.eye(2) - K.dot(H)).dot(P)
        loglik += -0.5 * (np.log(2 * np.pi) + np.log(np.linalg.det(S)) + v.dot(Sinv).dot(v))
        x_filt[t] = x
    return loglik


def neg_loglik(log_params, y):
    return -kalman_loglik(log_params, y)


def make_series(n=30, seed=4):
    rng = np.random.default_rng(seed)
    vel = 0.3 + np.cumsum(0.05 * rng.standard_normal(n))
    pos = np.cumsum(vel) + 0.4 * rng.standard_normal(n)
    pos[[6, 7, 15, 22]] = np.nan  # sensor dropouts
    return pos


def case():
    return dict(fn=neg_loglik, args=(np.log(np.array([0.01, 0.2])), make_series()),
                argnums=0)
