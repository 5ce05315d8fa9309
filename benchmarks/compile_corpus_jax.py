"""The compile-time corpus in JAX: the same programs, for the comparison in
docs/compile-time.md (``python -m benchmarks.compile_latency --corpus --compare``).

Written the same way: the corpus's own functions (``benchmarks/compile_corpus.py``) run
with ``np`` bound to ``jax.numpy`` -- same code objects, Python loops unrolled by JAX's
tracing as they are by myc's -- under ``jax.jit(jax.grad(f, argnums))``, in float64
(``jax_enable_x64``: the corpus's arrays are float64).  Where the corpus's code is not
something JAX can trace, the port says how it differs:

* ``taylor-d2`` -- a ``while`` whose condition is data: JAX needs ``lax.while_loop``,
  which has no reverse mode, so ``grad(grad(...))`` of it has no JAX version (none).
* ``loop100k`` / ``count1m`` -- ``jax.jit`` would trace 100,000 / 10^6 copies of the
  body; the JAX versions are the idiomatic ``lax.fori_loop`` / ``lax.while_loop``.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from benchmarks import compile_corpus as cc


def jax_program(name: str) -> tuple[Callable, tuple] | None:
    """``(jitted JAX function, its arguments)`` for corpus entry ``name``, or ``None``
    (JAX not importable, or no JAX version: see the module's docstring)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    e = cc.ENTRIES[name]
    _, args = e.build()
    names: dict[str, Any] = {"np": jnp}
    # the same code objects, their globals' ``np`` JAX's (``_sigmoid`` follows too)
    names["_sigmoid"] = types.FunctionType(cc._sigmoid.__code__,
                                           {**cc._sigmoid.__globals__, **names})

    def port(f: Callable) -> Callable:
        return types.FunctionType(f.__code__, {**f.__globals__, **names})

    fams: dict[str, Any] = {
        "RNN grad": (cc.rnn_loss, 4), "LSTM grad": (cc.lstm_loss, 8),
        "mixture grad": (cc.gmm_nll, 3), "HMM grad": (cc.hmm_loglik, 3),
        "GP grad": (cc.gp_fit, 2)}
    if e.program in fams:
        fn, n = fams[e.program]
        return jax.jit(jax.grad(port(fn), argnums=tuple(range(n)))), args
    if e.program == "mixture HVP":
        g = jax.grad(port(cc.gmm_nll), argnums=(0, 1, 2))
        tangents = (*(jnp.ones_like(a) for a in args[:3]), jnp.zeros_like(args[3]))
        return jax.jit(lambda *a: jax.jvp(g, a, tangents)), args
    if e.program == "fluid grad":
        steps, f = args[-1], port(cc.fluid_loss)
        return jax.jit(jax.grad(lambda u, v, a, b: f(u, v, a, b, steps),
                                argnums=(0, 1))), args[:-1]
    if e.program == "RK4 grad":
        steps, f = args[-1], port(cc.rk4_loss)
        return jax.jit(jax.grad(lambda w, y: f(w, y, steps))), args[:-1]
    if name == "loop100k":
        return jax.jit(lambda x: jax.lax.fori_loop(
            0, 100000, lambda _, x: x * 0.999 + 0.001, x)), args
    if name == "count1m":
        def count(x):
            return jax.lax.while_loop(lambda c: c[0] < 1000000,
                                      lambda c: (c[0] + 1, c[1] * 0.999999 + 1e-6),
                                      (0, x))[1]
        return jax.jit(count), args
    return None  # taylor-d2
