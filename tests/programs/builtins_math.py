"""The math module and the builtins abs, min, max, float, int, len, range."""

import math

import numpy as np

from . import case, randn

TWO_PI = 2.0 * math.pi


@case((0.3,), (1.7,), (-2.2,))
def math_trig(x):
    return math.sin(x), math.cos(x), math.tan(x), math.atan(x), math.sin(x) ** 2 + math.cos(x) ** 2


@case((0.5,), (2.0,), (10.0,))
def math_exp_log(x):
    return math.exp(x), math.log(x), math.sqrt(x), math.log1p(x), math.expm1(-x), math.tanh(x)


@case((2.7,), (-2.7,), (3.0,))
def math_rounding(x):
    return math.floor(x), math.ceil(x), math.fabs(x), int(x), float(int(x))


@case((1.0,), (0.25,))
def math_constants(r):
    area = math.pi * r * r
    circ = TWO_PI * r
    return area, circ, math.e**r, math.pow(r, 3.0), math.atan2(r, 1.0)


@case((3.0, -4.5), (-1.0, 2.0), (2.0, 2.0), (3, 7))
def builtin_min_max_abs(a, b):
    return min(a, b), max(a, b), abs(a - b), max(abs(a), abs(b)), min(a, b * 0)


@case((3.9,), (-3.9,), (7,), (True,))
def builtin_conversions(x):
    i = int(x)
    f = float(x)
    return i, f, float(i) / 2.0, int(f * 2.0) // 3


@case(((1.0, 2.0, 3.0), randn(0, 5)), ((4.0,), randn(1, 2, 3, dtype=np.float32)))
def builtin_len(t, x):
    return len(t), len(x), len(t) * len(x) + 1


@case((5,), (0,), (1,))
def builtin_range_forms(n):
    a = 0
    for i in range(n):
        a += i
    b = 0
    for i in range(2, n + 3):
        b += i
    c = 0
    for i in range(n * 3, -1, -2):
        c += i
    d = 0
    for i in range(0, 10, 4):
        d += i * n
    return a, b, c, d


@case((1.0,), (0.0,), (-0.5,))
def taylor_exp(x):
    term = 1.0
    total = 1.0
    for k in range(1, 25):
        term = term * x / k
        total += term
    return total, abs(total - math.exp(x)) < 1e-9


@case((10,), (100,))
def leibniz_pi(n):
    s = 0.0
    sign = 1.0
    for k in range(n):
        s += sign / (2 * k + 1)
        sign = -sign
    return 4.0 * s, abs(4.0 * s - math.pi)


@case((0.0, 0.0, 3.0, 4.0), (1.0, 1.0, 1.0, 1.0))
def distance(x1, y1, x2, y2):
    dx = x2 - x1
    dy = y2 - y1
    return math.sqrt(dx * dx + dy * dy), math.hypot(dx, dy)


@case((0.5, 1.0), (2.0, 0.5))
def gaussian_pdf(x, sigma=1.0):
    z = x / sigma
    return math.exp(-0.5 * z * z) / (sigma * math.sqrt(2.0 * math.pi))


@case((randn(0, 6),), (randn(1, 4, dtype=np.float32),))
def math_on_elements(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + math.sin(float(x[i])) * math.exp(-abs(float(x[i])))
    return acc


@case((37.0, 3), (-1.25, 5))
def round_to_digits(x, d):
    scale = 10.0**d
    return math.floor(x * scale + 0.5) / scale


@case((1e-3,), (0.5,), (2.0,))
def numerically_careful(x):
    naive = math.log(1.0 + x)
    careful = math.log1p(x)
    return careful, abs(naive - careful) <= 1e-12 + 1e-9 * abs(careful)
