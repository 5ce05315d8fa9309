"""A training utility in the style of Keras/Lightning callbacks, written in NumPy: a
``make_loss(weights_list, ...)`` factory returning a closure over a list of arrays,
``fit(loss_fn, params, data, callbacks=[...], schedule=...)`` calling each callback
``cb(step, loss, params)`` (history logging into a list, early stopping through a
mutable dict), a learning-rate schedule passed as a lambda, and the model itself a
list of layer functions bound with ``functools.partial``.  The objective is a
softplus regression whose per-feature weights are held in the closure."""

from functools import partial

import numpy as np

import myc


def dense(params, x, act=np.tanh):
    W, b = params
    return act(x @ W + b)


def make_loss(feature_weights, l2=1e-3):
    scale = np.concatenate(feature_weights)

    def loss(params, x, y):
        layers = [partial(dense, act=np.tanh), partial(dense, act=lambda z: z)]
        h = x * scale
        for layer, p in zip(layers, params):
            h = layer(p, h)
        err = np.logaddexp(0.0, h[:, 0]) - y
        return np.mean(err ** 2) + l2 * sum(np.sum(W ** 2) for W, _ in params)

    return loss


def fit(loss_fn, params, data, steps=60, callbacks=(), schedule=lambda step: 0.1):
    value_and_grad = myc.value_and_grad(loss_fn)
    state = {"stop": False}
    for step in range(steps):
        value, grads = value_and_grad(params, *data)
        lr = schedule(step)
        params = [(W - lr * dW, b - lr * db) for (W, b), (dW, db) in zip(params, grads)]
        for cb in callbacks:
            cb(step, value, params, state)
        if state["stop"]:
            break
    return params


def history_logger(history):
    def callback(step, value, params, state):
        history.append(float(value))
    return callback


def early_stopping(patience=5, min_delta=1e-4):
    best = {"value": np.inf, "wait": 0}

    def callback(step, value, params, state):
        if value < best["value"] - min_delta:
            best["value"], best["wait"] = value, 0
        else:
            best["wait"] += 1
            state["stop"] = best["wait"] >= patience
    return callback


def init_params(sizes=(4, 10, 1), seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def make_data(n=50, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    return x, np.logaddexp(0.0, x[:, 0] - 0.5 * x[:, 2])


def case():
    x, y = make_data()
    loss = make_loss([np.array([1.0, 0.5]), np.array([2.0, 0.25])])
    return dict(fn=loss, args=(init_params(), x, y), argnums=0)


if __name__ == "__main__":
    history = []
    loss = make_loss([np.array([1.0, 0.5]), np.array([2.0, 0.25])])
    fit(loss, init_params(), make_data(), steps=200,
        callbacks=[history_logger(history), early_stopping()],
        schedule=lambda step: 0.2 * 0.99 ** step)
    print(len(history), history[0], history[-1])
