"""``--compare old.json new.json``: which workloads got slower or faster, and surely so.

For every workload and implementation timed in both files, the change is
``median(new) / median(old)`` with an unpaired bootstrap 95% CI over the two sample sets
(the runs were not interleaved with each other, so no pairing).  A change is flagged as a
regression or an improvement only when its interval excludes 1; otherwise it is reported as
no change, however large the point estimate.  PyTorch's own change is shown too: if it
moved as much as myc did, the machine changed, not myc.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks import stats


def verdict(lo: float, hi: float) -> str:
    """The rule for a ratio new/old with its 95% interval ``[lo, hi]``: a regression or an
    improvement only when the whole interval lies on one side of 1.  ``--baseline`` runs
    judge myc against the baseline's myc by the same rule."""
    if lo > 1.0:
        return "regression"
    if hi < 1.0:
        return "improvement"
    return "no change"


@dataclass(frozen=True)
class Change:
    workload: str
    impl: str
    old_ms: float
    new_ms: float
    ratio: float
    lo: float
    hi: float

    @property
    def verdict(self) -> str:
        return verdict(self.lo, self.hi)


def load(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def compare(old: dict, new: dict, n_boot: int = 5000, seed: int = 0) -> list[Change]:
    changes = []
    for name, new_rec in new.get("workloads", {}).items():
        old_rec = old.get("workloads", {}).get(name)
        if old_rec is None:
            continue
        for impl, new_impl in new_rec.get("implementations", {}).items():
            old_impl = old_rec.get("implementations", {}).get(impl, {})
            a, b = new_impl.get("samples_ms"), old_impl.get("samples_ms")
            if not a or not b:
                continue
            ci = stats.ratio_ci(a, b, n_boot=n_boot, seed=seed)
            changes.append(
                Change(name, impl, stats.median(b), stats.median(a), ci.ratio, ci.lo, ci.hi)
            )
    return changes


def setting_differences(old: dict, new: dict) -> list[str]:
    """Settings that make two runs incomparable, worth a warning."""
    out = []
    for key in ("backend", "size", "threads"):
        a, b = old.get("config", {}).get(key), new.get("config", {}).get(key)
        if a != b:
            out.append(f"{key}: {a} -> {b}")
    a, b = old.get("environment", {}), new.get("environment", {})
    if a.get("cpu_model") != b.get("cpu_model"):
        out.append(f"cpu: {a.get('cpu_model')} -> {b.get('cpu_model')}")
    return out


def render(changes: list[Change], warnings: list[str]) -> str:
    lines = [f"warning: runs differ in {w}" for w in warnings]
    lines.append(
        f"{'workload':<9} {'impl':<14} {'old ms':>10} {'new ms':>10} "
        f"{'new/old':>8}  {'95% CI':<17} verdict"
    )
    for c in changes:
        mark = {"regression": "  <-- REGRESSION", "improvement": "  <-- improvement"}.get(
            c.verdict, ""
        )
        lines.append(
            f"{c.workload:<9} {c.impl:<14} {c.old_ms:>10.4g} {c.new_ms:>10.4g} {c.ratio:>8.3f}  "
            f"[{c.lo:.3f}, {c.hi:.3f}]{'':<2} {c.verdict}{mark}"
        )
    myc = [c for c in changes if c.impl == "myc"]
    reg = sum(c.verdict == "regression" for c in myc)
    imp = sum(c.verdict == "improvement" for c in myc)
    lines.append(
        f"myc: {reg} regression(s), {imp} improvement(s), "
        f"{len(myc) - reg - imp} without a change the intervals can show"
    )
    return "\n".join(lines)


def main(old_path: str, new_path: str, fail_on_regression: bool = False) -> int:
    old, new = load(old_path), load(new_path)
    changes = compare(old, new)
    print(render(changes, setting_differences(old, new)))
    regressions = [c for c in changes if c.impl == "myc" and c.verdict == "regression"]
    return 1 if (fail_on_regression and regressions) else 0
