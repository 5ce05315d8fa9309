"""The long-loop program of test_long_loop.py, and a script measuring its gradient's
peak memory when run as ``python -m tests.ad.long_loop_programs N``."""

import numpy as np


def long_loop(x, n):
    i = 0
    while i < n:
        x = x + 0.5 * np.sin(x) / n + 0.1 / n
        i += 1
    return x


def long_loop_derivative_reference(x, n, eps=1e-6):
    return (long_loop(x + eps, n) - long_loop(x - eps, n)) / (2 * eps)


def _peak_kib() -> int:
    """This process's peak resident memory in KiB.

    ``getrusage(RUSAGE_SELF).ru_maxrss`` survives ``execve`` on Linux, so a child of a
    big process (pytest) starts with its parent's peak; the kernel's per-image high-water
    mark ``VmHWM`` does not, so it is used where ``/proc`` has it.
    """
    import resource

    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _measure(n: int) -> None:
    import json
    import resource
    import time

    import myc

    g = myc.grad(myc.jit(long_loop, backend="interp"))
    g(0.3, 10)  # parse, transform and warm up: the baseline includes all of it
    base = _peak_kib()
    t0 = time.perf_counter()
    d = g(0.3, n)
    elapsed = time.perf_counter() - t0
    peak = _peak_kib()
    print(json.dumps({"n": n, "baseline_kib": base, "peak_kib": peak, "seconds": elapsed,
                      "grad": float(d),
                      "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    import sys

    _measure(int(sys.argv[1]))
