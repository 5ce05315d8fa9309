"""A long fuzz campaign in one warm process that keeps going past failures and records each.

    python -m tests.reliability.campaign --backends interp,cpu --kinds values,gradients \
        --seconds 3600 --out fuzz-out

Each random program (``tests/progen.py``, drawn by Hypothesis: generation only, no
shrinking) is checked for every kind asked: its values on every backend against CPython,
then its gradients on every compiled backend against the evaluator's (and the
evaluator's against finite differences).  The process stays warm -- imports, NumPy's and
LLVM's start-up, the frontend's library graphs are paid once -- so a program costs what
compiling it costs.  The disk cache is off unless ``--cache`` is given: every program is
compiled in this process (no program specialized on another draw's data comes back from
disk, and no cache files pile up).

Each failing program's source, arguments and traceback go to ``OUT/failure-N.txt``; a
tally -- programs per kind and backend, seconds spent per kind and backend, failures
grouped by their first line -- goes to ``OUT/summary.txt``, rewritten every 25 programs
and when the campaign ends, also on SIGTERM (``timeout``), so a run stopped early still
reports.  The figures in docs/reliability.md come from such runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path


def _options(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=10**6, help="programs at most")
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long")
    ap.add_argument("--backends", default="interp,cpu")
    ap.add_argument("--kinds", default="values,gradients",
                    help="values, gradients, or both (comma-separated)")
    ap.add_argument("--kind", default=None, help=argparse.SUPPRESS)  # the old spelling
    ap.add_argument("--cache", action="store_true", help="keep the disk cache on")
    ap.add_argument("--out", default="fuzz-out")
    opts = ap.parse_args(argv)
    if opts.kind:
        opts.kinds = opts.kind
    return opts


def main(argv: list[str] | None = None) -> Counter:
    """Run a campaign; the counts (``run``: programs, ``fail``: failures)."""
    opts = _options(argv)
    if not opts.cache:
        os.environ["MYC_CACHE_DIR"] = "off"  # before myc reads it

    import numpy as np
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from tests import progen
    from tests.reliability import fuzz

    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    backends = tuple(opts.backends.split(","))
    compiled = tuple(b for b in backends if b != "interp")
    kinds = tuple(opts.kinds.split(","))
    directory = Path(tempfile.mkdtemp(prefix="myc-fuzz-"))
    seen: Counter = Counter()
    groups: Counter = Counter()
    start = time.time()
    deadline = None if opts.seconds is None else start + opts.seconds

    def summary() -> None:
        t = fuzz.TALLY
        lines = [f"kinds={','.join(kinds)} backends={','.join(backends)} "
                 f"cache={'on' if opts.cache else 'off'}",
                 f"programs={seen['run']} failures={seen['fail']} "
                 f"elapsed={time.time() - start:.0f}s generation={seen['gen_s']:.0f}s",
                 "checked: " + " ".join(f"{k}={v}" for k, v in sorted(t.checked.items())),
                 "seconds: " + " ".join(f"{k}={v:.0f}" for k, v in sorted(t.seconds.items())),
                 f"compiled calls={t.compiled_calls} evaluator calls={t.evaluator_calls} "
                 f"finite differences checked={t.fd_checked} skipped={t.fd_skipped} "
                 f"ties={t.fd_ties} stability rewrites explained={t.rewrites_explained}",
                 "failures by first line:"]
        lines += [f"  {n} x {g}" for g, n in groups.most_common()]
        (out / "summary.txt").write_text("\n".join(lines) + "\n")

    def stop(signum, frame):  # timeout's SIGTERM: report, then go
        summary()
        sys.exit(0)

    previous = signal.signal(signal.SIGTERM, stop)
    programs = st.one_of(progen.program(), progen.tuple_program(), progen.f32_program())

    @settings(max_examples=opts.examples, deadline=None, phases=[Phase.generate],
              database=None, suppress_health_check=list(HealthCheck))
    @given(prog=programs, data=st.data(), seed=st.integers(0, 2**32 - 1))
    def one(prog, data, seed):
        if deadline is not None and time.time() > deadline:
            raise _TimeUp  # (returning would leave hypothesis drawing programs until
            # max_examples: generation alone then keeps the process busy)
        args = data.draw(progen.arguments(prog))
        seen["gen_s"] += time.time() - seen.pop("t_end", start)
        seen["run"] += 1
        for kind in kinds:
            try:
                if kind == "values":
                    fuzz.check_values(prog, args, directory, backends)
                else:
                    fuzz.check_gradients(prog, args, directory, seed, compiled)
            except Exception as exc:  # noqa: BLE001 - recorded, and the campaign goes on
                seen["fail"] += 1
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
                groups[f"{kind}: {type(exc).__name__}: {first}"] += 1
                # every digit: a failure at a tie or an underflow reproduces only at the
                # very arguments (NumPy's repr keeps 8 significant digits)
                with np.printoptions(floatmode="unique", threshold=sys.maxsize):
                    shown = repr(args)
                (out / f"failure-{seen['fail']}.txt").write_text(
                    f"kind={kind}\n{prog!r}\nargs={shown}\nseed={seed}\n\n{prog.source}\n\n"
                    f"{traceback.format_exc()}")
        if seen["run"] % 25 == 0:
            summary()
        seen["t_end"] = time.time()

    try:
        one()
    except _TimeUp:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    summary()
    print((out / "summary.txt").read_text())
    return seen


class _TimeUp(Exception):  # noqa: N818 - a control signal: --seconds have passed
    pass


if __name__ == "__main__":
    sys.exit(1 if main()["fail"] else 0)
