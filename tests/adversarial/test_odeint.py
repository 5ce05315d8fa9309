"""``scipy.integrate.odeint`` compiled by myc (myc/frontend/integrate_library.py).

Values against SciPy's own odeint (LSODA) at SciPy's default tolerances, on every
backend (interp, cpu, opencl where PyOpenCL is installed); gradients (through the native stepping loop, both modes) against central
differences of SciPy's odeint run at tight tolerances.  SciPy's odeint and myc's
integrator are different methods, each accurate to the tolerances asked for: the
comparisons allow for that (docs/scipy.md states the figure).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS

scipy_integrate = pytest.importorskip("scipy.integrate")
odeint = scipy_integrate.odeint

M = np.array([[-0.1, 2.0], [-2.0, -0.1]])
Y0 = np.array([2.0, 0.5])
TS = np.linspace(0.0, 1.5, 4)


def cubic(y, t, M):
    return np.dot(y ** 3, M)


def decay(t, y, k, c):  # tfirst=True, two extra arguments
    return -k * y + c * np.sin(t)


def solution(y0, M):
    return odeint(cubic, y0, TS, args=(M,))


def final_energy(y0, M):
    return np.sum(odeint(cubic, y0, TS, args=(M,))[-1] ** 2)


def tight(y0, M):
    return np.sum(odeint(cubic, y0, TS, args=(M,), rtol=1e-12, atol=1e-12)[-1] ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_match_scipy(backend):
    ref = odeint(cubic, Y0, TS, args=(M,), rtol=1e-12, atol=1e-12)
    got = myc.jit(solution, backend=backend)(Y0, M)
    assert got.shape == ref.shape == (4, 2)
    np.testing.assert_allclose(got[0], Y0, rtol=0, atol=0)  # t[0]: the initial state
    # both are accurate to about the default tolerances (1.49e-8 per step)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, solution(Y0, M), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tfirst_extra_arguments_and_loose_tolerances(backend):
    def f(y0, k):
        return odeint(decay, y0, TS, args=(k, 0.5), tfirst=True, rtol=1e-4, atol=1e-6)

    y0, k = np.array([1.0, -2.0, 0.5]), 0.7
    ref = odeint(decay, y0, TS, args=(k, 0.5), tfirst=True, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(myc.jit(f, backend=backend)(y0, k), ref, rtol=1e-3,
                               atol=1e-4)


def tight_myc(y0, M):
    return np.sum(odeint(cubic, y0, TS, args=(M,), rtol=1e-10, atol=1e-10)[-1] ** 2)


# (OpenCL's run of the taped integrator takes 26 s on two cores: the slow job's)
@pytest.mark.parametrize("backend", [pytest.param(b, marks=pytest.mark.slow)
                                     if b == "opencl" else b for b in BACKENDS])
@pytest.mark.parametrize("fn,tol", [
    (final_energy, 1e-5), pytest.param(tight_myc, 1e-6, marks=pytest.mark.slow)])
def test_gradient_matches_finite_differences_of_scipy(backend, fn, tol):
    """The gradient of the Runge-Kutta solution on its mesh: within 1e-5 of the exact
    derivative (relative to the gradient's largest entry) at SciPy's default
    tolerances, converging as they tighten."""
    g_y0, g_m = myc.grad(fn, argnums=(0, 1), backend=backend)(Y0, M)
    scale = max(1.0, np.max(np.abs(g_m)), np.max(np.abs(g_y0)))
    for idx in np.ndindex(M.shape):
        fd = _richardson(lambda e, idx=idx: tight(Y0, M + e * _unit(M.shape, idx)))
        assert abs(g_m[idx] - fd) <= tol * scale, (idx, g_m[idx], fd)
    for i in range(2):
        fd = _richardson(lambda e, i=i: tight(Y0 + e * _unit((2,), (i,)), M))
        assert abs(g_y0[i] - fd) <= tol * scale, (i, g_y0[i], fd)


def _unit(shape, idx):
    u = np.zeros(shape)
    u[idx] = 1.0
    return u


def _richardson(f, h=2e-4):
    """A central difference extrapolated to h -> 0: LSODA's own error (1e-12 here)
    swamps a difference over a smaller step."""
    d1 = (f(h) - f(-h)) / (2 * h)
    d2 = (f(h / 2) - f(-h / 2)) / h
    return (4 * d2 - d1) / 3


def test_forward_mode_matches_reverse_mode():
    t_m = np.array([[0.3, -0.2], [0.1, 0.4]])
    _, dy = myc.jvp(final_energy, (Y0, M), (np.zeros(2), t_m))
    g_m = myc.grad(final_energy, argnums=1)(Y0, M)
    np.testing.assert_allclose(dy, np.sum(g_m * t_m), rtol=1e-8)


def forced(y, t, k):
    return -k * y + np.sin(t)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ts", [
    np.array([0.0]),                          # the initial state only
    np.array([0.0, 0.3, 0.3, 1.0, 1.0]),      # repeated output times
    np.array([0.0, 1e-3, 0.5, 2.0]),          # intervals of very different lengths
    np.array([1.0, 0.5, 0.0, -0.3]),          # decreasing: integrated backwards
], ids=["one", "repeated", "uneven", "backwards"])
def test_output_times_as_scipy_reads_them(backend, ts):
    """Every output interval is integrated by the one stepping loop: one time, repeated
    times, and times running backwards give SciPy's rows."""
    y0 = np.array([2.0, 0.5])
    ref = odeint(forced, y0, ts, args=(0.7,), rtol=1e-12, atol=1e-12)
    got = myc.jit(lambda y0, ts: odeint(forced, y0, ts, args=(0.7,)), backend=backend)(
        y0, ts)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)


def all_rows(y0, M, ts, tol=1e-10):
    w = np.arange(1.0, 1.0 + 2 * ts.shape[0]).reshape(-1, 2)
    return np.sum(w * odeint(cubic, y0, ts, args=(M,), rtol=tol, atol=tol))


def test_program_size_does_not_grow_with_the_output_times():
    """One stepping loop for all output intervals (not one per interval): the gradient's
    program -- and so its compile time -- is the same for 5 output times and for 50."""
    texts = [myc.ir(myc.value_and_grad(all_rows), Y0, M, np.linspace(0.0, 1.5, n),
                    stage="optimized") for n in (5, 50)]
    assert texts[0].count("= loop(") == texts[1].count("= loop(") == 2  # taped, adjoint
    nodes = [len(re.findall(r"^\s*%\d+ = ", t, re.MULTILINE)) for t in texts]
    assert nodes[0] == nodes[1]


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_gradient_through_every_output_row(backend):
    """Rows written by the loop as each interval ends: the gradient of a loss over all of
    them against central differences of SciPy's odeint at tight tolerances."""
    ts = np.array([0.0, 0.2, 0.2, 0.7, 1.5])
    g_y0, g_m = myc.grad(all_rows, argnums=(0, 1), backend=backend)(Y0, M, ts)
    scale = max(1.0, np.max(np.abs(g_m)), np.max(np.abs(g_y0)))
    for idx in np.ndindex(M.shape):
        fd = _richardson(lambda e, idx=idx: all_rows(Y0, M + e * _unit(M.shape, idx), ts,
                                                     1e-12))
        assert abs(g_m[idx] - fd) <= 1e-6 * scale, (idx, g_m[idx], fd)
    for i in range(2):
        fd = _richardson(lambda e, i=i: all_rows(Y0 + e * _unit((2,), (i,)), M, ts, 1e-12))
        assert abs(g_y0[i] - fd) <= 1e-6 * scale, (i, g_y0[i], fd)
