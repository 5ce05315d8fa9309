"""First calls of W1-W7 as the harness makes them, this checkout against another.

One process runs every workload in turn (``--quick`` sizes), each with an empty disk
cache, and reports the CPU seconds and the wall seconds of each first call (the harness
times wall; CPU time also counts work moved to a background thread, and is steadier on
a shared machine): the first workload of a process also pays what a process pays once
(the thread pool, lazily imported modules).  With
``--myc DIR`` the ``myc`` package found in DIR (another checkout, or a ``git archive``
of one) runs in alternate processes, round by round; the table gives minimums and
medians per side and the ratio of medians.

Run: ``python -m benchmarks.first_calls [--myc DIR] [--rounds 5]`` (docs/compile-time.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _one_process(root: str) -> None:
    """In a child: ``name=seconds`` for each workload's first call, on one line, with the
    ``myc`` of ``root`` and this checkout's workloads."""
    sys.path.insert(0, root)
    import myc

    assert Path(myc.__file__).resolve().is_relative_to(Path(root).resolve()), myc.__file__
    sys.path.insert(0, str(HERE))
    from benchmarks.workloads import WORKLOADS

    out = []
    for w in WORKLOADS:
        os.environ["MYC_CACHE_DIR"] = tempfile.mkdtemp(prefix="myc-first-")
        args = w.make_inputs(0, "quick")
        fn = myc.jit(w.myc_fn) if w.kind == "forward" else \
            myc.jit(myc.value_and_grad(w.myc_fn, w.argnums))
        began, wall = time.process_time(), time.perf_counter()
        fn(*args)
        out.append(f"{w.name}={time.process_time() - began:.4f},"
                   f"{time.perf_counter() - wall:.4f}")
    print(" ".join(out))


def _run(root: Path) -> dict[str, tuple[float, float]]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, __file__, "--child", str(root)], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          check=True)
    line = done.stdout.strip().splitlines()[-1]
    got = {}
    for item in line.split():
        name, times = item.split("=")
        cpu, wall = times.split(",")
        got[name] = (float(cpu), float(wall))
    return got


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--myc", help="another checkout whose myc to compare against")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--child", help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.child:
        _one_process(opts.child)
        return
    sides = {"this": HERE} | ({"other": Path(opts.myc).resolve()} if opts.myc else {})
    got: dict[str, dict[str, list[tuple[float, float]]]] = {s: {} for s in sides}
    for r in range(opts.rounds):
        for side, root in (sides.items() if r % 2 == 0 else reversed(sides.items())):
            for k, v in _run(root).items():
                got[side].setdefault(k, []).append(v)
    for clock, which in (("CPU", 0), ("wall", 1)):
        print(f"\n{clock} seconds\n")
        print("| workload | " + " | ".join(f"{s}: min / median" for s in sides) +
              (" | ratio of medians |" if opts.myc else " |"))
        print("|---|" + "---:|" * (len(sides) + (1 if opts.myc else 0)))
        for k in got["this"]:
            per = {s: [v[which] for v in got[s][k]] for s in sides}
            cells = [f"{min(per[s]):.3f} / {statistics.median(per[s]):.3f}" for s in sides]
            ratio = [f"{statistics.median(per['this']) / statistics.median(per['other']):.2f}"
                     ] if opts.myc else []
            print(f"| {k} | " + " | ".join(cells + ratio) + " |")

if __name__ == "__main__":
    main()
