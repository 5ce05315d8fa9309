"""The two-layer network of the "build a neural network from scratch" blog posts: a
``NeuralNetwork(x, y)`` class whose ``feedforward()`` writes ``self.layer1`` and
``self.output`` and returns nothing, ``backprop()`` using ``sigmoid_derivative`` of the
stored activations and adding ``d_weights1``/``d_weights2`` into ``self.weights1`` in
place; the squared error after ``feedforward()`` differentiated w.r.t. the network
object; a training loop calling the two methods."""

import numpy as np


def sigmoid(x):
    return 1.0 / (1 + np.exp(-x))


def sigmoid_derivative(x):
    return x * (1.0 - x)


class NeuralNetwork:
    def __init__(self, x, y):
        self.input = x
        self.weights1 = np.random.rand(self.input.shape[1], 4)
        self.weights2 = np.random.rand(4, 1)
        self.y = y
        self.output = np.zeros(self.y.shape)

    def feedforward(self):
        self.layer1 = sigmoid(np.dot(self.input, self.weights1))
        self.output = sigmoid(np.dot(self.layer1, self.weights2))

    def backprop(self):
        d_weights2 = np.dot(self.layer1.T, (2 * (self.y - self.output) *
                                            sigmoid_derivative(self.output)))
        d_weights1 = np.dot(self.input.T, (np.dot(2 * (self.y - self.output) *
                                                  sigmoid_derivative(self.output),
                                                  self.weights2.T) *
                                           sigmoid_derivative(self.layer1)))
        self.weights1 += d_weights1
        self.weights2 += d_weights2


def squared_error(nn):
    nn.feedforward()
    return np.sum((nn.y - nn.output) ** 2)


def train(nn, iterations=200):
    for i in range(iterations):
        nn.feedforward()
        nn.backprop()
    return nn


def make_network(seed=11):
    np.random.seed(seed)
    X = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 1]], dtype=float)
    y = np.array([[0], [1], [1], [0]], dtype=float)
    return NeuralNetwork(X, y)


def case():
    return dict(fn=squared_error, args=(make_network(),), argnums=0)
