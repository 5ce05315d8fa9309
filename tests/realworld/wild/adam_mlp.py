"""A multilayer perceptron regressor trained with a hand-written Adam: parameters are a
list of (W, b) pairs, the optimizer state mirrors them, epochs are a Python loop."""

import numpy as np

import myc


def init_layers(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, np.sqrt(2 / m), (m, n)), np.zeros(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def forward(layers, x):
    *hidden, (W_last, b_last) = layers
    for W, b in hidden:
        x = np.tanh(x @ W + b)
    return x @ W_last + b_last


def mse(layers, x, y, weight_decay=1e-3):
    pred = forward(layers, x)
    penalty = sum(np.sum(W**2) for W, _ in layers)
    return np.mean((pred - y) ** 2) + weight_decay * penalty


loss_and_grad = myc.value_and_grad(mse)


@myc.jit
def adam_update(layers, grads, m, v, t, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    new_layers, new_m, new_v = [], [], []
    for (W, b), (gW, gb), (mW, mb), (vW, vb) in zip(layers, grads, m, v):
        mW, mb = b1 * mW + (1 - b1) * gW, b1 * mb + (1 - b1) * gb
        vW, vb = b2 * vW + (1 - b2) * gW**2, b2 * vb + (1 - b2) * gb**2
        scale = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        new_layers.append((W - scale * mW / (np.sqrt(vW) + eps),
                           b - scale * mb / (np.sqrt(vb) + eps)))
        new_m.append((mW, mb))
        new_v.append((vW, vb))
    return new_layers, new_m, new_v


def train(layers, x, y, epochs=200):
    m = [(np.zeros_like(W), np.zeros_like(b)) for W, b in layers]
    v = [(np.zeros_like(W), np.zeros_like(b)) for W, b in layers]
    history = []
    for epoch in range(1, epochs + 1):
        val, g = loss_and_grad(layers, x, y)
        layers, m, v = adam_update(layers, g, m, v, epoch)
        history.append(val)
    return layers, history


def make_data(n=32, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 1))
    return x, np.sin(2 * x) + 0.1 * rng.normal(size=(n, 1))


def case():
    x, y = make_data()
    return dict(fn=mse, args=(init_layers([1, 16, 16, 1]), x, y), argnums=0,
                gradient=loss_and_grad, transform="value_and_grad")


if __name__ == "__main__":
    x, y = make_data()
    layers, history = train(init_layers([1, 16, 16, 1]), x, y)
    print(history[0], history[-1])
