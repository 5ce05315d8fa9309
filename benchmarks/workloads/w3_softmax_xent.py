"""W3: softmax cross-entropy over logits 4096x1024 with integer labels, value and gradient.

Mean over rows of ``logsumexp(logits[i]) - logits[i, labels[i]]``, differentiated with
respect to the logits.  Memory-bound: one read of the logits for the value, one read and
one write for the gradient.  PyTorch uses its fused ``F.cross_entropy``.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.workload import Workload

SIZES = {
    "tiny": {"n": 64, "c": 32, "label": "64x32 f32"},
    "quick": {"n": 4096, "c": 1024, "label": "4096x1024 f32"},
    "full": {"n": 4096, "c": 1024, "label": "4096x1024 f32"},
}


def softmax_xent(logits, labels):
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1))
    picked = z[np.arange(logits.shape[0]), labels]
    return np.mean(lse - picked)


def make_inputs(seed: int, size: str) -> tuple:
    n, c = SIZES[size]["n"], SIZES[size]["c"]
    rng = np.random.default_rng(seed)
    logits = (2.0 * rng.standard_normal((n, c))).astype(np.float32)
    labels = rng.integers(0, c, size=n, dtype=np.int64)
    return logits, labels


def make_torch(torch):
    F = torch.nn.functional
    return lambda logits, labels: F.cross_entropy(logits, labels)


def make_jax(jax, jnp):
    def xent(logits, labels):
        logp = jax.nn.log_softmax(logits, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    return xent


def make_numba(numba):
    """Hand-written: d loss / d logits = (softmax(logits) - onehot(labels)) / n."""

    @numba.njit(parallel=True, cache=False)
    def xent_nb(logits, labels):
        n, c = logits.shape
        grad = np.empty_like(logits)
        row_loss = np.empty(n, dtype=np.float64)
        for i in numba.prange(n):
            m = logits[i, 0]
            for j in range(1, c):
                m = max(m, logits[i, j])
            s = 0.0
            for j in range(c):
                e = math.exp(logits[i, j] - m)
                grad[i, j] = e
                s += e
            row_loss[i] = math.log(s) + m - logits[i, labels[i]]
            inv = 1.0 / (s * n)
            for j in range(c):
                grad[i, j] = grad[i, j] * inv
            grad[i, labels[i]] -= 1.0 / n
        return np.float32(row_loss.sum() / n), grad

    return xent_nb


W3 = Workload(
    name="W3",
    title="softmax cross-entropy, value and gradient",
    description="mean(logsumexp(logits) - logits[arange(n), labels]), d/d logits",
    kind="value_and_grad",
    myc_fn=softmax_xent,
    make_inputs=make_inputs,
    make_torch=make_torch,
    sizes=SIZES,
    argnums=0,
    rtol=1e-4,
    atol=1e-5,
    make_jax=make_jax,
    make_numba=make_numba,
)
