"""Data-dependent control flow compiled, not guarded: loop recognition and if-conversion.

A ``while`` whose condition depends on array data becomes one ``loop`` node of the typed
program (its body a typed graph of its own), so every call -- whatever its trip count --
runs the same compiled program.  Each test checks the structure (a loop node, no guards)
and compares with CPython over inputs that take different paths.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import myc
from myc.errors import MycError


def _program(jitted, *args):
    jitted(*args)
    sf = jitted._executable
    (prog,) = [p for p in sf.cache.values()]
    return sf, prog


def converge(x0):
    x = x0
    i = 0
    while i < 1000:
        step = 0.05 * np.sin(x)
        x = x - step
        i += 1
        if np.max(np.abs(step)) < 1e-4:
            break
    return np.sum(x), i


def newton(a):
    x = a
    n = 0
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
        n += 1
    return x, n


def first_set_inside(x, t):
    while np.sum(x) < t:
        y = x * 2.0
        x = x + 1.0
    return y


def branches_in_loop(x):
    total = 0.0
    k = 0
    while total < 50.0:
        s = np.sum(x * x)
        if s > 10.0:
            x = x * 0.5
            total = total + float(s)
        elif s > 1.0:
            x = x + 0.25
        else:
            x = x * 3.0
        total = total + 1.0
        k += 1
    return x, total, k


def nested(xs):
    out = 0.0
    for r in range(xs.shape[0]):
        v = xs[r]
        while np.max(v) > 1.0:
            v = v * 0.5
            out = out + 1.0
    return out


def scan_index(x, t):
    i = 0
    while x[i] < t:
        i += 1
    return i, x[i]


def with_return(lo, hi):
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


def test_a_data_dependent_while_is_one_loop_node_for_every_trip_count():
    f = myc.jit(converge)
    rng = np.random.default_rng(0)
    xs = [rng.uniform(lo, lo + 2.0, 256).astype(np.float32) for lo in (4.0, 5.5, 7.0)]
    sf, prog = _program(f, xs[0])
    assert not prog.guards
    assert "loop(" in myc.ir(converge, xs[0], stage="optimized")
    counts = set()
    for x in xs:
        got, want = f(x), converge(x)
        assert got[1] == want[1]
        counts.add(got[1])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert len(counts) > 1  # different trip counts, one program
    assert len(sf.cache) == 1 and not sf.misses


def test_scalar_newton_iteration_loops_natively():
    f = myc.jit(newton)
    sf, prog = _program(f, 2.0)
    assert not prog.guards
    for a in (2.0, 9.0, 1e-3, 123.0, 7.5):
        got, want = f(a), newton(a)
        assert got == want


def test_a_variable_first_set_in_the_loop():
    f = myc.jit(first_set_inside)
    x = np.zeros(3)
    sf, prog = _program(f, x, 10.0)
    assert not prog.guards
    np.testing.assert_array_equal(f(x, 10.0), first_set_inside(x, 10.0))
    np.testing.assert_array_equal(f(x + 0.5, 7.0), first_set_inside(x + 0.5, 7.0))
    with pytest.raises(UnboundLocalError):
        first_set_inside(x + 5.0, 10.0)
    with pytest.raises(MycError, match="referenced before assignment"):
        f(x + 5.0, 10.0)  # the loop does not run: as in Python, an error, not zeros


def test_branches_inside_a_loop_are_if_converted():
    f = myc.jit(branches_in_loop)
    x = np.array([0.1, 0.2, 0.3])
    sf, prog = _program(f, x)
    assert not prog.guards
    text = myc.ir(branches_in_loop, x, stage="optimized")
    assert "select(" in text and "loop(" in text
    for scale in (1.0, 0.01, 5.0, 30.0):
        got, want = f(x * scale), branches_in_loop(x * scale)
        np.testing.assert_allclose(got[0], want[0])
        assert got[1:] == pytest.approx(want[1:])


def test_a_data_dependent_loop_inside_an_unrolled_loop():
    f = myc.jit(nested)
    xs = np.array([[0.5, 3.0], [9.0, 0.1], [0.2, 0.3]])
    sf, prog = _program(f, xs)
    assert not prog.guards
    for k in (1.0, 2.0, 100.0):
        assert f(xs * k) == nested(xs * k)


def test_a_symbolic_loop_counter_indexes_arrays_and_stays_checked():
    f = myc.jit(scan_index)
    x = np.array([0.5, 1.0, 2.0, 4.0])
    for t in (0.1, 0.7, 3.0):
        got, want = f(x, t), scan_index(x, t)
        assert got[0] == want[0] and got[1] == want[1]
    with pytest.raises(IndexError):
        scan_index(x, 10.0)
    with pytest.raises(MycError):
        f(x, 10.0)  # past the end: an error, never a read out of bounds


def mixed_kinds(x):
    total = 0.0
    while total < 50.0:
        s = np.sum(x * x)
        if s > 10.0:
            total = total + s  # np.float64 on this side, a Python float on the other
        total = total + 1.0
    return total


def test_loops_the_tracer_cannot_compile_still_follow_python():
    # an early ``return`` inside the loop leaves it for another place than its exit;
    # a variable whose scalar kind depends on the path (NumPy promotes differently):
    # specialization falls back to guarding each call's path, still exact
    f = myc.jit(with_return)
    for lo, hi in ((1.0, 2.0), (1.2, 1.5), (0.0, 3.0)):
        assert f(lo, hi) == with_return(lo, hi)
    g = myc.jit(mixed_kinds)
    for k in (0.1, 1.0, 3.0):
        x = np.array([1.0, 2.0]) * k
        got, want = g(x), mixed_kinds(x)
        assert got == want and type(got) is type(want)


def test_a_branch_not_taken_may_fail_without_failing_the_call():
    def pick(x, n):
        i = 0
        acc = 0.0
        while acc < n:
            if i < 3:
                acc = acc + x[i]
            else:
                acc = acc + 1.0
            i += 1
        return acc

    f = myc.jit(pick)
    x = np.array([1.0, 2.0, 3.0])
    for n in (0.5, 4.0, 10.0):
        assert f(x, n) == pick(x, n)


def test_math_in_loops_matches_python():
    def halley(a):
        x = 1.0
        while abs(math.exp(x) - a) > 1e-12:
            e = math.exp(x)
            x = x - 2.0 * (e - a) * e / (2.0 * e * e - (e - a) * e)
        return x

    f = myc.jit(halley)
    for a in (2.0, 10.0, 0.5):
        assert f(a) == pytest.approx(halley(a), rel=1e-12)
