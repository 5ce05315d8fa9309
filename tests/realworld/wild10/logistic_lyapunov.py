"""The logistic map and its Lyapunov exponent, as chaos course notebooks write it: a
vector of growth rates ``r = np.linspace(...)``, ``x = 1e-5 * np.ones(n)``, a transient
``for i in range(iterations)`` loop of ``x = r * x * (1 - x)`` that accumulates
``lyapunov += np.log(abs(r - 2 * r * x))`` over the last steps, the bifurcation points
collected by ``points.append(x.copy())`` and ``np.array(points)``.  The objective is
the mean exponent over the rates (differentiated w.r.t. the rates, where the map is
smooth in them) plus the mean of the attractor points."""

import numpy as np


def lyapunov_exponents(r, iterations=200, last=80, x0=1e-5):
    n = len(r)
    x = x0 * np.ones(n)
    lyapunov = np.zeros(n)
    points = []
    for i in range(iterations):
        x = r * x * (1 - x)
        # the derivative of r x (1 - x) is r - 2 r x
        if i >= (iterations - last):
            lyapunov += np.log(abs(r - 2 * r * x))
            points.append(x.copy())
    return lyapunov / last, np.array(points)


def objective(r):
    lyap, points = lyapunov_exponents(r)
    return np.mean(lyap) + np.mean(points)


def case():
    return dict(fn=objective, args=(np.linspace(2.5, 3.3, 5),), argnums=0)
