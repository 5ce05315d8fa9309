"""Small functions whose IR docs/ir.md shows.

Print any of them with, for example::

    myc ir docs/examples/ir_examples.py:scale --args "2.0, 3.0"
"""

import numpy as np


def scale(x, y):
    z = x * y + 1.0
    return np.sin(z)


def classify(x):
    if x > 0:
        s = 1.0
    elif x < 0:
        s = -1.0
    else:
        s = 0.0
    return s * x


def clamp_positive(x):
    if x < 0:
        return 0.0
    return x


def count_down(n):
    total = 0.0
    while n > 0:
        total = total + n
        n = n - 1
    return total


def sum_range(n):
    acc = 0.0
    for i in range(n):
        acc = acc + i
    return acc


def first_big(xs, limit):
    found = -1.0
    for x in xs:
        if x < 0:
            continue
        if x > limit:
            found = x
            break
    return found


def find_index(xs, target):
    for i in range(len(xs)):
        if xs[i] == target:
            return i
    return -1


def in_range(x, lo, hi):
    return lo < x <= hi


def either(a, b):
    return a > 0 or b > 0


def pick(c, x, y):
    return x if c else y


def make_scaler(k):
    def scale_by(v):
        return k * v

    return scale_by


def apply_twice(f, x):
    return f(f(x))


def use_closure(x, k):
    g = make_scaler(k)
    return apply_twice(g, x) + apply_twice(lambda t: t + k, x)


def poly(x, a=2.0, b=1.0):
    return a * x * x + b


def call_poly(x):
    return poly(x, b=3.0)


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def tiny(x):
    return np.sin(x) * x


def captured(x):
    g = lambda y: x * y
    return g(2.0) + x


def maybe(x):
    if x > 0:
        y = x
    return y


def swap_diff(p):
    a, b = p
    return b - a


W = np.array([1.0, 2.0, 3.0])


def weighted(x):
    return np.sum(W * x, axis=0) + x.T.sum()


def loop_else(n):
    k = 0
    while k < n:
        if k * k > 50:
            break
        k += 1
    else:
        k = -1
    return k
