"""Logistic regression from scratch, the way course code and blog posts write it: a
bias column by ``np.c_[np.ones((m, 1)), X]``, ``theta`` a column vector,
``sigmoid``, the cost ``-(1/m) * (y.T @ np.log(h) + (1 - y).T @ np.log(1 - h))``
with an L2 term that skips the bias (``theta[1:]``), its hand-written gradient with
``np.r_[[[0]], theta[1:]]`` and a ``for`` loop of gradient descent storing
``J_history.append(cost)``; the prediction ``(sigmoid(X @ theta) >= 0.5).astype(int)``."""

import numpy as np


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def add_intercept(X):
    m = X.shape[0]
    return np.c_[np.ones((m, 1)), X]


def cost_function(theta, X, y, lambda_=0.1):
    m = len(y)
    h = sigmoid(X @ theta)
    J = -(1 / m) * (y.T @ np.log(h) + (1 - y).T @ np.log(1 - h))
    reg = (lambda_ / (2 * m)) * np.sum(np.square(theta[1:]))
    return (J + reg).item()


def gradient(theta, X, y, lambda_=0.1):
    m = len(y)
    h = sigmoid(X @ theta)
    reg = (lambda_ / m) * np.r_[[[0]], theta[1:]]
    return (1 / m) * (X.T @ (h - y)) + reg


def gradient_descent(X, y, theta, alpha, num_iters, lambda_=0.1):
    J_history = []
    for i in range(num_iters):
        theta = theta - alpha * gradient(theta, X, y, lambda_)
        J_history.append(cost_function(theta, X, y, lambda_))
    return theta, J_history


def predict(theta, X):
    return (sigmoid(X @ theta) >= 0.5).astype(int)


def make_data(m=60, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=m) > 0).astype(float)
    return add_intercept(X), y.reshape(-1, 1)


def case():
    X, y = make_data()
    theta = np.array([[0.1], [-0.2], [0.3], [0.05]])
    return dict(fn=cost_function, args=(theta, X, y), argnums=0)
