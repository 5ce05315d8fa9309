"""Tiered compilation, measured: the first call, the calls after it and the steady call
of the corpus programs over ``MYC_NATIVE_FIRST_MAX`` (docs/loops.md).

``python -m benchmarks.tier_up [--rounds 3] [--calls 40] [NAMES]`` runs each program
(default ``gp hmm30 rnn30`` of ``benchmarks/compile_corpus.py``) in fresh processes:
a cold cache, then a warm one (the same cache directory, a new process), under each
setting given by ``--env`` (default: ``MYC_TIER_UP_CALLS=0``, never tier up as before
tiered compilation, against this checkout's default).  Every figure is CPU time
(``time.process_time``), the minimum over the rounds, which run interleaved;
``MYC_NUM_THREADS=1``.  It prints per program and setting: the first call, each of
the next few calls, the steady median (the last half of ``--calls``) and the
total over all calls.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

NAMES = ("gp", "hmm30", "rnn30")


def _one(name: str, calls: int) -> dict:
    """Time every call of one corpus program in this process."""
    import time

    from benchmarks.compile_corpus import ENTRIES

    fn, args = ENTRIES[name].build()
    times = []
    for _ in range(calls):
        c0 = time.process_time()
        fn(*args)
        times.append(time.process_time() - c0)
    stats = getattr(fn, "stats", None)
    st = stats() if callable(stats) else None
    return {"times": times, "tier_ups": getattr(st, "tier_ups", None),
            "native": getattr(st, "native_calls", None)}


def _run(name: str, calls: int, cache: str, env: dict) -> dict:
    full = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full.update(env, MYC_CACHE_DIR=cache, MYC_NUM_THREADS="1")
    code = ("import json\nfrom benchmarks.tier_up import _one\n"
            f"print(json.dumps(_one({name!r}, {calls})))")
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict]) -> dict:
    """Per call position, the minimum over rounds; the steady median of the minima."""
    import statistics

    mins = [min(r["times"][i] for r in runs) for i in range(len(runs[0]["times"]))]
    half = mins[len(mins) // 2:]
    return {"first": mins[0], "next": mins[1:6], "steady": statistics.median(half),
            "total": min(sum(r["times"]) for r in runs),
            "tier_ups": runs[-1]["tier_ups"], "native": runs[-1]["native"]}


def _fmt(s: dict) -> str:
    nxt = " ".join(f"{t * 1e3:.1f}" for t in s["next"])
    return (f"first {s['first']:.2f} s | calls 2-6 [{nxt}] ms | steady "
            f"{s['steady'] * 1e3:.2f} ms | total {s['total']:.2f} s | tier-ups "
            f"{s['tier_ups']} native calls {s['native']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(NAMES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--env", action="append", default=None,
                    help="a setting to compare, e.g. 'MYC_TIER_UP_CALLS=0' or '' "
                    "(the default); repeatable")
    opts = ap.parse_args()
    settings = opts.env if opts.env is not None else ["MYC_TIER_UP_CALLS=0", ""]
    results: dict = {}
    for _ in range(opts.rounds):
        for name in opts.names:
            for setting in settings:
                env = dict(kv.split("=", 1) for kv in setting.split(",") if kv)
                cache = tempfile.mkdtemp(prefix="myc-tier-")
                for which in ("cold", "warm"):
                    r = _run(name, opts.calls, cache, env)
                    results.setdefault((name, setting, which), []).append(r)
    for (name, setting, which), runs in results.items():
        print(f"{name:6} {setting or 'default':24} {which:5} {_fmt(_summary(runs))}",
              flush=True)


if __name__ == "__main__":
    main()
