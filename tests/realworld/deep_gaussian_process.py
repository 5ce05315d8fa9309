"""Two Gaussian processes stacked: input -> hidden values (free parameters) -> output,
with the joint evidence of both layers as objective.  As in the example it re-expresses,
the layer sizes and observations are module globals that ``case()`` assigns."""

import numpy as np
import numpy.random as npr

from myc import value_and_grad
from tests.realworld.gaussian_process import gp_regression, squared_exp


def step_data(D=1, n=40, noise=0.1):
    rs = npr.RandomState(0)
    x = np.linspace(-2, 2, num=n)
    y = np.sign(x) + rs.randn(n) * noise
    return x.reshape((len(x), D)), y


def two_layer_gp(d_in, d_hidden, kernel):
    n1, post1, ev1 = gp_regression(kernel, n_kernel_params=d_in + 1)
    n2, post2, ev2 = gp_regression(kernel, n_kernel_params=d_hidden + 1)
    n_total = n1 + n2 + d_hidden * N_POINTS

    def split(params):
        return params[:n1], params[n1:n1 + n2], params[n1 + n2:]

    def predict(params, x, y, x_new):
        th1, th2, h = split(params)
        h_mean, _ = post1(th1, x, h, x_new)
        return post2(th2, np.atleast_2d(h).T, y, np.atleast_2d(h_mean).T)

    def evidence(params):
        th1, th2, h = split(params)
        return ev1(th1, X_OBS, h) + ev2(th2, np.atleast_2d(h).T, Y_OBS)

    return n_total, evidence, predict, split, [post1, post2]


def case():
    global N_POINTS, X_OBS, Y_OBS
    N_POINTS = 6
    X_OBS, Y_OBS = step_data(D=1, n=N_POINTS)
    n_total, evidence, _, _, _ = two_layer_gp(1, 1, squared_exp)
    params0 = 0.1 * npr.RandomState(0).randn(n_total)
    loss = lambda params: -evidence(params)
    return dict(fn=loss, args=(params0,), argnums=0, gradient=value_and_grad(loss),
                transform="value_and_grad")
