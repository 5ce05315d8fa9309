"""First calls of W1-W7 as the harness makes them, this checkout against another.

One process runs every workload in turn (``--quick`` sizes), each with an empty disk
cache, and reports the CPU seconds of each first call: the first workload of a process
also pays what a process pays once (the thread pool, lazily imported modules).  With
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
        began = time.process_time()
        fn(*args)
        out.append(f"{w.name}={time.process_time() - began:.4f}")
    print(" ".join(out))


def _run(root: Path) -> dict[str, float]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, __file__, "--child", str(root)], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          check=True)
    line = done.stdout.strip().splitlines()[-1]
    return {k: float(v) for k, v in (x.split("=") for x in line.split())}


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
    got: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    for r in range(opts.rounds):
        for side, root in (sides.items() if r % 2 == 0 else reversed(sides.items())):
            for k, v in _run(root).items():
                got[side].setdefault(k, []).append(v)
    print("| workload | " + " | ".join(f"{s}: min / median (s)" for s in sides) +
          (" | ratio of medians |" if opts.myc else " |"))
    print("|---|" + "---:|" * (len(sides) + (1 if opts.myc else 0)))
    for k in got["this"]:
        cells = [f"{min(got[s][k]):.3f} / {statistics.median(got[s][k]):.3f}" for s in sides]
        ratio = [f"{statistics.median(got['this'][k]) / statistics.median(got['other'][k]):.2f}"
                 ] if opts.myc else []
        print(f"| {k} | " + " | ".join(cells + ratio) + " |")


if __name__ == "__main__":
    main()
