"""Native calls between different typed functions (``loopgen``: one LLVM function per
typed function, calling each other with frames on the machine stack): mutual recursion,
cycles of three with ints and bools in the signature, a program calling several
recursive functions, a loop calling one.  Each must run natively, agree with CPython and
the reference evaluator, differentiate like central differences, and hand anything only
Python decides (recursion deeper than the native limit, a Python int past 64 bits, a
``math`` domain error) back to the host runner."""

from __future__ import annotations

import math

import numpy as np
import pytest

import myc
from myc.lower.program import LoopRunner
from tests.adversarial.common import fd_grad
from tests.infer.test_calls import _compiled, _runners, counted0, fib, mutual


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    # the structure is read from the specialized graph, which a disk-cache hit drops
    monkeypatch.setenv("MYC_CACHE_DIR", "off")


def ping(x, k, flip):
    if x < 0.5:
        return x + k
    return pong(x - 0.75, k + 1, not flip) * (1.5 if flip else 0.5)


def pong(x, k, flip):
    if x < 0.25:
        return x * 2.0 - k
    return pang(x - 0.5, k, flip) + math.sin(x)


def pang(x, k, flip):
    if x < 0.1:
        return -x
    return ping(x - 0.25, k * 2, flip) - x


def three(x):
    """A cycle of three functions, an int and a bool widened along it."""
    return ping(x, 0, True)


def two_kinds(x):
    """The outer level calls two different recursive functions."""
    return fib(x * 0.5) + counted0(x) * 0.25 + mutual(x)


def up(x, k):
    if x < 1.0:
        return k
    return down(x - 0.5, k * 3)


def down(x, k):
    if x < 1.0:
        return -k
    return up(x - 0.5, k * 5) + 1


def big_ints(x):
    return up(x, 1)


def root_a(x):
    if x < 1.0:
        return math.sqrt(x)
    return root_b(x - 1.5) * 2.0


def root_b(x):
    if x < 1.0:
        return math.log(x)  # a domain error where x <= 0
    return root_a(x - 0.5) + 1.0


def root(x):
    return root_a(x)


def summed(x, t):
    """A data-dependent loop whose body calls a mutually recursive pair."""
    s = 0.0
    while s < t:
        s = s + mutual(x) + 1.0
        x = x + 0.5
    return s


def _is_even_ref(x, n):
    """is_even/is_odd of ``tests/infer/test_calls.py`` without recursion (CPython's
    stack is too small for the depths the native calls reach)."""
    ops = []
    even = True
    while True:
        if x < 1.0:
            v = x * n if even else -x
            break
        ops.append((even, x))
        x = x - 1.0 if even else x - 0.5
        even = not even
    for was_even, xv in reversed(ops):
        v = v * 2.0 if was_even else v + xv
    return v


CASES = [(mutual, [0.2, 4.3, 7.9, 30.25]), (three, [0.05, 0.3, 2.6, 7.75]),
         (two_kinds, [0.5, 4.5, 9.25]), (root, [0.25, 3.9, 6.75])]


@pytest.mark.parametrize("fn,xs", CASES, ids=[f.__name__ for f, _ in CASES])
def test_mutual_recursion_is_native(fn, xs):
    j = myc.jit(fn)
    prog = _compiled(j, xs[0])
    assert prog.native is not None, "the outer level calls the typed functions natively"
    runners = _runners(prog)
    assert len(runners) >= 2 and all(c.body.native is not None for c in runners)
    ev = myc.jit(fn, backend="interp")
    for x in xs:
        assert j(x) == pytest.approx(fn(x), rel=1e-12, abs=1e-12)
        assert j(x) == pytest.approx(ev(x), rel=1e-12, abs=1e-12)
    assert len(j._executable.cache) == 1 and not j._executable.misses


@pytest.mark.parametrize("fn,xs", CASES, ids=[f.__name__ for f, _ in CASES])
def test_mutual_recursion_gradient_is_native(fn, xs):
    g = myc.grad(fn)
    prog = _compiled(g, xs[1])
    assert prog.native is not None
    assert all(c.body.native is not None for c in _runners(prog))
    for x in xs[:3]:  # (past that, central differences lose the digits)
        assert g(x) == pytest.approx(fd_grad(fn, (x,), 0), rel=1e-5, abs=1e-6)


def test_deep_mutual_recursion_native_then_pythons_error():
    j = myc.jit(mutual)
    # ~8,000 alternating frames: deeper than CPython's default limit, native
    assert j(6000.25) == pytest.approx(_is_even_ref(6000.25, 3.0), rel=1e-12)
    assert j(6000.25) == pytest.approx(myc.jit(mutual, backend="interp")(6000.25),
                                       rel=1e-12)
    # past the native depth limit the host runner reruns the call and reports the depth
    with pytest.raises(myc.MycError, match="maximum recursion depth"):
        j(100000.25)
    assert j(7.9) == pytest.approx(mutual(7.9), rel=1e-12)  # and it keeps working


def test_python_int_past_64_bits_in_a_callee():
    j = myc.jit(big_ints)
    for x in (0.5, 3.0, 10.0, 40.0, 60.0):  # 40.0 passes 2**63: CPython's big int
        got, ref = j(x), big_ints(x)
        assert got == ref and type(got) is int
    assert _compiled(j, 3.0).native is not None


def test_domain_error_in_a_callee_is_pythons():
    j = myc.jit(root)
    assert j(3.9) == pytest.approx(root(3.9), rel=1e-12)
    # root_a(3.25) -> root_b(1.75) -> root_a(1.25) -> root_b(-0.25): log(-0.25)
    with pytest.raises(ValueError):
        root(3.25)
    with pytest.raises(myc.MycError, match="math domain error"):
        j(3.25)
    assert j(3.9) == pytest.approx(root(3.9), rel=1e-12)


def test_loop_calling_mutual_recursion_is_native():
    j = myc.jit(summed)
    for x, t in [(0.2, 3.0), (1.3, 40.0), (4.3, 0.5)]:
        assert j(x, t) == pytest.approx(summed(x, t), rel=1e-12)
        assert j(x, t) == pytest.approx(myc.jit(summed, backend="interp")(x, t), rel=1e-12)
    prog = _compiled(j, 0.2, 3.0)
    loops = [st.fn for st in prog.steps if isinstance(st.fn, LoopRunner)]
    assert loops and all(lp.native is not None for lp in loops)
    g = myc.grad(summed)
    assert g(1.3, 40.0) == pytest.approx(fd_grad(summed, (1.3, 40.0), 0), rel=1e-5)


def test_mutual_recursion_on_the_step_runner_agrees(monkeypatch):
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    j = myc.jit(three)
    for x in CASES[1][1]:
        assert j(x) == pytest.approx(three(x), rel=1e-12, abs=1e-12)
    assert _compiled(j, 0.3).native is None


def test_array_outer_level_calls_scalar_functions():
    def outer(v):
        s = np.sum(v * v)
        return mutual(s) * 2.0 + np.max(v)

    x = np.array([0.5, 1.25, -2.0])
    j = myc.jit(outer)
    assert j(x) == pytest.approx(outer(x), rel=1e-12)
    assert _compiled(j, x).native is not None
    g = myc.grad(outer)
    np.testing.assert_allclose(g(x), fd_grad(outer, (x,), 0), rtol=1e-5, atol=1e-7)
