"""Random draws and ``print`` inside compiled functions (``myc/prims/effects.py``,
``myc/frontend/effects.py``).

Draws call the NumPy generator object when the program runs, so a compiled function
gives NumPy's stream for the same seed and leaves the generator in NumPy's state; they
are never folded, merged or dropped, and they are constants to AD (``normal``/``uniform``
carry gradients to their parameters, as ``loc + scale * z`` does).  ``print`` prints the
values at run time, in program order, each loop iteration, only on the branch taken.
Each is checked against CPython running the same function, on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycError
from tests.backends import BACKENDS


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert type(a) is type(b) or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray))
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def _check_stream(fn, make_rng, *args, backends=BACKENDS):
    """fn(*args, rng) compiled == CPython, and the generators end in the same state."""
    for b in backends:
        ref, mine = make_rng(), make_rng()
        want = fn(*args, ref)
        got = myc.jit(fn, backend=b)(*args, mine)
        _same(got, want)
        _same(mine.random(4) if hasattr(mine, "integers") else mine.random_sample(4),
              ref.random(4) if hasattr(ref, "integers") else ref.random_sample(4))


# ---------------------------------------------------------------- Generator
def g_all(x, rng):
    a = rng.standard_normal((2, 3))
    b = rng.normal(1.0, 2.0, size=4)
    c = rng.uniform(-1.0, 1.0, (2,))
    d = rng.random(3)
    e = rng.standard_normal()  # a Python float, as NumPy's
    f = rng.normal(x, 0.5)  # the parameters' shape
    g = rng.uniform(high=x)
    h = rng.random()
    return a, b, c, d, e, f, g, h


def g_float32(rng):
    return rng.standard_normal(5, dtype=np.float32), rng.random((2, 2), dtype=np.float32)


def g_unused(x, rng):
    rng.standard_normal(3)  # unused: NumPy's state still advances
    z = rng.random(2)  # noqa: F841 - unused as well
    return x + 1.0


def g_same_twice(rng):
    return rng.standard_normal(3), rng.standard_normal(3)


def _noise(rng, n):
    return rng.standard_normal(n)


def g_helper_twice(rng):
    return _noise(rng, 2) - _noise(rng, 2)


def test_generator_stream_matches_numpy():
    x = np.array([0.5, 1.5])
    _check_stream(g_all, lambda: np.random.default_rng(42), x)
    _check_stream(g_float32, lambda: np.random.default_rng(1))
    _check_stream(g_unused, lambda: np.random.default_rng(2), x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_are_not_merged_or_cached(backend):
    a, b = myc.jit(g_same_twice, backend=backend)(np.random.default_rng(0))
    assert not np.array_equal(a, b)
    d = myc.jit(g_helper_twice, backend=backend)(np.random.default_rng(0))
    assert np.all(d != 0)
    f = myc.jit(g_same_twice, backend=backend)
    rng, ref = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(3):  # each call draws anew, continuing the stream
        _same(f(rng), g_same_twice(ref))


def test_a_generator_is_used_by_reference_across_calls_and_signatures():
    f = myc.jit(g_same_twice)
    for seed in (0, 1):  # another object of the same type: no recompile, its stream
        _same(f(np.random.default_rng(seed)), g_same_twice(np.random.default_rng(seed)))
    s = f.stats()
    assert s.compiles <= 1 and not s.recompiles and s.compiled_calls == 2


# ---------------------------------------------------------------- RandomState, globals
def rs_legacy(x, rs):
    return (rs.randn(2, 3), rs.rand(2), rs.randn(), rs.normal(x, 2.0), rs.uniform(0, x),
            rs.random_sample((2,)), rs.standard_normal(2))


def test_random_state_stream_matches_numpy():
    _check_stream(rs_legacy, lambda: np.random.RandomState(3), np.array([1.0, 2.0]))


def np_globals(n):
    return (np.random.randn(n, 2), np.random.rand(3), np.random.normal(0.0, 1.0, n),
            np.random.uniform(-1.0, 1.0), np.random.random((2,)),
            np.random.standard_normal(2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_np_random_functions_draw_from_the_global_state(backend):
    f = myc.jit(np_globals, backend=backend)
    np.random.seed(11)
    want = np_globals(3)
    np.random.seed(11)
    got = f(3)
    _same(got, want)
    np.random.seed(11)
    first = f(3)
    second = f(3)  # the global state moved on
    assert not np.array_equal(first[0], second[0])


_CAPTURED = np.random.RandomState(9)


def captured(x):
    return x + _CAPTURED.randn(2)


def test_a_generator_from_the_enclosing_scope_is_used_by_reference():
    f = myc.jit(captured)
    ref = np.random.RandomState(9)
    _CAPTURED.seed(9)
    for _ in range(2):
        _same(f(np.zeros(2)), np.zeros(2) + ref.randn(2))


# ---------------------------------------------------------------- control flow
def loop_draws(x, n, rng):
    for _ in range(n):
        x = x + rng.standard_normal(2)
    return x


def while_draws(t, rng):
    s = 0.0
    k = 0
    while s < t:  # a trip count that depends on the draws
        s = s + rng.random()
        k = k + 1
    return s, k


def branch_draws(x, rng):
    if np.sum(x) > 0:
        z = rng.standard_normal(2)
    else:
        z = rng.random(2) + rng.random(2)
    return z * x


def test_draws_in_loops_and_branches():
    _check_stream(loop_draws, lambda: np.random.default_rng(0), np.zeros(2), 3)
    _check_stream(loop_draws, lambda: np.random.default_rng(0), np.zeros(2), 200)
    _check_stream(while_draws, lambda: np.random.default_rng(1), 3.0)
    for x in (np.ones(2), -np.ones(2)):  # only the side taken draws
        _check_stream(branch_draws, lambda: np.random.default_rng(2), x)


# ---------------------------------------------------------------- derivatives
def loss(w, rng):
    z = rng.standard_normal(3)
    return np.sum(w * z) + np.sum(w ** 2)


def reparam(mu, log_sigma, rng):
    z = rng.normal(mu, np.exp(log_sigma))
    return np.sum(z ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_are_constants_to_ad(backend):
    w = np.array([0.5, -1.0, 2.0])
    z = np.random.default_rng(0).standard_normal(3)
    g = myc.grad(myc.jit(loss, backend=backend))(w, np.random.default_rng(0))
    np.testing.assert_allclose(g, z + 2 * w, rtol=1e-12)
    v, g2 = myc.value_and_grad(myc.jit(loss, backend=backend))(w, np.random.default_rng(0))
    assert v == pytest.approx(loss(w, np.random.default_rng(0)), rel=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-12)
    _, t = myc.jvp(myc.jit(loss, backend=backend), (w, np.random.default_rng(0)),
                   (np.ones(3), None))
    assert t == pytest.approx(np.sum(z + 2 * w), rel=1e-12)


def test_gradients_reach_the_parameters_of_normal():
    mu, ls = np.array([1.0, -2.0]), np.array([0.1, -0.3])
    eps = np.random.default_rng(3).standard_normal(2)
    gm, gs = myc.grad(reparam, argnums=(0, 1))(mu, ls, np.random.default_rng(3))
    z = mu + np.exp(ls) * eps
    np.testing.assert_allclose(gm, 2 * z, rtol=1e-12)
    np.testing.assert_allclose(gs, 2 * z * eps * np.exp(ls), rtol=1e-12)


def test_gradient_through_a_loop_with_draws():
    g = myc.grad(lambda x, rng: np.sum(loop_draws(x, 100, rng) ** 2))(
        np.zeros(2), np.random.default_rng(4))
    np.testing.assert_allclose(g, 2 * loop_draws(np.zeros(2), 100, np.random.default_rng(4)),
                               rtol=1e-12)


# ---------------------------------------------------------------- errors
def e_data_size(x, rng):
    return rng.standard_normal(int(np.sum(x)))


def e_not_rng(x):
    return x.standard_normal(3)


def e_legacy_dtype(rs):
    return rs.standard_normal(3, dtype=np.float32)


def test_errors_name_the_line():
    with pytest.raises(MycError, match="known when the program is compiled") as e:
        myc.jit(e_data_size)(np.ones(2), np.random.default_rng(0))
    assert "rng.standard_normal(int(np.sum(x)))" in str(e.value)
    with pytest.raises(MycError, match="not a numpy.random.Generator") as e:
        myc.jit(e_not_rng)(np.ones(2))
    assert "x.standard_normal(3)" in str(e.value)
    with pytest.raises(MycError, match="dtype"):
        myc.jit(e_legacy_dtype)(np.random.RandomState(0))


def aot_draw(x):
    return x + np.random.randn(2)


def aot_print(x):
    print(x)
    return x * 2.0


def test_aot_refuses_draws_and_prints(tmp_path):
    with pytest.raises(MycError, match="'rng_draw' .* not supported ahead of time"):
        myc.aot(aot_draw, "f64[2]", str(tmp_path / "libr.so"))
    with pytest.raises(MycError, match="'debug_print' .* not supported ahead"):
        myc.aot(aot_print, "f64[2]", str(tmp_path / "libp.so"))


# ---------------------------------------------------------------- print
def p_simple(x, k):
    print("start", k)
    y = x * 2.0
    print("y =", y, "sum", np.sum(y), sep=" | ")
    print(k + 1, end="!\n")
    return y


def p_loop(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + np.sum(x) * i
        print("iteration", i, acc)
    print("done")
    return acc


def p_branch(x):
    if np.sum(x) > 0:
        print("positive", np.sum(x))
        r = x
    else:
        print("not positive")
        r = -x
    return r


def p_nothing_returned(x):
    print(x)


def _python_output(capsys, fn, *args):
    fn(*args)
    return capsys.readouterr().out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", [
    (p_simple, (np.arange(3.0), 4)),
    (p_loop, (np.ones(2), 3)),
    (p_loop, (np.ones(2), 60)),
    (p_branch, (np.ones(2),)),
    (p_branch, (-np.ones(2),)),
    (p_nothing_returned, (np.float32(1.5),)),
], ids=["simple", "loop3", "loop60", "branch+", "branch-", "none"])
def test_print_output_matches_python(capsys, backend, fn, args):
    want = _python_output(capsys, fn, *args)
    f = myc.jit(fn, backend=backend)
    f(*args)
    assert capsys.readouterr().out == want
    f(*args)  # each call prints again (nothing is cached)
    assert capsys.readouterr().out == want


def test_print_under_grad_prints_the_forward_values_once(capsys):
    def f(x):
        y = np.sin(x)
        print("y", y)
        return np.sum(y)

    g = myc.grad(f)(np.array([0.0, 1.0]))
    np.testing.assert_allclose(g, np.cos([0.0, 1.0]))
    assert capsys.readouterr().out == f"y {np.sin(np.array([0.0, 1.0]))}\n"


def test_print_keywords_must_be_constants():
    def bad(x):
        print(x, file=None)
        return x

    with pytest.raises(MycError, match="file"):
        myc.jit(bad)(1.0)


def test_vjp_pullback_replays_the_same_draws():
    def f(mu, rng):
        return np.sum(rng.normal(mu, 1.0, size=(2, 3)) ** 2)

    rng = np.random.default_rng(0)
    out, pullback = myc.vjp(f, np.zeros(3), rng)
    z = np.random.default_rng(0).standard_normal((2, 3))
    assert out == pytest.approx(np.sum(z ** 2), rel=1e-12)
    for _ in range(2):  # the forward values' draws, each time
        g, g_rng = pullback(1.0)
        np.testing.assert_allclose(g, 2 * z.sum(axis=0), rtol=1e-12)
        assert g_rng is None
    ref = np.random.default_rng(0)
    ref.standard_normal((2, 3))
    assert rng.random() == ref.random()  # advanced once, by the forward call


def _show(x):
    print("show", x)


def _advance(rng):
    rng.standard_normal(2)


def p_helpers(x, rng):
    print("a")
    _show(x)  # a call made for its effects runs, in order
    _advance(rng)
    print("b", _noise(rng, 1))
    return rng.random()


@pytest.mark.parametrize("backend", BACKENDS)
def test_effects_of_called_functions_run_in_program_order(capsys, backend):
    want = p_helpers(1.5, np.random.default_rng(0))
    out = capsys.readouterr().out
    got = myc.jit(p_helpers, backend=backend)(1.5, np.random.default_rng(0))
    assert got == want
    assert capsys.readouterr().out == out


def while_scaled(w, rng):
    s = 0.0
    k = 0
    while k < 5 or s < 3.0:  # a trip count that depends on the draws
        s = s + rng.random() * w
        k = k + 1
    return s


def test_gradient_through_a_data_dependent_loop_with_draws_draws_once():
    """The taped adjoint of such a loop would recompute its body (draw again): that
    signature runs on the evaluator instead, with NumPy's stream."""
    rng, ref = np.random.default_rng(0), np.random.default_rng(0)
    with pytest.warns(myc.MycFallbackWarning):
        g = myc.grad(while_scaled)(1.0, rng)
    assert g == pytest.approx(while_scaled(1.0, ref), rel=1e-12)  # w = 1: the draws' sum
    assert rng.random() == ref.random()


def in_tuple(t):
    w, rng = t
    return np.sum(w * rng.standard_normal(3))


def test_generator_inside_a_tuple_and_its_gradient_is_none():
    want = in_tuple((np.ones(3), np.random.default_rng(0)))
    assert myc.jit(in_tuple)((np.ones(3), np.random.default_rng(0))) == want
    (gw, grng), = (myc.grad(in_tuple)((np.ones(3), np.random.default_rng(0))),)
    np.testing.assert_array_equal(gw, np.random.default_rng(0).standard_normal(3))
    assert grng is None
    assert myc.grad(loss, argnums=(0, 1))(np.ones(3), np.random.default_rng(0))[1] is None


def p_recursive(x):
    if x < 1.0:
        return x
    print("x", x)
    return p_recursive(x / 2)


@pytest.mark.filterwarnings("ignore::myc.MycFallbackWarning")
@pytest.mark.parametrize("backend", BACKENDS)
def test_print_in_recursion_whose_depth_depends_on_data(capsys, backend):
    want = _python_output(capsys, p_recursive, 10.0)
    assert myc.jit(p_recursive, backend=backend)(10.0) == p_recursive(10.0)
    capsys.readouterr()
    myc.jit(p_recursive, backend=backend)(10.0)
    assert capsys.readouterr().out == want


def e_permutation(rng):
    return rng.permutation(4)


def e_global_choice(x):
    return x[np.random.choice(3)]


def e_choice(p, rng):
    one = rng.choice(4, p=p)
    table = rng.choice(4, size=(3, 2), p=p / np.sum(p))
    values = rng.choice(np.array([10.0, 20.0, 30.0, 40.0]), size=5, p=p)
    return one, table, values


@pytest.mark.parametrize("make_rng", [lambda: np.random.default_rng(3),
                                      lambda: np.random.RandomState(3)])
def test_choice_with_probabilities_draws_as_numpy(make_rng):
    """``rng.choice(a, size, p=p)``: NumPy's algorithm on the same uniform draws (a
    REINFORCE objective samples its actions so)."""
    p = np.array([0.1, 0.2, 0.3, 0.4])
    for b in BACKENDS:
        ref, mine = make_rng(), make_rng()
        want = e_choice(p, ref)
        got = myc.jit(e_choice, backend=b)(p, mine)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
        assert np.asarray(got[1]).dtype == np.int64
        _same(mine.random_sample(4) if hasattr(mine, "random_sample") else mine.random(4),
              ref.random_sample(4) if hasattr(ref, "random_sample") else ref.random(4))


def e_exponential(rng):
    return rng.exponential(2.0)


def e_global_gamma(x):
    return x * np.random.gamma(2.0)


def test_unsupported_draws_say_what_to_do():
    for fn, args, what in ((e_exponential, (np.random.default_rng(0),), ".exponential()"),
                           (e_global_gamma, (np.ones(3),), ".gamma()")):
        with pytest.raises(MycError, match="pass the array as an argument") as e:
            myc.jit(fn)(*args)
        assert what in str(e.value)


def test_permutation_and_choice_without_p_draw_as_numpy():
    """(once refused above): the generator's own shuffle and bounded integers."""
    np.testing.assert_array_equal(myc.jit(e_permutation)(np.random.default_rng(0)),
                                  e_permutation(np.random.default_rng(0)))
    x = np.array([1.0, 2.0, 3.0])
    np.random.seed(5)
    want = e_global_choice(x)
    np.random.seed(5)
    assert myc.jit(e_global_choice)(x) == want
