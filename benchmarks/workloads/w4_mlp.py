"""W4: one MLP training step's loss and gradients, 1024 -> 1024 -> 10, batch 512.

``tanh`` hidden layer, softmax cross-entropy on integer labels; value and the gradients of
all four parameters (``w1, b1, w2, b2``).  GEMM-bound: three 512x1024x1024-class products.
"""

from __future__ import annotations

import numpy as np

from benchmarks.workload import Workload

SIZES = {
    "tiny": {"batch": 16, "d_in": 32, "d_hidden": 32, "d_out": 10, "label": "32-32-10, batch 16"},
    "quick": {
        "batch": 512,
        "d_in": 1024,
        "d_hidden": 1024,
        "d_out": 10,
        "label": "1024-1024-10, batch 512",
    },
    "full": {
        "batch": 512,
        "d_in": 1024,
        "d_hidden": 1024,
        "d_out": 10,
        "label": "1024-1024-10, batch 512",
    },
}


def mlp_loss(w1, b1, w2, b2, x, labels):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1))
    picked = z[np.arange(x.shape[0]), labels]
    return np.mean(lse - picked)


def make_inputs(seed: int, size: str) -> tuple:
    s = SIZES[size]
    rng = np.random.default_rng(seed)

    def normal(shape, scale):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    w1 = normal((s["d_in"], s["d_hidden"]), 1.0 / np.sqrt(s["d_in"]))
    b1 = normal((s["d_hidden"],), 0.1)
    w2 = normal((s["d_hidden"], s["d_out"]), 1.0 / np.sqrt(s["d_hidden"]))
    b2 = normal((s["d_out"],), 0.1)
    x = normal((s["batch"], s["d_in"]), 1.0)
    labels = rng.integers(0, s["d_out"], size=s["batch"], dtype=np.int64)
    return w1, b1, w2, b2, x, labels


def make_torch(torch):
    F = torch.nn.functional

    def mlp_loss_t(w1, b1, w2, b2, x, labels):
        return F.cross_entropy(torch.tanh(x @ w1 + b1) @ w2 + b2, labels)

    return mlp_loss_t


def make_jax(jax, jnp):
    def mlp_loss_j(w1, b1, w2, b2, x, labels):
        logp = jax.nn.log_softmax(jnp.tanh(x @ w1 + b1) @ w2 + b2, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    return mlp_loss_j


def make_numba(numba):
    """Hand-written backpropagation; the products go to BLAS through ``np.dot``."""

    @numba.njit(cache=False)
    def mlp_nb(w1, b1, w2, b2, x, labels):
        n = x.shape[0]
        one = np.float32(1.0)  # float64 scalars would promote the arrays (no NEP 50 here)
        h = np.tanh(np.dot(x, w1) + b1)
        logits = np.dot(h, w2) + b2
        loss = 0.0
        dlogits = np.empty_like(logits)
        for i in range(n):
            m = logits[i].max()
            e = np.exp(logits[i] - m)
            s = e.sum()
            loss += np.log(s) + m - logits[i, labels[i]]
            dlogits[i] = e / (s * n)
            dlogits[i, labels[i]] -= one / n
        gw2 = np.dot(np.ascontiguousarray(h.T), dlogits)
        gb2 = dlogits.sum(axis=0)
        dpre = np.dot(dlogits, np.ascontiguousarray(w2.T)) * (one - h * h)
        gw1 = np.dot(np.ascontiguousarray(x.T), dpre)
        gb1 = dpre.sum(axis=0)
        return np.float32(loss / n), (gw1, gb1, gw2, gb2)

    return mlp_nb


W4 = Workload(
    name="W4",
    title="MLP training step, value and 4 gradients",
    description="softmax_xent(tanh(x@w1+b1)@w2+b2, labels), d/d(w1,b1,w2,b2)",
    kind="value_and_grad",
    myc_fn=mlp_loss,
    make_inputs=make_inputs,
    make_torch=make_torch,
    sizes=SIZES,
    argnums=(0, 1, 2, 3),
    rtol=2e-4,
    atol=2e-5,
    make_jax=make_jax,
    make_numba=make_numba,
)
