"""Arithmetic, arguments and defaults, keyword calls, helpers and module constants."""

import numpy as np

from . import case, randn

SCALE = 2.5
OFFSET = -3
COEFFS = (1.0, -2.0, 0.5, 3.0)
SHIFTS = (1, 2, 3)
NESTED_CONST = ((1.0, 2.0), (3, (4.0, 5)))


@case((3.0, 4.0), (1, 2), (-2.5, 7))
def arith_mix(a, b):
    return a * b + a - b / 2.0 - (a - b) ** 2


@case((7, 2), (-7, 3), (9, -4), (10, 5))
def int_division(a, b):
    q = a // b
    r = a % b
    return q * b + r, q, r, a / b


@case((2.0,), (2.0, 3.0), (2.0, 3.0, -1.0))
def defaults_affine(x, a=1.5, b=0.25):
    return a * x + b


def _scaled(x, factor=2.0, shift=0.0):
    return x * factor + shift


@case((1.0,), (-4.0,))
def keyword_calls(x):
    a = _scaled(x)
    b = _scaled(x, shift=1.0)
    c = _scaled(x, 3.0, shift=-1.0)
    d = _scaled(shift=0.5, x=x, factor=-1.0)
    return a + b + c + d


def _square(x):
    return x * x


def _sum_of_squares(a, b):
    return _square(a) + _square(b)


def _hypot_sq_shifted(a, b, c):
    return _sum_of_squares(a, b) + _square(c - 1.0)


@case((1.0, 2.0, 3.0), (0.5, -0.5, 0.0))
def transitive_helpers(a, b, c):
    return _hypot_sq_shifted(a, b, c) - _sum_of_squares(c, a)


@case((2.0,), (0.0,), (-1.5,))
def module_constants(x):
    total = SCALE * x + OFFSET
    for s in SHIFTS:
        total = total + s * x
    return total


@case((0.5,), (2.0,), (-1.0,))
def horner_const(x):
    acc = 0.0
    for c in COEFFS:
        acc = acc * x + c
    return acc


@case((1.0,), (2.0,))
def nested_const(x):
    (a, b), (c, (d, e)) = NESTED_CONST
    return a * x + b, c * d - e * x


@case((3, 5), (10, -2), (0, 0))
def int_arith(a, b):
    c = a * b - 2 * a + b
    c += 7
    c -= a
    c *= 2
    return c + abs(b) ** 2


@case((1.5,), (-0.25,))
def augmented_float(x):
    y = x
    y += 1.0
    y *= 3.0
    y -= x
    y /= 2.0
    y **= 2
    return y


@case((3.0, 1.0, 2.0), (1.0, 1.0, 1.0), (2.0, 5.0, 2.0))
def quadratic_root(a, b, c):
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return -1.0
    return (-b + disc**0.5) / (2.0 * a)


@case((randn(0, 4),), (randn(1, 4, dtype=np.float32),))
def array_arith(x):
    y = 2.0 * x - 1.0
    z = y * y / (1.0 + x * x)
    return z - x / 3.0 + SCALE


@case((5,), (0,), (-3,))
def unary_ops(n):
    a = -n
    b = +n
    c = not n
    return a, b, c, -(-n)


@case((randn(2, 3, 4),), (randn(3, 5, dtype=np.float32),))
def array_augmented(x):
    y = x * 1.0  # a fresh array: in-place and rebinding semantics agree
    y += 2.0
    y *= x
    y -= 1.0
    y /= 4.0
    y **= 2
    return y
