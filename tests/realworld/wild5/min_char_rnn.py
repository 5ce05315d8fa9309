"""Karpathy's minimal character-level RNN, its ``lossFun`` as published in spirit: dicts
``xs, hs, ys, ps`` indexed by time step, ``hs[-1] = np.copy(hprev)``, one-hot inputs by
``xs[t] = np.zeros((vocab_size, 1)); xs[t][inputs[t]] = 1``, column vectors and
``np.dot``, the hand-written backward pass (``dy[targets[t]] -= 1``) and the gradients
clipped in place by ``np.clip(dparam, -5, 5, out=dparam)``.  myc differentiates the loss
itself and compiles the whole ``lossFun``; both are compared with NumPy."""

import numpy as np

import myc

data = "hello world, hello myc. the quick brown fox jumps over the lazy dog."
chars = sorted(set(data))
vocab_size = len(chars)
char_to_ix = {ch: i for i, ch in enumerate(chars)}
hidden_size = 12
seq_length = 10


def lossFun(inputs, targets, hprev, Wxh, Whh, Why, bh, by):
    """inputs, targets: lists of ints; hprev: (H, 1).  Returns the loss, the gradients
    on the parameters, and the last hidden state."""
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    # forward pass
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))  # encode in 1-of-k representation
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    # backward pass
    dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
    dbh, dby = np.zeros_like(bh), np.zeros_like(by)
    dhnext = np.zeros_like(hs[0])
    for t in reversed(range(len(inputs))):
        dy = np.copy(ps[t])
        dy[targets[t]] -= 1
        dWhy += np.dot(dy, hs[t].T)
        dby += dy
        dh = np.dot(Why.T, dy) + dhnext
        dhraw = (1 - hs[t] * hs[t]) * dh
        dbh += dhraw
        dWxh += np.dot(dhraw, xs[t].T)
        dWhh += np.dot(dhraw, hs[t - 1].T)
        dhnext = np.dot(Whh.T, dhraw)
    for dparam in [dWxh, dWhh, dWhy, dbh, dby]:
        np.clip(dparam, -5, 5, out=dparam)
    return loss, dWxh, dWhh, dWhy, dbh, dby, hs[len(inputs) - 1]


def init_params(seed=0):
    r = np.random.RandomState(seed)
    return (r.randn(hidden_size, vocab_size) * 0.1, r.randn(hidden_size, hidden_size) * 0.1,
            r.randn(vocab_size, hidden_size) * 0.1, np.zeros((hidden_size, 1)),
            np.zeros((vocab_size, 1)))


def batch(p=0):
    inputs = [char_to_ix[ch] for ch in data[p:p + seq_length]]
    targets = [char_to_ix[ch] for ch in data[p + 1:p + seq_length + 1]]
    return inputs, targets


def objective(params, inputs, targets, hprev):
    return lossFun(inputs, targets, hprev, *params)[0]


def case():
    inputs, targets = batch(3)
    hprev = 0.1 * np.ones((hidden_size, 1))
    return dict(fn=objective, args=(init_params(), inputs, targets, hprev), argnums=0)


if __name__ == "__main__":
    params = init_params()
    mem = [np.zeros_like(p) for p in params]
    hprev = np.zeros((hidden_size, 1))
    f = myc.jit(lossFun)
    for n in range(50):
        inputs, targets = batch((n * seq_length) % (len(data) - seq_length - 1))
        loss, *grads, hprev = f(inputs, targets, hprev, *params)
        mem = [m + g * g for m, g in zip(mem, grads)]
        params = tuple(p - 0.1 * g / np.sqrt(m + 1e-8) for p, g, m in zip(params, grads, mem))
    print(loss)
