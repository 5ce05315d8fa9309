"""W2: value and gradient of W1's ``sum(gelu_tanh(x)*sigmoid(x) + x*x)`` w.r.t. ``x``."""

from __future__ import annotations

import math

import numpy as np

from benchmarks.workload import Workload
from benchmarks.workloads.w1_elementwise import (
    GELU_A,
    GELU_K,
    SIZES,
    chain_sum,
    make_inputs,
    make_jax_sum,
    make_torch_sum,
)


def make_numba(numba):
    """Hand-written derivative: d/dx [g(x) s(x) + x^2] = g' s + g s (1 - s) + 2x."""

    @numba.njit(parallel=True, cache=False)
    def value_and_grad_nb(x):
        grad = np.empty_like(x)
        acc = 0.0
        for i in numba.prange(x.shape[0]):
            v = x[i]
            t = math.tanh(GELU_K * (v + GELU_A * v * v * v))
            g = 0.5 * v * (1.0 + t)
            dg = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_A * v * v)
            s = 1.0 / (1.0 + math.exp(-v))
            acc += g * s + v * v
            grad[i] = dg * s + g * s * (1.0 - s) + 2.0 * v
        return np.float32(acc), grad

    return value_and_grad_nb


W2 = Workload(
    name="W2",
    title="elementwise chain, value and gradient",
    description="value and d/dx of sum(gelu_tanh(x)*sigmoid(x) + x*x)",
    kind="value_and_grad",
    myc_fn=chain_sum,
    make_inputs=make_inputs,
    make_torch=make_torch_sum,
    sizes=SIZES,
    argnums=0,
    rtol=3e-4,
    make_jax=make_jax_sum,
    make_numba=make_numba,
)
