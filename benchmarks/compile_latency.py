"""Compile-time figures for docs/compile-time.md: time from call to first result, cold
(fresh process, empty disk cache) and from the disk cache, and node counts before and
after optimization, for the MLP value_and_grad and a 100-line function with loops and
closures.

Run: ``python -m benchmarks.compile_latency [--repeats N] [mlp long W2 W4]`` (each
figure is a fresh subprocess; with ``--repeats`` the median of N of them).  W2 and W4
are the benchmark workloads run as the harness runs them,
``myc.jit(myc.value_and_grad(fn, argnums))``.

``python -m benchmarks.compile_latency --corpus --compare --myc DIR [--rounds 3]
[NAMES]`` runs the corpus with DIR's ``myc`` (before) and this checkout's (after),
interleaved program by program, and JAX (``benchmarks/compile_corpus_jax.py``), each run
a fresh process with an empty disk cache and one thread, and reports the CPU time of the
first call and of the steady call (minimum over the rounds) -- the table and plot of
docs/compile-time.md.

``python -m benchmarks.compile_latency --corpus [NAMES]`` measures the compile-time
corpus (``benchmarks/compile_corpus.py``): for each program its first call cold (a fresh
process, an empty disk cache) and from the disk cache, with ``MYC_TIMINGS=1``'s time per
stage and node counts, and JAX's jitted first call where JAX is importable; it writes
``compile-corpus.json`` and plots first-call time against steps (``compile-scaling.png``,
when matplotlib is installed).  ``--myc DIR`` measures the ``myc`` package found in DIR
(another checkout) with this corpus; ``--timeout S`` bounds each process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import myc


def mlp_loss(w1, b1, w2, b2, x, labels):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    n = x.shape[0]
    return np.mean(lse - logits[np.arange(n), labels])


def _smooth(v, k):
    return v - 0.1 * k * np.sin(v)


def _pair(a, b):
    return a * b, a + b


def long_program(x, steps):
    """About 100 lines of loops, branches and closures (the latency benchmark)."""
    acc = 0.0
    scale = 1.0

    def damp(v):
        return v * 0.9 + 0.1 * np.tanh(v)

    def apply_twice(fn, v):
        return fn(fn(v))

    for i in range(steps):
        if i % 2 == 0:
            x = damp(x)
        else:
            x = apply_twice(damp, x)
        acc = acc + np.sum(x * x) * scale
        scale = scale * 0.99
    j = 0
    y = x
    while j < 3:
        y = _smooth(y, j)
        j += 1
    p, q = _pair(np.mean(y), np.max(y))
    total = acc + p - q

    def weight(t):
        return np.exp(-t * t)

    w = weight(y)
    for k in range(3):
        if k == 0:
            w = w * 2.0
        elif k == 1:
            w = w + 1.0
        else:
            w = w / 3.0
    lam = lambda t: t * 0.5 + 1.0  # noqa: E731
    z = lam(w)
    m = np.maximum(z, 0.5)
    n = np.minimum(z, 2.0)
    r = np.where(m > n, m - n, n - m)
    s1 = np.sum(r)
    s2 = np.mean(r * r)
    t1 = s1 + s2
    for c in (0.5, 0.25, 0.125):
        t1 = t1 + c * np.sum(np.cos(y * c))
    u = y
    for _ in range(2):
        u = apply_twice(lambda v: v - 0.01 * v * v, u)
    v = np.clip(u, -3.0, 3.0)
    a1 = np.sum(np.log1p(v * v))
    a2 = np.sum(np.exp(-np.abs(v)))
    b1 = a1 * a2
    b2 = a1 + a2
    b3 = b1 / (1.0 + b2)
    e = 0.0
    for idx in range(4):
        f = lambda t, idx=idx: t * (idx + 1)  # noqa: E731
        e = e + f(b3)
    g1 = np.tanh(e)
    g2 = np.sin(total)
    g3 = np.cos(t1)
    h1 = g1 * g2 + g3
    h2 = h1 * h1
    h3 = np.sqrt(h2 + 1.0)
    out = h3 + 0.001 * np.sum(u)
    return out


def _measure(which: str) -> dict:
    import time

    rng = np.random.default_rng(0)
    if which == "mlp":
        args = (rng.standard_normal((1024, 1024)).astype(np.float32) * 0.03,
                np.zeros(1024, np.float32),
                rng.standard_normal((1024, 10)).astype(np.float32) * 0.03,
                np.zeros(10, np.float32), rng.standard_normal((512, 1024)).astype(np.float32),
                rng.integers(0, 10, 512))
        fn = myc.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))
    elif which in WORKLOADS:  # a benchmark workload, as the harness runs it
        w = _workload(which)
        args = w.make_inputs(0, WORKLOADS[which])
        fn = myc.jit(myc.value_and_grad(w.myc_fn, argnums=w.argnums))
    else:
        args = (rng.standard_normal(4096), 6)
        fn = myc.value_and_grad(long_program)
    t0 = time.perf_counter()
    fn(*args)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    fn(*args)
    steady = time.perf_counter() - t0
    from myc.infer.trace import trace
    from myc.ir.manager import Manager
    from myc.opt.passes import optimize
    from myc.runtime.args import check_args

    graph = getattr(fn, "__myc_function__", fn).__myc_graph__()
    parsed = sum(len(v) for v in Manager(graph).owned.values())
    typed, _ = trace(graph, check_args([p.name for p in graph.parameters], args))
    before = len(Manager(typed).owned[typed])
    optimize(typed)
    after = len(Manager(typed).owned[typed])
    return {"first_ms": first * 1e3, "steady_ms": steady * 1e3, "graph_nodes": parsed,
            "typed_nodes": before, "optimized_nodes": after}


# benchmark workloads measured here too, and the size each runs at
WORKLOADS = {"W2": "quick", "W4": "full"}


def _workload(name: str):
    from benchmarks.workloads.w2_elementwise_grad import W2
    from benchmarks.workloads.w4_mlp import W4

    return {"W2": W2, "W4": W4}[name]


def _one(which: str, cache: str) -> dict:
    # bytecode on, as an installed package runs (this machine may turn it off)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["MYC_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-m", "benchmarks.compile_latency", "--one", which],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _corpus_one(name: str, which: str) -> dict:
    """One corpus program's first call in this process (``which``: myc or jax)."""
    import time

    if which == "jax":
        from benchmarks.compile_corpus_jax import jax_program

        built = jax_program(name)
        if built is None:
            return {"skipped": "no JAX or no JAX port"}
        fn, args = built
        import jax

        t0, c0 = time.perf_counter(), time.process_time()
        jax.block_until_ready(fn(*args))
        first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
        steady = []
        for _ in range(STEADY_CALLS):
            c0 = time.process_time()
            jax.block_until_ready(fn(*args))
            steady.append(time.process_time() - c0)
        return {"first_ms": first * 1e3, "first_cpu_ms": first_cpu * 1e3,
                "steady_ms": min(steady) * 1e3}
    import warnings

    from benchmarks.compile_corpus import ENTRIES

    fn, args = ENTRIES[name].build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0, c0 = time.perf_counter(), time.process_time()
        fn(*args)
        first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    # an internal failure runs the program on the reference evaluator: say so
    evaluator = any("reference evaluator" in str(w.message) for w in caught)
    try:
        from myc import timings

        rep = timings.last() or {}
    except ImportError:  # a checkout from before myc.timings
        rep = {}
    steady = []
    for _ in range(STEADY_CALLS):
        c0 = time.process_time()
        fn(*args)
        steady.append(time.process_time() - c0)
    return {"first_ms": first * 1e3, "first_cpu_ms": first_cpu * 1e3,
            "steady_ms": min(steady) * 1e3,
            "stages": {k: v * 1e3 for k, v in rep.get("stages", {}).items()},
            "counts": rep.get("counts", {}), "evaluator": evaluator}


STEADY_CALLS = 5  # after the first call: the steady figure is their minimum (CPU time)


def _corpus_run(name: str, which: str, cache: str, opts) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(MYC_CACHE_DIR=cache, MYC_TIMINGS="1", MYC_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (f"import sys, json; sys.path.insert(0, {here!r})\n"
            + (f"sys.path.insert(0, {opts.myc!r}); import myc; sys.path.pop(0)\n"
               if opts.myc else "")
            + "from benchmarks.compile_latency import _corpus_one\n"
            + f"print(json.dumps(_corpus_one({name!r}, {which!r})))")
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        return {"timeout_s": opts.timeout}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(r: dict) -> str:
    if "first_ms" in r:
        return f"{r['first_ms'] / 1e3:.2f} s" + (" (evaluator)" if r.get("evaluator") else "")
    if "timeout_s" in r:
        return f"> {r['timeout_s']:.0f} s"
    return r.get("skipped") and "-" or f"error: {r.get('error')}"


def corpus(opts) -> None:
    """Every corpus program: cold, from the disk cache, JAX; a table, JSON, the plot."""
    from benchmarks.compile_corpus import ENTRIES

    names = opts.programs or list(ENTRIES)
    results: dict[str, dict] = {}
    print("| program | steps | first call, cold | disk cache | JAX jit | nodes typed -> "
          "optimized | kernels | largest stages (cold) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in names:
        e = ENTRIES[name]
        cache = tempfile.mkdtemp(prefix="myc-corpus-")
        cold = _corpus_run(name, "myc", cache, opts)
        disk = _corpus_run(name, "myc", cache, opts) if "first_ms" in cold else {}
        jax = _corpus_run(name, "jax", cache, opts) if not opts.no_jax else {"skipped": "off"}
        results[name] = {"program": e.program, "steps": e.steps, "cold": cold, "disk": disk,
                         "jax": jax}
        c = cold.get("counts", {})
        top = sorted(cold.get("stages", {}).items(), key=lambda kv: -kv[1])[:4]
        print(f"| {name} | {e.steps or ''} | {_fmt(cold)} | {_fmt(disk) if disk else ''} | "
              f"{_fmt(jax)} | {c.get('typed nodes', '')} -> {c.get('optimized nodes', '')} | "
              f"{c.get('kernels', '')} | "
              + ", ".join(f"{k} {v / 1e3:.2f} s" for k, v in top) + " |", flush=True)
    with open(opts.json, "w") as f:
        json.dump(results, f, indent=1)
    _plot(results, opts.plot)


def compare(opts) -> None:
    """Before (``--myc DIR``; none without it) and after (this checkout), interleaved
    program by program for ``--rounds`` rounds, each run a fresh process with an empty
    disk cache, and JAX: CPU time of the first call and of the steady call (minimum over
    the rounds)."""
    from benchmarks.compile_corpus import ENTRIES

    names = opts.programs or list(ENTRIES)
    before_opts = argparse.Namespace(**{**vars(opts)})
    after_opts = argparse.Namespace(**{**vars(opts), "myc": None})
    results: dict[str, dict] = {}
    print("| program | steps | CPU, cold: before -> after | ratio | steady: before -> after | "
          "JAX: first call, steady | typed -> optimized nodes (after) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        e = ENTRIES[name]
        runs: dict[str, list[dict]] = {"before": [], "after": [], "jax": []}
        for _ in range(max(1, opts.rounds)):
            # no --myc: this checkout (and JAX) only, not twice
            for which, o in ((("before", before_opts),) if opts.myc else ()) + (
                    ("after", after_opts),):
                runs[which].append(_corpus_run(name, "myc",
                                               tempfile.mkdtemp(prefix="myc-corpus-"), o))
            if not opts.no_jax:
                runs["jax"].append(_corpus_run(name, "jax",
                                               tempfile.mkdtemp(prefix="myc-corpus-"),
                                               after_opts))
        best = {k: _best(v) for k, v in runs.items()}
        results[name] = {"program": e.program, "steps": e.steps, **best,
                         "cold": best["after"]}
        b, a, j = best.get("before", {}), best["after"], best["jax"]
        c = a.get("counts", {})
        ratio = (f"{b['first_cpu_ms'] / a['first_cpu_ms']:.1f}x"
                 if "first_cpu_ms" in b and "first_cpu_ms" in a else "")
        print(f"| {name} | {e.steps or ''} | {_cpu(b)} -> {_cpu(a)} | {ratio} | "
              f"{_steady(b)} -> {_steady(a)} | "
              + (f"{_cpu(j)}, {_steady(j)}" if "first_cpu_ms" in j else _fmt(j) if j else "-")
              + f" | {c.get('typed nodes', '')} -> {c.get('optimized nodes', '')} |",
              flush=True)
    with open(opts.json, "w") as f:
        json.dump(results, f, indent=1)
    _plot(results, opts.plot, key="first_cpu_ms",
          ylabel="first call, cold (CPU seconds, one thread)")


def _best(runs: list[dict]) -> dict:
    """The run with the smallest first call, its steady figure the smallest of all."""
    ok = [r for r in runs if "first_cpu_ms" in r]
    if not ok:
        return runs[0] if runs else {}
    out = dict(min(ok, key=lambda r: r["first_cpu_ms"]))
    out["steady_ms"] = min(r["steady_ms"] for r in ok)
    out["runs_first_cpu_ms"] = [r["first_cpu_ms"] for r in ok]
    return out


def _cpu(r: dict) -> str:
    if "first_cpu_ms" not in r:
        return _fmt(r) if r else "-"
    return f"{r['first_cpu_ms'] / 1e3:.2f} s" + (" (evaluator)" if r.get("evaluator") else "")


def _steady(r: dict) -> str:
    return f"{r['steady_ms']:.2f} ms" if "steady_ms" in r else "-"


def _plot(results: dict, path: str, key: str = "first_ms",
          ylabel: str = "first call, cold (s)") -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no {path}")
        return
    fams: dict[str, list] = {}
    for r in results.values():
        if r["steps"] is not None and key in r["cold"] and r["steps"] <= 1000:
            fams.setdefault(r["program"], []).append(r)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for prog, rs in fams.items():
        rs.sort(key=lambda r: r["steps"])
        line, = ax.plot([r["steps"] for r in rs], [r["cold"][key] / 1e3 for r in rs],
                        "o-", label=f"myc {prog}")
        js = [r for r in rs if key in r["jax"]]
        if js:
            ax.plot([r["steps"] for r in js], [r["jax"][key] / 1e3 for r in js], "x--",
                    color=line.get_color(), label=f"JAX {prog}")
    ax.set_xlabel("steps")
    ax.set_ylabel(ylabel)
    ax.set_title("First-call time against program size (one thread)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main() -> None:
    """``--one WHICH``: one measurement in this process.  Otherwise every program, each
    figure the median of ``--repeats`` fresh processes (cold: an empty cache each time;
    disk cache: the directory that cold process filled), after one warm-up process."""
    import statistics

    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(_measure(sys.argv[2])))
        return
    ap = argparse.ArgumentParser(prog="python -m benchmarks.compile_latency")
    ap.add_argument("--repeats", type=int, default=1, help="fresh processes per figure")
    ap.add_argument("--corpus", action="store_true", help="the compile-time corpus")
    ap.add_argument("--myc", default=None, help="measure the myc package in this checkout")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    ap.add_argument("--no-jax", action="store_true", help="do not try JAX")
    ap.add_argument("--compare", action="store_true",
                    help="the corpus, --myc DIR (before, if given) against this checkout, "
                         "interleaved, and JAX: CPU times")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --compare")
    ap.add_argument("--json", default="compile-corpus.json")
    ap.add_argument("--plot", default="compile-scaling.png")
    ap.add_argument("programs", nargs="*")
    opts = ap.parse_args()
    if opts.corpus and opts.compare:
        compare(opts)
        return
    if opts.corpus:
        corpus(opts)
        return
    opts.programs = opts.programs or ["mlp", "long", *WORKLOADS]
    for which in opts.programs:
        _one(which, tempfile.mkdtemp(prefix="myc-latency-"))  # bytecode, page cache
        runs: dict[str, list[dict]] = {"cold": [], "disk cache": []}
        for _ in range(max(1, opts.repeats)):
            cache = tempfile.mkdtemp(prefix="myc-latency-")
            runs["cold"].append(_one(which, cache))
            runs["disk cache"].append(_one(which, cache))
        for label, rs in runs.items():
            first = [r["first_ms"] for r in rs]
            r = rs[0]
            spread = f" (min {min(first):.1f}, max {max(first):.1f})" if len(rs) > 1 else ""
            print(f"{which:5s} {label:10s} first call {statistics.median(first):7.1f} ms"
                  f"{spread}, steady {statistics.median(x['steady_ms'] for x in rs):6.2f} ms; "
                  f"nodes: graph {r['graph_nodes']}, typed {r['typed_nodes']}, optimized "
                  f"{r['optimized_nodes']}", flush=True)


if __name__ == "__main__":
    main()
