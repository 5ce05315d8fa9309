"""MAML on sine-wave regression: a small MLP as a list of ``(W, b)`` pairs, an inner
SGD step ``params - alpha * grad(loss)(params, support)`` taken inside the meta
objective (a comprehension over ``zip`` of parameters and gradients), the query loss
after adaptation averaged over a batch of tasks: the meta-gradient differentiates
through the inner gradient."""

import numpy as np

import myc


def init_params(sizes=(1, 16, 16, 1), seed=0):
    r = np.random.default_rng(seed)
    return [(r.standard_normal((m, n)) * np.sqrt(1.0 / m), np.zeros(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return h @ W + b


def mse(params, x, y):
    return np.mean((predict(params, x) - y) ** 2)


inner_grad = myc.grad(mse)


def adapt(params, x, y, alpha=0.1, steps=1):
    for _ in range(steps):
        grads = inner_grad(params, x, y)
        params = [(W - alpha * dW, b - alpha * db) for (W, b), (dW, db) in zip(params, grads)]
    return params


def meta_loss(params, tasks):
    total = 0.0
    for xs, ys, xq, yq in tasks:
        total = total + mse(adapt(params, xs, ys), xq, yq)
    return total / len(tasks)


def sample_tasks(n_tasks=3, k=5, seed=0):
    r = np.random.default_rng(seed)
    tasks = []
    for _ in range(n_tasks):
        amp, phase = r.uniform(0.5, 2.0), r.uniform(0, np.pi)
        xs, xq = r.uniform(-3, 3, (k, 1)), r.uniform(-3, 3, (k, 1))
        tasks.append((xs, amp * np.sin(xs + phase), xq, amp * np.sin(xq + phase)))
    return tasks


def case():
    return dict(fn=meta_loss, args=(init_params(), sample_tasks()), argnums=0)


def meta_train(steps=20, lr=0.01):
    params = init_params()
    g = myc.value_and_grad(meta_loss)
    losses = []
    for t in range(steps):
        loss, grads = g(params, sample_tasks(seed=t))
        params = [(W - lr * dW, b - lr * db) for (W, b), (dW, db) in zip(params, grads)]
        losses.append(loss)
    return params, losses


if __name__ == "__main__":
    print(meta_train()[1])
