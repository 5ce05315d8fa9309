"""The ML-from-scratch repositories' style: activation functions and losses as classes
with ``__call__`` and ``gradient`` methods (``Sigmoid``, ``Softmax``, ``LeakyReLU``
with ``np.where``), a ``CrossEntropy`` loss with ``np.clip(p, 1e-15, 1 - 1e-15)`` and
``acc`` by ``np.argmax``, one-hot targets from ``to_categorical``, and a
``MultilayerPerceptron`` holding ``self.W``, ``self.w0``, ``self.V``, ``self.v0``
whose ``_forward`` stores hidden values on ``self``; the loss differentiated w.r.t. the
model object and compared with the class's own ``fit`` step gradient (its hand-written
backward pass)."""

import numpy as np


def to_categorical(x, n_col=None):
    if not n_col:
        n_col = np.amax(x) + 1
    one_hot = np.zeros((x.shape[0], n_col))
    one_hot[np.arange(x.shape[0]), x] = 1
    return one_hot


class Sigmoid:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))

    def gradient(self, x):
        return self.__call__(x) * (1 - self.__call__(x))


class LeakyReLU:
    def __init__(self, alpha=0.2):
        self.alpha = alpha

    def __call__(self, x):
        return np.where(x >= 0, x, self.alpha * x)

    def gradient(self, x):
        return np.where(x >= 0, 1, self.alpha)


class Softmax:
    def __call__(self, x):
        e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e_x / np.sum(e_x, axis=-1, keepdims=True)

    def gradient(self, x):
        p = self.__call__(x)
        return p * (1 - p)


class Loss:
    def loss(self, y_true, y_pred):
        return NotImplementedError()


class CrossEntropy(Loss):
    def loss(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return - y * np.log(p) - (1 - y) * np.log(1 - p)

    def acc(self, y, p):
        return np.sum(np.argmax(y, axis=1) == np.argmax(p, axis=1), axis=0) / len(y)

    def gradient(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return - (y / p) + (1 - y) / (1 - p)


class MultilayerPerceptron:
    def __init__(self, n_features, n_hidden, n_outputs, seed=0):
        rng = np.random.RandomState(seed)
        limit = 1 / np.sqrt(n_features)
        self.W = rng.uniform(-limit, limit, (n_features, n_hidden))
        self.w0 = np.zeros((1, n_hidden))
        limit = 1 / np.sqrt(n_hidden)
        self.V = rng.uniform(-limit, limit, (n_hidden, n_outputs))
        self.v0 = np.zeros((1, n_outputs))
        self.hidden_activation = LeakyReLU()
        self.output_activation = Softmax()
        self.loss = CrossEntropy()

    def _forward(self, X):
        self.hidden_input = X.dot(self.W) + self.w0
        self.hidden_output = self.hidden_activation(self.hidden_input)
        self.output_layer_input = self.hidden_output.dot(self.V) + self.v0
        return self.output_activation(self.output_layer_input)

    def manual_gradients(self, X, y):
        """``fit``'s backward pass (for the summed loss), as the repository writes it."""
        y_pred = self._forward(X)
        grad_wrt_out_l_input = self.loss.gradient(y, y_pred) * \
            self.output_activation.gradient(self.output_layer_input)
        grad_v = self.hidden_output.T.dot(grad_wrt_out_l_input)
        grad_v0 = np.sum(grad_wrt_out_l_input, axis=0, keepdims=True)
        grad_wrt_hidden_l_input = grad_wrt_out_l_input.dot(self.V.T) * \
            self.hidden_activation.gradient(self.hidden_input)
        grad_w = X.T.dot(grad_wrt_hidden_l_input)
        grad_w0 = np.sum(grad_wrt_hidden_l_input, axis=0, keepdims=True)
        return grad_w, grad_w0, grad_v, grad_v0


def total_loss(model, X, y):
    y_pred = model._forward(X)
    return np.sum(model.loss.loss(y, y_pred))


def make_data(n=30, seed=10):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    labels = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    return X, to_categorical(labels, 3)


def case():
    X, y = make_data()
    return dict(fn=total_loss, args=(MultilayerPerceptron(4, 8, 3), X, y), argnums=0)
