"""A small 1-D convolutional network for sequences: np.convolve over channels in a
list comprehension, ReLU, global average pooling and a softmax classifier."""

import numpy as np

import myc


def conv_layer(x, kernels, bias):
    # x: (C_in, L); kernels: (C_out, C_in, K) -> (C_out, L - K + 1)
    return np.array([
        sum(np.convolve(x[c], kernels[o, c][::-1], mode="valid") for c in range(x.shape[0]))
        + bias[o]
        for o in range(kernels.shape[0])
    ])


def relu(x):
    return np.maximum(x, 0.0)


def log_softmax(z):
    z = z - z.max()
    return z - np.log(np.sum(np.exp(z)))


def network(params, x):
    h = relu(conv_layer(x, params["k1"], params["b1"]))
    h = relu(conv_layer(h, params["k2"], params["b2"]))
    pooled = h.mean(axis=1)
    return log_softmax(params["W"] @ pooled + params["c"])


def dataset_loss(params, xs, labels):
    return -np.mean([network(params, x)[label] for x, label in zip(xs, labels)])


def init(seed=0, c1=3, c2=4, classes=3, k=3):
    rng = np.random.default_rng(seed)
    return {"k1": 0.5 * rng.normal(size=(c1, 1, k)), "b1": 0.1 * np.ones(c1),
            "k2": 0.5 * rng.normal(size=(c2, c1, k)), "b2": 0.1 * np.ones(c2),
            "W": rng.normal(size=(classes, c2)), "c": np.zeros(classes)}


def make_data(n=5, length=20, seed=1):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, length)
    labels = rng.integers(0, 3, size=n)
    xs = [np.sin(2 * np.pi * (lab + 1) * t)[None, :] + 0.1 * rng.normal(size=(1, length))
          for lab in labels]
    return xs, labels


def case():
    xs, labels = make_data()
    return dict(fn=dataset_loss, args=(init(), xs, labels), argnums=0)


if __name__ == "__main__":
    xs, labels = make_data(20)
    params = init()
    step = myc.value_and_grad(dataset_loss)
    for _ in range(30):
        val, g = step(params, xs, labels)
        params = {k: params[k] - 0.1 * g[k] for k in params}
    print(val)
