"""W7 and W7f: logsumexp along the last axis of 8192x1024; value and gradient (W7) and the
forward alone, array-valued (W7f).

The loss for W7 is the sum of the row logsumexps; its gradient is the row softmax.
PyTorch uses ``torch.logsumexp``.  Memory-bound with an exp per element.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.workload import Workload

SIZES = {
    "tiny": {"n": 64, "c": 32, "label": "64x32 f32"},
    "quick": {"n": 4096, "c": 1024, "label": "4096x1024 f32"},
    "full": {"n": 8192, "c": 1024, "label": "8192x1024 f32"},
}


def logsumexp_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    s = np.sum(np.exp(x - m), axis=1)
    return np.log(s) + m[:, 0]


def logsumexp_loss(x):
    return np.sum(logsumexp_rows(x))


def make_inputs(seed: int, size: str) -> tuple:
    rng = np.random.default_rng(seed)
    shape = (SIZES[size]["n"], SIZES[size]["c"])
    return ((3.0 * rng.standard_normal(shape)).astype(np.float32),)


def make_torch_rows(torch):
    return lambda x: torch.logsumexp(x, dim=1)


def make_torch_loss(torch):
    return lambda x: torch.sum(torch.logsumexp(x, dim=1))


def make_jax_rows(jax, jnp):
    return lambda x: jax.nn.logsumexp(x, axis=1)


def make_jax_loss(jax, jnp):
    return lambda x: jnp.sum(jax.nn.logsumexp(x, axis=1))


def _numba_row(numba):
    @numba.njit(cache=False, inline="always")
    def row_lse(row):
        m = row[0]
        for j in range(1, row.shape[0]):
            m = max(m, row[j])
        s = 0.0
        for j in range(row.shape[0]):
            s += math.exp(row[j] - m)
        return math.log(s) + m

    return row_lse


def make_numba_rows(numba):
    row_lse = _numba_row(numba)

    @numba.njit(parallel=True, cache=False)
    def lse_nb(x):
        out = np.empty(x.shape[0], dtype=x.dtype)
        for i in numba.prange(x.shape[0]):
            out[i] = row_lse(x[i])
        return out

    return lse_nb


def make_numba_loss(numba):
    """Hand-written: the gradient of sum(logsumexp(rows)) is the row softmax."""
    row_lse = _numba_row(numba)

    @numba.njit(parallel=True, cache=False)
    def lse_loss_nb(x):
        grad = np.empty_like(x)
        total = 0.0
        for i in numba.prange(x.shape[0]):
            lse = row_lse(x[i])
            total += lse
            for j in range(x.shape[1]):
                grad[i, j] = math.exp(x[i, j] - lse)
        return np.float32(total), grad

    return lse_loss_nb


W7 = Workload(
    name="W7",
    title="logsumexp, value and gradient",
    description="sum(logsumexp(x, axis=-1)), d/dx (row softmax)",
    kind="value_and_grad",
    myc_fn=logsumexp_loss,
    make_inputs=make_inputs,
    make_torch=make_torch_loss,
    sizes=SIZES,
    argnums=0,
    rtol=1e-4,
    atol=1e-5,
    make_jax=make_jax_loss,
    make_numba=make_numba_loss,
)

W7f = Workload(
    name="W7f",
    title="logsumexp, forward",
    description="logsumexp(x, axis=-1) (returns the row vector)",
    kind="forward",
    myc_fn=logsumexp_rows,
    make_inputs=make_inputs,
    make_torch=make_torch_rows,
    sizes=SIZES,
    rtol=1e-5,
    atol=1e-6,
    make_jax=make_jax_rows,
    make_numba=make_numba_rows,
)
