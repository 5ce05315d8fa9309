"""The unrolling policy (docs/loops.md): a static loop unrolls while its unrolled size is
small (its iterations fuse), and the rest of a long one becomes a ``loop`` node -- so
compile time stops growing with the trip count.  Sizes, not timings, are asserted."""

import numpy as np
import pytest

import myc
from myc.infer import control


def recurrence(x):
    for _ in range(30):
        for _ in range(40):
            x = x * 0.999 + 0.001
    return x


def recurrence_loss(x):
    return np.sum(recurrence(x) ** 2)


def horner(x, coeffs):
    acc = np.zeros_like(x)
    for i in range(coeffs.shape[0]):
        acc = acc * x + coeffs[i]
    return np.sum(acc)


def long_scalar(x):
    for _ in range(20000):
        x = x * 0.999 + 0.001
    return x


def counted(x):
    i = 0
    while i < 100000:
        x = x * 0.9999 + 0.0001
        i += 1
    return x


def _reference(x, steps):
    for _ in range(steps):
        x = x * 0.999 + 0.001
    return x


def _muls(text: str) -> int:
    return text.count("= mul(")


def test_a_30_step_recurrence_compiles_to_a_loop_node_not_30_copies():
    x = np.linspace(0.0, 1.0, 512)
    text = myc.ir(recurrence, x, stage="optimized")
    assert "= loop(" in text
    assert _muls(text) < 30 * 40  # the unrolled iterations are a bounded prefix
    np.testing.assert_allclose(myc.jit(recurrence)(x), _reference(x, 1200), rtol=1e-12)


def test_its_gradient_keeps_the_loop_and_agrees_with_the_unrolled_one(monkeypatch):
    x = np.linspace(0.0, 1.0, 512)
    g = myc.grad(recurrence_loss)(x)
    text = myc.ir(myc.grad(recurrence_loss), x, stage="optimized")
    assert "= loop(" in text
    monkeypatch.setattr(control, "UNROLL_NODES", 10**9)
    unrolled = myc.grad(recurrence_loss)(x)
    assert "= loop(" not in myc.ir(myc.grad(recurrence_loss), x, stage="optimized")
    np.testing.assert_allclose(g, unrolled, rtol=1e-10)


def test_a_small_loop_still_unrolls_and_fuses():
    x = np.linspace(0.0, 0.9, 4096, dtype=np.float32)
    c = np.linspace(0.1, 1.0, 64, dtype=np.float32)
    assert "= loop(" not in myc.ir(horner, x, c, stage="optimized")
    assert "= loop(" not in myc.ir(myc.value_and_grad(horner), x, c, stage="optimized")


def test_20k_steps_on_a_scalar_and_a_counted_while_compile_natively():
    assert "= loop(" in myc.ir(long_scalar, 1.0, stage="optimized")
    np.testing.assert_allclose(myc.jit(long_scalar)(1.0), _reference(1.0, 20000), rtol=1e-12)
    x = np.ones(64)
    assert "= loop(" in myc.ir(counted, x, stage="optimized")
    ref = x.copy()
    for _ in range(100000):
        ref = ref * 0.9999 + 0.0001
    np.testing.assert_allclose(myc.jit(counted)(x), ref, rtol=1e-9)


def _literal_transition(t, ys):
    # a matrix literal of computed scalars, read by every iteration of a long loop (a
    # Kalman filter's transition matrix): the gradient flows through the loop into
    # the literal's pieces
    a, b = t
    A = np.array([[1.0, 0.1], [-(a**2) * 0.1, 1.0 - b * 0.1]])
    m, total = np.ones(2), 0.0
    for y in ys:
        m = A @ m
        total = total + np.sum(m * y)
    return total


def test_gradient_through_a_loop_node_reaches_the_scalars_of_an_array_literal(monkeypatch):
    t, ys = np.array([0.5, 0.3]), np.linspace(0.0, 1.0, 200)[:, None]
    monkeypatch.setattr(control, "UNROLL_NODES", 40)  # surely a loop node
    g = myc.grad(_literal_transition)(t, ys)
    eps = 1e-6
    fd = [(_literal_transition(t + eps * e, ys) - _literal_transition(t - eps * e, ys))
          / (2 * eps) for e in np.eye(2)]
    assert np.all(np.abs(fd) > 1e-3)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def _dict_loss(params, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(params["w"] * x + params["b"][0]))
    return total


def test_gradient_through_a_loop_node_keeps_a_dict_argument_a_dict(monkeypatch):
    """The adjoint route (a loop node swept backwards) returns a dict's gradient as a
    dict, a list's as a list, as the graph transform does."""
    from collections import namedtuple

    monkeypatch.setattr(control, "UNROLL_NODES", 10)
    params = {"w": np.array([0.5, -0.2, 0.1]), "b": [0.3, 0.0]}
    xs = np.linspace(-1.0, 1.0, 60).reshape(20, 3)
    g = myc.grad(_dict_loss)(params, xs)
    assert type(g) is dict and list(g) == ["w", "b"] and type(g["b"]) is list
    eps = 1e-6
    fd = [(_dict_loss({"w": params["w"] + eps * e, "b": params["b"]}, xs)
           - _dict_loss({"w": params["w"] - eps * e, "b": params["b"]}, xs)) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(g["w"], fd, rtol=1e-6)

    Pair = namedtuple("Pair", "w b")

    def nt_loss(p, xs):
        return _dict_loss({"w": p.w, "b": [p.b, 0.0]}, xs)

    g = myc.grad(nt_loss)(Pair(params["w"], 0.3), xs)
    assert type(g) is Pair


def table_rows(x):
    T = np.zeros((x.shape[0] + 1, 3))
    for i in range(1, x.shape[0] + 1):  # settled types from the start: no peeled copy
        for j in range(3):
            T[i, j] = np.tanh(T[i - 1, j] + x[i - 1] * (j + 1.0)) * 0.9
    return np.sum(T ** 2)


def settles(x):
    total = 0  # a Python int first, a float64 after the first iteration: peeled
    for i in range(300):  # past the unrolling limit
        total = total + np.sum(np.sin(x * (i + 1.0)) ** 2)
    return total


def _outer(text: str) -> str:
    return text.split("\ngraph ", 1)[0]  # the program around the loop bodies


def test_a_loop_whose_types_are_settled_is_a_loop_node_from_its_entry():
    """Its first iteration changes no variable's type (``T`` is float64 throughout;
    ``i`` and ``j`` first set by it): the loop node starts at the loop's entry, so the
    program holds one copy of the body, not a peeled iteration beside it -- also in the
    gradient (soft-DTW's table: 3 x 24 copies of a cell became 3 x 12)."""
    x = np.linspace(-1.0, 1.0, 70)
    for f in (table_rows, myc.value_and_grad(table_rows)):
        text = myc.ir(f, x, stage="optimized")
        assert "= loop(" in text and "tanh(" not in _outer(text)
    np.testing.assert_allclose(myc.jit(table_rows)(x), table_rows(x), rtol=1e-12)
    g = myc.grad(table_rows)(x)
    for i in (0, 33, 69):
        e = np.zeros_like(x)
        e[i] = 1e-6
        fd = (table_rows(x + e) - table_rows(x - e)) / 2e-6
        np.testing.assert_allclose(g[i], fd, rtol=1e-6, atol=1e-8)


def test_a_loop_whose_first_iteration_changes_a_type_keeps_it_peeled():
    x = np.linspace(0.0, 1.0, 2000)
    text = myc.ir(settles, x, stage="optimized")
    assert "= loop(" in text and "sin(" in _outer(text)  # the peeled first iteration
    assert myc.jit(settles)(x) == pytest.approx(settles(x), rel=1e-12)
