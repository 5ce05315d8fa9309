"""Shared helpers for the CPU backend tests: kernel builders, values, comparisons."""

from __future__ import annotations

import numpy as np

from myc.backends.cpu import compile_kernel
from myc.lower.kernel import Binary, Buffer, Kernel, Load, Store, Unary

FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -2.0, 3.0]
INT_SPECIALS = [0, 1, -1, 2, -2, 7, -7, np.iinfo(np.int64).max, np.iinfo(np.int64).min]


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str,
           specials: bool = True) -> np.ndarray:
    """Random test values of ``dtype``, with special values sprinkled in."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype == "int64":
        v = rng.integers(-50, 50, n)
        pool = INT_SPECIALS
    else:
        v = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        pool = FLOAT_SPECIALS
    v = v.astype(dtype)
    if specials and n:
        mask = rng.random(n) < 0.2
        v[mask] = rng.choice(np.array(pool, dtype=dtype), int(mask.sum()))
    return v.reshape(shape)


def ulp_diff(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of ``want``'s dtype; 0 where both are the
    same NaN/inf, inf where exactly one is NaN or they are different infinities."""
    dt = want.dtype
    with np.errstate(all="ignore"):
        sp = np.maximum(np.spacing(np.abs(want)), np.finfo(dt).smallest_subnormal)
        d = np.abs(got.astype(np.float64) - want.astype(np.float64)) / sp.astype(np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) | both_nan
    d = np.where(same, 0.0, d)
    return np.where(np.isnan(got) != np.isnan(want), np.inf, d)


def assert_same(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Equal values and dtypes, NaN matching NaN (-0 and +0 count as equal)."""
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_array_equal(got, want, err_msg=what)


def unary_kernel(op: str, dtype: str, n: int) -> Kernel:
    return Kernel(f"u_{op}", (n,), (Buffer("x", dtype, (n,)),),
                  (Store(0, Unary(op, Load(0, dtype))),))


def binary_kernel(op: str, dtype: str, n: int) -> Kernel:
    bufs = (Buffer("x", dtype, (n,)), Buffer("y", dtype, (n,)))
    return Kernel(f"b_{op}", (n,), bufs, (Store(0, Binary(op, Load(0, dtype), Load(1, dtype))),))


def run(kernel: Kernel, inputs: list[np.ndarray]) -> tuple[list, list]:
    """Compiled results and reference results."""
    return compile_kernel(kernel)(inputs), kernel.reference(inputs)
