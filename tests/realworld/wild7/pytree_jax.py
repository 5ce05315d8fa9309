"""A JAX-style training step in NumPy: parameters as a nested pytree (a dict of
layers, each a dict, plus a tuple for the head), a hand-written ``tree_map`` recursing
with ``isinstance`` over dicts, tuples and lists, ``value_and_grad(loss, has_aux=True)``
whose auxiliary output is a dict of metrics, and a ``@myc.jit`` ``update`` returning
``(new_params, new_opt_state, metrics)``; the momentum state is a tree of the same
shape made by ``tree_map(np.zeros_like, params)``; a ``Config`` NamedTuple carries the
hyper-parameters."""

from typing import NamedTuple

import numpy as np

import myc


class Config(NamedTuple):
    lr: float = 0.1
    momentum: float = 0.9
    l2: float = 1e-4


def tree_map(f, tree, *rest):
    if isinstance(tree, dict):
        return {k: tree_map(f, tree[k], *[r[k] for r in rest]) for k in tree}
    if isinstance(tree, (tuple, list)):
        out = [tree_map(f, t, *[r[i] for r in rest]) for i, t in enumerate(tree)]
        return tuple(out) if isinstance(tree, tuple) else out
    return f(tree, *rest)


def tree_leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in tree_leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in tree_leaves(t)]
    return [tree]


def forward(params, x):
    for name in ("layer1", "layer2"):
        layer = params["body"][name]
        x = np.maximum(x @ layer["w"] + layer["b"], 0.0)
    w, b = params["head"]
    return x @ w + b


def loss_fn(params, batch, cfg):
    x, y = batch
    logits = forward(params, x)
    logz = np.log(np.sum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)) \
        + logits.max(axis=1)
    nll = np.mean(logz - logits[np.arange(len(y)), y])
    reg = cfg.l2 * sum(np.sum(p ** 2) for p in tree_leaves(params))
    acc = np.mean(np.argmax(logits, axis=1) == y)
    return nll + reg, {"nll": nll, "accuracy": acc}


@myc.jit
def update(params, velocity, batch, cfg):
    (loss, metrics), grads = myc.value_and_grad(loss_fn, has_aux=True)(params, batch, cfg)
    velocity = tree_map(lambda v, g: cfg.momentum * v + g, velocity, grads)
    params = tree_map(lambda p, v: p - cfg.lr * v, params, velocity)
    return params, velocity, {**metrics, "loss": loss}


def init_params(seed=0, sizes=(5, 16, 16, 3)):
    rng = np.random.default_rng(seed)

    def dense(m, n):
        return {"w": rng.normal(size=(m, n)) * np.sqrt(2.0 / m), "b": np.zeros(n)}

    return {"body": {"layer1": dense(sizes[0], sizes[1]), "layer2": dense(sizes[1], sizes[2])},
            "head": (rng.normal(size=(sizes[2], sizes[3])) * 0.1, np.zeros(sizes[3]))}


def make_batch(n=64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    y = np.argmax(x[:, :3] + 0.3 * rng.normal(size=(n, 3)), axis=1)
    return x, y


def objective(params, batch, cfg):
    return loss_fn(params, batch, cfg)[0]


def case():
    vg = myc.value_and_grad(loss_fn, has_aux=True)
    return dict(fn=objective, args=(init_params(), make_batch(), Config()), argnums=0,
                gradient=lambda p, b, c: vg(p, b, c)[1])


if __name__ == "__main__":
    params, batch, cfg = init_params(), make_batch(), Config()
    velocity = tree_map(np.zeros_like, params)
    for step in range(50):
        params, velocity, metrics = update(params, velocity, batch, cfg)
    print(metrics)
