"""How the reports print a time: significant digits by magnitude (one module, so the
report and the baseline table, which the report includes, print alike)."""

from __future__ import annotations

import math


def fmt_ms(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"
