"""Reproducers of bugs the random-program fuzzing found (tests/reliability/test_fuzz.py)."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def strengthened_in_loop(a, x):
    s = a  # a Python float (a gradient's symbolic argument) ...
    for i in range(2):
        if np.sum(x) >= np.maximum(0.1, a):
            break
        s = np.tanh(a)  # ... becomes a NumPy float in a data-dependent loop, never read
    return s * 2.0 + np.sum(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a", [0.4, -0.3])
def test_weak_float_strengthened_in_a_loop(backend, a):
    """The loop carried such a variable as ``np.float64(initial value)``, which crashed
    the tracer when the initial value was symbolic (a gradient's argument)."""
    x = np.array([0.3, -0.2, 0.5])
    g = myc.grad(myc.jit(strengthened_in_loop, backend=backend), argnums=(0, 1))
    want = myc.grad(myc.jit(strengthened_in_loop, backend="interp"), argnums=(0, 1))(a, x)
    got = g(a, x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert myc.jit(strengthened_in_loop, backend=backend)(a, x) == strengthened_in_loop(a, x)


def min_then_max_in_branch(a, x):
    v0 = -x
    if (v0 @ v0) <= v0.mean():  # data-dependent: both sides are computed (if-converted)
        return np.exp(np.minimum(v0, v0[-1]))[1:].max() * 0.149
    return np.tanh(a + 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_select_between_a_0d_array_and_a_constant(backend, monkeypatch):
    """Found by the campaign (2026-11-26): the gradient's native program selects between
    the two sides' sensitivities, one a 0-d array, the other folded to a NumPy scalar
    constant; the native loop generator passed the scalar where a pointer was expected
    and LLVM's builder failed an assertion, so the signature ran on the evaluator.
    (The 'open, not reproduced' LLVM assertion of earlier campaigns.)"""
    monkeypatch.setenv("MYC_STRICT", "internal")  # an internal failure raises
    x = np.array([-1.23675702, -1.23675702, -1.23675702])
    g = myc.grad(myc.jit(min_then_max_in_branch, backend=backend), argnums=(0, 1))
    want = myc.grad(myc.jit(min_then_max_in_branch, backend="interp"), argnums=(0, 1))(1.46, x)
    got = g(1.46, x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    if backend != "interp":
        assert g.stats().evaluator_calls == 0, g.stats()


def _type_per_path(x):
    if np.log(1.0 + x * x) > 0.0:  # a tuple on one path, a float on the other: guarded
        return (x, x)
    return x


def test_a_guard_reads_numpys_arithmetic_not_the_stability_rewrite():
    """Found by the fuzz campaign (2026-11-26): the decision is taken with NumPy's
    ``log(1 + 1e-100) == 0``; the guard re-computed it as ``log1p(1e-100) = 1e-100 > 0``
    and missed on the very call it was specialized on (the evaluator answered, with a
    warning).  Guards now read values the stability rewrites leave alone."""
    import warnings

    f = myc.jit(_type_per_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)
        assert f(1e-50) == 1e-50
        assert f(0.5) == (0.5, 0.5)
        assert f(1e-50) == 1e-50
    assert f.stats().evaluator_calls == 0


def overwritten_in_a_loop(a, x):
    v0 = np.tanh(x)
    v1 = x
    for i in range(3, 0, -1):  # a loop with a data-dependent exit: a ``loop`` node
        v1 = np.sqrt(np.abs(v0))  # infinite slope at x = 0 ...
        if a > 1.0:
            if a > 2.0:
                break  # ... the loop's exit value on this side
        else:
            v1 = v0 * 1.0  # ... and overwritten on this one
    return np.sum(np.tanh(v1 * x))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a, x", [(0.0, np.zeros(4)), (0.0, np.array([0.3, -0.2, 0.0, 1.1])),
                                  (1.5, np.array([0.3, -0.2, 0.7, 1.1])),
                                  (2.5, np.array([0.3, -0.2, 0.7, 1.1]))])
def test_gradient_of_a_value_that_reaches_a_loops_state_and_its_exit(backend, a, x):
    """Found by the fuzz campaign (2026-11-26, NaN where the evaluator gave 0): the
    sqrt's value reaches both the loop's state (on one side of the ``if``) and its exit
    value (on the ``break`` side).  Its cotangent is zero unless one of those paths is
    taken, so the reverse rule runs masked to them -- but the mask kept only the
    conditions the two paths share (none), the rule ran unmasked, and
    ``0 * (1 / (2 * sqrt(0)))`` was NaN.  Masks are now disjunctions of paths."""
    g = myc.grad(myc.jit(overwritten_in_a_loop, backend=backend), argnums=(0, 1))
    want = myc.grad(myc.jit(overwritten_in_a_loop, backend="interp"), argnums=(0, 1))(a, x)
    got = g(a, x)
    assert np.all(np.isfinite(want[1])) == (a <= 1.0 or bool(np.all(x != 0)))
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-300)
    assert got[0] == want[0]
    if backend != "interp":
        assert g.stats().evaluator_calls == 0, g.stats()


def read_only_by_comparisons_in_a_loop(b, x):
    v1 = np.sqrt(np.abs(x))  # infinite slope at x = 0 ...
    for i in range(1, 5):  # a loop with a data-dependent exit: a ``loop`` node
        if not (b < 0.2):
            return (x < v1).astype(np.float64)  # ... read only by comparisons
    return np.exp((v1 < -b).astype(np.float64)) + x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("b", [0.0, 0.5])
def test_a_loop_that_never_reaches_a_cotangent_leaves_it_zero(backend, b):
    """Found by the OpenCL gradient campaign (2026-11-26): a value the loop reads only
    through comparisons has a zero cotangent; the loop's adjoint accumulated it from a
    materialized zero, so sqrt's rule before the loop ran and ``0 / (2 * sqrt(0))`` was
    NaN on cpu and opencl where the evaluator (whose zero is symbolic) gave 0.  A
    cotangent the adjoint loop never reaches now stays a symbolic zero."""
    x = np.array([0.0, 0.3, -0.2])
    g = myc.grad(myc.jit(lambda b, x: np.sum(read_only_by_comparisons_in_a_loop(b, x)),
                         backend=backend), argnums=(1,))
    (got,) = g(b, x)
    np.testing.assert_array_equal(got, np.ones(3) if b < 0.2 else np.zeros(3))
    if backend != "interp":
        assert g.stats().evaluator_calls == 0, g.stats()


def overwritten_by_a_loop_on_a_side_not_taken(a, b, x):
    v = x[np.array([0, 1, 0])]
    if b > 1.0:
        v = np.sin(v)
    else:
        t = -np.sqrt(np.abs(v - x))  # sqrt at 0: an infinite derivative
        n = 3
        while n > 0 and a < 5.0:  # data-dependent: a loop node
            t = v + 0.0  # the loop overwrites t: its first value gets zeros back
            n -= 1
        v = t
    return np.sum(v * x)


def overwritten_by_recursion_on_a_side_not_taken(a, b, x):
    v = x[np.array([0, 1, 0])]
    if b > 1.0:
        v = np.sin(v)
    else:
        def again(t, n):
            if n <= 0 or a > 5.0:  # data-dependent depth: a typed function
                return t
            return again(v + 0.0, n - 1)
        v = again(-np.sqrt(np.abs(v - x)), 3)
    return np.sum(v * x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [overwritten_by_a_loop_on_a_side_not_taken,
                                overwritten_by_recursion_on_a_side_not_taken])
@pytest.mark.parametrize("b", [1.67, 0.5])
def test_a_loop_on_a_side_not_taken_hands_back_a_masked_cotangent(backend, fn, b):
    """Found by the cpu gradient campaign (2026-11-27; present since before ba56dce): a
    loop (or recursive call) on the side of an if-converted branch that was not taken
    handed back a materialized zero for the value it overwrites, without the side's
    mask, so sqrt's rule before it computed ``0 / (2 * sqrt(0))`` = NaN on cpu and
    opencl where the evaluator gave the true gradient.  A loop's inputs now get the
    paths of its outputs' cotangents."""
    a = 0.5
    x = np.array([-7.5e-4, -1.07, -7.5e-4])
    g = myc.grad(myc.jit(fn, backend=backend), argnums=(2,))
    (got,) = g(a, b, x)
    (want,) = myc.grad(myc.jit(fn, backend="interp"), argnums=(2,))(a, b, x)
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if backend != "interp":
        assert g.stats().evaluator_calls == 0, g.stats()
