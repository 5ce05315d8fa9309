"""Statistics for timings: summaries and bootstrap confidence intervals of ratios.

Timings are skewed (a floor set by the hardware, a long tail of interruptions), so the
harness reports order statistics -- median, interquartile range, minimum -- and compares
two implementations by the ratio of their medians with a percentile-bootstrap 95%
confidence interval.  Two flavours:

* **paired** (``paired_ratio_ci``): samples taken in interleaved rounds, one of each
  implementation per round; a bootstrap replicate resamples whole rounds, so slow
  drift of the machine (frequency, other load) that hits both in the same round
  cancels instead of widening the interval;
* **unpaired** (``ratio_ci``): two independent sample sets (e.g. an old and a new
  results file); each set is resampled on its own.

Quantiles use linear interpolation (NumPy's default, Hyndman & Fan type 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

DEFAULT_BOOT = 2000


@dataclass(frozen=True)
class Summary:
    """Order statistics of one sample set (same unit as the samples)."""

    n: int
    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    max: float
    mean: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RatioCI:
    """Ratio of medians ``median(a) / median(b)`` with a bootstrap interval."""

    ratio: float
    lo: float
    hi: float
    n_boot: int
    paired: bool

    @property
    def rel_halfwidth(self) -> float:
        """Half the interval's width relative to the ratio (0.02 = +-2%)."""
        if not np.isfinite(self.ratio) or self.ratio == 0:
            return float("inf")
        return (self.hi - self.lo) / (2.0 * self.ratio)

    def excludes_one(self) -> bool:
        return self.lo > 1.0 or self.hi < 1.0

    def to_dict(self) -> dict:
        return {
            "ratio": self.ratio,
            "ci95": [self.lo, self.hi],
            "n_boot": self.n_boot,
            "method": "paired bootstrap over rounds" if self.paired else "unpaired bootstrap",
        }


def _arr(x: Sequence[float]) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64).ravel()
    if a.size == 0:
        raise ValueError("empty sample set")
    return a


def median(x: Sequence[float]) -> float:
    return float(np.median(_arr(x)))


def iqr(x: Sequence[float]) -> float:
    q1, q3 = np.percentile(_arr(x), [25.0, 75.0])
    return float(q3 - q1)


def summarize(x: Sequence[float]) -> Summary:
    a = _arr(x)
    q1, med, q3 = np.percentile(a, [25.0, 50.0, 75.0])
    return Summary(
        n=int(a.size),
        median=float(med),
        q1=float(q1),
        q3=float(q3),
        iqr=float(q3 - q1),
        min=float(a.min()),
        max=float(a.max()),
        mean=float(a.mean()),
    )


def _interval(reps: np.ndarray, alpha: float) -> tuple[float, float]:
    lo, hi = np.percentile(reps, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return float(lo), float(hi)


def paired_ratio_ci(
    a: Sequence[float],
    b: Sequence[float],
    n_boot: int = DEFAULT_BOOT,
    alpha: float = 0.05,
    seed: int = 0,
) -> RatioCI:
    """CI of ``median(a)/median(b)`` where ``a[i]`` and ``b[i]`` come from round ``i``."""
    x, y = _arr(a), _arr(b)
    if x.size != y.size:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    reps = np.median(x[idx], axis=1) / np.median(y[idx], axis=1)
    lo, hi = _interval(reps, alpha)
    return RatioCI(float(np.median(x) / np.median(y)), lo, hi, n_boot, True)


def ratio_ci(
    a: Sequence[float],
    b: Sequence[float],
    n_boot: int = DEFAULT_BOOT,
    alpha: float = 0.05,
    seed: int = 0,
) -> RatioCI:
    """CI of ``median(a)/median(b)`` for two independent sample sets."""
    x, y = _arr(a), _arr(b)
    rng = np.random.default_rng(seed)
    mx = np.median(x[rng.integers(0, x.size, size=(n_boot, x.size))], axis=1)
    my = np.median(y[rng.integers(0, y.size, size=(n_boot, y.size))], axis=1)
    lo, hi = _interval(mx / my, alpha)
    return RatioCI(float(np.median(x) / np.median(y)), lo, hi, n_boot, False)


def median_ci(
    x: Sequence[float], n_boot: int = DEFAULT_BOOT, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float, float]:
    """``(median, lo, hi)``: bootstrap CI of one sample set's median."""
    a = _arr(x)
    rng = np.random.default_rng(seed)
    reps = np.median(a[rng.integers(0, a.size, size=(n_boot, a.size))], axis=1)
    lo, hi = _interval(reps, alpha)
    return float(np.median(a)), lo, hi
