"""if/elif/else, conditional expressions, chained comparisons, and/or/not."""

import numpy as np

from . import case, randn


@case((-3.0,), (-0.5,), (0.5,), (2.0,), (10.0,))
def piecewise(x):
    y = 0.0
    if x < -1.0:
        y = -x - 0.5
    elif x < 1.0:
        y = 0.5 * x * x
    elif x < 5.0:
        y = x - 0.5
    else:
        y = 4.5 + (x - 5.0) * 0.1
    return y


@case((0.3, 1.0), (3.0, 1.0), (-2.0, 1.5))
def huber(x, delta=1.0):
    a = abs(x)
    return 0.5 * x * x if a <= delta else delta * (a - 0.5 * delta)


@case((0.0,), (0.2,), (1.0,), (-3.0,))
def short_circuit_and(x):
    # 1 / x must not be evaluated when x == 0
    if x != 0 and 1 / x > 2:
        return 1.0
    return 0.0


@case((0.0,), (4.0,), (0.1,))
def short_circuit_or(x):
    ok = x == 0 or 1.0 / x < 1.0
    return 1 if ok else 2


@case((0, 5), (3, 5), (4, 0), (0, 0))
def and_or_values(a, b):
    # `and`/`or` return one of their operands (same type here)
    return (a and b), (a or b), (not a) or (b > 2)


@case((1.0, 2.0, 3.0), (3.0, 2.0, 1.0), (1.0, 1.0, 2.0), (0.5, 2.0, 2.0))
def chained_compare(a, b, c):
    r = 0
    if a < b < c:
        r += 1
    if a <= b <= c:
        r += 10
    if c > b > a > 0:
        r += 100
    if not (a == b == c) and a != c:
        r += 1000
    return r


@case((0.5,), (-0.5,), (1.5,), (0.0,))
def in_unit_interval(x):
    return 0.0 <= x <= 1.0


@case((3, 4, 5), (5, 3, 4), (4, 5, 3), (7, 7, 1))
def median_of_three(a, b, c):
    if a > b:
        if b > c:
            return b
        elif a > c:
            return c
        else:
            return a
    else:
        if a > c:
            return a
        elif b > c:
            return c
        return b


@case((-2.0, True), (2.0, False), (0.0, True))
def nested_conditional_expr(x, flag):
    return (x * 2.0 if x > 0 else -x) if flag else (x if x > 1.0 else 1.0 - x)


@case((randn(2, 5), True), (randn(3, 5, dtype=np.float32), False))
def array_branch(x, use_tanh):
    y = x
    if use_tanh:
        y = np.tanh(x)
    else:
        y = np.maximum(x, 0.0)
    return y * 2.0


@case((1.0, 2.0), (2.0, 1.0), (-1.0, -1.0))
def sign_of_difference(a, b):
    d = a - b
    s = 1 if d > 0 else (-1 if d < 0 else 0)
    return s, not s, s == 0 or d > 0


@case((95,), (85,), (72,), (61,), (12,))
def grade(score):
    g = -1
    if score >= 90:
        g = 4
    elif score >= 80:
        g = 3
    elif score >= 70:
        g = 2
    elif score >= 60:
        g = 1
    else:
        g = 0
    return g


@case((2024,), (1900,), (2000,), (2023,))
def is_leap_year(y):
    return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0


@case((randn(4, 3),), (randn(5, 3, dtype=np.float32),))
def branch_on_reduction(x):
    m = np.mean(x)
    if m > 0.0 and np.max(x) < 3.0:
        return x - m
    return x + m
