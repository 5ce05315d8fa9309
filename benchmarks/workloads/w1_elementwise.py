"""W1 and W1a: an elementwise chain, forward only.

``sum(gelu_tanh(x) * sigmoid(x) + x*x)`` over 2^24 float32 values (W1) and the same chain
without the sum, returning the whole array (W1a).  Compute-bound: tanh and exp per element
decide it, so vectorized transcendentals and both cores matter.  W2 differentiates W1.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.workload import Workload

SIZES = {
    "tiny": {"n": 2**12, "label": "2^12 f32"},
    "quick": {"n": 2**22, "label": "2^22 f32"},
    "full": {"n": 2**24, "label": "2^24 f32"},
}

GELU_K = 0.7978845608028654  # sqrt(2/pi), written out so the subset needs no global
GELU_A = 0.044715


# --- myc side: plain NumPy in the myc subset ------------------------------------------
def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def chain(x):
    return gelu_tanh(x) * sigmoid(x) + x * x


def chain_sum(x):
    return np.sum(gelu_tanh(x) * sigmoid(x) + x * x)


def make_inputs(seed: int, size: str) -> tuple:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(SIZES[size]["n"], dtype=np.float32),)


# --- PyTorch eager: the library's own fused ops where it has them ----------------------
def make_torch_chain(torch):
    F = torch.nn.functional

    def chain_t(x):
        return F.gelu(x, approximate="tanh") * torch.sigmoid(x) + x * x

    return chain_t


def make_torch_sum(torch):
    chain_t = make_torch_chain(torch)
    return lambda x: torch.sum(chain_t(x))


# --- optional peers ---------------------------------------------------------------------
def make_jax_chain(jax, jnp):
    def chain_j(x):
        return jax.nn.gelu(x, approximate=True) * jax.nn.sigmoid(x) + x * x

    return chain_j


def make_jax_sum(jax, jnp):
    chain_j = make_jax_chain(jax, jnp)
    return lambda x: jnp.sum(chain_j(x))


def make_numba_sum(numba):
    @numba.njit(parallel=True, cache=False)
    def chain_sum_nb(x):
        acc = 0.0
        for i in numba.prange(x.shape[0]):
            v = x[i]
            g = 0.5 * v * (1.0 + math.tanh(GELU_K * (v + GELU_A * v * v * v)))
            acc += g / (1.0 + math.exp(-v)) + v * v
        return np.float32(acc)

    return chain_sum_nb


def make_numba_chain(numba):
    @numba.njit(parallel=True, cache=False)
    def chain_nb(x):
        out = np.empty_like(x)
        for i in numba.prange(x.shape[0]):
            v = x[i]
            g = 0.5 * v * (1.0 + math.tanh(GELU_K * (v + GELU_A * v * v * v)))
            out[i] = g / (1.0 + math.exp(-v)) + v * v
        return out

    return chain_nb


W1 = Workload(
    name="W1",
    title="elementwise chain, forward",
    description="sum(gelu_tanh(x)*sigmoid(x) + x*x)",
    kind="forward",
    myc_fn=chain_sum,
    make_inputs=make_inputs,
    make_torch=make_torch_sum,
    sizes=SIZES,
    rtol=3e-4,  # a float32 sum of 2^24 terms: summation order moves the last digits
    make_jax=make_jax_sum,
    make_numba=make_numba_sum,
)

W1a = Workload(
    name="W1a",
    title="elementwise chain, forward, array-valued",
    description="gelu_tanh(x)*sigmoid(x) + x*x (returns the array)",
    kind="forward",
    myc_fn=chain,
    make_inputs=make_inputs,
    make_torch=make_torch_chain,
    sizes=SIZES,
    rtol=1e-5,
    atol=1e-6,
    make_jax=make_jax_chain,
    make_numba=make_numba_chain,
)
