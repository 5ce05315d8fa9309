"""Objects changed in place where CPython would show the change somewhere myc cannot:
through a called function's parameter, through two arguments sharing memory, through
a list or dict holding one array twice, and through the right side of a tuple
assignment (``a[0], a[1] = a[1], a[0]``).  Each is refused at the line that would
read the changed value (never an old value returned silently); the same programs
without the sharing run and agree with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycValueError

LR = 0.1


def add_one(a):
    a += 1.0
    return a


def set_first(a):
    a[0] = 7.0


def set_bnd(x):
    x[0, :] = x[1, :]
    x[-1, :] = x[-2, :]


def update(params, grads):
    for p, g in zip(params, grads):
        p -= LR * g


def push(xs, v):
    xs.append(v)


def reads_after_augassign(a):
    add_one(a)
    return a * 2


def reads_after_item_write(a):
    b = a.copy()
    set_first(b)
    return b


def stam_boundary(x):
    y = x * 0.5
    set_bnd(y)
    return y


def sgd_by_call(W, b):
    params = [W * 1.0, b * 1.0]
    update(params, [W, b])
    return params[0].sum() + params[1].sum()


def list_by_call(x):
    xs = [x]
    push(xs, x * 2)
    return len(xs) * x


def view_passed(u):
    y = u * 1.0
    set_first(y[1])
    return y


def alias_then_call(x):
    y = x * 1.0
    z = y
    set_first(y)
    return z


def nested_writer(x):
    def inner(u):
        u[0] = 5.0
    y = x * 1.0
    inner(y)
    return y


REFUSED = [
    (sgd_by_call, "'params' is read after the call of update"),
    (view_passed, "'y' is read after the call of set_first"),
    (alias_then_call, "'z' is read after the call of set_first"),
    (nested_writer, "'y' is read after the call of inner"),
]


@pytest.mark.parametrize("fn,match", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_argument_changed_by_a_call_is_refused_where_read(fn, match):
    x = np.arange(6.0).reshape(3, 2)
    args = (x, x[0]) if fn is sgd_by_call else (x,)
    with pytest.raises(MycValueError, match=match) as info:
        myc.jit(fn)(*args)
    assert info.value.loc is not None and info.value.loc.line > 0


def relax(x):
    for _ in range(3):
        set_first(x)  # the loop changes x only through the call


def calls_relax(a):
    y = a * 1.0
    relax(y)
    return y


def add_twice(a):
    a += 1.0
    a += 2.0


def calls_add_twice(a):
    y = a * 1.0
    add_twice(y)
    return y


def fill_while(x, n):
    i = 0
    while i < n:
        x[i] = i * 2.0
        i += 1


def calls_fill_while(a):
    y = a * 1.0
    fill_while(y, 2)
    return y


# a variable passed to a function that changes it in place gets the changed value, as
# CPython's shows it (the callee is lowered once more, returning its final parameters)
WRITTEN_BACK = [reads_after_augassign, reads_after_item_write, stam_boundary, list_by_call,
                calls_relax, calls_add_twice, calls_fill_while]


@pytest.mark.parametrize("fn", WRITTEN_BACK, ids=[f.__name__ for f in WRITTEN_BACK])
@pytest.mark.parametrize("backend", ["interp", "cpu", "opencl"])
def test_argument_changed_by_a_call_is_written_back(fn, backend):
    x = np.arange(6.0).reshape(3, 2) + 0.5
    want = fn(x.copy())
    before = x.copy()
    got = myc.jit(fn, backend=backend)(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(x, before)  # the caller's own argument is not written


def lin_solve(b, x, x0, a, c):
    for _ in range(4):
        x[1:-1, 1:-1] = (x0[1:-1, 1:-1] + a * (x[:-2, 1:-1] + x[2:, 1:-1] +
                                                 x[1:-1, :-2] + x[1:-1, 2:])) / c
        set_bnd_signed(b, x)


def set_bnd_signed(b, x):
    x[0, :] = -x[1, :] if b == 1 else x[1, :]
    x[-1, :] = -x[-2, :] if b == 1 else x[-2, :]
    x[:, 0] = -x[:, 1] if b == 2 else x[:, 1]
    x[:, -1] = -x[:, -2] if b == 2 else x[:, -2]


def diffuse(b, x, x0, diff, dt):
    a = dt * diff * 14 * 14
    lin_solve(b, x, x0, a, 1 + 4 * a)


def fluid_step(d0):
    """Stam's stable fluids, as NumPy code writes it: every helper changes its array
    argument in place (two calls deep) and returns nothing."""
    d = np.zeros_like(d0)
    diffuse(1, d, d0, 0.1, 0.1)
    return np.sum(d ** 2)


def test_stable_fluids_style_helpers_run_unchanged_with_gradients():
    rng = np.random.default_rng(0)
    d0 = rng.random((16, 16))
    np.testing.assert_allclose(myc.jit(fluid_step)(d0), fluid_step(d0.copy()), rtol=1e-12)
    g = myc.grad(fluid_step)(d0)
    eps = 1e-6
    for i in ((0, 0), (3, 7), (15, 2)):
        dp, dm = d0.copy(), d0.copy()
        dp[i] += eps
        dm[i] -= eps
        fd = (fluid_step(dp) - fluid_step(dm)) / (2 * eps)
        np.testing.assert_allclose(g[i], fd, rtol=1e-6, atol=1e-9)


def copies_before_writing(a):
    b = a.copy()
    b[0] = 1.0
    c = a * 2
    c += 1
    return b + c


def calls_copier(a):
    r = copies_before_writing(a)
    return r + a


def accumulate(s, x):
    for i in range(3):
        s += x[i]
    return s


def number_argument(x):
    s = 0.0
    t = accumulate(s, x)
    return t + s


def rebinds_result(x):
    y = x * 1.0
    y = add_one(y)
    return y + x


def boundary_returned(x):
    y = x * 0.5
    y = set_bnd_returning(y)
    return y


def set_bnd_returning(x):
    x[0, :] = x[1, :]
    return x


ACCEPTED = [calls_copier, number_argument, rebinds_result, boundary_returned]


@pytest.mark.parametrize("fn", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_calls_that_change_nothing_the_caller_reads_run(fn, backend):
    x = np.arange(6.0).reshape(3, 2) + 0.5
    arg = x[:, 0].copy() if fn is number_argument else x
    want = fn(arg.copy())
    got = myc.jit(fn, backend=backend)(arg.copy())
    np.testing.assert_allclose(np.asarray(got), want)


def grad_through_call(x):
    y = x * 1.0
    y = add_one(y)
    return np.sum(y * x)


def test_gradient_through_a_call_that_changes_a_temporary():
    x = np.linspace(0.1, 0.9, 6)
    g = myc.grad(grad_through_call)(x)
    np.testing.assert_allclose(g, 2 * x + 1.0, rtol=1e-12)


# -- arguments sharing memory --------------------------------------------------------

def two_args(a, b):
    a += 1.0
    return a + b


def list_arg(ws):
    ws[0] += 1.0
    return ws[0] + ws[1]


def view_arg(a, b):
    a[0] = 5.0
    return b * 1.0


def test_arguments_sharing_memory_with_a_changed_one_are_refused():
    W = np.arange(6.0).reshape(3, 2)
    for fn, args, match in ((two_args, (W, W), "passed as a shares memory with b"),
                            (list_arg, ([W, W],), "ws\\[0\\] shares memory with ws\\[1\\]"),
                            (view_arg, (W, W[::2]), "shares memory with b")):
        before = W.copy()
        with pytest.raises(MycValueError, match=match):
            myc.jit(fn)(*args)
        np.testing.assert_array_equal(W, before)  # nothing written


def test_distinct_arguments_of_a_changing_function_run():
    W = np.arange(6.0).reshape(3, 2)
    V = W.copy()
    f = myc.jit(two_args)
    np.testing.assert_allclose(f(W, V), (W + 1.0) + V)
    np.testing.assert_array_equal(W, V)  # the argument is not written
    np.testing.assert_allclose(myc.jit(list_arg)([W, V]), (W + 1.0) + V)
    np.testing.assert_allclose(myc.jit(view_arg)(W, V[::2]), V[::2])


# -- one array held twice in a list or dict ------------------------------------------

def list_twice(W):
    acc = [W, W]
    acc[0] += 1.0
    return acc[0] + acc[1]


def dict_twice(W):
    d = {"a": W, "b": W}
    d["a"] += 1.0
    return d["a"] + d["b"]


def list_view(W):
    acc = [W, W.T]
    acc[0] += 1.0
    return acc[1]


def list_distinct(W):
    acc = [W, W.copy()]
    acc[0] += 1.0
    return acc[0] * acc[1]


def dict_distinct(W, b):
    d = {"W": W, "b": b}
    d["W"] -= 0.5
    return d["W"].sum() + d["b"].sum()


@pytest.mark.parametrize("fn,key", [(list_twice, "\\[1\\]"), (dict_twice, "\\['b'\\]"),
                                    (list_view, "\\[1\\]")])
def test_array_held_twice_changed_through_one_item_is_refused(fn, key):
    W = np.arange(6.0).reshape(3, 2)
    with pytest.raises(MycValueError, match=f"also holds at {key}"):
        myc.jit(fn)(W)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_distinct_items_changed_in_place_run(backend):
    W = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(myc.jit(list_distinct, backend=backend)(W.copy()),
                               list_distinct(W.copy()))
    b = np.ones(2)
    np.testing.assert_allclose(myc.jit(dict_distinct, backend=backend)(W.copy(), b),
                               dict_distinct(W.copy(), b))


# -- tuple assignment whose right side views what the left side writes ----------------

def swap_rows(a):
    a = a.copy()
    a[0], a[1] = a[1], a[0]
    return a


def swap_pivot(A, i, p):
    A = A.copy()
    A[i], A[p] = A[p], A[i]
    return A


def swap_elements(v):
    v = v.copy()
    v[0], v[2] = v[2], v[0]
    return v


def swap_copies(a):
    a = a.copy()
    a[0], a[1] = a[1].copy(), a[0].copy()
    return a


def swap_fancy(a):
    a = a.copy()
    a[[0, 1]] = a[[1, 0]]
    return a


def test_tuple_assignment_through_views_of_the_target_is_refused():
    a = np.arange(6.0).reshape(3, 2)
    with pytest.raises(MycValueError, match=r"a\[\[0, 1\]\] = a\[\[1, 0\]\]"):
        myc.jit(swap_rows)(a)
    with pytest.raises(MycValueError, match="not a swap"):
        myc.jit(swap_pivot)(a, 0, 2)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_real_swaps_run(backend):
    a = np.arange(6.0).reshape(3, 2)
    v = np.arange(4.0)
    np.testing.assert_allclose(myc.jit(swap_elements, backend=backend)(v), swap_elements(v))
    np.testing.assert_allclose(myc.jit(swap_copies, backend=backend)(a), swap_copies(a))
    np.testing.assert_allclose(myc.jit(swap_fancy, backend=backend)(a), swap_fancy(a))


SCALE = 2.0


def scale_in_place(x):
    x *= SCALE


def uses_scale(x):
    y = x * 1.0
    scale_in_place(y)
    return y


def test_written_back_callee_reads_a_rebound_global_again():
    global SCALE
    x = np.arange(3.0)
    f = myc.jit(uses_scale)
    try:
        np.testing.assert_allclose(f(x), 2.0 * x)
        SCALE = 3.0
        np.testing.assert_allclose(f(x), 3.0 * x)
    finally:
        SCALE = 2.0


def loss_changing_argument(a, b):
    a *= 2.0
    return np.sum(a * b)


def test_gradient_of_a_function_changing_an_argument_shared_with_another_is_refused():
    W = np.linspace(0.1, 0.9, 4)
    with pytest.raises(MycValueError, match="shares memory with b"):
        myc.grad(loss_changing_argument)(W, W)
    V = W.copy()
    np.testing.assert_allclose(myc.grad(loss_changing_argument)(W, V), 2.0 * V)
    # (vjp and jvp bind their primals the same way: they gave the unshared result)
    with pytest.raises(MycValueError, match="shares memory with b"):
        myc.vjp(loss_changing_argument, W, W)
    with pytest.raises(MycValueError, match="shares memory with b"):
        myc.jvp(loss_changing_argument, (W, W), (W, W))
    out, pull = myc.vjp(loss_changing_argument, W, V)
    np.testing.assert_allclose(pull(1.0)[0], 2.0 * V)


# -- calls through function values (an argument, a method): the callee is known only when
# the program specializes, so reads of what it changed are refused then ----------------

def pure_step(a):
    return a + 1.0


class Stepper:
    def step(self, a):
        a[0] = 7.0

    def __call__(self, a):
        a += 1.0


class PureStepper:
    def step(self, a):
        return a[0] * 2.0


def through_argument(x, f):
    y = x.copy()
    f(y)
    return y


def through_method(x, m):
    y = x.copy()
    m.step(y)
    return y


def through_keyword(x, f):
    y = x.copy()
    f(a=y)
    return y


def view_through_argument(x, f):
    y = x.copy()
    v = y[1:]
    f(y)
    return v


def apply_to(f, x):
    f(x)


def apply_twice(f, x):
    apply_to(f, x)
    apply_to(f, x)


def passed_on(x):
    y = x.copy()
    apply_to(add_one, y)
    return y


def passed_on_twice(x):
    y = x.copy()
    apply_twice(set_first, y)
    return y


def loop_reads_before_the_call(x, f):
    y = x.copy()
    s = 0.0
    for _ in range(3):
        s = s + y[0]
        f(y)
    return s


def loop_then_read(x, f):
    y = x.copy()
    for _ in range(3):
        f(y)
    return y


def branch_then_read(x, f, c):
    y = x.copy()
    if c > 0:
        f(y)
    return y


def number_through_argument(x, f):
    t = 2.0
    f(t)
    return x * t


def other_argument_changed(x, f):
    y = x.copy()
    z = x.copy()
    f(z, y)
    return y


def add_into(a, b):
    a += b


THROUGH_VALUES = [
    (through_argument, (add_one,), "'y' may be changed in place by the call at line"),
    (through_argument, (Stepper(),), "__call__\\(\\) changes its argument 'a'"),
    (through_method, (Stepper(),), "step\\(\\) changes its argument 'a' in place "
                                   "\\(a\\[0\\] = \\.\\.\\."),
    (through_keyword, (add_one,), "'y' may be changed"),
    (view_through_argument, (add_one,), "'v' may be changed"),
    (passed_on, (), "the call of apply_to\\(\\) \\(line \\d+\\) passes its argument 'x'"),
    (passed_on_twice, (), "the call of apply_twice\\(\\)"),
    (loop_reads_before_the_call, (add_one,), "'y' may be changed"),
    (loop_then_read, (set_first,), "'y' may be changed"),
    (branch_then_read, (add_one, 1.0), "'y' may be changed"),
]


@pytest.mark.parametrize("fn,extra,match", THROUGH_VALUES,
                         ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(THROUGH_VALUES)])
@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_read_after_a_call_through_a_value_that_changed_it_is_refused(fn, extra, match,
                                                                       backend):
    x = np.arange(3.0)
    with pytest.raises(MycValueError, match=match):
        myc.jit(fn, backend=backend)(x, *extra)


THROUGH_PURE = [(through_argument, (pure_step,)), (through_method, (PureStepper(),)),
                (loop_reads_before_the_call, (pure_step,)), (loop_then_read, (pure_step,)),
                (branch_then_read, (pure_step, 1.0)), (branch_then_read, (add_one, -1.0)),
                (number_through_argument, (add_one,)), (other_argument_changed, (add_into,))]


@pytest.mark.parametrize("fn,extra", THROUGH_PURE,
                         ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(THROUGH_PURE)])
@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_calls_through_values_that_change_nothing_read_run(fn, extra, backend):
    x = np.arange(3.0)
    np.testing.assert_allclose(myc.jit(fn, backend=backend)(x, *extra), fn(x, *extra))


def sum_after_pure_call(x, f):
    y = x * 1.0
    f(y)
    return np.sum(y ** 2)


def test_gradient_flows_through_a_call_through_a_value_that_changes_nothing():
    x = np.arange(3.0)
    np.testing.assert_allclose(myc.grad(sum_after_pure_call)(x, pure_step), 2 * x)
    with pytest.raises(MycValueError, match="add_one\\(\\) changes its argument 'a'"):
        myc.grad(sum_after_pure_call)(x, add_one)


def set_in_branch(x, c):
    y = x.copy()
    if c > 0:
        set_first(y)
    return y


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_argument_written_back_inside_a_branch_is_seen_after_it(backend):
    # (the join after an ``if`` kept the value from before the call: silently old)
    x = np.arange(3.0)
    for c in (1.0, -1.0):
        np.testing.assert_allclose(myc.jit(set_in_branch, backend=backend)(x, c),
                                   set_in_branch(x, c))


# -- a function permuting its parameters (Stam's ``x0, x = x, x0``) between in-place
# changes: the caller's objects follow the names, and each is written back ------------

def add_source(x, s):
    x[0:2] += s[0:2]


def relax_from(x, x0):
    x[1] = x0[1] * 2.0


def dens_step(x, x0):
    add_source(x, x0)
    x0, x = x, x0
    relax_from(x, x0)
    x0, x = x, x0
    relax_from(x, x0)


def swapper(a, b):
    a += 1.0
    a, b = b, a
    b *= 2.0  # the caller's first argument again
    a[0] = 5.0  # the caller's second


def swap_caller(x, y):
    p = x.copy()
    q = y.copy()
    dens_step(p, q)
    swapper(p, q)
    return p, q


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_parameters_permuted_between_in_place_changes_are_written_back(backend):
    x, y = np.arange(3.0), np.arange(3.0) + 10.0
    got = myc.jit(swap_caller, backend=backend)(x, y)
    for g, r in zip(got, swap_caller(x, y), strict=True):
        np.testing.assert_array_equal(g, r)


def swap_caller_sum(x, y):
    p, q = swap_caller(x, y)
    return np.sum(p * q)


def test_gradient_through_parameters_permuted_between_in_place_changes():
    x, y = np.arange(3.0) + 0.5, np.arange(3.0) + 10.0
    g = myc.grad(swap_caller_sum, argnums=(0, 1))(x, y)
    eps = 1e-6
    for k in range(2):
        for i in range(3):
            d = np.zeros(3)
            d[i] = eps
            a = [x, y]
            b = [x, y]
            a[k] = a[k] + d
            b[k] = b[k] - d
            fd = (swap_caller_sum(*a) - swap_caller_sum(*b)) / (2 * eps)
            assert abs(g[k][i] - fd) < 1e-6 * max(1.0, abs(fd))


# -- items whose origin the block cannot see (appended, made by a comprehension, by
# list(), in a loop), updated in place: what the container may hold is followed through
# loops and branches, and an item read from the container and stored again is that item

def appended_twice(W):
    acc = [W * 1.0]
    acc.append(acc[0])
    acc[0] += 1.0
    return acc[1]


def stored_again(W):
    d = {"a": W * 1.0}
    d["b"] = d["a"]
    d["a"] += 1.0
    return d["b"]


def rows_by_comprehension(W):
    A = W * 1.0
    rows = [A[i] for i in range(2)]
    rows[0] += 100.0
    return A


def rows_appended_in_loop(W):
    A = W * 1.0
    rows = []
    for i in range(2):
        rows.append(A[i])
    rows[0] += 100.0
    return A


def rows_by_list(W):
    A = W * 1.0
    rows = list(A)
    rows[0] += 100.0
    return A


def input_rows_by_comprehension(W):
    rows = [W[i] for i in range(2)]
    rows[0] += 100.0
    return W * 1.0


@pytest.mark.parametrize("fn", [appended_twice, stored_again, rows_by_comprehension,
                                rows_appended_in_loop, rows_by_list,
                                input_rows_by_comprehension])
def test_item_of_unseen_origin_updated_in_place_is_refused_where_it_shows(fn):
    W = np.arange(6.0).reshape(3, 2)
    with pytest.raises(MycValueError, match="was updated in place"):
        myc.jit(fn)(W)


def fresh_items_accumulated(W):
    grads = [np.zeros_like(W) for _ in range(2)]
    for i in range(3):
        grads[0] += W * i
        grads[1] += 1.0
    return W - grads[0] + grads[1]


def copies_appended(W):
    rows = []
    for i in range(2):
        # (``W[i].copy()`` is refused here: ``.copy()`` of an item of an argument may
        # be a method of an object, whose result may be anything it holds)
        rows.append(np.copy(W[i]))
    rows[0] += 100.0
    return W * 1.0 + rows[0][0]


@pytest.mark.parametrize("fn", [fresh_items_accumulated, copies_appended])
@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_items_not_shared_updated_in_place_run(fn, backend):
    W = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(myc.jit(fn, backend=backend)(W.copy()), fn(W.copy()))


def change_four(u, v, p, d):
    u += 1.0
    v *= 2.0
    p[0] = 3.0
    d[1] = 4.0


def vel_step(u, v, u0, v0):
    # (Stam's vel_step: two pairs swapped around a helper changing all four in place)
    u0, u = u, u0
    v0, v = v, v0
    change_four(u, v, u0, v0)
    u0, u = u, u0
    v0, v = v, v0
    set_first(u)
    relax_from(v, u0)


def vel_caller(a, b, c, d):
    a, b, c, d = a.copy(), b.copy(), c.copy(), d.copy()
    vel_step(a, b, c, d)
    return a, b, c, d


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_items_of_one_written_back_call_are_distinct_objects(backend):
    # (after a helper changing four arguments, its written-back values were taken as
    # views of one tuple: reading one after changing another was refused)
    args = [np.arange(3.0) + k for k in (0.0, 10.0, 20.0, 30.0)]
    got = myc.jit(vel_caller, backend=backend)(*args)
    for g, r in zip(got, vel_caller(*args), strict=True):
        np.testing.assert_array_equal(g, r)


def lose_first(a, b):
    a[0] = 1.0
    a = b  # not a permutation: the caller's first object is no longer reachable here
    a[1] = 2.0


def lose_caller(x, y):
    p = x.copy()
    q = y.copy()
    lose_first(p, q)
    return p, q


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_a_parameter_rebound_to_another_is_not_a_permutation(backend):
    # (``a = b`` is not followed as a swap: the caller's ``p`` cannot be written back
    # from any name, so reading it is refused, as for any rebound parameter)
    x, y = np.arange(3.0), np.arange(3.0) + 10.0
    with pytest.raises(MycValueError, match="changes its argument 'a' in place"):
        myc.jit(lose_caller, backend=backend)(x, y)


# ---------------------------------------------------------------- a loop over named arrays
# ``for p in [dW, db]: np.clip(p, -5, 5, out=p)`` (min-char-rnn), ``for p, m in zip([W,
# b], [mW, mb]): m += g * g; p -= ...`` (its Adagrad step): CPython's updates reach the
# variables listed; myc unrolls the loop and writes each back after its step.


def clip_listed(a):
    dW = a * 4.0
    db = a[:2] * -3.0
    for dparam in [dW, db]:
        np.clip(dparam, -5, 5, out=dparam)
    return dW, db


def adagrad_listed(W, b):
    mW, mb = np.zeros_like(W), np.zeros_like(b)
    dW, db = W * 0.5, b - 1.0
    W, b = W * 1.0, b * 1.0
    for param, dparam, mem in zip([W, b], [dW, db], [mW, mb]):
        mem += dparam * dparam
        param += -0.1 * dparam / np.sqrt(mem + 1e-8)
    return W, b, mW, mb


def listed_through_a_call(a):
    x, y = a * 2.0, a + 1.0
    for v in (x, y):
        set_first(v)
    return x, y


def listed_item_writes(a):
    x, y = a * 2.0, a + 1.0
    for v in [x, y]:
        v[...] = v * v
        v[0] = -1.0
    return x, y


def listed_numbers(a):
    s, t = 1.0, 2.0
    for v in [s, t]:
        v += 10.0  # a number is rebound: s and t keep their values
    return a * s + t


def listed_arguments(x, y):
    for v in [x, y]:
        v *= 3.0
    return x + y


NAMED_LOOPS = [clip_listed, listed_through_a_call, listed_item_writes, listed_numbers]


@pytest.mark.parametrize("fn", NAMED_LOOPS, ids=[f.__name__ for f in NAMED_LOOPS])
@pytest.mark.parametrize("backend", ["interp", "cpu", "opencl"])
def test_loop_over_named_arrays_updates_them(fn, backend):
    x = np.linspace(-2.0, 2.0, 6)
    want = fn(x.copy())
    before = x.copy()
    got = myc.jit(fn, backend=backend)(x)
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_adagrad_step_over_zipped_lists_matches_numpy(backend):
    W, b = np.arange(6.0).reshape(2, 3) / 7.0, np.array([0.3, -0.2, 0.9])
    want = adagrad_listed(W.copy(), b.copy())
    got = myc.jit(adagrad_listed, backend=backend)(W, b)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    # listed parameters of the program itself: its caller's arrays stay unchanged
    x, y = np.ones(3), np.arange(3.0)
    np.testing.assert_array_equal(myc.jit(listed_arguments, backend=backend)(x, y),
                                  listed_arguments(x.copy(), y.copy()))
    np.testing.assert_array_equal(x, np.ones(3))


def test_gradient_through_an_in_place_clip_over_a_list():
    def loss(a):
        dW, db = clip_listed(a)
        return np.sum(dW ** 2) + np.sum(db ** 3)

    x = np.linspace(-2.0, 2.0, 6) + 0.01  # no element at a clip bound
    g = myc.grad(loss)(x)
    eps, fd = 1e-6, np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        fd[i] = (loss(x + e) - loss(x - e)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def listed_then_read_inside(a):
    x, y = a * 2.0, a + 1.0
    s = 0.0
    for v in [x, y]:
        v += 1.0
        s = s + np.sum(x)  # CPython's x is already changed in the first step
    return s


def listed_and_aliased(a):
    x = a * 2.0
    alias = x
    for v in [x]:
        v += 1.0
    return alias  # CPython: the same object as x, changed


def listed_and_rebound(a):
    x, y = a * 2.0, a + 1.0
    for v in [x, y]:
        v += 1.0
        v = v * 2.0  # rebinding: not a loop over named arrays; the old rule holds
    return x


def listed_view_and_base(a):
    x = a * 1.0
    y = x[:2]
    for v in [x, y]:  # CPython: y's elements get both updates
        v += 1.0
    return y


def listed_base_after_view(a):
    x = a * 1.0
    y = x[:2]
    for v in [y, x]:
        v += 1.0
    return x


def listed_dicts(a):
    d1, d2 = {"w": a}, {"w": a * 2.0}
    for d in [d1, d2]:
        d["w"] = d["w"] + 1.0
    return d1["w"] + d2["w"]


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_loop_over_named_dicts_updates_them(backend):
    a = np.arange(3.0)
    np.testing.assert_array_equal(myc.jit(listed_dicts, backend=backend)(a),
                                  listed_dicts(a.copy()))


@pytest.mark.parametrize("fn", [listed_then_read_inside, listed_and_aliased,
                                listed_and_rebound, listed_view_and_base,
                                listed_base_after_view],
                         ids=["read_inside", "aliased", "rebound", "view_and_base",
                              "base_after_view"])
def test_loop_over_named_arrays_refuses_what_it_cannot_show(fn):
    with pytest.raises(MycValueError, match="in place|mutated|changes"):
        myc.jit(fn)(np.linspace(-2.0, 2.0, 6))


G_STATE = np.zeros(3)
G_COUNT = 3


def bump(n):
    n += 1
    return n


def changes_a_global(a):
    set_first(G_STATE)
    return G_STATE + a


def nested_changes_enclosing(a):
    c = a * 1.0

    def k():
        set_first(c)

    k()
    return c


def lambda_out_enclosing(a):
    c = a * 1.0
    k = lambda: np.add(c, 1.0, out=c)  # noqa: E731
    k()
    return c


@pytest.mark.parametrize("fn", [changes_a_global, nested_changes_enclosing,
                                lambda_out_enclosing])
def test_call_changing_a_global_or_enclosing_array_is_refused(fn):
    with pytest.raises(myc.MycSyntaxError, match="changes it in place"):
        myc.jit(fn)(np.arange(3.0))
    np.testing.assert_array_equal(G_STATE, np.zeros(3))


def test_call_bumping_a_global_number_runs():
    def f(a):
        bump(G_COUNT)
        return a * G_COUNT

    np.testing.assert_array_equal(myc.jit(f)(np.arange(3.0)), np.arange(3.0) * 3)


def out_in_loops(a, n):
    c = a * 1.0
    for _ in range(3):
        np.add(c, 1.0, out=c)
    i = 0
    while i < n:
        np.multiply(c, 2.0, out=c)
        np.clip(c, None, 50.0, out=c)
        i += 1
    if n > 2:
        np.subtract(c, 0.5, out=c)
    return c


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_out_inside_loops_and_branches(backend):
    a = np.arange(3.0)
    for n in (1, 7):
        np.testing.assert_array_equal(myc.jit(out_in_loops, backend=backend)(a, n),
                                      out_in_loops(a.copy(), n))


# ---------------------------------------------------------------- more calls through values


class Stepper:
    def step(self, y):
        y += 1.0


STEPPER = Stepper()


def bumps(y):
    y += 1.0


def global_object_in_a_loop(a):
    y = a * 1.0
    s = 0.0
    for _ in range(3):
        s = s + np.sum(y)  # CPython: y changed by the previous iteration's call
        STEPPER.step(y)
    return s


def star_through_a_tuple(f, a):
    y = a * 1.0
    args = (y,)
    f(*args)
    return y


def star_through_a_display(f, a):
    y = a * 1.0
    f(*[y])
    return y


def star_in_a_loop(f, a):
    y = a * 1.0
    s = 0.0
    for _ in range(3):
        s = s + np.sum(y)
        f(*(y,))
    return s


@pytest.mark.parametrize("fn,extra", [(global_object_in_a_loop, ()),
                                      (star_through_a_tuple, (bumps,)),
                                      (star_through_a_display, (bumps,)),
                                      (star_in_a_loop, (bumps,))],
                         ids=["global_object_loop", "star_tuple", "star_display",
                              "star_loop"])
def test_changes_through_star_calls_and_global_objects_are_refused(fn, extra):
    with pytest.raises(MycValueError, match="may be changed in place by the call"):
        myc.jit(fn)(*extra, np.arange(3.0))


def scaled(y, c):
    return y * c


def star_pure(f, a):
    y = a * 1.0
    args = (y, 2.0)
    return f(*args) + y


def test_star_calls_through_values_that_change_nothing_run():
    a = np.arange(3.0)
    np.testing.assert_array_equal(myc.jit(star_pure)(scaled, a), star_pure(scaled, a))


# ---------------------------------------------------------------- a list's arrays updated
# through a loop variable, then the list read (these returned the old arrays silently)


def list_read_after_aug(a):
    grads = [a * 3.0, a * -4.0]
    for g in grads:
        g -= 1.0
    return grads[0] + grads[1]


def list_read_after_out(a):
    grads = [a * 3.0, a * -4.0]
    for g in grads:
        np.clip(g, -1, 1, out=g)
    return grads[0] + grads[1]


def list_read_after_call(a):
    grads = [a * 3.0, a * -4.0]
    for g in grads:
        set_first(g)
    return grads[0]


def dict_values_read_after_aug(a):
    d = {"w": a * 3.0, "b": a * -4.0}
    for v in d.values():
        v -= 1.0
    return d["w"]


@pytest.mark.parametrize("fn", [list_read_after_aug, list_read_after_out,
                                list_read_after_call, dict_values_read_after_aug],
                         ids=["aug", "out", "call", "dict_values"])
def test_container_read_after_its_arrays_changed_through_a_loop_variable_is_refused(fn):
    with pytest.raises(MycValueError, match="a loop variable over a sequence holding it"):
        myc.jit(fn)(np.linspace(-1.0, 1.0, 4))


def test_numbers_listed_and_bumped_keep_their_values():
    def f(a):
        xs = [1.0, 2.0]
        for v in xs:
            v += 1.0  # rebinds v: the list is unchanged, as in CPython
        return a * xs[0]

    a = np.arange(3.0)
    np.testing.assert_array_equal(myc.jit(f)(a), f(a))


# -- a function returning its argument (or a view or an item of it): the result shares
# the argument's memory, as in CPython (was taken as a new array: the caller's update
# of the result silently did not show through the argument) --------------------------

def ident(x):
    return x


def row(H, t):
    return H[t]


def pick(a, b, c):
    if c:
        return a
    return b


def reversed_after_loop(x, n):
    for i in range(n):
        if i > 5:
            return x
    return x[::-1]


def relu_and_cache(Z):
    A = np.maximum(0.0, Z)
    cache = Z
    return A, cache


def copied(x):
    return np.array(x)


def through_ident(a):
    b = a * 1.0
    y = ident(b)
    y += 1.0
    return b


def through_row(a):
    H = np.outer(a, a)
    r = row(H, 1)
    r[0] = 9.0
    return H


def through_pick(a, flag):
    u = a * 1.0
    v = a * 2.0
    y = pick(u, v, flag)
    y += 1.0
    return u + v


def through_loop(a):
    x = a * 1.0
    y = reversed_after_loop(x, 3)
    y += 1.0
    return x


@pytest.mark.parametrize("fn,args,line", [
    (through_ident, (), 4), (through_row, (), 4), (through_pick, (True,), 5),
    (through_pick, (False,), 5), (through_loop, (), 4)],
    ids=["ident", "row_view", "pick_a", "pick_b", "after_loop"])
def test_a_result_returning_an_argument_shares_its_memory(fn, args, line):
    a = np.linspace(-1.0, 1.0, 3)
    with pytest.raises(MycValueError, match="shares its array with a variable updated in "
                       "place") as info:
        myc.jit(fn)(a, *args)
    assert f":{fn.__code__.co_firstlineno + line}:" in str(info.value)


def tuple_item_fresh(a):
    Z = a * 1.0
    A, cache = relu_and_cache(Z)
    A += 1.0               # A is new: Z unchanged
    return A + Z


def tuple_item_shared(a):
    Z = a * 1.0
    A, cache = relu_and_cache(Z)
    cache += 1.0           # cache is Z
    return A + Z


def copy_returned(a):
    x = a * 1.0
    y = copied(x)
    y += 1.0
    return x + y


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_new_results_and_new_items_run(backend):
    a = np.linspace(-1.0, 1.0, 3)
    for fn in (tuple_item_fresh, copy_returned):
        np.testing.assert_array_equal(myc.jit(fn, backend=backend)(a), fn(a))
    with pytest.raises(MycValueError, match="'Z' shares its array"):
        myc.jit(tuple_item_shared, backend=backend)(a)


def rows_copied(A, v):
    rows = []
    for i in range(2):
        rows.append(A[i].copy())   # new arrays (was counted as possibly views of A)
    rows[0] += v
    return rows[0] + A[0]


def rows_viewed(A, v):
    rows = []
    for i in range(2):
        rows.append(A[i])          # views: CPython's rows[0] += v changes A
    rows[0] += v
    return rows[0] + A[0]


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_copies_of_an_arguments_rows_are_new_arrays(backend):
    A, v = np.arange(6.0).reshape(3, 2), np.ones(2)
    np.testing.assert_array_equal(myc.jit(rows_copied, backend=backend)(A, v),
                                  rows_copied(A.copy(), v))
    with pytest.raises(MycValueError, match="'A' shares its array"):
        myc.jit(rows_viewed, backend=backend)(A, v)
