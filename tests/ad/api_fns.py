"""Functions for test_ad_api.py (myc reads source, so they live in a file)."""

import numpy as np

import myc


def scale_sum(x, t):
    a, v = t
    return np.sum(x * a) + np.sum(v * x[0])


def scatter_program(x, idx, w):
    y = x[idx] * w
    return np.sum(y * y) + np.sum(x[1:] * x[:-1])


def mul_int(v, n):
    return v * n


def uses_grad_positional_argnums(p, q):
    dq = myc.grad(_energy, 1)
    return dq(p, q)


def _energy(p, q):
    return 0.5 * p * p + (1.0 - np.cos(q))


def grad_of_nested_def(x):
    def inner(b):
        return np.sin(b) * b

    return myc.grad(inner)(x)


def grad_of_closure(x):
    return myc.grad(lambda b: np.sin(b) * x)(x)


def late_binding_closure(x):
    a = x
    g = lambda t: t * a
    a = a + 100.0
    return g(x)


def _double(v):
    return 2.0 * v


def act_default(x, w, act=np.tanh, scale=3.0):
    """A function-valued default (autograd's ``nonlinearity=np.tanh``)."""
    return np.sum(act(x * w) ** 2) * scale


def user_act_default(x, act=_double):
    return np.sum(act(x) * x)
