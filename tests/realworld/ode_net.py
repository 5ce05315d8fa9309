"""A neural ODE: a small ReLU network is the right-hand side of dy/dt, integrated by
``scipy.integrate.odeint`` with the parameters passed through ``args``, and trained on
a trajectory of a cubic damped oscillator with an L1 loss.  myc cannot yet
differentiate through odeint: the refusal names it at the line that calls it."""

import itertools

import numpy as np
import numpy.random as npr
from scipy.integrate import odeint

from myc import grad
from myc.misc.optimizers import adam

T_END = 1.5
STATE = 2


def cubic_oscillator(y, t, M):
    return np.dot(y**3, M)


def relu_field(y, t, layers):
    for W, b in layers:
        z = np.dot(y, W) + b
        y = np.maximum(0, z)
    return z


def random_layers(scale, widths, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return [(rs.randn(fan_in, fan_out) * scale, rs.randn(fan_out) * scale)
            for fan_in, fan_out in itertools.pairwise(widths)]


def integrate_net(layers, y0, times):
    return odeint(relu_field, y0, times, tuple((layers,)), rtol=0.01)


def mean_abs(a, b):
    return np.mean(np.abs(a - b))


def build():
    times = np.linspace(0.0, T_END, 6)
    y0 = np.array([2.0, 0.0])
    M = np.array([[-0.1, 2.0], [-2.0, -0.1]])
    observed = odeint(cubic_oscillator, y0, times, args=(M,))
    loss = lambda layers, i: mean_abs(integrate_net(layers, y0, times), observed)
    return loss, random_layers(0.1, [STATE, 5, STATE])


def train(steps=100):
    loss, layers = build()
    return adam(grad(loss), layers, step_size=0.01, num_iters=steps)


def case():
    loss, layers = build()
    return dict(fn=loss, args=(layers, 0), argnums=0, fd_eps=1e-4, fd_tol=1e-3)
