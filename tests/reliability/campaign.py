"""A long fuzz campaign that keeps going past failures and records each one.

    python -m tests.reliability.campaign --examples 10000 --backends interp,cpu \
        --kind values --out fuzz-out

Hypothesis draws the programs (generation only, no shrinking); each failing program's
source, arguments and traceback go to ``OUT/failure-N.txt`` and a tally to
``OUT/summary.txt`` (rewritten every 50 programs, so a run stopped early still reports).
The figures in docs/reliability.md come from such runs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests import progen
from tests.reliability import fuzz


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--backends", default="interp,cpu")
    ap.add_argument("--kind", choices=["values", "gradients"], default="values")
    ap.add_argument("--out", default="fuzz-out")
    opts = ap.parse_args()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    backends = tuple(opts.backends.split(","))
    directory = Path(tempfile.mkdtemp(prefix="myc-fuzz-"))
    seen = Counter()
    start = time.time()

    def summary() -> None:
        (out / "summary.txt").write_text(
            f"kind={opts.kind} backends={','.join(backends)}\n"
            f"programs={seen['run']} failures={seen['fail']} "
            f"elapsed={time.time() - start:.0f}s\n{fuzz.TALLY}\n")

    programs = st.one_of(progen.program(), progen.tuple_program(), progen.f32_program())

    @settings(max_examples=opts.examples, deadline=None, phases=[Phase.generate],
              database=None, suppress_health_check=list(HealthCheck))
    @given(prog=programs, data=st.data(), seed=st.integers(0, 2**32 - 1))
    def one(prog, data, seed):
        args = data.draw(progen.arguments(prog))
        seen["run"] += 1
        try:
            if opts.kind == "values":
                fuzz.check_values(prog, args, directory, backends)
            else:
                fuzz.check_gradients(prog, args, directory, seed,
                                     tuple(b for b in backends if b != "interp"))
        except Exception:  # noqa: BLE001 - recorded, and the campaign goes on
            seen["fail"] += 1
            (out / f"failure-{seen['fail']}.txt").write_text(
                f"{prog!r}\nargs={args!r}\nseed={seed}\n\n{prog.source}\n\n"
                f"{traceback.format_exc()}")
        if seen["run"] % 50 == 0:
            summary()

    one()
    summary()
    print((out / "summary.txt").read_text())


if __name__ == "__main__":
    main()
