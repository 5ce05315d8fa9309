"""Holt-Winters additive exponential smoothing fitted by gradient descent on its
one-step-ahead squared errors, as forecasting blog posts write it: the smoothing
parameters squashed into (0, 1) by a logistic function of unconstrained values, the
level, trend and seasonal states kept in Python lists that grow by ``append``, the
season read back by ``season[t - m]`` and the first season initialised from
``y[:m] - y[:m].mean()`` by ``list(...)``; the forecast built by a comprehension
over ``range(h)``."""

import numpy as np

import myc


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def smooth(raw, y, m):
    alpha, beta, gamma = sigmoid(raw)
    level, trend = y[:m].mean(), (y[m:2 * m].mean() - y[:m].mean()) / m
    season = list(y[:m] - y[:m].mean())
    errors = []
    for t in range(m, len(y)):
        pred = level + trend + season[t - m]
        errors.append(y[t] - pred)
        last_level = level
        level = alpha * (y[t] - season[t - m]) + (1 - alpha) * (level + trend)
        trend = beta * (level - last_level) + (1 - beta) * trend
        season.append(gamma * (y[t] - level) + (1 - gamma) * season[t - m])
    return level, trend, season, np.array(errors)


def sse(raw, y, m=4):
    *_, errors = smooth(raw, y, m)
    return np.sum(errors ** 2) / len(errors)


def forecast(raw, y, m=4, h=8):
    level, trend, season, _ = smooth(raw, y, m)
    n = len(season)
    return np.array([level + (k + 1) * trend + season[n - m + k % m] for k in range(h)])


def make_series(n=36, m=4, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return 10 + 0.3 * t + 2.0 * np.sin(2 * np.pi * t / m) + 0.3 * rng.normal(size=n)


def case():
    return dict(fn=sse, args=(np.array([-0.5, -1.5, -1.0]), make_series(), 4), argnums=0)


if __name__ == "__main__":
    y = make_series()
    raw = np.zeros(3)
    g = myc.value_and_grad(sse)
    for _ in range(200):
        v, d = g(raw, y)
        raw -= 0.1 * d
    print(v, sigmoid(raw), myc.jit(forecast)(raw, y))
