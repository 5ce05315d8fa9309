"""Where a memory-bound reduction's time goes on this CPU: myc's kernels against JAX on
the same pinned cores, one pattern at a time (sum of squares: the memory floor; sum of
exp: the math library; row logsumexp: W7f; its value-and-gradient: W7).

    taskset -c 4 python -m benchmarks.x86_probe --threads 1

Run it once per setting to compare (``MYC_VECTOR_WIDTH=256`` / ``native`` / ``512``, one thread or
two; for the row schedule of W7f/W7, ``MYC_ROW_PREFETCH=1`` and ``MYC_ONLINE_LSE=1``,
or ``python -m benchmarks.online_lse``, which interleaves them in one process); it
prints one line per pattern: median ms over interleaved rounds and the ratio.
A diagnostic for docs/benchmarks.md's machine classes, not part of the harness.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def _patterns():
    def sumsq(x):
        return np.sum(x * x)

    def sumexp(x):
        return np.sum(np.exp(x))

    def lse_rows(x):
        m = np.max(x, axis=1, keepdims=True)
        return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]

    def lse_loss(x):
        return np.sum(lse_rows(x))

    def rowmax(x):
        return np.max(x, axis=1)

    return {"sumsq": sumsq, "sumexp": sumexp, "rowmax": rowmax, "lse_rows (W7f)": lse_rows,
            "lse grad (W7)": lse_loss}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=1024)
    args = ap.parse_args(argv)
    os.environ.setdefault("MYC_NUM_THREADS", str(args.threads))
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import myc

    x = (3.0 * np.random.default_rng(0).standard_normal((args.rows, args.cols))
         ).astype(np.float32)
    impls: dict[str, dict[str, object]] = {}
    for name, f in _patterns().items():
        grad = name.startswith("lse grad")
        impls[name] = {"myc": (myc.value_and_grad(f) if grad else myc.jit(f))}
    try:
        import jax
        import jax.numpy as jnp

        jpat = {"sumsq": lambda x: jnp.sum(x * x), "sumexp": lambda x: jnp.sum(jnp.exp(x)),
                "rowmax": lambda x: jnp.max(x, axis=1),
                "lse_rows (W7f)": lambda x: jax.nn.logsumexp(x, axis=1),
                "lse grad (W7)": jax.value_and_grad(
                    lambda x: jnp.sum(jax.nn.logsumexp(x, axis=1)))}
        for name, f in jpat.items():
            jf = jax.jit(f)
            impls[name]["jax"] = lambda x, jf=jf: jax.block_until_ready(jf(x))
    except ImportError:
        pass
    print(f"# x86_probe: {args.rows}x{args.cols} f32, threads {args.threads}, "
          f"MYC_VECTOR_WIDTH={os.environ.get('MYC_VECTOR_WIDTH', 'auto')}, "
          f"cpus {sorted(os.sched_getaffinity(0))}")
    xj = None
    for name, fs in impls.items():
        times: dict[str, list[float]] = {k: [] for k in fs}
        for k, f in fs.items():
            if k == "jax" and xj is None:
                import jax.numpy as jnp

                xj = jnp.asarray(x)
            f(xj if k == "jax" else x)  # compile
        for _ in range(args.rounds):
            for k, f in fs.items():
                arg = xj if k == "jax" else x
                t = time.perf_counter()
                f(arg)
                times[k].append(time.perf_counter() - t)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        ratio = f"  myc/jax {med['myc'] / med['jax']:.2f}" if "jax" in med else ""
        gbs = x.nbytes / (med["myc"] * 1e-3) / 1e9
        print(f"{name:16s} " + "  ".join(f"{k} {v:7.3f} ms" for k, v in med.items()) +
              f"{ratio}  (myc {gbs:.1f} GB/s of input)")


if __name__ == "__main__":
    main()
