"""The workloads, one module per workload family, collected in report order; choosing
them by name (``--workloads``)."""

from __future__ import annotations

from benchmarks.workload import Workload
from benchmarks.workloads.w1_elementwise import W1, W1a
from benchmarks.workloads.w2_elementwise_grad import W2
from benchmarks.workloads.w3_softmax_xent import W3
from benchmarks.workloads.w4_mlp import W4
from benchmarks.workloads.w5_while_loop import W5
from benchmarks.workloads.w6_horner import W6
from benchmarks.workloads.w7_logsumexp import W7, W7f

WORKLOADS = (W1, W1a, W2, W3, W4, W5, W6, W7, W7f)

__all__ = ["WORKLOADS", "W1", "W1a", "W2", "W3", "W4", "W5", "W6", "W7", "W7f",
           "all_workloads", "select"]


def all_workloads() -> list[Workload]:
    """Every workload, in report order."""
    return list(WORKLOADS)


def select(spec: str | None) -> list[Workload]:
    """Workloads named in a comma-separated ``spec`` (case-insensitive); all when empty.

    A bare family name such as ``W1`` also selects its variants (``W1a``); name a
    variant alone to run only it.
    """
    workloads = all_workloads()
    if not spec:
        return workloads
    chosen: list[Workload] = []
    for raw in spec.split(","):
        key = raw.strip().lower()
        if not key:
            continue
        matches = [w for w in workloads if key in (w.name.lower(), w.family.lower())]
        if not matches:
            names = ", ".join(w.name for w in workloads)
            raise ValueError(f"unknown workload {raw.strip()!r}; known: {names}")
        for w in matches:
            if w not in chosen:
                chosen.append(w)
    return [w for w in workloads if w in chosen]

