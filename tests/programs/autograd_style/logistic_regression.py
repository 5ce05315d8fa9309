"""Logistic regression: the training loss of a weight vector (a data-dependent mean)."""

import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2.0) + 1.0)


def logistic_predictions(weights, inputs):
    return sigmoid(np.dot(inputs, weights))


def training_loss(weights, inputs, targets):
    preds = logistic_predictions(weights, inputs)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities))


_rs = np.random.RandomState(0)
INPUTS = _rs.randn(8, 3)
TARGETS = (_rs.rand(8) > 0.5).astype(np.float64)
CASE = dict(fn=training_loss, args=(np.array([0.1, -0.2, 0.3]), INPUTS, TARGETS), argnums=0)


def reference_grad(weights, inputs, targets):
    """The gradient by hand, for the NumPy cross-check."""
    p = logistic_predictions(weights, inputs)
    return inputs.T @ (p - targets)
