"""An LSTM written from scratch the way blog posts and course assignments do: the
weights in a dict, ``z = np.vstack((h_prev, x))`` per step, the gates sliced from one
matrix product (``f = sigmoid(a[:H])``, ...), every step's values kept in a ``cache``
dict keyed by time, a softmax cross-entropy on each step, and the hand-written
backpropagation through time with ``reversed(range(T))``, ``dh_next``/``dc_next`` and
gradient clipping by ``np.clip(d, -5, 5, out=d)``.  ``myc.grad`` of the loss equals the
hand-written gradients (tests, with clipping off)."""

import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def init_params(H, X, V, seed=0):
    rng = np.random.default_rng(seed)
    Z = H + X
    params = {
        "W": rng.standard_normal((4 * H, Z)) * 0.3,  # f, i, g, o stacked
        "b": np.zeros((4 * H, 1)),
        "Wy": rng.standard_normal((V, H)) * 0.3,
        "by": np.zeros((V, 1)),
    }
    params["b"][:H] = 1.0  # forget-gate bias starts at one
    return params


def lstm_forward(inputs, targets, h_prev, c_prev, params):
    H = h_prev.shape[0]
    cache = {}
    cache[-1] = {"h": np.copy(h_prev), "c": np.copy(c_prev)}
    loss = 0
    for t in range(len(inputs)):
        x = np.zeros((params["W"].shape[1] - H, 1))
        x[inputs[t]] = 1  # one-hot input
        z = np.vstack((cache[t - 1]["h"], x))
        a = np.dot(params["W"], z) + params["b"]
        f = sigmoid(a[:H])
        i = sigmoid(a[H:2 * H])
        g = np.tanh(a[2 * H:3 * H])
        o = sigmoid(a[3 * H:])
        c = f * cache[t - 1]["c"] + i * g
        h = o * np.tanh(c)
        y = np.dot(params["Wy"], h) + params["by"]
        p = np.exp(y - np.max(y)) / np.sum(np.exp(y - np.max(y)))
        loss += -np.log(p[targets[t], 0])
        cache[t] = {"z": z, "f": f, "i": i, "g": g, "o": o, "c": c, "h": h, "p": p}
    return loss, cache


def lstm_backward(inputs, targets, cache, params, clip=True):
    H = cache[-1]["h"].shape[0]
    grads = {k: np.zeros_like(v) for k, v in params.items()}
    dh_next = np.zeros_like(cache[-1]["h"])
    dc_next = np.zeros_like(cache[-1]["c"])
    for t in reversed(range(len(inputs))):
        dy = np.copy(cache[t]["p"])
        dy[targets[t]] -= 1
        grads["Wy"] += np.dot(dy, cache[t]["h"].T)
        grads["by"] += dy
        dh = np.dot(params["Wy"].T, dy) + dh_next
        do = dh * np.tanh(cache[t]["c"])
        dc = dc_next + dh * cache[t]["o"] * (1 - np.tanh(cache[t]["c"]) ** 2)
        df = dc * cache[t - 1]["c"]
        di = dc * cache[t]["g"]
        dg = dc * cache[t]["i"]
        da = np.vstack((df * cache[t]["f"] * (1 - cache[t]["f"]),
                        di * cache[t]["i"] * (1 - cache[t]["i"]),
                        dg * (1 - cache[t]["g"] ** 2),
                        do * cache[t]["o"] * (1 - cache[t]["o"])))
        grads["W"] += np.dot(da, cache[t]["z"].T)
        grads["b"] += da
        dz = np.dot(params["W"].T, da)
        dh_next = dz[:H]
        dc_next = cache[t]["f"] * dc
    if clip:
        for d in grads.values():
            np.clip(d, -5, 5, out=d)  # mitigate exploding gradients
    return grads


def sequence_loss(params, inputs, targets, h_prev, c_prev):
    loss, _ = lstm_forward(inputs, targets, h_prev, c_prev, params)
    return loss


def train_step(params, inputs, targets, h_prev, c_prev, learning_rate=0.1):
    loss, cache = lstm_forward(inputs, targets, h_prev, c_prev, params)
    grads = lstm_backward(inputs, targets, cache, params)
    for k in params:
        params[k] -= learning_rate * grads[k]
    return loss, params


def make_data(T=7, V=4, seed=1):
    rng = np.random.default_rng(seed)
    seq = rng.integers(0, V, size=T + 1)
    return list(seq[:-1]), list(seq[1:])


def case():
    H, V = 5, 4
    inputs, targets = make_data(V=V)
    return dict(fn=sequence_loss, args=(init_params(H, V, V), inputs, targets,
                                        np.zeros((H, 1)), np.zeros((H, 1))), argnums=0)
