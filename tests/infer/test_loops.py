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
from tests.adversarial.common import fd


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


def test_an_early_return_inside_a_loop_is_a_second_exit():
    f = myc.jit(with_return)
    sf, prog = _program(f, 1.0, 2.0)
    assert not prog.guards
    for lo, hi in ((1.0, 2.0), (1.2, 1.5), (0.0, 3.0)):
        assert f(lo, hi) == with_return(lo, hi)


def mixed_kinds(x):
    total = 0.0
    while total < 50.0:
        s = np.sum(x * x)
        if s > 10.0:
            total = total + s  # np.float64 on this side, a Python float on the other
        total = total + 1.0
    return total


def test_loops_the_tracer_cannot_compile_still_follow_python():
    # a variable whose scalar kind depends on the path (NumPy promotes differently):
    # specialization falls back to guarding each call's path, still exact
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


# ---------------------------------------------------------------- native loops


def _loop_runners(jitted):
    from myc.lower.program import LoopRunner

    return [st.fn for prog in jitted._executable.cache.values() for st in prog.steps
            if isinstance(st.fn, LoopRunner)]


def builtins_in_loop(x0):
    x = x0
    t = 0.0
    i = 0
    while t < 10.0:
        s = float(np.sum(x * x))
        t = t + max(math.sqrt(s), 0.5) + min(s, 0.1)
        i = i + int(s * 3.7)
        x = x * 1.1
    return t, i


def math_log_in_loop(x0, a):
    x = x0
    t = 0.0
    while t < 5.0:
        t = t + math.log(a + float(np.sum(x)))
        x = x * 0.9
    return t


def greedy_picks(x0):
    x = x0 * 1.0
    picks = np.int64(0)
    total = x0[0] * 0.0
    while np.max(x) > 0.5:
        i = np.argmax(x)
        j = np.argmin(x)
        total = total + x[i] - x[j]
        x = x * 0.8
        picks = picks + i + j
    return total, picks


def rowwise_picks(x0):
    x = x0 * 1.0
    k = 0
    idx = np.argmax(x0, axis=1)
    while np.max(x) > 0.5:
        idx = np.argmax(x, axis=1) + np.argmin(x, axis=0)[:1]
        x = x * 0.9
        k = k + 1
    return idx, k


NATIVE_CASES = [
    (rowwise_picks, lambda k: (np.random.default_rng(k).uniform(0, 2, (4, 5)),)),
    (greedy_picks, lambda k: (np.random.default_rng(k).uniform(0, 3, 16),)),
    (builtins_in_loop, lambda k: (np.linspace(0.1, 1.0, 8) * (1 + k),)),
    (math_log_in_loop, lambda k: (np.linspace(0.1, 1.0, 8), 1.0 + k)),
    (converge, lambda k: (np.random.default_rng(k).uniform(4, 8, 300).astype(np.float32),)),
    (newton, lambda k: (float(2 + 7 * k),)),
    (first_set_inside, lambda k: (np.zeros(3) + 0.25 * k, 10.0)),
    (branches_in_loop, lambda k: (np.array([0.1, 0.2, 0.3]) * (1 + 4 * k),)),
    (nested, lambda k: (np.array([[0.5, 3.0], [9.0, 0.1]]) * (1 + k),)),
    (scan_index, lambda k: (np.array([0.5, 1.0, 2.0, 4.0]), 0.3 + k)),
]


@pytest.mark.parametrize("fn,make", NATIVE_CASES, ids=[f.__name__ for f, _ in NATIVE_CASES])
def test_loops_over_kernels_and_scalars_run_as_one_native_function(fn, make, monkeypatch):
    f = myc.jit(fn)
    f(*make(0))
    runners = _loop_runners(f)
    assert runners and all(r.native is not None for r in runners)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    h = myc.jit(fn)  # the step-by-step runner: same answers
    for k in range(3):
        args = make(k)
        want = fn(*args)
        for got in (f(*args), h(*args)):
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,), strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-6)
                assert np.asarray(g).dtype == np.asarray(w).dtype
    assert all(r.native is None for r in _loop_runners(h))


def grow(x, limit):
    n = 1
    while np.sum(x) * n < limit:
        n = n * 1000
    return n


def divide_down(x):
    a = 1.0
    b = float(np.sum(x))
    while a > 1e-3:
        a = a / b
        b = b - 1.0
    return a


def test_native_loops_hand_math_errors_and_int_overflow_back_to_the_host():
    with pytest.raises(myc.MycError, match="math domain error"):
        myc.jit(math_log_in_loop)(np.linspace(0.1, 1.0, 8), -100.0)

    def to_int_loop(x, scale):
        n = 0
        k = 0
        while k < 3:
            n = n + int(float(np.sum(x)) * scale)
            k += 1
        return n

    f = myc.jit(to_int_loop)
    x = np.ones(4)
    assert f(x, 2.5) == to_int_loop(x, 2.5) == 30
    assert f(x, 1e300) == to_int_loop(x, 1e300)  # past 2**63: a Python int, exactly
    with pytest.raises(myc.MycError):
        f(x, math.inf)  # int(inf): OverflowError in CPython


def test_native_loops_hand_python_semantics_back_to_the_host():
    # Python ints do not overflow: a native int64 loop must not wrap
    f = myc.jit(grow)
    x = np.ones(3)
    assert f(x, 1e6) == grow(x, 1e6)
    assert f(x, 1e40) == grow(x, 1e40) == 10 ** 42  # past 2**63: the host path
    # a Python float divided by zero raises, as in CPython
    g = myc.jit(divide_down)
    assert g(np.array([10.0, 20.0])) == divide_down(np.array([10.0, 20.0]))
    with pytest.raises(ZeroDivisionError):
        divide_down(np.array([1.0, 1.0]))
    with pytest.raises(MycError, match="division by zero"):
        g(np.array([1.0, 1.0]))


# ---------------------------------------------------------------- gradients through loops


def fixed_point(x0, w):
    x = x0
    i = 0
    while i < 500:
        step = 0.05 * np.sin(x) * w
        x = x - step
        i += 1
        if np.max(np.abs(step)) < 1e-6:
            break
    return np.sum(x * x) + i


def sqrt_newton(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def bouncy(x):
    total = 0.0
    while total < 30.0:
        s = float(np.sum(x * x))
        if s > 4.0:
            x = x * 0.5
        else:
            x = np.sin(x) + 1.5
        total = total + s
    return np.sum(x) + total


def test_gradient_of_a_data_dependent_loop_keeps_the_loop():
    vg = myc.value_and_grad(fixed_point, argnums=(0, 1))
    rng = np.random.default_rng(3)
    w = rng.uniform(0.8, 1.2, 32)
    header = myc.ir(vg, rng.uniform(4, 8, 32), w, stage="optimized")
    assert "differentiated as a typed program" in header
    # the taped run (the primal's values are read from it: the loop runs once forward),
    # the adjoint
    assert header.count("= loop(") == 2
    for _ in range(3):
        x0 = rng.uniform(4, 8, 32)
        v, (gx, gw) = vg(x0, w)
        assert v == pytest.approx(fixed_point(x0, w), rel=1e-12)
        for idx in (0, 7, 31):
            assert gx[idx] == pytest.approx(fd(fixed_point, (x0, w), 0, idx), rel=1e-4,
                                            abs=1e-7)
            assert gw[idx] == pytest.approx(fd(fixed_point, (x0, w), 1, idx), rel=1e-4,
                                            abs=1e-7)
    sf = vg._executable if hasattr(vg, "_executable") else None
    if sf is not None:
        assert len(sf.cache) == 1 and not sf.misses


def test_gradient_of_scalar_newton_is_one_over_two_sqrt():
    g = myc.grad(sqrt_newton)
    for a in (2.0, 9.0, 0.25):
        assert g(a) == pytest.approx(0.5 / math.sqrt(a), rel=1e-9)


def test_gradient_through_if_converted_branches_in_a_loop():
    g = myc.grad(bouncy)
    for scale in (0.3, 1.0, 2.5):
        x = np.array([0.3, -0.2, 0.5]) * scale
        got = g(x)
        for idx in range(3):
            assert got[idx] == pytest.approx(fd(bouncy, (x,), 0, idx), rel=1e-4, abs=1e-6)


def test_float32_gradients_through_loops_stay_float32():
    vg = myc.value_and_grad(converge_f32)
    x = np.linspace(4.0, 8.0, 16).astype(np.float32)
    v, gx = vg(x)
    assert gx.dtype == np.float32 and np.asarray(v).dtype == np.float32
    np.testing.assert_allclose(v, converge_f32(x), rtol=1e-6)


def converge_f32(x0):
    x = x0
    while np.max(np.abs(np.sin(x))) > 1e-3:
        x = x - 0.1 * np.sin(x)
    return np.sum(x)


GRAD_CASES = [
    (fixed_point, lambda k: (np.random.default_rng(k).uniform(4, 8, 24),
                             np.linspace(0.9, 1.1, 24)), (0, 1)),
    (sqrt_newton, lambda k: (2.0 + 3 * k,), 0),
    (bouncy, lambda k: (np.array([0.3, -0.2, 0.5]) * (0.5 + k),), 0),
]


@pytest.mark.parametrize("fn,make,argnums", GRAD_CASES, ids=[c[0].__name__ for c in GRAD_CASES])
def test_gradient_loops_run_natively_and_agree_with_the_host_runner(fn, make, argnums,
                                                                    monkeypatch):
    g = myc.grad(fn, argnums=argnums)
    native = [g(*make(k)) for k in range(3)]
    runners = [st.fn for prog in _programs_of(g) for st in prog.steps
               if type(st.fn).__name__ == "LoopRunner"]
    assert len(runners) >= 2 and all(r.native is not None for r in runners)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    h = myc.grad(_copy_function(fn), argnums=argnums)  # a fresh cache: built again
    for k, got in enumerate(native):
        want = h(*make(k))
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert all(st.fn.native is None for prog in _programs_of(h) for st in prog.steps
               if type(st.fn).__name__ == "LoopRunner")


def _copy_function(fn):
    import types

    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def _programs_of(transformed):
    from myc.runtime.specialize import SpecializedFunction

    found = []
    for v in list(vars(transformed).values()):
        for w in ([v] + list(getattr(v, "__dict__", {}).values())):
            if isinstance(w, SpecializedFunction):
                found += list(w.cache.values())
    return found


def test_forward_mode_through_a_data_dependent_loop_is_a_loop():
    rng = np.random.default_rng(5)
    w = np.linspace(0.9, 1.1, 16)
    x0 = rng.uniform(4, 8, 16)
    t = rng.normal(size=16)

    def along(x):
        return myc.jvp(fixed_point, (x, w), (t, np.zeros(16)))

    text = myc.ir(along, x0, stage="optimized")
    assert "loop(" in text and "guard" not in text.split("\n", 1)[0]
    f = myc.jit(along)
    for k in range(3):
        x = x0 + 0.3 * k
        out, tan = f(x)
        assert out == pytest.approx(fixed_point(x, w), rel=1e-12)
        eps = 1e-6
        fd = (fixed_point(x + eps * t, w) - fixed_point(x - eps * t, w)) / (2 * eps)
        assert tan == pytest.approx(fd, rel=1e-4)


# ---------------------------------------------------------------- speculation is safe


def divide_where_allowed(d0, n):
    acc = 0.0
    d = d0
    i = 0
    while i < n:
        if d != 0.0:
            acc = acc + 1.0 / d  # a Python float: 1.0 / 0.0 raises in CPython
        d = d - 1.0
        i += 1
    return acc


def scan_if_positive(x, t):
    total = 0.0
    k = 0
    while total < t:
        if x[0] > 0.0:
            j = 0
            while x[j] > 0.0:  # would run off the end if x has no zero
                j += 1
            total = total + j
        else:
            total = total + 1.0
        k += 1
    return total, k


def test_the_side_not_taken_never_fails():
    f = myc.jit(divide_where_allowed)
    for d0, n in ((3.0, 6), (2.5, 4), (0.0, 3)):
        assert f(d0, n) == divide_where_allowed(d0, n)
    sf, prog = _program(myc.jit(divide_where_allowed), 3.0, 6)
    assert not prog.guards
    g = myc.jit(scan_if_positive)
    ok = np.array([1.0, 2.0, 0.0])
    no_zero = np.array([-1.0, 2.0, 3.0])  # x[0] <= 0: the inner loop must not run
    assert g(ok, 5.0) == scan_if_positive(ok, 5.0)
    assert g(no_zero, 5.0) == scan_if_positive(no_zero, 5.0)
    with pytest.raises(IndexError):
        scan_if_positive(np.array([1.0, 2.0, 3.0]), 5.0)
    with pytest.raises(MycError):
        g(np.array([1.0, 2.0, 3.0]), 5.0)  # taken: the error is Python's


# ---------------------------------------------------------------- ifs outside loops


def piecewise(x, y):
    if x > 0:
        return y * 2.0
    elif x > -1:
        return y - 1.0
    return y * y


def safe_inverse(x):
    s = float(np.sum(x))
    if s != 0.0:
        r = 1.0 / s
    else:
        r = 0.0
    return r * x


def test_a_data_dependent_if_is_if_converted_not_guarded():
    f = myc.jit(piecewise)
    y = np.arange(3.0)
    sf, prog = _program(f, 1.0, y)
    assert not prog.guards and "select(" in myc.ir(piecewise, 1.0, y, stage="optimized")
    for x in (1.0, -0.5, -3.0, 2.0, 0.0, -0.5, -7.0, 3.0):
        np.testing.assert_array_equal(f(x, y), piecewise(x, y))
    assert len(sf.cache) == 1 and not sf.misses
    g = myc.jit(safe_inverse)
    for x in (np.array([1.0, 3.0]), np.array([1.0, -1.0]), np.zeros(2)):
        np.testing.assert_array_equal(g(x), safe_inverse(x))  # no ZeroDivisionError
    dg = myc.grad(lambda x: np.sum(piecewise(x[0], x)))
    x = np.array([0.5, 2.0, 3.0])
    np.testing.assert_allclose(dg(x), [2.0, 2.0, 2.0])  # the condition has no derivative
    np.testing.assert_allclose(dg(-x), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(dg(-4.0 * x), 2.0 * (-4.0 * x))


# ---------------------------------------------------------------- GEMM in native loops


def power_iteration(a, v):
    diff = 1.0
    n = 0.0
    while diff > 1e-9:
        w = a @ v
        n = np.sqrt(np.sum(w * w))
        u = w / n
        diff = np.max(np.abs(u - v))
        v = u
    return n


def rotate_until(m, x):
    k = 0
    while np.sum(x[:, 0]) < 3.0 and k < 50:
        x = (m @ x.T).T + 0.1
        k += 1
    return np.sum(x * x)


def test_matmul_in_a_loop_calls_blas_from_native_code():
    rng = np.random.default_rng(2)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    a = q @ np.diag([5.0, 2.0, 1.5, 1.0, 0.5, 0.1]) @ q.T
    v = np.ones(6) / np.sqrt(6.0)
    f = myc.jit(power_iteration)
    assert f(a, v) == pytest.approx(power_iteration(a, v), rel=1e-12)
    runners = _loop_runners(f)
    assert runners and all(r.native is not None for r in runners)
    assert "scipy_cblas_dgemm64_" in runners[0].native.llvm_ir
    g = myc.grad(power_iteration)(a, v)  # d(top eigenvalue)/dA = u u^T
    u = np.linalg.eigh(a)[1][:, -1]
    np.testing.assert_allclose(g, np.outer(u, u), atol=1e-6)
    m = np.array([[0.9, -0.2], [0.3, 1.1]], np.float32)
    x = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]], np.float32)
    h = myc.jit(rotate_until)
    np.testing.assert_allclose(h(m, x), rotate_until(m, x), rtol=1e-5)
    assert all(r.native is not None for r in _loop_runners(h))


def _float_then_numpy_scalar(a, x):
    s0 = a  # a traced Python float...
    for _ in (a,):
        s0 = np.mean(np.ones_like(x)[1:])  # ...then a NumPy scalar, never read first
        if a < (-a):
            break
    return a, s0


def test_a_traced_float_that_becomes_a_numpy_scalar_in_a_loop():
    """Found by tests/unit/test_random_programs: the start value was converted to the
    loop's NumPy type as if it were a constant (TypeError inside the tracer)."""
    x = np.zeros(4)
    for a in (0.0, 1.0, -2.0):
        got = myc.jit(_float_then_numpy_scalar)(a, x)
        want = _float_then_numpy_scalar(a, x)
        assert got == want and type(got[1]) is type(want[1])
