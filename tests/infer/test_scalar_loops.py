"""Scalar loops over array cells, as C ported line by line writes them (Stam's stable
fluids: tests/realworld/wild8): element stores indexed by the loop's counter and by
``int()`` of a computed float, branches on a static int folded, branches on data
(``if x < 0.5: x = 0.5`` of a NumPy float) merged as selects, and a loop calling a helper
that changes its array in place.  Each compiles to loop nodes -- the program does not
grow with the trip count -- with NumPy's values and gradients by differences, on cpu
and the interpreter."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc

BACKENDS = ["cpu", "interp"]


def edges(n, mode, x):
    for i in range(1, n + 1):
        if mode == 1:
            x[0, i] = -x[1, i]
        else:
            x[0, i] = x[1, i]
        if mode == 1:
            x[n + 1, i] = -x[n, i]
        else:
            x[n + 1, i] = x[n, i]
        if mode == 2:
            x[i, 0] = -x[i, 1]
        else:
            x[i, 0] = x[i, 1]
        x[i, n + 1] = x[i, n]
    x[0, 0] = 0.5 * (x[1, 0] + x[0, 1])


def sample(n, out, src, u, v, dt):
    h = dt * n
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            x = i - h * u[i, j]
            y = j - h * v[i, j]
            if x < 0.5:
                x = 0.5
            if x > n + 0.5:
                x = n + 0.5
            if y < 0.5:
                y = 0.5
            if y > n + 0.5:
                y = n + 0.5
            i0 = int(x)
            j0 = int(y)
            s = x - i0
            t = y - j0
            out[i, j] = (1 - s) * ((1 - t) * src[i0, j0] + t * src[i0, j0 + 1]) + \
                s * ((1 - t) * src[i0 + 1, j0] + t * src[i0 + 1, j0 + 1])


def sweeps(n, mode, x, rhs):
    for _ in range(20):
        x[1:n + 1, 1:n + 1] = (rhs[1:n + 1, 1:n + 1] + 0.3 * (
            x[0:n, 1:n + 1] + x[2:n + 2, 1:n + 1] + x[1:n + 1, 0:n] + x[1:n + 1, 2:n + 2])
        ) / 2.2
        edges(n, mode, x)


def boundary(n, mode):
    def f(x):
        x = x.copy()
        edges(n, mode, x)
        return np.sum(x ** 2 * np.arange(x.size).reshape(x.shape)) / x.size
    return f


def gather(n):
    def f(src, u, v):
        out = np.zeros_like(src)
        sample(n, out, src, u, v, 0.3)
        return np.sum(out ** 2)
    return f


def relaxed(n, mode):
    def f(x, rhs):
        x = x.copy()
        sweeps(n, mode, x, rhs)
        return np.sum(x * np.cos(x))
    return f


def _grid(n, seed=0, scale=1.0):
    return scale * np.random.default_rng(seed).standard_normal((n + 2, n + 2))


def _differences(f, args, k, places, eps=1e-6):
    out = []
    for p in places:
        a = [x.copy() for x in args]
        b = [x.copy() for x in args]
        a[k][p] += eps
        b[k][p] -= eps
        out.append((f(*a) - f(*b)) / (2 * eps))
    return np.array(out)


def _typed_size(f, args) -> int:
    text = myc.ir(f, *args, stage="typed")
    assert "= loop(" in text
    return len(text.splitlines())


PLACES = [(0, 3), (1, 3), (4, 4), (5, 0), (2, 6), (6, 6)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_a_boundary_loop_with_branches_on_a_static_int(backend, mode):
    n = 40
    f, x = boundary(n, mode), _grid(n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = myc.jit(f, backend=backend)(x)
        g = myc.grad(f, backend=backend)(x)
    assert got == pytest.approx(f(x), rel=1e-13)
    np.testing.assert_allclose([g[p] for p in PLACES], _differences(f, [x], 0, PLACES),
                               rtol=1e-6, atol=1e-6)


def test_the_boundary_loop_is_a_loop_node_whatever_its_trip_count():
    sizes = [_typed_size(boundary(n, 1), (_grid(n),)) for n in (40, 80, 160)]
    assert sizes[0] == sizes[1] == sizes[2], sizes


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gather_loop_with_int_of_clamped_floats(backend):
    n = 10
    f = gather(n)
    args = (_grid(n, 1), _grid(n, 2, 3.0), _grid(n, 3, 3.0))  # traces leave the grid
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = myc.jit(f, backend=backend)(*args)
        g = myc.grad(f, argnums=(0, 1), backend=backend)(*args)
    assert got == pytest.approx(f(*args), rel=1e-13)
    for k in (0, 1):
        np.testing.assert_allclose([g[k][p] for p in PLACES],
                                   _differences(f, args, k, PLACES), rtol=1e-6, atol=1e-6)


def test_the_gather_loop_is_a_loop_node_whatever_its_trip_count():
    sizes = [_typed_size(gather(n), (_grid(n), _grid(n), _grid(n))) for n in (16, 32)]
    assert sizes[0] == sizes[1], sizes


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_calling_a_helper_that_changes_its_array_in_place(backend):
    n = 12
    f = relaxed(n, 1)
    args = (_grid(n, 4), _grid(n, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = myc.jit(f, backend=backend)(*args)
        g = myc.grad(f, argnums=(0, 1), backend=backend)(*args)
    assert got == pytest.approx(f(*args), rel=1e-12)
    for k in (0, 1):
        np.testing.assert_allclose([g[k][p] for p in PLACES],
                                   _differences(f, args, k, PLACES), rtol=1e-6, atol=1e-7)


def test_the_relaxation_does_not_grow_with_the_grid():
    sizes = [_typed_size(relaxed(n, 2), (_grid(n), _grid(n))) for n in (16, 32, 64)]
    assert sizes[0] == sizes[1] == sizes[2], sizes


# -- reads past stores: only where the places provably differ ----------------------------
def same_place_negative(x):
    x = x.copy()
    n = x.shape[0]
    for i in range(n):
        x[-1, i] = 2.0 * x[0, i]
        x[i, 1] = x[n - 1, i] + x[i, -2]  # (n - 1, i) is (-1, i); (i, -2) is (i, 1)...
    return x


def crossing(x):
    x = x.copy()
    n = x.shape[0]
    for i in range(n):
        x[i, 0] = x[i, 2] + 1.0
        x[0, i] = x[i, 0] * 3.0  # at i == 0 the element just stored
        x[i, i] = x[i, i - 1] - x[0, 0]
    return x


def offsets(x):
    x = x.copy()
    for t in range(1, x.shape[0] - 1):
        x[t + 1] = x[t] + 0.5 * x[t - 1]
        x[t - 1] = x[t + 1] - x[t]
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [same_place_negative, crossing, offsets])
@pytest.mark.parametrize("n", [5, 70])  # unrolled, a loop node
def test_reads_after_stores_see_the_stored_element_where_the_places_meet(backend, fn, n):
    x = _grid(n - 2, 6)
    np.testing.assert_array_equal(myc.jit(fn, backend=backend)(x), fn(x))


def test_a_data_branch_merging_a_python_float_with_a_numpy_float():
    def f(u):
        acc = 0.0 * u[0]  # a NumPy float from the start: only x merges kinds
        for i in range(u.shape[0]):
            x = 2.0 * u[i]
            if x < 0.5:
                x = 0.5
            acc = acc + x * int(x)
        return acc
    u = np.random.default_rng(7).standard_normal(300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = myc.jit(f)(u)
    assert got == pytest.approx(f(u), rel=1e-13)
    text = myc.ir(f, u, stage="typed")
    assert "= loop(" in text and "guard" not in text.split("graph")[0]
