"""Differentiated programs: control flow, recursion, closures, tuples, arrays.

Each ``@program(args..., argnums=...)`` function is plain subset Python; the tests in
``test_ad_programs.py`` check its derivatives against finite differences in reverse and
forward mode.  Arguments are chosen away from branch boundaries and kinks, so the
function is smooth in a neighbourhood of them.
"""

import math

import numpy as np

PROGRAMS = []


def program(*arg_tuples, argnums=None, tags=()):
    """Register a function with argument tuples (and which arguments to differentiate)."""

    def register(fn):
        for i, args in enumerate(arg_tuples):
            PROGRAMS.append((fn, args, argnums, frozenset(tags), i))
        return fn

    return register


def _r(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _u(seed, *shape, low=0.5, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


# ------------------------------------------------------------------ helpers (not programs)


def _square(t):
    return t * t


def _apply_twice(f, x):
    return f(f(x))


def _compose(f, g):
    return lambda x: f(g(x))


def _make_scaler(a):
    def scale(x):
        return a * x + np.sin(a)

    return scale


def _make_poly(c0, c1, c2):
    return lambda t: c0 + t * (c1 + t * c2)


def _fold(f, init, xs):
    acc = init
    for v in xs:
        acc = f(acc, v)
    return acc


def _map_rows(f, m):
    acc = 0.0
    for row in m:
        acc = acc + f(row)
    return acc


def _trapezoid(f, a, b, n=40):
    h = (b - a) / n
    s = 0.5 * (f(a) + f(b))
    for i in range(1, n):
        s = s + f(a + i * h)
    return s * h


def _newton(f, df, x0, iters=25):
    x = x0
    for _ in range(iters):
        x = x - f(x) / df(x)
    return x


def _rk4(f, y0, t1, steps):
    h = t1 / steps
    y = y0
    t = 0.0
    for _ in range(steps):
        k1 = f(t, y)
        k2 = f(t + 0.5 * h, y + 0.5 * h * k1)
        k3 = f(t + 0.5 * h, y + 0.5 * h * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + h
    return y


# ------------------------------------------------------------------ branches


@program((1.3,), (-0.7,), tags=("scalar",))
def if_else(x):
    if x > 0:
        return x * x + 1.0
    else:
        return -(x**3)


@program((0.4, 2.0), (1.6, 0.5), (-2.0, 1.5), tags=("scalar",))
def if_elif_else(x, y):
    if x < 0.0:
        z = y * np.exp(x)
    elif x < 1.0:
        z = x * y + np.sin(y)
    else:
        z = x / y
    return z * z


@program((0.5,), (2.0,), tags=("scalar",))
def conditional_expression(x):
    y = x * 2.0 if x < 1.0 else np.sin(x) * x
    return y + (x if y > 1.5 else -x)


@program((_r(1, 4),), (-_u(2, 4),))
def if_on_array_reduction(x):
    if np.sum(x) > 0:
        y = np.tanh(x) * 2.0
    else:
        y = x * x
    return np.sum(y * x)


@program((0.7, 1.2), (2.5, 0.3), tags=("scalar",))
def branch_chain_and_or(x, y):
    if x > 1.0 and y < 1.0:
        r = x * y
    elif x < 1.0 or y > 2.0:
        r = np.exp(x - y)
    else:
        r = x + y
    if 0.0 < r < 1.0:
        r = r * r
    return r


# ------------------------------------------------------------------ loops


@program((1.1,), (3.7,), tags=("scalar",))
def while_data_dependent(x):
    while x < 10.0:
        x = x * 1.5 + 0.1
    return x


@program((3.3,), (0.7,), tags=("scalar",))
def while_counter(x):
    i = 0
    while x > 0.1:
        x = x * 0.5
        i += 1
    return x * i + x


@program((_r(3, 3) * 0.3,))
def while_array_norm(x):
    v = x
    while np.sum(v * v) < 50.0:
        v = v * 1.3 + 0.1
    return np.sum(np.sin(v))


@program((2.0,), (0.3,), tags=("scalar",))
def newton_sqrt(a):
    x = a
    for _ in range(20):
        x = 0.5 * (x + a / x)
    return x


@program((0.9, 5), (1.2, 0), argnums=0)
def for_range_horner(x, n):
    acc = 1.0
    for i in range(n):
        acc = acc * x + i
    return acc


@program((0.8,), tags=("scalar",))
def for_range_step(x):
    acc = x
    for i in range(1, 10, 3):
        acc = acc * np.cos(acc) + i * x
    for j in range(5, 0, -2):
        acc = acc + j / (1.0 + acc * acc)
    return acc


@program((1.5, -0.5),)
def for_over_tuple(x, y):
    acc = 0.0
    for c in (x, y, 2.0, x * y):
        acc = acc + c * c * np.sin(c)
    return acc


@program((_r(4, 3, 4),))
def for_over_rows(m):
    acc = 0.0
    k = 1.0
    for row in m:
        acc = acc + k * np.sum(np.sin(row) * row)
        k = k + 0.5
    return acc


@program((0.5,), (2.0,), tags=("scalar",))
def loop_break(x):
    for i in range(100):
        x = x * 1.1 + 0.05 * i
        if x > 5.0:
            break
    return x * x


@program((0.3,), tags=("scalar",))
def loop_continue(x):
    for i in range(10):
        if i % 3 == 0:
            continue
        x = x + np.sin(x) * 0.1 * i
    return x


@program((0.2,), (3.5,), tags=("scalar",))
def early_return_in_loop(x):
    for i in range(10):
        if x > 3.0:
            return x * i
        x = x * 1.5 + 0.2
    return -x


@program((0.6,), tags=("scalar",))
def nested_loops(x):
    for i in range(3):
        for j in range(i + 1):
            x = x * 0.9 + np.sin(x * j + i) * 0.1
    return x


@program((1.3,), tags=("scalar",))
def while_break_continue(x):
    i = 0
    total = 0.0
    while True:
        i += 1
        if i % 2 == 0:
            continue
        total = total + x**i / i
        if i > 7:
            break
    return total


@program((0.5, 0.25),)
def loop_swap_unpack(a, b):
    for _ in range(4):
        a, b = b * 1.1, a + b * b
    return a * b


@program((_r(5, 3),))
def loop_accumulate_array(x):
    acc = np.zeros(3)
    for i in range(4):
        acc = acc + x * i + np.exp(acc * 0.1)
    return np.sum(acc * acc)


# ------------------------------------------------------------------ recursion


def _pow_rec(x, n):
    if n == 0:
        return 1.0
    return x * _pow_rec(x, n - 1)


@program((1.3, 5), (0.7, 0), argnums=0)
def recursion_power(x, n):
    return _pow_rec(x, n)


def _fast_pow(x, n):
    if n == 0:
        return 1.0
    if n % 2 == 0:
        h = _fast_pow(x, n // 2)
        return h * h
    return x * _fast_pow(x, n - 1)


@program((1.1, 13), argnums=0)
def recursion_fast_power(x, n):
    return _fast_pow(x, n)


def _fib(x, n):
    if n < 2:
        return x * n + 1.0
    return _fib(x, n - 1) * 0.5 + np.sin(_fib(x, n - 2))


@program((0.7, 6), argnums=0)
def recursion_tree(x, n):
    return _fib(x, n)


def _even(x, n):
    if n == 0:
        return x
    return _odd(x * 1.1, n - 1) + 0.1


def _odd(x, n):
    if n == 0:
        return -x
    return np.sin(_even(x, n - 1))


@program((0.5, 7), (0.5, 4), argnums=0)
def mutual_recursion(x, n):
    return _even(x, n)


def _sum_sq_rec(v, i):
    if i == v.shape[0]:
        return 0.0
    return v[i] * v[i] * (i + 1) + _sum_sq_rec(v, i + 1)


@program((_r(6, 5),))
def recursion_over_array(v):
    return _sum_sq_rec(v, 0)


def _exp_series(x, k, term, acc):
    if k > 15:
        return acc
    term = term * x / k
    return _exp_series(x, k + 1, term, acc + term)


@program((0.9,), tags=("scalar",))
def recursion_tail_accumulator(x):
    return _exp_series(x, 1, 1.0, 1.0)


# ------------------------------------------------------------------ closures, higher order


@program((1.2, 0.7), (-0.4, 2.0))
def closure_captured_variable(x, a):
    def g(t):
        return t * a + np.sin(a)

    return g(x) * g(2.0)


@program((0.8, 1.5),)
def closure_returned_then_called(x, a):
    f = _make_scaler(a)
    h = _make_scaler(f(x))
    return f(x) + h(x * x)


@program((0.6, 1.3),)
def closure_passed_to_hof(x, a):
    return _apply_twice(lambda t: t * a + 1.0, x) + _apply_twice(_make_scaler(a), a)


@program((0.4,), tags=("scalar",))
def compose_math_and_numpy(x):
    f = _compose(np.sin, np.exp)
    g = _compose(math.sin, _square)
    h = _compose(_compose(np.tanh, _square), math.cos)
    return f(x) + g(x) + h(x)


@program((1.5, -0.5),)
def lambda_two_args(x, y):
    f = lambda a, b: a * b + a / (1.0 + b * b)
    return f(x, y) * f(y, x)


@program((0.3, (1.0, 2.0, -0.5)),)
def fold_closure_over_tuple(x, cs):
    return _fold(lambda acc, c: acc * x + c * np.cos(acc), 0.5, cs)


@program((_r(7, 3, 4), _r(8, 4)),)
def closure_captures_array(m, w):
    f = lambda row: np.sum(np.tanh(row * w))
    return _map_rows(f, m)


@program((1.7, 0.6, -0.4),)
def nested_closures_three_levels(a, b, c):
    def outer(u):
        def mid(v):
            def inner(t):
                return u * v * t + np.sin(u * t)

            return inner

        return mid

    return outer(a)(b)(c) + outer(c)(a)(b)


@program((0.9, 1.4),)
def closure_list_in_loop(x, y):
    total = 0.0
    for i in range(3):
        g = lambda t: t * i + x * y
        total = total + g(x) * g(y)
    return total


@program((1.3,), (2.4,), tags=("scalar",))
def trapezoid_integral(a):
    return _trapezoid(lambda t: np.sin(a * t) * t, 0.0, 1.0)


@program((2.0,), (5.0,), tags=("scalar",))
def newton_implicit_cube_root(c):
    f = lambda x: x * x * x - c
    df = lambda x: 3.0 * x * x
    return _newton(f, df, 1.0)


@program((0.5, 1.2),)
def rk4_ode_closure(k, y0):
    f = lambda t, y: -k * y + np.sin(t)
    return _rk4(f, y0, 1.0, 10)


@program((0.3, 0.5, -0.2, 0.9),)
def closure_factory_poly(c0, c1, c2, x):
    p = _make_poly(c0, c1, c2)
    q = _make_poly(p(x), c2, c1)
    return p(x) * q(x) + _apply_twice(p, x)


# ------------------------------------------------------------------ tuples


@program(((1.5, -0.5, _r(9, 3)),))
def tuple_argument(t):
    a, b, v = t
    return a * b + np.sum(v * a) + np.sum(np.exp(v * b))


@program((((0.5, 1.5), _r(10, 2)), 2.0),)
def nested_tuple_argument(t, s):
    (a, b), v = t
    return np.sum(v * a) * b + s * a


@program((0.7, 1.3),)
def tuple_output(x, y):
    return (x * y, np.sin(x) + y, (x - y, x / y))


@program((_r(11, 3), 0.5),)
def tuple_built_and_indexed(v, s):
    t = (v * s, np.sum(v), s * s)
    u = t[0] + t[2]
    return np.sum(u * t[1]) + t[-1]


# ------------------------------------------------------------------ arrays


@program((_r(12, 3, 1), _r(13, 4)),)
def broadcasting_outer(x, y):
    return np.sum(np.tanh(x + y) * (x * y))


@program((_r(14, 4, 5),))
def normalize_rows(x):
    mu = np.mean(x, axis=1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=1, keepdims=True)
    z = (x - mu) / np.sqrt(var + 1e-3)
    return np.sum(z * np.arange(5.0))


@program((_r(15, 3, 4),))
def softmax_rows(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * np.arange(4.0))


@program((_r(16, 6),))
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@program((_r(17, 5, 4), np.array([0, 3, 1, 1, 2])), argnums=0)
def softmax_cross_entropy(logits, labels):
    n = logits.shape[0]
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(n), labels])


@program(((_r(18, 3, 5) * 0.5, _r(19, 5) * 0.1, _r(20, 5, 2) * 0.5, _r(21, 2) * 0.1),
          _r(22, 4, 3), _r(23, 4, 2)), argnums=0)
def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


@program((_r(24, 5), np.array([0, 2, 2, 4, 0, 1])), argnums=0)
def gather_repeated(x, idx):
    return np.sum(x[idx] ** 2 * np.arange(6.0))


@program((_r(25, 6),))
def slicing_differences(x):
    d = x[1:] - x[:-1]
    return np.sum(d * d) + x[0] * x[-1] + np.sum(x[::2] * x[1::2])


@program((_r(26, 3, 4),))
def matrix_indexing(m):
    return np.sum(m[1, :] * m[2, :]) + np.sum(m[:, 0] ** 2) + m[0, -1] * m[-1, 0]


@program((_r(27, 3, 4),))
def reductions_mixed(x):
    s0 = np.sum(x, axis=0)
    m1 = np.max(x, axis=1)
    return np.sum(s0 * s0) + np.sum(m1 * np.mean(x, axis=1)) + x.min() * x.sum()


@program((_r(28, 3, 4), _r(29, 4, 2), _r(30, 2)),)
def matmul_chain(a, b, v):
    return np.sum(np.tanh((a @ b) @ v)) + np.sum(a.T @ a) * 0.1


@program((_r(31, 2, 3, 4), _r(32, 2, 4, 3)),)
def batched_matmul(a, b):
    return np.sum(np.matmul(a, b) ** 2) + np.sum(np.transpose(a, (0, 2, 1)) * b)


@program((np.array([-1.5, -0.2, 0.3, 2.0]),))
def where_leaky_relu(x):
    y = np.where(x > 0, x, 0.01 * x)
    return np.sum(y * y * np.arange(4.0)) + np.sum(np.clip(x, -1.0, 1.0) * x)


@program((1.3, 0.6), tags=("scalar",))
def math_module_functions(x, y):
    return (math.sin(x) * math.exp(y) + math.log(x) + math.sqrt(y) + math.atan2(x, y)
            + math.hypot(x, y) + math.pow(x, 2.5) + math.tanh(y) + math.cos(x * y)
            + math.log1p(y) + math.expm1(x * 0.1) + math.atan(x) + math.tan(y))


@program((-1.3, 0.6), (2.0, -3.0), tags=("scalar",))
def builtins_abs_min_max(x, y):
    return abs(x) * max(x, y) + min(x * x, y) + float(max(abs(y), 0.1))


@program((0.7, 1.9),)
def array_literal_of_scalars(x, y):
    m = np.array([[x, y], [y * y, 1.0]])
    v = np.array([x, 2.0])
    return np.sum(m @ v) + m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]


@program((_r(33, 2, 6),))
def reshape_and_transpose(x):
    y = x.reshape(3, 4)
    z = np.reshape(y.T, (2, -1))
    return np.sum(z * x) + np.sum(y.mean(axis=0) ** 2)


@program((0.5, 2.0),)
def linspace_full_integration(a, b):
    t = np.linspace(a, b, 9)
    f = np.sin(t) * np.full(9, a)
    return np.sum(f) * (b - a) / 8.0


@program((_r(34, 4).astype(np.float64),))
def float_conversion_and_sum(x):
    s = float(np.sum(x * x))
    return s * np.mean(x) + float(x[0])


@program((1.05, (1.0, -2.0, 0.5, 3.0)),)
def horner_over_coefficients(x, cs):
    acc = 0.0
    for c in cs:
        acc = acc * x + c
    return acc


@program((_r(35, 3), 4), argnums=0)
def power_tower_array(x, n):
    y = np.ones(3)
    i = 0
    while i < n:
        y = y * x + np.sin(y)
        i += 1
    return np.sum(y)


# ------------------------------------------------------------------ more closures and control


@program((0.8, 4), (1.2, 0), argnums=0)
def recursive_nested_def_captures(x, n):
    def rec(k):
        if k == 0:
            return x
        return np.sin(rec(k - 1)) * x + 0.1

    return rec(n)


@program((0.6, 5), argnums=0)
def mutually_recursive_nested_defs(x, n):
    def ping(v, k):
        if k <= 0:
            return v
        return pong(v * x, k - 1)

    def pong(v, k):
        if k <= 0:
            return -v
        return ping(np.cos(v) + x, k - 1)

    return ping(x, n)


@program((0.7,), (-0.6,), tags=("scalar",))
def branch_selects_function(x):
    f = np.sin if x > 0 else _square
    g = _make_scaler(x) if x < 0.5 else lambda t: t * t * x
    return f(x) + g(x * 2.0)


@program((0.4, 1.3),)
def tuple_of_functions(x, y):
    fs = (np.sin, np.cos, _square, lambda t: t * y, _make_scaler(y))
    acc = x
    for f in fs:
        acc = f(acc) + 0.5 * acc
    return acc


@program((0.9, 1.7),)
def closure_captures_reassigned_variable(x, y):
    a = x * y
    a = a + np.sin(a)
    g = lambda t: t * a
    b = g(x)
    c = b * y
    h = lambda t: t * c + b
    return g(y) + h(x)


@program((0.3, 2.0),)
def while_calls_closure(x, k):
    f = lambda t: t * k + np.sin(t * x)
    v = x
    i = 0
    while v < 5.0 and i < 50:
        v = f(v) + 0.1
        i += 1
    return v * x


def _with_defaults(x, k=2.0, s=0.5):
    return x * k + s * np.sin(x)


@program((0.8, 1.5),)
def defaults_and_keywords(x, y):
    return _with_defaults(x) + _with_defaults(x, y) + _with_defaults(y, s=x, k=x * y)


@program((_r(36, 4, 3),))
def shape_and_len_driven_loop(m):
    acc = 0.0
    for i in range(len(m)):
        for j in range(m.shape[1]):
            acc = acc + m[i, j] * (i - j) + m[i, j] ** 2 * 0.1
    return acc


@program((_r(37, 2, 3),))
def unpack_array_rows_and_tuple_axis(m):
    a, b = m
    return np.sum(a * b) + np.sum(np.sum(m * m, axis=(0, 1))) + np.sum(m, axis=-1) @ a[:2]


@program((1.2,), (0.4,), tags=("scalar",))
def early_return_in_while_in_for(x):
    for i in range(4):
        j = 0
        while j < 3:
            x = x * 1.2 + 0.1 * j
            if x > 8.0:
                return x * 0.5
            j += 1
    return x


@program((0.5, (0.2, 0.3)),)
def closure_over_tuple_parameter(x, t):
    a, b = t

    def f(v):
        return v * a + b * v * v

    return f(f(x)) + f(b)


# ------------------------------------------------------------------ transforms inside programs

import myc  # noqa: E402  (kept next to the programs that use it)


def _g(x):
    return np.sin(x) * x * x


_dg = myc.grad(_g)


@program((0.7,), (1.9,), tags=("scalar",))
def grad_inside_body(x):
    dg = myc.grad(_g)
    return dg(x) * x + _g(x)


@program((0.7,), tags=("scalar",))
def module_level_grad(x):
    return _dg(x * 2.0) + x * _dg(x)


def _energy(p, q):
    return 0.5 * p * p + (1.0 - np.cos(q))


@program((0.3, 1.1),)
def hamiltonian_step_with_grad(p, q):
    dq = myc.grad(_energy, argnums=1)
    dp = myc.grad(_energy, argnums=0)
    for _ in range(3):
        p = p - 0.1 * dq(p, q)
        q = q + 0.1 * dp(p, q)
    return p * q
