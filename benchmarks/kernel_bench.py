"""Micro-benchmark of the CPU backend on one fused kernel (not a test).

``sum(gelu_tanh(x) * sigmoid(x) + x*x)`` over 2^24 float32 values -- workload W1 of
issue 5 -- written directly in kernel IR, timed against NumPy, with 1 and 2 threads; and
W1a, the same chain returning the elementwise array (a store-bound variant)::

    python -m benchmarks.kernel_bench [--n 16777216] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from myc.backends.cpu import compile_kernel
from myc.lower.kernel import Binary, Buffer, Const, Kernel, Load, Reduce, Store, Unary


def w1_kernel(n: int, store: bool = False) -> Kernel:
    """The W1 chain as one fusion group (``store``: also write the elementwise value)."""
    f = "float32"
    x = Load(0, f)

    def c(v: float) -> Const:
        return Const(v, f)

    def mul(a, b):
        return Binary("mul", a, b)

    def add(a, b):
        return Binary("add", a, b)

    inner = mul(c(0.7978845608), add(x, mul(mul(mul(c(0.044715), x), x), x)))
    gelu = mul(mul(c(0.5), x), add(c(1.0), Unary("tanh", inner)))
    sig = Binary("div", c(1.0), add(c(1.0), Unary("exp", Unary("neg", x))))
    val = add(mul(gelu, sig), mul(x, x))
    outs = [Reduce(0, "sum", val, (0,))] + ([Store(1, val)] if store else [])
    return Kernel("w1", (n,), (Buffer("x", f, (n,)),), tuple(outs))


def numpy_w1a(x: np.ndarray) -> np.ndarray:
    gelu = 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x**3)))
    return gelu * (1 / (1 + np.exp(-x))) + x * x


def numpy_w1(x: np.ndarray) -> np.float32:
    return np.sum(numpy_w1a(x))


def timeit(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    x = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32)
    t = time.perf_counter()
    ck = compile_kernel(w1_kernel(args.n))
    print(f"W1 sum(gelu_tanh(x)*sigmoid(x) + x*x), {args.n} float32, median of {args.repeat}")
    print(f"  compile      : {(time.perf_counter() - t) * 1e3:8.1f} ms")
    ref = numpy_w1(x.astype(np.float64))
    print(f"  numpy        : {timeit(lambda: numpy_w1(x), max(3, args.repeat // 4)):8.2f} ms")
    for threads in ("1", "2"):
        os.environ["MYC_NUM_THREADS"] = threads
        got = ck([x])[0]
        ms = timeit(lambda: ck([x]), args.repeat)
        print(f"  myc {threads} thread{'s' if threads != '1' else ' '}: {ms:8.2f} ms   "
              f"(sum {got:.7g}, float64 NumPy {ref:.7g}, rel. err {abs(got - ref) / ref:.1e})")

    # W1a: the elementwise result stored (2^24 x 4 bytes written)
    ck = compile_kernel(w1_kernel(args.n, store=True))
    print("W1a the same chain, elementwise result returned")
    print(f"  numpy        : {timeit(lambda: numpy_w1a(x), max(3, args.repeat // 4)):8.2f} ms")
    ref = numpy_w1a(x.astype(np.float64))
    for threads in ("1", "2"):
        os.environ["MYC_NUM_THREADS"] = threads
        got = ck([x])[1]
        ms = timeit(lambda: ck([x]), args.repeat)
        # relative to the terms' size: the sum can cancel to near 0
        scale = np.abs(ref) + x.astype(np.float64) ** 2 + 1e-30
        err = float(np.max(np.abs(got - ref) / scale))
        print(f"  myc {threads} thread{'s' if threads != '1' else ' '}: {ms:8.2f} ms   "
              f"(max error vs float64 NumPy {err:.1e} of |result| + x^2)")


if __name__ == "__main__":
    main()
