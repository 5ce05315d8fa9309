"""``np.array`` of values the program computes, in native host programs and loops: the
leaves of the (nested) tuple stored into a fresh array, converted to its dtype as NumPy
converts them.  Each program must run natively, agree with NumPy and with the reference
evaluator, and differentiate like central differences."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.adversarial.common import fd_grad
from tests.cpu.test_native_matmul import _loops
from tests.cpu.test_native_program import _native_of


def stats(x):
    s = np.sum(x)
    m = np.max(x)
    return np.array([s, m, s * m])


def nested(x, y):
    return np.array([[x, y], [y * 2.0, x + 1.0]])


def mixed_kinds(x, i):
    return np.array([x, i, True])  # float64: the int and the bool converted


def ints(v):
    i = v[0]  # an np.int64: its arithmetic wraps as NumPy's does
    return np.array([[i, i + 1], [2, i * 3]])


def bools(x):
    return np.array([x > 0.0, x < 1.0, True])


def half_constant(x):
    return np.array([[x, 1.0], (2.0, 3.0)])


def float32_leaves(x):
    return np.array([np.float32(1.5) * x[0], x[1]])


def as_float32(x, y):
    return np.array((x, y), dtype=np.float32)  # Python floats rounded to float32


def stacked(x):
    return np.array([x * 2.0, x, np.sin(x)])  # arrays stacked along a new first axis


def single(x):
    return np.array([np.sum(x * x)])


def stats_loss(x):
    v = stats(x * x)
    return np.sum(v * np.array([1.0, 2.0, 3.0]))


def stacked_loss(x):
    return np.sum(np.tanh(stacked(x)) * np.array([[1.0], [2.0], [3.0]]))


def rotate(p, t):
    """A loop that rebuilds its state vector with np.array each iteration."""
    c = np.cos(0.3)
    s = np.sin(0.3)
    while p[0] * p[0] + p[1] * p[1] < t:
        p = np.array([c * p[0] - s * p[1], s * p[0] + c * p[1]]) * 1.1
    return p


def rotate_loss(p, t):
    return np.sum(rotate(p, t))


CASES = [(stats, (np.arange(4.0),)), (stats, (np.arange(4, dtype=np.float32),)),
         (nested, (1.5, 2.5)), (mixed_kinds, (1.5, 3)), (ints, (np.array([4, 1]),)),
         (bools, (0.5,)), (bools, (-0.5,)), (half_constant, (2.0,)),
         (float32_leaves, (np.array([1.0, 2.0, 3.0], np.float32),)),
         (as_float32, (1.1, 2.2)), (stacked, (np.linspace(0, 1, 4),)),
         (stacked, (np.ones((2, 3), np.float32),)), (stacked, (np.ones((0, 3)),)),
         (single, (np.ones(3),))]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_np_array_of_computed_values_is_native(fn, args):
    got = myc.jit(fn)(*args)
    for ref in (fn(*args), myc.jit(fn, backend="interp")(*args)):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-6)  # float32 sin: last bits
    if all(np.size(a) for a in args):  # an empty kernel keeps the step runner
        assert _native_of(fn, *args) is not None, "expected one native function"


def test_int64_leaves_wrap_like_numpy():
    v = np.array([2**62 + 2**61, 0])
    with np.errstate(all="ignore"):
        ref = ints(v)
    got = myc.jit(ints)(v)
    assert got.dtype == np.int64 and np.array_equal(got, ref)
    assert _native_of(ints, v) is not None


@pytest.mark.parametrize("fn,x", [(stats_loss, np.array([0.3, -1.2, 0.7])),
                                  (stacked_loss, np.array([0.2, -0.4, 0.9]))])
def test_np_array_gradient(fn, x):
    g = myc.grad(fn)
    np.testing.assert_allclose(g(x), fd_grad(fn, (x,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g(x), myc.jit(g, backend="interp")(x), rtol=1e-12)
    assert _native_of(g, x) is not None


def test_loop_building_its_state_with_np_array_is_native():
    p = np.array([0.3, 0.1])
    for t in (0.05, 4.0, 100.0):
        np.testing.assert_allclose(myc.jit(rotate)(p, t), rotate(p, t), rtol=1e-12)
        np.testing.assert_allclose(myc.jit(rotate)(p, t),
                                   myc.jit(rotate, backend="interp")(p, t), rtol=1e-12)
    loops = _loops(myc.jit(rotate), p, 4.0)
    assert loops and all(lp.native is not None for lp in loops)
    # the gradient: values only (specialization guards this loop's gradient today: the
    # cotangent of np.array's tuple changes kind between iterations)
    g = myc.grad(rotate_loss)
    np.testing.assert_allclose(g(p, 4.0), fd_grad(rotate_loss, (p, 4.0), 0), rtol=1e-5)


def _lookup(emb, idx, cols):
    # an embedding's (batch, k) lookups, by rows and by (row, column) pairs
    return np.sum(np.sin(emb[idx]) * np.arange(1.0, 5.0)) + np.sum(np.cos(emb[idx, cols]))


def test_gathers_by_2d_index_arrays_and_their_gradients_are_native():
    rs = np.random.RandomState(0)
    emb, idx, cols = rs.randn(7, 4), rs.randint(0, 7, (5, 3)), rs.randint(0, 4, (5, 3))
    assert _native_of(_lookup, emb, idx, cols) is not None
    np.testing.assert_allclose(myc.jit(_lookup)(emb, idx, cols), _lookup(emb, idx, cols),
                               rtol=1e-13)
    np.testing.assert_array_equal(myc.jit(lambda e, i: e[i])(emb, idx), emb[idx])
    g = myc.grad(_lookup)(emb, idx, cols)
    np.testing.assert_allclose(g, fd_grad(_lookup, (emb, idx, cols), 0), rtol=1e-6,
                               atol=1e-8)
    with pytest.raises(myc.MycError, match="out of bounds"):
        myc.jit(_lookup)(emb, idx + 7, cols)


def _periodic_diffusion(u, steps=40):
    for _ in range(steps):  # past the unrolling limit: a loop node
        u = u + 0.1 * (np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 2 * u) + \
            0.05 * (np.roll(u, 2, axis=0) - u)
    return np.sum(u ** 2)


def test_roll_along_any_axis_in_a_loop_is_native():
    """``np.roll`` along a later axis is two slices joined (a gather ``x[:, idx]``
    would keep the loop stepping from Python: a heat-equation stencil, wild3)."""
    u = np.random.default_rng(2).normal(size=(6, 5))
    assert myc.jit(_periodic_diffusion)(u) == pytest.approx(_periodic_diffusion(u),
                                                             rel=1e-13)
    loops = _loops(myc.grad(_periodic_diffusion), u)
    assert loops and all(lp.native is not None for lp in loops)
    np.testing.assert_allclose(myc.grad(_periodic_diffusion)(u),
                               fd_grad(_periodic_diffusion, (u,), 0), rtol=1e-6, atol=1e-8)


KNOTS = np.array([0.0, 0.25, 0.7, 1.5, 2.0])  # a module constant: not an argument


def _through_knots(x):
    i = 0
    while i < 4 and np.sum(x) < 50.0:  # data-dependent: a loop node
        x = x * 1.5 + KNOTS[i + 1]  # a constant array read at a computed int
        i += 1
    return np.sum(x ** 2)


def test_a_constant_array_read_by_a_loop_counter_is_native():
    """``t[i + 1]`` of a constant array (odeint's output times when they are a
    closure's: the first corpus's ode_net) kept the loop stepping from Python."""
    x = np.array([0.5, -0.2])
    assert myc.jit(_through_knots)(x) == pytest.approx(_through_knots(x), rel=1e-13)
    loops = _loops(myc.grad(_through_knots), x)
    assert loops and all(lp.native is not None for lp in loops)
    np.testing.assert_allclose(myc.grad(_through_knots)(x),
                               fd_grad(_through_knots, (x,), 0), rtol=1e-6, atol=1e-8)
