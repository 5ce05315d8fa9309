"""The JAX examples' MNIST-from-scratch MLP, in NumPy: ``init_random_params(scale,
layer_sizes, rng=npr.RandomState(0))`` pairing ``zip(layer_sizes[:-1], layer_sizes[1:])``,
``predict`` looping ``for w, b in params[:-1]`` then ``final_w, final_b = params[-1]``,
log-softmax by ``logits - logsumexp(logits, axis=1, keepdims=True)``, one-hot targets,
``accuracy`` by ``np.argmax``, and the SGD step over ``zip(params, grads)`` jitted."""

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp

import myc


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
    return [(scale * rng.randn(m, n), scale * rng.randn(n))
            for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]


def relu(x):
    return np.maximum(0, x)


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = np.dot(activations, w) + b
        activations = relu(outputs)
    final_w, final_b = params[-1]
    logits = np.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -np.mean(np.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = np.argmax(targets, axis=1)
    predicted_class = np.argmax(predict(params, inputs), axis=1)
    return np.mean(predicted_class == target_class)


@myc.jit
def update(params, batch, step_size=0.1):
    grads = myc.grad(loss)(params, batch)
    return [(w - step_size * dw, b - step_size * db)
            for (w, b), (dw, db) in zip(params, grads)]


def make_data(n=32, d=16, k=5, seed=1):
    rng = npr.RandomState(seed)
    X = rng.randn(n, d)
    labels = np.argmax(X[:, :k] + 0.3 * rng.randn(n, k), axis=1)
    return X, np.eye(k)[labels]


def case():
    params = init_random_params(0.3, [16, 12, 8, 5], rng=npr.RandomState(0))
    return dict(fn=loss, args=(params, make_data()), argnums=0)


if __name__ == "__main__":
    params = init_random_params(0.3, [16, 12, 8, 5])
    batch = make_data()
    for _ in range(100):
        params = update(params, batch)
    print(loss(params, batch), accuracy(params, batch))
