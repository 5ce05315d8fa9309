"""W5: a data-dependent ``while`` loop and its gradient with respect to the initial point.

Iterate ``x = x - 0.05*sin(x)`` on a 1024-vector until the largest step is below 1e-4
(at most 1000 iterations); the loss is ``sum(x)`` at the end.  The starting points lie in
(4, 8), all in the basin of the fixed point 2*pi, so the loss is well away from zero and the
loop runs about 150-200 iterations.  Small arrays, many iterations: per-iteration overhead
(dispatch, a return to Python, a device sync for the test) decides it.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.workload import Workload

SIZES = {
    "tiny": {"n": 64, "label": "64 f32, <=1000 it"},
    "quick": {"n": 1024, "label": "1024 f32, <=1000 it"},
    "full": {"n": 1024, "label": "1024 f32, <=1000 it"},
}
MAX_ITERS = 1000
TOL = 1e-4


def while_loss(x0):
    x = x0
    i = 0
    while i < 1000:
        step = 0.05 * np.sin(x)
        x = x - step
        i += 1
        if np.max(np.abs(step)) < 1e-4:
            break
    return np.sum(x)


def make_inputs(seed: int, size: str) -> tuple:
    rng = np.random.default_rng(seed)
    return (rng.uniform(4.0, 8.0, size=SIZES[size]["n"]).astype(np.float32),)


def make_torch(torch):
    def while_loss_t(x0):
        x = x0
        i = 0
        while i < MAX_ITERS:
            step = 0.05 * torch.sin(x)
            x = x - step
            i += 1
            if torch.max(torch.abs(step)) < TOL:
                break
        return torch.sum(x)

    return while_loss_t


def make_jax(jax, jnp):
    """``lax.while_loop`` has no reverse mode, so the usual workaround: a ``lax.scan`` over
    the iteration cap that stops updating once the exit condition held."""

    def while_loss_j(x0):
        def body(carry, _):
            x, done = carry
            step = 0.05 * jnp.sin(x)
            x_new = jnp.where(done, x, x - step)
            return (x_new, done | (jnp.max(jnp.abs(step)) < TOL)), None

        (x, _), _ = jax.lax.scan(body, (x0, jnp.array(False)), None, length=MAX_ITERS)
        return jnp.sum(x)

    return while_loss_j


def make_numba(numba):
    """Hand-written: each element evolves on its own, so d x_end / d x0 is the product of
    the per-iteration derivatives ``1 - 0.05*cos(x)``, accumulated alongside the loop."""

    @numba.njit(cache=False)
    def while_nb(x0):
        x = x0.copy()
        g = np.ones_like(x0)
        for _ in range(MAX_ITERS):
            biggest = 0.0
            for j in range(x.shape[0]):
                step = np.float32(0.05) * np.float32(math.sin(x[j]))
                g[j] *= np.float32(1.0) - np.float32(0.05) * np.float32(math.cos(x[j]))
                x[j] -= step
                biggest = max(biggest, abs(step))
            if biggest < TOL:
                break
        return np.float32(x.sum()), g

    return while_nb


W5 = Workload(
    name="W5",
    title="data-dependent while loop, value and gradient",
    description="x = x - 0.05*sin(x) until max|step| < 1e-4 (<=1000 it); sum(x), d/d x0",
    kind="value_and_grad",
    myc_fn=while_loss,
    make_inputs=make_inputs,
    make_torch=make_torch,
    sizes=SIZES,
    argnums=0,
    rtol=1e-4,
    atol=1e-5,
    make_jax=make_jax,
    make_numba=make_numba,
)
