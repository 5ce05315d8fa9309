"""Rosenbrock's valley, minimised by scipy's conjugate gradients with myc's
``value_and_grad`` as the Jacobian (re-expressed for myc from the autograd examples)."""

import numpy as np
from scipy.optimize import minimize

from myc import value_and_grad


def banana(z):
    a, b = z[0], z[1]
    return (1 - a) ** 2 + 100 * (b - a**2) ** 2


banana_and_slope = value_and_grad(banana)


def find_minimum(start):
    return minimize(banana_and_slope, x0=start, jac=True, method="CG").x


def case():
    return dict(fn=banana, args=(np.array([0.3, -0.2]),), argnums=0,
                gradient=banana_and_slope, transform="value_and_grad")


if __name__ == "__main__":
    print("minimum near", find_minimum(np.zeros(2)))
