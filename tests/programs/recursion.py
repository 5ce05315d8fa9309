"""Recursion and mutual recursion between module-level functions."""

import numpy as np

from . import case, randn


@case((0,), (1,), (10,), (15,))
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@case((0,), (7,), (10,))
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@case((0,), (7,), (10,))
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@case((0, 0), (1, 2), (2, 3), (3, 2))
def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


@case((5,), (0,), (12,))
def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


@case((2.0, 10), (1.5, 7), (3.0, 0), (0.5, 1))
def fast_pow(x, n):
    if n == 0:
        return 1.0
    half = fast_pow(x, n // 2)
    if n % 2 == 0:
        return half * half
    return half * half * x


@case((1071, 462), (17, 5), (5, 0))
def gcd_rec(a, b):
    return a if b == 0 else gcd_rec(b, a % b)


@case((0.0, 2.0, 8), (1.0, 3.0, 5))
def adaptive_simpson_depth(a, b, depth):
    # integrate x^3 - x on [a, b] by recursive midpoint refinement
    m = 0.5 * (a + b)
    if depth == 0:
        fm = m * m * m - m
        return (b - a) * fm
    return adaptive_simpson_depth(a, m, depth - 1) + adaptive_simpson_depth(m, b, depth - 1)


@case((randn(0, 3, 3) * 0.5, 5), (randn(1, 2, 2, dtype=np.float32) * 0.5, 4), (np.eye(3), 0))
def matrix_power(A, n):
    if n == 0:
        return _identity_like(A)
    half = matrix_power(A, n // 2)
    sq = half @ half
    if n % 2 == 1:
        return sq @ A
    return sq


def _identity_like(A):
    n = A.shape[0]
    r = np.arange(n)
    eq = r.reshape(n, 1) == r.reshape(1, n)
    return np.where(eq, np.ones_like(A), np.zeros_like(A))


@case((10,), (3,))
def hofstadter_q_like(n):
    # mutual recursion with three functions
    return _tri_a(n) + _tri_b(n)


def _tri_a(n):
    if n <= 0:
        return 1
    return _tri_b(n - 1) + 1


def _tri_b(n):
    if n <= 0:
        return 0
    return _tri_c(n - 1) * 2


def _tri_c(n):
    if n <= 0:
        return 1
    return _tri_a(n - 1) + _tri_b(n - 1)


@case((4,), (0,))
def hanoi_moves(n):
    if n == 0:
        return 0
    return 2 * hanoi_moves(n - 1) + 1


@case((1.0, 0), (0.3, 6), (2.0, 4))
def continued_fraction_sqrt2(x, depth):
    # 1 + 1/(2 + 1/(2 + ...)) with x as the innermost tail
    if depth == 0:
        return 1.0 + 1.0 / (1.0 + x)
    return _cf_tail(x, depth)


def _cf_tail(x, depth):
    if depth == 0:
        return 1.0 + x
    return 1.0 + 1.0 / (1.0 + _cf_tail(x, depth - 1))


@case((randn(2, 8), 3), (randn(3, 5, dtype=np.float32), 2))
def recursive_smoothing(x, k):
    if k == 0:
        return x
    return recursive_smoothing(_smooth_once(x), k - 1)


def _smooth_once(x):
    # 3-point smoothing of the interior, endpoints kept
    n = x.shape[0]
    inner = 0.5 * x[1:-1] + 0.25 * (x[:-2] + x[2:])
    # gather with clipped indices: position i takes inner[i - 1]
    spread = inner[np.clip(np.arange(n) - 1, 0, n - 3)]
    pos = np.arange(n)
    return np.where(pos == 0, x[0], np.where(pos == n - 1, x[-1], spread))
