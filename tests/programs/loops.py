"""while, for over range/tuples/array rows, break, continue, early return in loops."""

import numpy as np

from . import case, randint, randn


@case((10,), (1,), (0,))
def sum_range_one_arg(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


@case((3, 9), (5, 5), (-4, 3))
def sum_range_two_args(a, b):
    s = 0.0
    for i in range(a, b):
        s = s + 1.0 / (i * i + 1)
    return s


@case((0, 20, 3), (10, -1, -3), (5, 0, -1), (0, 0, 1))
def sum_range_step(a, b, step):
    s = 0
    count = 0
    for i in range(a, b, step):
        s += i
        count += 1
    return s, count


@case((6,), (1,))
def countdown_product(n):
    p = 1
    for i in range(n, 0, -1):
        p *= i
    return p


@case((2.0,), (10.0, 1e-12), (0.25, 1e-8))
def newton_sqrt(a, tol=1e-10):
    x = a if a > 1.0 else 1.0
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


@case((0.0, 2.0), (-1.0, 3.0))
def bisection_cubic(lo, hi):
    # root of x^3 - x - 1 on [lo, hi]
    flo = lo * lo * lo - lo - 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        fm = mid * mid * mid - mid - 1.0
        if fm == 0.0:
            return mid
        if (fm < 0.0) == (flo < 0.0):
            lo = mid
            flo = fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


@case((27,), (1,), (97,), (6,))
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@case((48, 18), (17, 5), (0, 9), (100, 75))
def gcd_while(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@case((50,), (2,), (1,))
def count_primes(n):
    count = 0
    for k in range(2, n + 1):
        is_prime = True
        d = 2
        while d * d <= k:
            if k % d == 0:
                is_prime = False
                break
            d += 1
        if is_prime:
            count += 1
    return count


@case((20,), (7,))
def sum_skip_multiples(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        if i % 5 == 0:
            continue
        s += i
    return s


@case((100.0,), (0.5,))
def first_power_of_two_above(x):
    p = 1.0
    k = 0
    while True:
        if p > x:
            break
        p *= 2.0
        k += 1
    return k, p


@case((randn(0, 8), 0.5), (randn(1, 8), 5.0), (randn(2, 6, dtype=np.float32), 1.0))
def first_index_above(x, thresh):
    for i in range(len(x)):
        if x[i] > thresh:
            return i
    return -1


@case((randn(3, 5, 3),), (randn(4, 2, 4, dtype=np.float32),))
def row_norms_loop(A):
    total = 0.0
    best = -1.0
    for row in A:
        n2 = np.sum(row * row)
        total = total + n2
        best = max(best, float(n2))
    return total, best


@case((randn(5, 6, 3),), (randn(6, 4, 3, dtype=np.float32),))
def running_mean_rows(A):
    mean = np.zeros_like(A[0])
    k = 0
    for row in A:
        k += 1
        mean = mean + (row - mean) / k
    return mean


@case((randn(7, 10),), (randn(8, 1),))
def loop_over_vector(x):
    s = 0.0
    s2 = 0.0
    for v in x:
        s = s + v
        s2 = s2 + v * v
    n = len(x)
    return s / n, s2 / n - (s / n) ** 2


@case(((1.0, 2.0, 3.0, 4.0), 2.0), ((0.5, -0.5), -1.0))
def loop_over_tuple_arg(ts, x):
    acc = 0.0
    for t in ts:
        acc = acc * x + t
    return acc


@case((3,), (0,))
def loop_over_literal_tuple(n):
    acc = 0
    for w in (1, 10, 100):
        for i in range(n):
            acc += w * i
    return acc


@case((5, 4), (3, 7))
def nested_loops_break(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            if j > i:
                break
            if (i + j) % 2 == 1:
                continue
            total += i * j + 1
    return total


@case((10,), (2,))
def fib_iterative(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a


@case((6,), (12,))
def while_with_else_like_flag(n):
    # search for a divisor, record whether found
    found = False
    d = 2
    while d < n:
        if n % d == 0:
            found = True
            break
        d += 1
    return found, d


@case((randn(4, 5, 3), 3), (randn(5, 3, 4, dtype=np.float32),))
def power_iteration(A, iters=20):
    M = A.T @ A
    v = np.ones_like(A[0])
    lam = np.sqrt(np.sum(v * v))
    for _ in range(iters):
        w = M @ v
        lam = np.sqrt(np.sum(w * w))
        v = w / lam
    return lam, v


@case((randint(0, 0, 10, 12),), (randint(1, -5, 5, 9),))
def histogram_loop(labels):
    lo = 0
    mid = 0
    hi = 0
    for v in labels:
        if v < 3:
            lo += 1
        elif v < 6:
            mid += 1
        else:
            hi += 1
    return lo, mid, hi


@case((1.0, 0.1, 10), (0.5, 0.01, 100))
def euler_ode(y0, h, steps):
    # dy/dt = -2 y + t
    y = y0
    t = 0.0
    for _ in range(steps):
        y = y + h * (-2.0 * y + t)
        t = t + h
    return y, t


@case((1.0,), (0.5,))
def geometric_series_until(r):
    # sum r^k / 2^k until a term falls below 1e-12
    total = 0.0
    term = 1.0
    n = 0
    while term > 1e-12:
        total += term
        term *= r / 2.0
        n += 1
        if n >= 1000:
            break
    return total, n
