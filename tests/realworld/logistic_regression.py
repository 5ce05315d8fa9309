"""Logistic regression on four labelled points; the loss reads its data from module
globals and mixes a boolean label array into float arithmetic."""

import numpy as np

from myc import grad


def squash(u):
    return (np.tanh(u) + 1) * 0.5


def prob_true(w, X):
    return squash(np.dot(X, w))


def neg_log_likelihood(w):
    p = prob_true(w, FEATURES)
    p_of_label = LABELS * p + (1 - LABELS) * (1 - p)
    return -np.sum(np.log(p_of_label))


FEATURES = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15],
                     [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
LABELS = np.array([True, True, False, True])

nll_slope = grad(neg_log_likelihood)


def case():
    w0 = np.array([0.1, -0.2, 0.3])
    return dict(fn=neg_log_likelihood, args=(w0,), argnums=0, gradient=nll_slope)


if __name__ == "__main__":
    w = np.zeros(3)
    for _ in range(100):
        w -= 0.01 * nll_slope(w)
    print("loss after descent:", neg_log_likelihood(w))
