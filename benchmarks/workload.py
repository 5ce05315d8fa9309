"""The shape every workload shares, and the registry of workloads.

A workload is a computation written twice: ``myc_fn`` is plain NumPy Python in the myc
subset (it is also the NumPy forward column, run undecorated), and ``make_torch(torch)``
returns the same computation in eager PyTorch.  ``kind`` says what is measured:
``"forward"`` times the function itself; ``"value_and_grad"`` times the value and the
gradient with respect to ``argnums`` (myc: ``myc.jit(myc.value_and_grad(fn, argnums))``;
PyTorch: the forward plus ``torch.autograd.grad``).  Optional peers follow the same
pattern: ``make_jax(jax, jnp)`` returns the forward/loss function (the harness applies
``jax.jit``/``jax.value_and_grad``), ``make_numba(numba)`` returns a finished callable over
NumPy arrays that computes the whole output, gradients included, by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SIZES = ("tiny", "quick", "full")
KINDS = ("forward", "value_and_grad")


@dataclass(frozen=True)
class Workload:
    """One benchmark workload (see the module docstring for the contract)."""

    name: str
    title: str
    description: str
    kind: str
    myc_fn: Callable[..., Any]
    make_inputs: Callable[[int, str], tuple]
    make_torch: Callable[[Any], Callable[..., Any]]
    sizes: Mapping[str, Mapping[str, Any]]
    argnums: int | tuple[int, ...] = 0
    rtol: float = 1e-4
    atol: float = 1e-5
    make_jax: Callable[[Any, Any], Callable[..., Any]] | None = None
    make_numba: Callable[[Any], Callable[..., Any]] | None = None
    tags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert set(self.sizes) == set(SIZES), (self.name, sorted(self.sizes))

    def size_label(self, size: str) -> str:
        """Human-readable problem size, e.g. ``2^24 f32``."""
        return str(self.sizes[size]["label"])

    @property
    def family(self) -> str:
        """``W1`` for ``W1`` and its variants ``W1a``...: what ``--workloads W1`` selects."""
        m = re.match(r"[A-Za-z]+\d+", self.name)
        return m.group(0) if m else self.name

    @property
    def grad_argnums(self) -> tuple[int, ...]:
        """``argnums`` as a tuple; empty for forward workloads."""
        if self.kind == "forward":
            return ()
        return self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)
