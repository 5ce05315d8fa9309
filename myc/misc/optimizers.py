"""The gradient-based optimizers autograd users call (``autograd.misc.optimizers``), with
the same signatures and arithmetic: ``grad(x, i)`` is called once per iteration, on
parameters of any tree structure (lists, tuples, dicts of arrays), which the optimizer
flattens to one vector.  Plain NumPy: they drive a ``myc.grad`` function, they are not
compiled themselves."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from myc.misc.flatten import flatten


def unflatten_optimizer(optimize: Callable) -> Callable:
    """An optimizer over flat vectors made one over trees."""

    @functools.wraps(optimize)
    def _optimize(grad: Callable, x0: Any, callback: Callable | None = None, *args: Any,
                  **kwargs: Any) -> Any:
        _x0, unflatten = flatten(x0)

        def _grad(x, i):
            return flatten(grad(unflatten(x), i))[0]

        _callback = None
        if callback:
            def _callback(x, i, g):
                return callback(unflatten(x), i, unflatten(g))
        return unflatten(optimize(_grad, _x0, _callback, *args, **kwargs))

    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """Root-mean-square propagation."""
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    """Adam (Kingma and Ba, 2014)."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x
