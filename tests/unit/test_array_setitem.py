"""``x[index] = value`` on an array (``myc/frontend/py_library.py``, ``array_setitem``):
a new array, as JAX's ``x.at[index].set(value)``, rebinding ``x`` -- dynamic
programming tables filled in nested loops (soft-DTW, Viterbi), rows and slices set,
``x[i] += v``, integer tables.  Values against NumPy on every backend, derivatives
against finite differences (both modes); views made before the write that CPython would
show it through are refused when read, also from a loop; index arrays (which may name
an element twice: the last write wins, as NumPy's).  And the two things such tables met in long
loops: a loop body's ``np.array([a, b, c])`` of scalars under the adjoint route
(``myc/infer/adjoint.py``), and the scatter by a loop's counter, guarded by the loop's
path, run natively (``myc/backends/cpu/loopgen.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS

try:
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grads


def recurrence(x):
    y = np.zeros(x.shape[0])
    acc = 0.0
    for i in range(x.shape[0]):
        acc = 0.9 * acc + np.sin(x[i])
        y[i] = acc
    return np.sum(y ** 2)


def table(x, y):
    n, m = len(x), len(y)
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            best = min(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1])
            R[i, j] = (x[i - 1] - y[j - 1]) ** 2 + best
    return R[n, m]


def soft_table(x, y):
    """Soft-DTW: a soft minimum of three neighbours, ``np.array`` of scalars in the loop."""
    n, m = len(x), len(y)
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            z = -np.array([R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]])
            zmax = np.max(z)
            R[i, j] = (x[i - 1] - y[j - 1]) ** 2 - zmax - np.log(np.sum(np.exp(z - zmax)))
    return R[n, m]


def rows_and_slices(x):
    A = np.zeros((4, 3))
    A[0] = x[:3]                 # a row
    A[1, :] = 2.0 * x[1]         # a row, broadcast from a scalar
    A[2:, 1:] = x[:2]            # a block, broadcast along its rows
    A[-1, 0] += x[3] ** 2        # x[i] += v, a negative index
    A[:, 2] *= 3.0
    return np.sum(A * np.arange(12.0).reshape(4, 3)) + np.sum(np.tanh(A))


def backpointers(scores):
    """An int table filled in a loop (Viterbi's argmax pointers)."""
    T, K = scores.shape
    ptr = np.zeros((T, K), dtype=np.int64)
    best = scores[0]
    for t in range(1, T):
        cand = best[:, None] + scores[t][None, :]
        ptr[t] = np.argmax(cand, axis=0)
        best = np.max(cand, axis=0)
    return ptr, best


X = np.array([0.3, -1.2, 0.8, 1.7, -0.4])
Y = np.array([0.1, 0.9, -0.5, 1.1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_match_numpy(backend):
    for f, args in ((recurrence, (X,)), (table, (X, Y)), (soft_table, (X, Y)),
                    (rows_and_slices, (X,))):
        got = myc.jit(f, backend=backend)(*args)
        np.testing.assert_allclose(got, f(*args), rtol=1e-13, atol=1e-14)
    scores = np.random.default_rng(0).normal(size=(6, 3))
    ptr, best = myc.jit(backpointers, backend=backend)(scores)
    want_ptr, want_best = backpointers(scores)
    assert ptr.dtype == np.int64 and np.array_equal(ptr, want_ptr)
    np.testing.assert_allclose(best, want_best, rtol=1e-15)


@pytest.mark.parametrize("f, args", [(recurrence, (X,)), (table, (X, Y)),
                                     (soft_table, (X, Y)), (rows_and_slices, (X,))])
def test_gradients_match_finite_differences(f, args):
    check_grads(f, args)


def test_long_loops_are_loop_nodes_with_native_scatters():
    """Past the unrolling limit the tables' loops are loop nodes; their scatters by the
    counter run natively, and the gradient (the adjoint route, ``np.array`` of the
    body's scalars re-made there) matches finite differences."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=9), rng.normal(size=12)
    text = myc.ir(myc.grad(soft_table), x, y, stage="kernels")
    assert "runs natively" in text and "does not cover" not in text
    check_grads(soft_table, (x, y), modes=("rev",))
    long_x = np.linspace(-1.0, 1.0, 80)
    assert "runs natively" in myc.ir(myc.grad(recurrence), long_x, stage="kernels")
    check_grads(recurrence, (long_x,), modes=("rev",))


def _index_writes(x, y, idx, v):
    dx = x.copy()
    dx[np.arange(x.shape[0]), y] -= 1.0          # CS231n's softmax gradient
    z = x[0].copy()
    z[idx] = v                                   # idx names element 1 twice: last wins
    t = np.zeros(5, dtype=np.int64)
    t[idx] = np.arange(len(idx))                 # integers through the float path
    return dx, z, t


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_array_assignment_keeps_the_last_write(backend):
    """``x[idx] = v`` with integer index arrays, NumPy's meaning where ``idx`` repeats
    an element (the last write wins), in values and gradients (a write that lost has
    derivative zero)."""
    x = np.random.default_rng(0).standard_normal((4, 6))
    args = (x, np.array([2, 0, 1, 2]), np.array([1, 3, 1, 0]), np.array([10., 20., 30., 40.]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", myc.MycFallbackWarning)
        for got, want in zip(myc.jit(_index_writes, backend=backend)(*args),
                             _index_writes(*args), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        g = myc.grad(lambda v: np.sum(_index_writes(x, *args[1:3], v)[1] * np.arange(6.0)),
                     backend=backend)(args[3])
    np.testing.assert_array_equal(g, [0.0, 3.0, 1.0, 0.0])
    check_grads(lambda x, v: _index_writes(x, *args[1:3], v)[:2], (x, args[3]))


def _read_view_after_write(x):
    R = np.zeros((3, 3))
    row = R[0]
    R[0, 1] = x[0]
    return np.sum(row)


def _write_through_view(x):
    R = np.zeros((3, 3))
    row = R[0]
    row[1] = x[0]
    return np.sum(R)


def _mask_write_through_view(x):
    R = np.zeros((3, 3))
    row = R[0]
    row[row == 0] = x[0]
    return np.sum(R)


def _view_of_updated(x):
    R = np.zeros((3, 3))
    row = R[0]
    R += x[0]
    return np.sum(row)


def _view_before_loop(x):
    R = np.zeros((3, 3))
    row = R[0]
    for i in range(3):
        R[0, i] = x[0] * i
    return np.sum(row)


@pytest.mark.parametrize("f", [_read_view_after_write, _write_through_view,
                               _mask_write_through_view, _view_of_updated,
                               _view_before_loop])
def test_views_that_would_see_the_write_are_refused(f):
    """CPython shows the write through every view of the array; myc's arrays are
    values, so reading such a view (or the base, after a write through a view) is a
    MycValueError naming the write, never the old values."""
    with pytest.raises(myc.MycValueError, match="updated in place"):
        myc.jit(f)(X)


def _unpacked_then_updated(x, state):
    m, v = state  # two items of a tuple: no memory shared
    m *= 0.9
    a, b = np.ones_like(x), np.ones_like(x) + 1.0
    a += x
    s = np.sum(v * x) + np.sum(a)
    r0, r1 = x[0], x[1]  # rows at two int indices do not overlap
    r0 += 1.0
    return s + np.sum(m) + np.sum(b) + np.sum(r1)


def _unpacked_view_then_base(x):
    r0, _r1 = x[0], x[1]
    r0 += 1.0  # CPython writes x's first row
    return np.sum(x)


def _unpacked_overlapping_slices(x):
    r0, r1 = x[0:2], x[1:3]
    r0 += 1.0  # CPython writes the row r1 shares
    return np.sum(r1)


@pytest.mark.parametrize("f", [_unpacked_view_then_base, _unpacked_overlapping_slices])
def test_views_made_by_unpacking_are_views(f):
    """``r0, r1 = x[0], x[1]`` binds views as ``r0 = x[0]`` does: an in-place update of
    ``r0`` refuses a later read of ``x`` (or of an overlapping slice), not a silent old
    value."""
    with pytest.raises(myc.MycValueError, match="updated in place"):
        myc.jit(f)(np.arange(12.0).reshape(3, 4))


def test_items_at_different_indices_are_not_views_of_each_other():
    """``h, c = state; h *= 0.9`` then reading ``c``: the items of one tuple (or rows at
    two int indices) share no memory, so the in-place update of one leaves the other's
    read alone (it was refused as a shared array)."""
    x = np.arange(4.0)
    state = (np.linspace(0.0, 1.0, 4), np.linspace(2.0, 3.0, 4))
    want = _unpacked_then_updated(x, (state[0].copy(), state[1].copy()))
    assert myc.jit(_unpacked_then_updated)(x, state) == pytest.approx(want, rel=1e-12)
    X2 = np.arange(12.0).reshape(3, 4)
    assert myc.jit(_unpacked_then_updated)(X2, (X2.copy(), X2.copy())) == pytest.approx(
        _unpacked_then_updated(X2.copy(), (X2.copy(), X2.copy())), rel=1e-12)
    # one array passed three times, changed in place through state[0]: CPython's x shows
    # the change (a different result), so the call is refused, never answered with
    # the unshared arrays' result
    with pytest.raises(myc.MycValueError, match="shares memory with x"):
        myc.jit(_unpacked_then_updated)(X2, (X2, X2))


def test_scalars_read_before_the_write_keep_their_value():
    def f(x):
        R = np.zeros((3, 3))
        a = R[0, 1]          # a number, not a view
        R[0, 1] = x[0]
        R2 = R.copy()        # a copy
        R2[1, 1] = 5.0
        return a + np.sum(R) + np.sum(R2)

    assert myc.jit(f)(X) == f(X)


def _write_in_while(x):
    y = np.zeros(8)
    k = 0
    s = 0.0
    while s < 3.0 and k < 8:   # data-dependent exit: the write at a run-time counter
        s = s + abs(x[k % x.shape[0]])
        y[k] = s
        k += 1
    return np.sum(y ** 2)


def _write_on_a_branch(x):
    y = np.zeros(x.shape[0])
    cnt = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(3 * x.shape[0]):
        j = i % x.shape[0]
        cnt[j] += 1
        if x[j] > 0:               # an if on data: the write on one side only
            y[j] = y[j] + x[j] ** 2 * cnt[j]
        else:
            y[-1 - j] += x[j]
    return np.sum(y * np.arange(x.shape[0]))


@pytest.mark.parametrize("f", [_write_in_while, _write_on_a_branch])
def test_writes_in_data_dependent_loops_and_branches(f):
    x = np.array([0.7, -1.3, 2.1, -0.4, 1.1, 0.3])
    for backend in ("interp", "cpu"):
        assert myc.jit(f, backend=backend)(x) == pytest.approx(f(x), rel=1e-13)
    check_grads(f, (x,))


def cells(x, k):
    """One-element writes: static, negative and computed indices, read back and
    overwritten; ``k`` an int argument that only places a write (a run-time int)."""
    R = np.zeros((3, 4)) + x[0]
    R[1, 2] = x[1] * 3.0
    R[-1, -1] = np.sin(x[2])
    R[k, 0] = R[1, 2] * x[3]    # read after the write
    R[1, 2] = R[1, 2] ** 2      # overwritten: the first value's cotangent stops there
    acc = 0.0 * x[0]  # (a NumPy float from the start: the loop's types settled)
    i = 0
    while acc < 4.0 and i < 4:  # data-dependent: a loop node writing by its counter
        acc = acc + x[i] ** 2 + 0.5
        R[2, i] = acc
        i += 1
    return np.sum(R * np.arange(1.0, 13.0).reshape(3, 4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_element_writes_are_element_stores(backend):
    """``R[i, j] = v`` at a run-time place is one ``index_set`` step (a copy and a
    store), not a scatter and a select over the whole table (at a static place, a
    ``where`` by a constant mask); values and gradients (the cotangent read at the
    element and zeroed there) on every backend, the latter against central
    differences."""
    x = np.array([0.3, -1.2, 0.8, 1.7])
    text = myc.ir(cells, x, 2, stage="optimized")
    assert "index_set" in text and "getitem_grad" not in text
    assert myc.jit(cells, backend=backend)(x, 2) == pytest.approx(cells(x, 2), rel=1e-14)
    g = myc.grad(cells, backend=backend)(x, 1)
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        fd = (cells(x + e, 1) - cells(x - e, 1)) / 2e-6
        assert g[i] == pytest.approx(fd, rel=1e-6, abs=1e-6), i


def test_element_stores_in_forward_mode_and_int_tables():
    x = np.array([0.3, -1.2, 0.8, 1.7])
    t = np.array([1.0, -0.5, 0.25, 2.0])
    _, dy = myc.jvp(lambda x: cells(x, 2), (x,), (t,))
    fd = (cells(x + 1e-6 * t, 2) - cells(x - 1e-6 * t, 2)) / 2e-6
    assert dy == pytest.approx(fd, rel=1e-6)

    def counts(v):
        c = np.zeros(3, dtype=np.int64)
        for i in range(3):
            c[i] = v[i] * 10.0  # NumPy's cast into the table's dtype: truncation
        return c

    v = np.array([0.37, -0.52, 1.99])
    got = myc.jit(counts)(v)
    assert got.dtype == np.int64 and np.array_equal(got, counts(v))


# ------------------------------------------- views and in-place writes across joins
# Each of these returned the array's old values in silence: a view made by a method
# (``y.reshape``) or inside a loop, written in a branch or a loop, read after the join.


def w_reshape_method(x):
    y = x.copy()
    z = y.reshape(2, 2)
    z[0, 0] = 9.0
    return y * 1.0


def w_reshape_in_branch(x):
    y = x.copy()
    z = y.reshape(2, 2)
    if x[0] > 0:
        z[0, 0] = 9.0
    return y * 1.0


def w_np_reshape(x):
    y = x.copy()
    z = np.reshape(y, (2, 2))
    z[1, 1] = 9.0
    return y * 1.0


def w_view_made_in_loop(x):
    y = x.copy()
    for _ in range(2):
        r = y[0:2]
        y[0] = y[0] + 1.0
    return r * 1.0


def w_ravel_then_write(x):
    y = x.reshape(2, 2).copy()
    flat = y.ravel()
    y[0, 1] = 7.0
    return flat * 1.0


def w_dict_item_updated(x):
    params = {"W": x * 1.0, "b": x + 1.0}
    W = params["W"]
    params["W"] -= 0.5  # CPython: the array W names, in place
    return W * 1.0


def w_display_item_updated(x):
    W = x * 1.0
    params = {"W": W}
    params["W"] *= 2.0
    return W * 1.0


def w_list_item_updated(x):
    W, b = x * 1.0, x + 1.0
    ps = [W, b]
    ps[1] += 1.0
    return b * 1.0


def w_loop_variable_updated(x):
    W, b = x * 1.0, x + 1.0
    for p, g in zip([W, b], [x, x]):
        p -= 0.1 * g  # min-char-rnn's parameter update
    return W + b


def w_loop_variable_written(x):
    W = x * 1.0
    ws = [W]  # (a display of variables, for p in [W], writes back: test_changed_in_place)
    for p in ws:
        p[0] = 9.0
    return W * 1.0


def w_one_array_twice(x):
    y = x * 1.0
    h, c = (y, y)
    h += 1.0
    return c * 1.0


VIEW_WRITES = [w_reshape_method, w_reshape_in_branch, w_np_reshape, w_view_made_in_loop,
               w_ravel_then_write, w_dict_item_updated, w_display_item_updated,
               w_list_item_updated, w_loop_variable_updated, w_loop_variable_written,
               w_one_array_twice]


@pytest.mark.parametrize("fn", VIEW_WRITES, ids=[f.__name__ for f in VIEW_WRITES])
def test_a_view_written_through_is_refused(fn):
    with pytest.raises(myc.MycValueError, match="updated in place"):
        myc.jit(fn, backend="interp")(np.array([0.5, 1.0, 2.0, 3.0]))


def k_rebound_before_update(x):
    h = x
    for _ in range(3):
        h = h * 0.5  # a new array: the in-place update below cannot reach x
        h += 1.0
    return h + x


def k_scalar_alias(x):
    loss = np.sum(x)
    old = loss
    if x[0] > 0:
        loss += 1.0  # a float is rebound, not updated
    return old + loss


def k_copy_of_view(x):
    y = x.reshape(2, 2).copy()
    y[0, 0] = 1.0
    return y.sum() + x.sum()


def k_other_item_updated(x):
    W, b = x * 1.0, x + 1.0
    ps = [W, b]
    ps[1] += 1.0  # b's array: W is not it
    return W + ps[1]


def k_loop_variable_rebound(x):
    W, b = x * 1.0, x + 1.0
    out = []
    for p in [W, b]:
        p = p * 2.0  # a new array first
        p += 1.0
        out.append(p)
    return W + b + out[0] + out[1]


def k_two_arrays_in_a_tuple(x):
    h, c = (x * 1.0, x * 2.0)
    h += 1.0
    return h + c


def k_scalar_loop_variable(x):
    tot = 0.0
    for s in [1.0, 2.0]:
        s += 1.0
        tot += s
    return x * tot


KEPT = [k_rebound_before_update, k_scalar_alias, k_copy_of_view, k_other_item_updated,
        k_loop_variable_rebound, k_two_arrays_in_a_tuple, k_scalar_loop_variable]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", KEPT, ids=[f.__name__ for f in KEPT])
def test_values_not_shared_still_run(fn, backend):
    x = np.array([0.5, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(myc.jit(fn, backend=backend)(x), fn(x))


# ------------------------------------------- NumPy calls that write into an argument


def u_embedding_grad(W, idx, g):
    dW = np.zeros_like(W)
    np.add.at(dW, idx, g)  # repeated rows accumulate
    return np.sum(dW ** 2) + np.sum(W * dW)


def u_in_loop(W, idx, g):
    dW = np.zeros_like(W)
    for t in range(3):
        np.add.at(dW, idx[t], g[t])
    np.subtract.at(dW, (idx[0], 0), 0.5)
    return np.sum(dW * W)


def u_fill_diagonal_in_branch(x):
    R = np.zeros((3, 3))
    if x[0] > 0:
        np.fill_diagonal(R, x[1])  # (R once kept its zeros past the if, in silence)
    return R * x[0]


def u_fill_diagonal_in_loop(x):
    R = np.zeros((3, 3))
    for i in range(2):
        np.fill_diagonal(R, x[i])
    return R


def u_multiply_at(x, idx):
    np.multiply.at(x, idx, 2.0)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_ufunc_at_and_fill_diagonal_rebind_their_argument(backend):
    rng = np.random.default_rng(3)
    W, g = rng.normal(size=(6, 4)), rng.normal(size=(4, 4))
    idx = np.array([0, 2, 2, 5])
    np.testing.assert_allclose(myc.jit(u_embedding_grad, backend=backend)(W, idx, g),
                               u_embedding_grad(W, idx, g))
    i3, g3 = np.array([[0, 1], [1, 1], [5, 0]]), rng.normal(size=(3, 2, 4))
    np.testing.assert_allclose(myc.jit(u_in_loop, backend=backend)(W, i3, g3),
                               u_in_loop(W, i3, g3))
    x = np.array([0.5, 1.5, 2.0])
    for fn in (u_fill_diagonal_in_branch, u_fill_diagonal_in_loop):
        np.testing.assert_allclose(myc.jit(fn, backend=backend)(x), fn(x))
    gW, gg = myc.grad(u_embedding_grad, argnums=(0, 2), backend=backend)(W, idx, g)
    eps = 1e-6
    for arr, got, k in ((W, gW, 0), (g, gg, 2)):
        for pos in [(0, 1), (2, 3)]:
            e = np.zeros_like(arr)
            e[pos] = eps
            args_p, args_m = [W, idx, g], [W, idx, g]
            args_p[k], args_m[k] = arr + e, arr - e
            fd = (u_embedding_grad(*args_p) - u_embedding_grad(*args_m)) / (2 * eps)
            assert abs(got[pos] - fd) < 1e-6 * max(1.0, abs(fd))


def test_other_ufunc_at_is_refused_at_the_users_line():
    with pytest.raises(myc.MycSyntaxError, match="np.multiply.at is not supported") as info:
        myc.jit(u_multiply_at, backend="interp")(np.ones(3), np.array([0, 1]))
    assert info.value.loc.line == u_multiply_at.__code__.co_firstlineno + 1
