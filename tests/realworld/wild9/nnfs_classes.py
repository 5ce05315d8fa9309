"""A classifier in the style of "Neural Networks from Scratch": layer and activation
classes whose ``forward(self, inputs)`` stores ``self.inputs`` and ``self.output``,
``Activation_Softmax`` with ``np.exp(inputs - np.max(..., keepdims=True))``, a ``Loss``
base class whose ``calculate`` calls the subclass's ``forward``,
``np.clip(y_pred, 1e-7, 1 - 1e-7)`` and the ``len(y_true.shape) == 1`` branch between
labels and one-hot targets, the combined ``Activation_Softmax_Loss_CategoricalCrossentropy``
with its hand-written ``backward`` (``self.dinputs[range(samples), y_true] -= 1``), and
``np.argmax(..., axis=1)`` accuracy.  The loss is differentiated w.r.t. the two dense
layer objects, as the book's optimizer updates ``layer.weights``/``layer.biases``."""

import numpy as np


class Layer_Dense:
    def __init__(self, n_inputs, n_neurons):
        self.weights = 0.1 * np.random.randn(n_inputs, n_neurons)
        self.biases = np.zeros((1, n_neurons))

    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases

    def backward(self, dvalues):
        self.dweights = np.dot(self.inputs.T, dvalues)
        self.dbiases = np.sum(dvalues, axis=0, keepdims=True)
        self.dinputs = np.dot(dvalues, self.weights.T)


class Activation_ReLU:
    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.maximum(0, inputs)

    def backward(self, dvalues):
        self.dinputs = dvalues.copy()
        self.dinputs[self.inputs <= 0] = 0


class Activation_Softmax:
    def forward(self, inputs):
        self.inputs = inputs
        exp_values = np.exp(inputs - np.max(inputs, axis=1, keepdims=True))
        probabilities = exp_values / np.sum(exp_values, axis=1, keepdims=True)
        self.output = probabilities


class Loss:
    def calculate(self, output, y):
        sample_losses = self.forward(output, y)
        data_loss = np.mean(sample_losses)
        return data_loss


class Loss_CategoricalCrossentropy(Loss):
    def forward(self, y_pred, y_true):
        samples = len(y_pred)
        y_pred_clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
        if len(y_true.shape) == 1:
            correct_confidences = y_pred_clipped[range(samples), y_true]
        elif len(y_true.shape) == 2:
            correct_confidences = np.sum(y_pred_clipped * y_true, axis=1)
        negative_log_likelihoods = -np.log(correct_confidences)
        return negative_log_likelihoods


class Activation_Softmax_Loss_CategoricalCrossentropy:
    def __init__(self):
        self.activation = Activation_Softmax()
        self.loss = Loss_CategoricalCrossentropy()

    def forward(self, inputs, y_true):
        self.activation.forward(inputs)
        self.output = self.activation.output
        return self.loss.calculate(self.output, y_true)

    def backward(self, dvalues, y_true):
        samples = len(dvalues)
        if len(y_true.shape) == 2:
            y_true = np.argmax(y_true, axis=1)
        self.dinputs = dvalues.copy()
        self.dinputs[range(samples), y_true] -= 1
        self.dinputs = self.dinputs / samples


def spiral_data(samples, classes):
    X = np.zeros((samples * classes, 2))
    y = np.zeros(samples * classes, dtype="uint8")
    for class_number in range(classes):
        ix = range(samples * class_number, samples * (class_number + 1))
        r = np.linspace(0.0, 1, samples)
        t = np.linspace(class_number * 4, (class_number + 1) * 4, samples) + \
            np.random.randn(samples) * 0.2
        X[ix] = np.c_[r * np.sin(t * 2.5), r * np.cos(t * 2.5)]
        y[ix] = class_number
    return X, y


def loss_of(dense1, dense2, X, y):
    """The book's forward pass, as a function of the two layers."""
    activation1 = Activation_ReLU()
    loss_activation = Activation_Softmax_Loss_CategoricalCrossentropy()
    dense1.forward(X)
    activation1.forward(dense1.output)
    dense2.forward(activation1.output)
    return loss_activation.forward(dense2.output, y)


def accuracy_of(dense1, dense2, X, y):
    activation1 = Activation_ReLU()
    softmax = Activation_Softmax()
    dense1.forward(X)
    activation1.forward(dense1.output)
    dense2.forward(activation1.output)
    softmax.forward(dense2.output)
    predictions = np.argmax(softmax.output, axis=1)
    if len(y.shape) == 2:
        y = np.argmax(y, axis=1)
    return np.mean(predictions == y)


def backward_pass(dense1, dense2, X, y):
    """The book's backward pass: (dweights, dbiases) of each layer."""
    activation1 = Activation_ReLU()
    loss_activation = Activation_Softmax_Loss_CategoricalCrossentropy()
    dense1.forward(X)
    activation1.forward(dense1.output)
    dense2.forward(activation1.output)
    loss_activation.forward(dense2.output, y)
    loss_activation.backward(loss_activation.output, y)
    dense2.backward(loss_activation.dinputs)
    activation1.backward(dense2.dinputs)
    dense1.backward(activation1.dinputs)
    return (dense1.dweights, dense1.dbiases), (dense2.dweights, dense2.dbiases)


def make_model(seed=0):
    np.random.seed(seed)
    X, y = spiral_data(samples=20, classes=3)
    return Layer_Dense(2, 16), Layer_Dense(16, 3), X, y


def case():
    dense1, dense2, X, y = make_model()
    # the one edit: spiral_data's uint8 labels as int64 (myc refuses uint8 arguments at
    # the call, naming the argument; arithmetic on uint8 wraps, so it does not convert)
    y = y.astype(np.int64)
    loss_of(dense1, dense2, X, y)  # a first pass, as the book's training loop makes: the
    # layers then hold inputs/output (CPython's forward adds them to the objects)
    return dict(fn=loss_of, args=(dense1, dense2, X, y), argnums=(0, 1))
