"""Recursion whose depth depends on data, compiled as typed functions (``myc.infer.calls``).

A recursive call under a data-dependent branch becomes an ``invoke`` of one typed graph
per (function, signature), its result type found by a worklist fixpoint.  Each test
checks the structure (``invoke`` nodes, no guards: one program serves every input) and
compares values with CPython and gradients with central differences over inputs that
recurse to different depths.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import myc
from myc.infer.calls import TypedFn
from myc.ir.manager import Manager
from myc.ir.nodes import Apply, Constant
from myc.prims import P


def fib(x):
    if x < 2.0:
        return x
    return fib(x - 1.0) + fib(x - 2.0)


def adapt(a, b, fa, fm, fb, whole, eps, depth):
    m = 0.5 * (a + b)
    lm = 0.5 * (a + m)
    rm = 0.5 * (m + b)
    flm = math.sin(lm) * lm
    frm = math.sin(rm) * rm
    left = (m - a) / 6.0 * (fa + 4.0 * flm + fm)
    right = (b - m) / 6.0 * (fm + 4.0 * frm + fb)
    delta = left + right - whole
    if depth <= 0 or abs(delta) <= 15.0 * eps:
        return left + right + delta / 15.0
    return adapt(a, m, fa, flm, fm, left, eps / 2.0, depth - 1) + \
        adapt(m, b, fm, frm, fb, right, eps / 2.0, depth - 1)


def integrate(b):
    """Adaptive Simpson quadrature of x sin x on [0, b]: its recursion tree depends on b."""
    fb = math.sin(b) * b
    m = 0.5 * b
    fm = math.sin(m) * m
    whole = b / 6.0 * (4.0 * fm + fb)
    return adapt(0.0, b, 0.0, fm, fb, whole, 1e-6, 30)


def halves(v):
    s = np.sum(v * v)
    if s < 1.0:
        return v * 2.0
    return halves(v * 0.5) + np.sin(halves(v * 0.25))


def halves_sum(v):
    return np.sum(halves(v))


def captured(w, x):
    def rec(y):
        if np.sum(y) < 0.5:
            return y * w
        return rec(y * 0.5) * 1.5
    return np.sum(rec(x))


def is_even(x, n):
    if x < 1.0:
        return x * n
    return is_odd(x - 1.0, n) * 2.0


def is_odd(x, n):
    if x < 1.0:
        return -x
    return is_even(x - 0.5, n) + x


def mutual(x):
    return is_even(x, 3.0)


def counted(x, depth):
    if x < 1.0:
        return x + depth
    return counted(x * 0.5, depth + 1) * 2.0


def counted0(x):
    return counted(x, 0)


def pair(x):
    if x < 1.0:
        return x, x * x
    a, b = pair(x - 1.0)
    return a + b, a * b


def pair_sum(x):
    a, b = pair(x)
    return a + b


SCALAR = [(fib, [0.5, 5.5, 7.25, 9.75]), (integrate, [0.3, 3.0, 6.5]),
          (mutual, [0.2, 4.3, 7.9]), (counted0, [0.5, 5.0, 100.0]),
          (pair_sum, [0.5, 3.5, 4.25])]


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    # the structure is read from the specialized graph, which a disk-cache hit drops
    monkeypatch.setenv("MYC_CACHE_DIR", "off")


def _fns(typed) -> list[TypedFn]:
    out, todo, seen = [], [typed], set()
    while todo:
        g = todo.pop()
        for n in Manager(g).owned.get(g, []):
            if isinstance(n, Apply) and n.inputs[0].value is P.invoke:
                tf = n.inputs[1].value
                if id(tf) not in seen:
                    seen.add(id(tf))
                    out.append(tf)
                    todo.append(tf.graph)
    return out


def _compiled(jitted, *args):
    jitted(*args)
    sf = getattr(jitted, "_executable", None) or jitted._run
    (prog,) = list(sf.cache.values())
    return prog


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.fixture(params=["native", "steps"])
def runner(request, monkeypatch):
    """Scalar recursive functions run as native functions calling themselves; the
    step-by-step host runner (``MYC_NO_NATIVE_LOOPS``) must agree."""
    if request.param == "steps":
        monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    return request.param


@pytest.mark.parametrize("fn,xs", SCALAR, ids=[f.__name__ for f, _ in SCALAR])
def test_scalar_recursion_compiles_once_for_every_depth(fn, xs, runner):
    j = myc.jit(fn)
    prog = _compiled(j, xs[0])
    assert prog is not None and not prog.guards  # one program, no guards
    assert _fns(prog.graph), "the recursion is a typed function"
    for x in xs:
        assert j(x) == pytest.approx(fn(x), rel=1e-12, abs=1e-12)
    assert len(j._executable.cache) == 1 and not j._executable.misses


@pytest.mark.parametrize("fn,xs", SCALAR, ids=[f.__name__ for f, _ in SCALAR])
def test_scalar_recursion_gradient(fn, xs, runner):
    g = myc.grad(fn)
    vg = myc.value_and_grad(fn)
    for x in xs:
        d = g(x)
        assert d == pytest.approx(_fd(fn, x), rel=1e-5, abs=1e-6)
        v, d2 = vg(x)
        assert v == pytest.approx(fn(x), rel=1e-12) and d2 == pytest.approx(d, rel=1e-12)
    prog = _compiled(g, xs[0])
    assert not prog.guards and prog.graph.flags.get("route") == "adjoint"
    names = [tf.graph.name for tf in _fns(prog.graph)]
    assert any(n.endswith(":adjoint") for n in names), names


def test_one_typed_function_per_signature():
    typed = myc.ir(fib, 5.0, stage="optimized")
    # the root's own body once, then one typed function that calls itself
    assert typed.count("graph fib:rec(") == 1
    assert "invoke(<fn fib:rec>" in typed
    prog = _compiled(myc.jit(fib), 5.0)
    (tf,) = _fns(prog.graph)
    calls = [n for n in Manager(tf.graph).owned[tf.graph] if isinstance(n, Apply)
             and n.inputs[0].value is P.invoke]
    assert len(calls) == 2 and all(c.inputs[1].value is tf for c in calls)


def test_mutual_recursion_is_two_functions():
    prog = _compiled(myc.jit(mutual), 4.3)
    names = sorted(tf.graph.name for tf in _fns(prog.graph))
    assert names == ["is_even:rec", "is_odd:rec"]


def test_depth_counter_becomes_data():
    """An int that changes per level would make a signature per depth: it is widened
    into a parameter of the typed function."""
    prog = _compiled(myc.jit(counted0), 5.0)
    fns = _fns(prog.graph)
    assert len(fns) <= 2
    assert any(str(p.abstract) == "pyint64" for tf in fns for p in tf.graph.parameters)


@pytest.mark.parametrize("scale", [0.1, 1.0, 3.0, 9.0])
def test_array_recursion_and_gradient(scale):
    v = np.linspace(0.0, 1.0, 16).astype(np.float32) * np.float32(scale)
    j = myc.jit(halves_sum)
    np.testing.assert_allclose(j(v), halves_sum(v), rtol=1e-5)
    g = myc.grad(halves_sum)(v)
    v64 = v.astype(np.float64)
    num = np.array([(halves_sum(v64 + 1e-6 * e) - halves_sum(v64 - 1e-6 * e)) / 2e-6
                    for e in np.eye(16)])
    np.testing.assert_allclose(g, num, rtol=1e-3, atol=1e-4)
    assert g.dtype == np.float32


def test_captured_array_becomes_a_parameter():
    w = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
    x = np.array([1.1, 1.7, 2.3, 3.05], np.float32)  # no level's sum is near 0.5
    j = myc.jit(captured)
    np.testing.assert_allclose(j(w, x), captured(w, x), rtol=1e-6)
    np.testing.assert_allclose(j(w, x * 20), captured(w, x * 20), rtol=1e-6)
    prog = _compiled(j, w, x)
    (tf,) = _fns(prog.graph)
    assert len(tf.graph.parameters) == 2  # y, and the captured w
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    gw, gx = myc.grad(captured, argnums=(0, 1))(w64, x64)
    for got, at in ((gw, 0), (gx, 1)):
        num = []
        for e in np.eye(4):
            hi = [w64, x64]
            lo = [w64, x64]
            hi[at] = hi[at] + 1e-6 * e
            lo[at] = lo[at] - 1e-6 * e
            num.append((captured(*hi) - captured(*lo)) / 2e-6)
        np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-5)


def test_untaken_recursive_side_does_not_run():
    """Both sides of an if-converted branch are traced, but a recursive call runs only
    where its path holds: otherwise ``fib`` would never stop."""
    j = myc.jit(fib)
    assert j(1.0) == 1.0 and j(-50.0) == -50.0


def test_result_type_changing_with_depth_falls_back_correctly():
    def grow(x):
        if x < 1.0:
            return x
        return np.float32(grow(x - 1.0)) * 2.0  # a NumPy scalar below the base case

    j = myc.jit(grow)
    for x in (0.5, 3.5):
        r = j(x)
        assert r == grow(x) and type(r) is type(grow(x))


def test_recursion_that_never_returns_is_not_compiled_silently():
    def forever(x):
        if x < 0.0:
            return forever(x - 1.0) * 2.0
        return forever(x + 1.0) * 2.0

    with pytest.raises(myc.MycError, match="recursion depth"):
        myc.jit(forever)(1.0)


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("MYC_NO_TYPED_CALLS", "1")
    j = myc.jit(fib)
    assert j(6.5) == fib(6.5)
    prog = _compiled(j, 6.5)
    assert prog.guards  # the old route: specialized on this call's decisions


def test_recursive_call_results_feed_array_work():
    def depth_scale(v, t):
        if t < 0.1:
            return v
        return depth_scale(v, t * 0.5) * 0.9 + t

    def f(v, t):
        return np.sum(np.tanh(depth_scale(v, t)))

    v = np.linspace(-1, 1, 8)
    j = myc.jit(f)
    for t in (0.05, 0.7, 13.0):
        assert j(v, t) == pytest.approx(f(v, t), rel=1e-12)
    gv, gt = myc.grad(f, argnums=(0, 1))(v, 0.7)
    num_t = (f(v, 0.7 + 1e-6) - f(v, 0.7 - 1e-6)) / 2e-6
    assert gt == pytest.approx(num_t, rel=1e-5)
    num_v = [(f(v + 1e-6 * e, 0.7) - f(v - 1e-6 * e, 0.7)) / 2e-6 for e in np.eye(8)]
    np.testing.assert_allclose(gv, num_v, rtol=1e-5)


def test_typed_function_constant_is_printed_once():
    text = myc.ir(mutual, 4.3, stage="optimized")
    assert text.count("graph is_even:rec(") == 1 and text.count("graph is_odd:rec(") == 1


def test_constants_survive_optimization():
    # the typed function's graph goes through the passes too (once, though it calls itself)
    prog = _compiled(myc.jit(fib), 3.5)
    (tf,) = _fns(prog.graph)
    consts = [i.value for n in Manager(tf.graph).owned[tf.graph] if isinstance(n, Apply)
              for i in n.inputs if isinstance(i, Constant)]
    assert 2.0 in consts


def _runners(prog):
    out, todo, seen = [], [prog], set()
    while todo:
        p = todo.pop()
        for st in p.steps:
            fn = st.fn
            if hasattr(fn, "results") and id(fn) not in seen:
                seen.add(id(fn))
                out.append(fn)
                todo.append(fn.body)
    return out


def test_self_recursive_scalar_function_is_native():
    prog = _compiled(myc.jit(fib), 9.5)
    (call,) = _runners(prog)
    assert call.body.native is not None
    g = _compiled(myc.grad(fib), 9.5)
    assert all(c.body.native is not None for c in _runners(g))


def test_deep_recursion_is_an_error_not_a_crash():
    def count(x):
        if x < 0.5:
            return 0.0
        return count(x - 1.0) + 1.0

    j = myc.jit(count)
    assert j(50.5) == 51.0
    assert j(9000.5) == 9001.0  # native calls: deeper than CPython's default limit
    # past the native depth limit the host runner reruns the call, and reports the depth
    with pytest.raises(myc.MycError, match="maximum recursion depth"):
        j(100000.5)


# -- shapes of recursion the typed functions must get right ---------------------------------


def shrink(v):
    # the shape changes per level: one typed function per shape
    if v.shape[0] <= 1 or np.sum(v) < 0.1:
        return np.sum(v)
    return shrink(v[::2]) * 0.5 + np.max(v)


def loop_inside(x):
    if x < 1.0:
        return x
    s = 0.0
    i = 0
    while s < x:
        s = s + 0.7
        i += 1
    return loop_inside(x * 0.5) + s + i


def rec_in_loop(x):
    def r(y):
        if y < 1.0:
            return y
        return r(y * 0.3) + 1.0
    t = 0.0
    k = 0
    while t < x:
        t = t + r(x - t) + 0.5
        k += 1
    return t, k


def tuple_arg(p):
    a, b = p
    if a < 0.5:
        return a * b
    return tuple_arg((a * 0.5, b + 1.0)) * 1.1


def tuple_arg_top(a, b):
    return tuple_arg((a, b))


def returns_int(x):
    if x < 1.0:
        return 0
    return returns_int(x - 1.0) + 1


def higher(f, x):
    if x < 1.0:
        return f(x)
    return higher(f, x - 1.0) * 2.0


def use_higher(x):
    return higher(math.sin, x) + higher(np.cos, x)


def flags(x, flag):
    if flag and x > 1.0:
        return flags(x * 0.5, not flag) + x
    if x > 1.0:
        return flags(x * 0.7, not flag) - 1.0
    return x


def with_default(x, k=2.0):
    if x < k:
        return x
    return with_default(x / k) + with_default(x - k, k)


def np_scalar(x):
    if x < np.float32(1.0):
        return x
    return np_scalar(x * np.float32(0.5)) + x


EDGE = [(shrink, (np.linspace(0, 1, 16),)), (shrink, (np.linspace(0, 1, 9) * 0.001,)),
        (loop_inside, (5.3,)), (loop_inside, (0.2,)), (rec_in_loop, (4.5,)),
        (tuple_arg_top, (3.0, 2.0)), (returns_int, (4.5,)), (use_higher, (3.2,)),
        (flags, (7.0, True)), (flags, (7.0, False)), (with_default, (9.5,)),
        (np_scalar, (np.float32(9.0),))]


@pytest.mark.parametrize("fn,args", EDGE, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                               enumerate(EDGE)])
def test_recursion_shapes_match_cpython(fn, args):
    want = fn(*args)
    got = myc.jit(fn)(*args)
    assert type(got) is type(want)
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-12)


@pytest.mark.parametrize("fn,x", [(loop_inside, 5.3), (use_higher, 3.2), (with_default, 9.5)])
def test_recursion_shapes_gradients(fn, x):
    assert myc.grad(fn)(x) == pytest.approx(_fd(fn, x), rel=1e-5)


def test_np_scalar_recursion_gradient_keeps_its_dtype():
    d = myc.grad(np_scalar)(np.float32(9.0))
    assert type(d) is np.float32 and d == np.float32(1.9375)  # 1 + 1/2 + ... + 1/16


def test_error_inside_a_recursive_function_names_the_users_line():
    def div_zero(x):
        if x < 1.0:
            return 1.0 / (x - 0.5)
        return div_zero(x - 1.0) + 1.0

    assert myc.jit(div_zero)(3.2) == div_zero(3.2)
    with pytest.raises(myc.MycError, match="division by zero") as info:
        myc.jit(div_zero)(3.5)
    assert "return 1.0 / (x - 0.5)" in str(info.value)


def rec_in_while(x):
    def r(y):
        if y < 1.0:
            return y * y
        return r(y * 0.3) + y
    t = 0.0
    while t < x:
        t = t + r(x - t) * 0.1 + 0.5
    return t


@pytest.mark.parametrize("x", [0.3, 2.2, 4.5])
def test_gradient_of_recursion_inside_a_data_dependent_loop(x):
    """The loop's adjoint recomputes an iteration whose body invokes the typed function:
    its adjoint function is called from the backward loop."""
    assert myc.jit(rec_in_while)(x) == pytest.approx(rec_in_while(x), rel=1e-12)
    assert myc.grad(rec_in_while)(x) == pytest.approx(_fd(rec_in_while, x), rel=1e-6)
    prog = _compiled(myc.grad(rec_in_while), x)
    assert not prog.guards
