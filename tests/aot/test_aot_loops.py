"""Ahead-of-time libraries of programs with data-dependent control flow: ``while``
loops (``loop`` nodes), loops with ``break``, if-converted branches (``select``) and
gradients through loops (a taped loop plus a backward loop).  Each library is called
from a C program with no Python in the process and compared with ``myc.jit``."""

from __future__ import annotations

import numpy as np
import pytest
from test_aot import CC, build_driver, check_against_jit, check_dynamic, flat, run_c

import myc
from benchmarks.workloads.w5_while_loop import while_loss  # W5's loop and loss
from tests.infer.test_loops import converge as settle  # W5's loop, also returning its count

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler ('cc')")


def newton(x):
    y = x
    while np.max(np.abs(y * y - x)) > 1e-6:
        y = 0.5 * (y + x / y)
    return y


def newton_counted(x):
    y = x
    n = 0
    while np.max(np.abs(y * y - x) / x) > 1e-12:
        y = 0.5 * (y + x / y)
        n += 1
    return y, n


def halve_until_small(x):
    while np.sum(np.abs(x)) > 10.0:
        x = x * 0.5
    return x


def branchy(x, w):
    if np.sum(x) > 0.0:
        y = np.tanh(x @ w)
    else:
        y = x @ w * 2.0
    return y, np.max(y)


def loop_in_branch(x):
    if np.max(x) > 1.0:
        while np.max(x) > 1.0:
            x = x * 0.75
    return x * 2.0


def rnn_loss(h0, w):
    """A GEMM in the body and a loop invariant (``w``) whose gradient accumulates."""
    h = h0
    k = 0
    while k < 50:
        if np.max(np.abs(h)) >= 3.0:
            break
        h = h @ w + 0.1
        k += 1
    return np.sum(h * h)


def swap(a, b):
    """Two states exchanged every iteration: the next state reads the other buffer."""
    while np.sum(a) < 20.0:
        a, b = b, a + 1.0
    return a, b


def test_newton_sqrt(tmp_path):
    x = np.linspace(0.5, 40.0, 8)
    exe, expected = check_against_jit(tmp_path, newton, "f64[8]", [x], rtol=1e-12)
    np.testing.assert_allclose(expected[0], np.sqrt(x), rtol=1e-7)


def test_trip_count_differs_per_input(tmp_path):
    so_in = [np.linspace(1.0, 2.0, 16)]
    exe, _ = check_against_jit(tmp_path, newton_counted, "f64[16]", so_in, rtol=1e-12)
    counts = set()
    for scale in (1.0, 1e3, 1e8):  # further from 1: more iterations
        inputs = [np.linspace(1.0, 2.0, 16) * scale]
        expected = flat(myc.jit(newton_counted)(*inputs))
        got = run_c(tmp_path, exe, inputs, expected)
        assert isinstance(got, list), got
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        assert int(got[1]) == int(expected[1])
        counts.add(int(got[1]))
    assert len(counts) == 3, counts


def test_loop_with_break_and_counter(tmp_path):
    x = np.linspace(0.3, 3.0, 64).astype(np.float32)
    exe, expected = check_against_jit(tmp_path, settle, "f32[64]", [x])
    assert 20 < int(expected[1]) < 1000
    y = np.full(64, 1e-6, np.float32)  # the first step is already small: one iteration
    want = flat(myc.jit(settle)(y))
    got = run_c(tmp_path, exe, [y], want)
    assert int(got[1]) == int(want[1]) == 1
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_zero_trip_loop(tmp_path):
    small = np.array([1.0, -2.0, 3.0], np.float32)  # |x| sums to 6: never halved
    exe, expected = check_against_jit(tmp_path, halve_until_small, "f32[3]", [small])
    np.testing.assert_array_equal(expected[0], small)
    big = np.array([100.0, -2.0, 3.0], np.float32)
    want = flat(myc.jit(halve_until_small)(big))
    got = run_c(tmp_path, exe, [big], want)
    np.testing.assert_array_equal(got[0], want[0])
    assert np.sum(np.abs(got[0])) <= 10.0


def test_if_converted_branch_is_native(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    pos = np.abs(rng.standard_normal((6, 5))).astype(np.float32)
    exe, _ = check_against_jit(tmp_path, branchy, "f32[6,5], f32[5,4]", [pos, w], rtol=1e-5)
    for x in (pos, -pos):  # each side of the branch
        want = flat(myc.jit(branchy)(x, w))
        got = run_c(tmp_path, exe, [x, w], want)
        for g, e in zip(got, want, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_loop_only_where_its_branch_is_taken(tmp_path):
    x = np.array([4.0, 0.5, -3.0], np.float64)
    exe, _ = check_against_jit(tmp_path, loop_in_branch, "f64[3]", [x], rtol=1e-14)
    low = np.array([0.25, 0.5, -3.0])  # the branch (and its loop) not taken
    want = flat(myc.jit(loop_in_branch)(low))
    got = run_c(tmp_path, exe, [low], want)
    np.testing.assert_array_equal(got[0], want[0])


def test_swapped_states(tmp_path):
    a = np.array([-9.0, 1.0]), np.array([0.5, 0.25])
    check_against_jit(tmp_path, swap, "f64[2], f64[2]", list(a), rtol=1e-14)


def test_gradient_through_w5_loop(tmp_path):
    """value_and_grad through the data-dependent loop: the library tapes the state of
    every iteration (growing the tape with realloc) and sweeps it backwards."""
    x = np.linspace(0.3, 3.0, 256).astype(np.float32)
    fn = myc.value_and_grad(while_loss)
    exe, expected = check_against_jit(tmp_path, fn, "f32[256]", [x], rtol=1e-5, atol=1e-6)
    want = flat(myc.jit(myc.value_and_grad(while_loss))(x))
    for e, w in zip(expected, want, strict=True):
        np.testing.assert_allclose(e, w)
    # the gradient is not trivial: it differs from one where every element is 1
    assert np.abs(expected[1] - 1.0).max() > 0.1
    # a different input runs a different number of iterations with the same library
    y = np.linspace(-2.0, 0.5, 256).astype(np.float32)
    want = flat(myc.jit(myc.value_and_grad(while_loss))(y))
    got = run_c(tmp_path, exe, [y], want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_gradient_through_loop_with_matmul(tmp_path):
    rng = np.random.default_rng(1)
    h0 = (0.1 * rng.standard_normal((4, 6))).astype(np.float64)
    w = (0.6 * rng.standard_normal((6, 6)) + 0.5 * np.eye(6)).astype(np.float64)
    fn = myc.value_and_grad(rnn_loss, (0, 1))
    check_against_jit(tmp_path, fn, "f64[4,6], f64[6,6]", [h0, w], rtol=1e-10, atol=1e-12)


def test_tape_out_of_memory_is_a_status(tmp_path):
    """A tape that cannot grow (address space capped) gives MYC_ERR_ALLOC, not a crash."""
    x = np.full(1 << 17, 2.5, np.float64)  # 1 MiB of state per iteration, ~150 iterations
    fn = myc.value_and_grad(while_loss)
    so, h = myc.aot(fn, "f64[131072]", str(tmp_path / "libtape.so"))
    want = flat(myc.jit(fn)(x))
    exe = build_driver(tmp_path, so, h, "value_and_grad_while_loss", [x], len(want))
    got = run_c(tmp_path, exe, [x], want)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    msg = run_c(tmp_path, exe, [x], want, mode="aslimit", extra=("40",))
    assert isinstance(msg, str) and msg.startswith("status 6:"), msg
    assert "out of memory growing the tape of the loop at line" in msg


def test_dynamic_size_loop(tmp_path):
    sets = [[np.linspace(0.5, 9.0, n)] for n in (1, 3, 50)]
    check_dynamic(tmp_path, newton, "f64[N]", sets, rtol=1e-12)


def test_dynamic_size_gradient_through_loop(tmp_path):
    fn = myc.value_and_grad(while_loss)
    sets = [[np.linspace(0.3, 3.0, n).astype(np.float32)] for n in (2, 17, 300)]
    check_dynamic(tmp_path, fn, "f32[N]", sets, rtol=1e-5)


def halves(x):
    if np.sum(np.abs(x)) < 1.0:
        return x
    return halves(x * 0.5) + 1.0


def test_recursion_is_refused_with_its_line(tmp_path):
    with pytest.raises(myc.MycError, match=r"recursive function halves.* at line \d+ is "
                       "not supported ahead of time"):
        myc.aot(halves, "f64[4]", str(tmp_path / "libhalves.so"))


def test_cli_on_a_loop_program(tmp_path):
    from myc.cli import main

    src = tmp_path / "loopmod.py"
    src.write_text("import numpy as np\n\n\ndef newton(x):\n    y = x\n"
                   "    while np.max(np.abs(y * y - x)) > 1e-6:\n"
                   "        y = 0.5 * (y + x / y)\n    return y\n")
    out = tmp_path / "libnewtoncli.so"
    assert main(["aot", f"{src}:newton", "--sig", "f64[N]", "-o", str(out)]) == 0
    x = np.array([2.0, 9.0, 1e4])
    exe = build_driver(tmp_path, str(out), str(tmp_path / "libnewtoncli.h"), "newton", [x], 1)
    got = run_c(tmp_path, exe, [x], [x])
    np.testing.assert_allclose(got[0], np.sqrt(x), rtol=1e-9)


def nested(x):
    n = 0
    while np.sum(x) > 1.0:
        y = x
        while np.max(y) > 0.5:
            y = y * 0.9
            n += 1
        x = x * 0.5 + y * 0.1
    return x, n


def for_break(x):
    for _ in range(100):
        x = np.tanh(x) * 1.1
        if np.max(x) < 0.2:
            break
    return x


def test_nested_loops_and_for_with_break(tmp_path):
    x = np.linspace(1.0, 4.0, 8)
    _, expected = check_against_jit(tmp_path, nested, "f64[8]", [x], rtol=1e-12, name="n")
    assert int(expected[1]) > 8
    check_against_jit(tmp_path, for_break, "f64[8]", [x], rtol=1e-12, name="fb")


def last_step(x):
    while np.max(x) > 1.0:
        step = x * 0.5
        x = x - step
    return x, step


def test_variable_set_only_in_a_loop_that_never_ran(tmp_path):
    """Python raises UnboundLocalError reading ``step``: the library returns
    MYC_ERR_RAISE (7) with the message, and the value when the loop ran."""
    x = np.array([3.0, 0.5])
    exe, expected = check_against_jit(tmp_path, last_step, "f64[2]", [x], rtol=1e-14)
    small = np.array([0.25, 0.5])
    with pytest.raises(myc.MycError, match="referenced before assignment"):
        myc.jit(last_step)(small)
    msg = run_c(tmp_path, exe, [small], expected)
    assert isinstance(msg, str) and msg.startswith("status 7:"), msg
    assert "local variable 'step' is referenced before assignment" in msg


def halving_factor(x):
    t = 1.0
    while np.max(x) > 0.5:
        x = x * 0.5
        t = t / 2.0  # a Python float division by a nonzero constant: cannot raise
    return x * t


def divide_by_data(x):
    t = 1.0
    s = 3.0
    while np.max(x) > 0.5:
        x = x * 0.5
        s = s - 1.0
        t = t / s  # ZeroDivisionError in Python once s reaches 0
    return x * t


def nested_loss(x):
    while np.sum(x * x) > 1.0:
        y = x
        while np.max(np.abs(y)) > 0.9:
            y = np.tanh(y) * 1.05
        x = x * 0.7 + y * 0.05
    return np.sum(x * x)


def test_python_float_division_in_a_loop(tmp_path):
    x = np.linspace(0.5, 4.0, 8)
    check_against_jit(tmp_path, halving_factor, "f64[8]", [x], rtol=1e-14)
    with pytest.raises(myc.MycError, match=r"'truediv' on one side .* at line \d+"):
        myc.aot(divide_by_data, "f64[8]", str(tmp_path / "libdiv.so"))


def test_gradient_through_nested_loops(tmp_path):
    x = np.linspace(0.5, 4.0, 8)
    check_against_jit(tmp_path, myc.value_and_grad(nested_loss), "f64[8]", [x],
                      rtol=1e-10, atol=1e-12)


def test_numpy_reference_of_loop_programs_matches_the_jit():
    """``aot_dynamic.evaluate`` (used to validate small dynamic sizes) runs loops,
    selects and tapes as the library does."""
    from myc.aot import build_program
    from myc.aot.dynamic import evaluate

    x = np.linspace(0.3, 3.0, 16).astype(np.float32)
    for fn in (settle, myc.value_and_grad(while_loss), loop_in_branch):
        prog = build_program(fn, "f32[16]")
        got = evaluate(prog, [x])
        want = flat(myc.jit(fn)(x))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_dynamic_batch_gradient_through_loop_with_matmul(tmp_path):
    rng = np.random.default_rng(1)
    w = 0.6 * rng.standard_normal((6, 6)) + 0.5 * np.eye(6)
    sets = [[0.1 * rng.standard_normal((b, 6)), w] for b in (1, 4, 33)]
    check_dynamic(tmp_path, myc.value_and_grad(rnn_loss, (0, 1)), "f64[B,6], f64[6,6]",
                  sets, rtol=1e-9)
