"""The myc benchmark harness.

Workloads are written once as plain myc-subset NumPy Python and once in eager PyTorch
(``benchmarks/workloads/``); the harness checks every implementation against PyTorch
before timing it, times them interleaved, and reports medians, spread and a bootstrap
confidence interval of the myc/PyTorch ratio (``benchmarks/runner.py``,
``benchmarks/stats.py``).  Entry points: ``python -m benchmarks`` and ``myc bench``,
both ending in :func:`benchmarks.cli.main`.  Method: ``docs/benchmarks.md``.
"""

SCHEMA = "myc-bench/1"
