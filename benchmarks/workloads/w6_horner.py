"""W6: Horner's rule over 64 coefficients in an explicit loop, on 2^20 points; value and
derivative.

``acc = acc*x + c[i]`` for each coefficient, then ``sum(acc)``; the gradient with respect to
``x`` is the polynomial's derivative at every point.  A compiler that fuses the loop keeps
``acc`` in registers; eager execution makes 128 passes over memory forward and more back.
Points lie in (0, 0.95) and coefficients in (0, 1), so every term counts and the sum has no
cancellation.
"""

from __future__ import annotations

import numpy as np

from benchmarks.workload import Workload

SIZES = {
    "tiny": {"n": 2**10, "k": 16, "label": "2^10 pts, 16 coeffs"},
    "quick": {"n": 2**18, "k": 64, "label": "2^18 pts, 64 coeffs"},
    "full": {"n": 2**20, "k": 64, "label": "2^20 pts, 64 coeffs"},
}


def horner_loss(x, coeffs):
    acc = np.zeros_like(x)
    for i in range(coeffs.shape[0]):
        acc = acc * x + coeffs[i]
    return np.sum(acc)


def make_inputs(seed: int, size: str) -> tuple:
    s = SIZES[size]
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 0.95, size=s["n"]).astype(np.float32)
    coeffs = rng.uniform(0.0, 1.0, size=s["k"]).astype(np.float32)
    return x, coeffs


def make_torch(torch):
    def horner_loss_t(x, coeffs):
        acc = torch.zeros_like(x)
        for i in range(coeffs.shape[0]):
            acc = acc * x + coeffs[i]
        return torch.sum(acc)

    return horner_loss_t


def make_jax(jax, jnp):
    def horner_loss_j(x, coeffs):
        acc = jnp.zeros_like(x)
        for i in range(coeffs.shape[0]):  # unrolled under jit: XLA fuses the whole chain
            acc = acc * x + coeffs[i]
        return jnp.sum(acc)

    return horner_loss_j


def make_numba(numba):
    """Hand-written: Horner for p and p' together (``dp = dp*x + p`` before ``p = p*x + c``)."""

    @numba.njit(parallel=True, cache=False)
    def horner_nb(x, coeffs):
        grad = np.empty_like(x)
        total = 0.0
        for i in numba.prange(x.shape[0]):
            v = x[i]
            p = np.float32(0.0)
            dp = np.float32(0.0)
            for k in range(coeffs.shape[0]):
                dp = dp * v + p
                p = p * v + coeffs[k]
            grad[i] = dp
            total += p
        return np.float32(total), grad

    return horner_nb


W6 = Workload(
    name="W6",
    title="Horner loop, value and derivative",
    description="64-coefficient Horner loop on 2^20 points; sum, d/dx",
    kind="value_and_grad",
    myc_fn=horner_loss,
    make_inputs=make_inputs,
    make_torch=make_torch,
    sizes=SIZES,
    argnums=0,
    rtol=3e-4,  # float32 sum of 2^20 terms
    make_jax=make_jax,
    make_numba=make_numba,
)
