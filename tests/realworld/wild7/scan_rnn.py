"""A recurrent network written with a hand-rolled ``scan``, as users port
``jax.lax.scan`` code to NumPy: ``scan(f, init, xs)`` loops ``carry, y = f(carry, x)``
over the rows of ``xs`` collecting ``ys`` in a list; the GRU cell is
``functools.partial(gru_cell, params)``; a ``vmap``-like helper ``batched(f)`` maps a
per-sequence loss over a batch with ``zip(*args)``; the parameters are a dict and the
loss is the mean squared error of the next-step prediction."""

from functools import partial

import numpy as np

import myc


def scan(f, init, xs):
    carry = init
    ys = []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)


def batched(f):
    def apply(*args):
        return np.array([f(*a) for a in zip(*args)])
    return apply


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def gru_cell(params, h, x):
    z = sigmoid(x @ params["Wz"] + h @ params["Uz"] + params["bz"])
    r = sigmoid(x @ params["Wr"] + h @ params["Ur"] + params["br"])
    h_tilde = np.tanh(x @ params["Wh"] + (r * h) @ params["Uh"] + params["bh"])
    h_new = (1 - z) * h + z * h_tilde
    return h_new, h_new @ params["Wy"] + params["by"]


def sequence_loss(params, xs, ys):
    h0 = np.zeros(params["Uz"].shape[0])
    _, preds = scan(partial(gru_cell, params), h0, xs)
    return np.mean((preds - ys) ** 2)


def loss(params, xs_batch, ys_batch):
    return np.mean(batched(partial(sequence_loss, params))(xs_batch, ys_batch))


def init_params(n_in=2, n_hidden=8, n_out=1, seed=0):
    rng = np.random.default_rng(seed)
    p = {}
    for gate in "zrh":
        p[f"W{gate}"] = rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in)
        p[f"U{gate}"] = rng.normal(size=(n_hidden, n_hidden)) / np.sqrt(n_hidden)
        p[f"b{gate}"] = np.zeros(n_hidden)
    p["Wy"] = rng.normal(size=(n_hidden, n_out)) / np.sqrt(n_hidden)
    p["by"] = np.zeros(n_out)
    return p


def make_data(batch=3, steps=12, seed=1):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 4 * np.pi, steps + 1)
    phase = rng.uniform(0, np.pi, size=(batch, 1))
    wave = np.sin(t[None, :] + phase)
    xs = np.stack([wave[:, :-1], np.cos(t[None, :-1] + phase)], axis=-1)
    return xs, wave[:, 1:, None]


def case():
    xs, ys = make_data()
    return dict(fn=loss, args=(init_params(), xs, ys), argnums=0)


if __name__ == "__main__":
    xs, ys = make_data()
    params = init_params()
    g = myc.value_and_grad(loss)
    for _ in range(100):
        v, d = g(params, xs, ys)
        params = {k: params[k] - 0.2 * d[k] for k in params}
    print(v)
