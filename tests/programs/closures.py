"""Nested def, lambda, closures, higher-order functions, functions as values."""

import math

import numpy as np

from . import case, randn


def _apply_twice(f, x):
    return f(f(x))


def _compose(f, g):
    return lambda x: f(g(x))


def _make_adder(a):
    def add(x):
        return x + a

    return add


def _make_affine(a, b):
    scale = a * 2.0

    def affine(x):
        return scale * x + b

    return affine


def _trapezoid(f, a, b, n=100):
    h = (b - a) / n
    s = 0.5 * (f(a) + f(b))
    for i in range(1, n):
        s = s + f(a + i * h)
    return s * h


def _newton(f, df, x0, iters=30):
    x = x0
    for _ in range(iters):
        fx = f(x)
        if abs(fx) < 1e-14:
            break
        x = x - fx / df(x)
    return x


def _bisect(f, lo, hi, iters=60):
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if f(lo) * f(mid) <= 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def _fixed_point(f, x0, tol=1e-12, max_iter=200):
    x = x0
    i = 0
    while i < max_iter:
        nx = f(x)
        if abs(nx - x) < tol:
            return nx
        x = nx
        i += 1
    return x


def _fold(f, init, xs):
    acc = init
    for x in xs:
        acc = f(acc, x)
    return acc


def _add(a, b):
    return a + b


def _mul(a, b):
    return a * b


def _pick_op(use_mul):
    if use_mul:
        return _mul
    return _add


@case((1.0,), (-2.0,))
def nested_def_uses_arg(x):
    def inner(y):
        return x * y + 1.0

    return inner(2.0) + inner(x)


@case((3.0,), (0.5,))
def closure_captures_local(x):
    k = x * x
    m = 2.0

    def g(t):
        return k * t - m

    return g(1.0) + g(-1.0) * 0.5


@case((2.0,), (-1.0,))
def lambda_simple(x):
    sq = lambda t: t * t
    cube = lambda t: t * sq(t)
    return sq(x) + cube(x)


@case((1.5, 3), (0.0, 5))
def closures_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        g = lambda t: t * i + x
        acc = acc + g(2.0)
    return acc


@case((4,), (1,))
def def_in_loop(n):
    total = 0.0
    for k in range(1, n + 1):
        c = 1.0 / k

        def term(t):
            return c * t * t

        total = total + term(float(k))
    return total


@case((1.0, 2.0), (-3.0, 0.5))
def returned_closure(a, x):
    add = _make_adder(a)
    aff = _make_affine(a, x)
    return add(x), aff(x), add(aff(1.0))


@case((0.5,), (2.0,))
def apply_twice_lambda(x):
    return _apply_twice(lambda t: t * t + 1.0, x), _apply_twice(_make_adder(3.0), x)


@case((0.3,), (1.2,))
def compose_builtins(x):
    sq = lambda t: t * t
    f = _compose(math.sin, sq)
    g = _compose(sq, math.cos)
    h = _compose(abs, _compose(math.exp, lambda t: -t))
    return f(x), g(x), h(x)


@case((randn(0, 6),), (randn(1, 3, 2, dtype=np.float32),))
def compose_numpy_funcs(x):
    f = _compose(np.tanh, np.exp)
    g = _compose(np.sqrt, np.abs)
    return f(x - 1.0) + g(x)


@case((1.0, 2.0), (0.0, 3.14159))
def integrate_closure(a, b):
    w = 2.0
    return _trapezoid(lambda t: math.sin(w * t), a, b), _trapezoid(math.cos, a, b, 50)


@case((2.0,), (9.0,), (0.5,))
def newton_cube_root(c):
    f = lambda x: x * x * x - c
    df = lambda x: 3.0 * x * x
    return _newton(f, df, 1.0)


@case((1.0,), (3.0,))
def bisect_closure(target):
    def f(x):
        return math.exp(x) - target - 1.0

    return _bisect(f, -5.0, 5.0)


@case((1.0,), (0.2,))
def fixed_point_cos(x0):
    return _fixed_point(math.cos, x0)


@case(((1.0, 2.0, 3.0, 4.0),), ((0.5, -2.0),))
def fold_tuple(xs):
    s = _fold(_add, 0.0, xs)
    p = _fold(_mul, 1.0, xs)
    m = _fold(max, -1e9, xs)
    return s, p, m


@case((True, 3.0, 4.0), (False, 3.0, 4.0))
def function_returned_by_branch(use_mul, a, b):
    op = _pick_op(use_mul)
    other = _add if use_mul else _mul
    return op(a, b), other(a, b)


@case((2.0,), (0.5,))
def compose_chain(x):
    double = lambda t: 2.0 * t
    inc = _make_adder(1.0)
    f = _compose(double, _compose(inc, double))
    g = _compose(f, f)
    return f(x), g(x), _compose(g, math.sqrt)(x)


@case((1.0,), (-0.5,))
def closure_of_closure(x):
    a = 2.0

    def outer(b):
        c = a + b

        def inner(t):
            return a * t + c * x

        return inner

    h = outer(1.0)
    return h(3.0) + outer(-1.0)(x)


@case(
    (randn(2, 4, 3), randn(3, 3, 3)),
    (randn(4, 2, 5, dtype=np.float32), randn(5, 5, 5, dtype=np.float32)),
)
def closure_over_array(X, W):
    def layer(h):
        return np.tanh(h @ W)

    return _apply_twice(layer, X)


@case((1.0, 0.5), (2.0, -1.0))
def lambda_defaults(x, y):
    f = lambda a, b=2.0: a * b
    g = lambda a, b=1.0, c=0.0: a + b * c
    return f(x), f(x, y), g(x), g(x, c=y), g(x, y, y)


@case((3.0,), (-1.0,))
def immediately_invoked_lambda(x):
    return (lambda t: t + 1.0)(x) * (lambda a, b: a - b)(x, 0.5)


@case((randn(3, 4, 5),), (randn(4, 3, 5, dtype=np.float32),))
def map_rows_with_function(A):
    def normalize(v):
        return v / (np.sqrt(np.sum(v * v)) + 1e-6)

    total = np.zeros_like(A[0])
    for row in A:
        total = total + normalize(row)
    return total


@case((0.7,), (2.0,))
def builtins_as_values(x):
    fs = (abs, math.sqrt, math.exp, float)
    acc = 0.0
    for f in fs:
        acc = acc + f(x)
    return acc, _apply_twice(math.sqrt, x), _fold(min, 10.0, (x, 1.0, 3.0))
