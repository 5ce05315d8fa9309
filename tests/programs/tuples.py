"""Tuples: packing, unpacking (nested), tuple arguments and results, indexing."""

import numpy as np

from . import case, randn


@case((1.0, 2.0), (-3, 4))
def swap(a, b):
    a, b = b, a
    return a, b


@case((((1.0, 2.0), 3.0),), (((0.5, -1.0), 4.0),))
def nested_unpack_arg(p):
    (a, b), c = p
    return a * b + c


@case((3.0, 4.0), (0.0, -1.0))
def nested_results(x, y):
    return (x + y, (x - y, (x * y, x / (abs(y) + 1.0)))), x


@case((((1.0, 2.0), (3.0, 4.0)), (0.5, 0.25)), (((0.0, 1.0), (-1.0, 0.0)), (2.0, 3.0)))
def mat2_vec2(m, v):
    (a, b), (c, d) = m
    x, y = v
    return (a * x + b * y, c * x + d * y)


@case((9, 4), (-9, 4), (10, -3))
def divmod_like(a, b):
    q, r = a // b, a % b
    return (q, r), q * b + r == a


@case(((1.0, 2.0, 3.0),), ((4.0, -5.0, 6.5),))
def tuple_indexing(t):
    first = t[0]
    last = t[-1]
    n = len(t)
    return first + last, n, t[1] * 2.0


@case(((3.0, 1.0, 2.0, 5.0, 4.0),), ((-1.0, -2.0),))
def tuple_min_max(t):
    lo = t[0]
    hi = t[0]
    for v in t:
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


def _stats(x):
    return np.mean(x), (np.min(x), np.max(x))


@case((randn(0, 10),), (randn(1, 3, 4, dtype=np.float32),))
def array_stats_tuple(x):
    mean, (lo, hi) = _stats(x)
    return (hi - lo) / 2.0, mean


@case(
    (randn(2, 3), randn(3, 3), (1.0, 2.0)),
    (randn(4, 5, dtype=np.float32), randn(5, 5, dtype=np.float32), (0.5, -0.5)),
)
def tuple_of_arrays_arg(x, y, coefs):
    a, b = coefs
    pair = (x, y)
    u, v = pair
    return a * u + b * v, (u - v, pair)


@case((1.0, 5), (0.5, 3))
def tuple_accumulate_loop(x, n):
    state = (x, 0.0, 1)
    for _ in range(n):
        a, b, k = state
        state = (a * 0.5, b + a, k * 2)
    return state


@case((2.0,), (-1.0,))
def tuple_in_conditional(x):
    p = (x, x * x) if x > 0 else (-x, 0.0)
    q, r = p
    return q + r, p


@case((((1.0, 2.0), (3.0, (4.0, 5.0))),))
def deep_nested_unpack(t):
    (a, b), (c, (d, e)) = t
    return ((e, d), (c, (b, a)))


def _minmax_pair(a, b):
    return (a, b) if a < b else (b, a)


@case((3.0, 1.0, 2.0), (1.0, 2.0, 3.0), (2.0, 2.0, 1.0))
def sort3(a, b, c):
    a, b = _minmax_pair(a, b)
    b, c = _minmax_pair(b, c)
    a, b = _minmax_pair(a, b)
    return a, b, c


@case(
    (randn(2, 5, 4), ((randn(3, 4, 3), randn(4, 3)), (randn(5, 3, 2), randn(6, 2)))),
    (
        randn(11, 2, 5, dtype=np.float32),
        (
            (randn(7, 5, 6, dtype=np.float32), randn(8, 6, dtype=np.float32)),
            (randn(9, 6, 3, dtype=np.float32), randn(10, 3, dtype=np.float32)),
        ),
    ),
)
def mlp_forward_tuple_layers(x, layers):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return h


@case((1.0, 2.0, 3.0), (0.0, 0.0, 1.0))
def tuple_equality_like(a, b, c):
    t = (a, b, c)
    s = (c, b, a)
    same = t[0] == s[2] and t[1] == s[1] and t[2] == s[0]
    return same, t[0] + s[0]
