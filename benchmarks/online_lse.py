"""The logsumexp schedules side by side in one process: W7f (row logsumexp), W7 (its
value and gradient), W3 (softmax cross-entropy, value and gradient) and a row softmax
(forward, stored) compiled with
the default code (two passes over each row), with ``MYC_ROW_PREFETCH=1`` (the next row
prefetched), with ``MYC_ONLINE_LSE=1`` (one pass), with both, and JAX's ``jit`` on the
same arrays.

    taskset -c 1 python -m benchmarks.online_lse --threads 1
    python -m benchmarks.online_lse --threads 2

Rounds are interleaved (every variant once per round, in turn); it prints the minimum
and the median over the rounds of the CPU time per call (``time.process_time``: all of
the process's threads, so with two threads it counts both) and of the wall time.
A diagnostic for docs/benchmarks.md, not part of the harness.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import tempfile
import time

import numpy as np

VARIANTS = {
    "prefetch": {"MYC_ROW_PREFETCH": "1"},
    "prefetch + one pass": {"MYC_ROW_PREFETCH": "1", "MYC_ONLINE_LSE": "1"},
    "one pass": {"MYC_ONLINE_LSE": "1"},
    "default (neither)": {},
}


def softmax_rows(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def _fresh_module(tag: str):
    """The workloads' functions as a new module: a new function object compiles anew,
    under the settings in force (they are part of every kernel's cache key)."""
    from benchmarks.workloads import w3_softmax_xent as w3
    from benchmarks.workloads import w7_logsumexp as w7

    src = "import numpy as np\n\n" + "\n\n".join(inspect.getsource(f) for f in (
        w7.logsumexp_rows, w7.logsumexp_loss, w3.softmax_xent, softmax_rows))
    path = os.path.join(tempfile.mkdtemp(prefix="myc-olse-"), f"olse_{tag}.py")
    with open(path, "w") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location(f"olse_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=4, help="calls per timed sample")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--no-jax", action="store_true")
    args = ap.parse_args(argv)
    os.environ["MYC_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import myc

    rng = np.random.default_rng(0)
    x = (3.0 * rng.standard_normal((args.rows, args.cols))).astype(np.float32)
    labels = rng.integers(0, args.cols, size=args.rows)
    calls: dict[str, dict[str, object]] = {"W7f": {}, "W7": {}, "W3": {}, "softmax": {}}
    for i, (name, env) in enumerate(VARIANTS.items()):
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        mod = _fresh_module(str(i))
        fs = {"W7f": (myc.jit(mod.logsumexp_rows), (x,)),
              "W7": (myc.value_and_grad(mod.logsumexp_loss), (x,)),
              "W3": (myc.value_and_grad(mod.softmax_xent), (x, labels)),
              "softmax": (myc.jit(mod.softmax_rows), (x,))}
        for w, (f, a) in fs.items():
            f(*a)  # compile under this variant's settings
            calls[w][name] = (f, a)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k)
            else:
                os.environ[k] = v
    if not args.no_jax:
        try:
            import jax
            import jax.numpy as jnp

            from benchmarks.workloads import w3_softmax_xent as w3
            from benchmarks.workloads import w7_logsumexp as w7

            xj, lj = jnp.asarray(x), jnp.asarray(labels)
            jf = {"W7f": jax.jit(w7.make_jax_rows(jax, jnp)),
                  "W7": jax.jit(jax.value_and_grad(w7.make_jax_loss(jax, jnp))),
                  "W3": jax.jit(jax.value_and_grad(w3.make_jax(jax, jnp))),
                  "softmax": jax.jit(lambda x: jax.nn.softmax(x, axis=1))}
            for w, f in jf.items():
                a = (xj,) if w != "W3" else (xj, lj)
                jax.block_until_ready(f(*a))
                calls[w]["jax jit"] = (lambda *a, f=f: jax.block_until_ready(f(*a)), a)
        except ImportError:
            pass
    print(f"# online_lse: {args.rows}x{args.cols} f32, MYC_NUM_THREADS={args.threads}, "
          f"cpus {sorted(os.sched_getaffinity(0))}, {args.rounds} rounds x {args.repeat} "
          "calls; ms per call: cpu min / median, wall min / median")
    for w, fs in calls.items():
        cpu: dict[str, list[float]] = {k: [] for k in fs}
        wall: dict[str, list[float]] = {k: [] for k in fs}
        for _ in range(args.rounds):
            for k, (f, a) in fs.items():
                c, t = time.process_time(), time.perf_counter()
                for _ in range(args.repeat):
                    f(*a)
                cpu[k].append((time.process_time() - c) / args.repeat * 1e3)
                wall[k].append((time.perf_counter() - t) / args.repeat * 1e3)
        for k in fs:
            print(f"{w:7s} {k:21s} cpu {min(cpu[k]):7.3f} / {statistics.median(cpu[k]):7.3f}"
                  f"   wall {min(wall[k]):7.3f} / {statistics.median(wall[k]):7.3f}")


if __name__ == "__main__":
    main()
