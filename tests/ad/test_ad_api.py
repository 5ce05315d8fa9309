"""The AD API's contracts: refusals with MycErrors, argnums, vjp pullbacks (structure,
shape checks), inputs never mutated -- and strict-xfail reproducers of bugs found while
writing these tests (each names the module at fault)."""

from __future__ import annotations

import numpy as np
import pytest

import myc

from . import api_fns as A

X = np.array([1.0, 2.0, 3.0])


# ------------------------------------------------------------------ grad refusals


@pytest.mark.parametrize("fn, what", [
    (lambda v: v * 2.0, "array of shape (3,)"),
    (lambda v: (np.sum(v), np.sum(v)), "tuple"),
    (lambda v: 3, "int"),
    (lambda v: int(np.sum(v)), "int"),
    (lambda v: np.sum(v) > 0, "bool"),
], ids=["array", "tuple", "int-literal", "int-cast", "bool"])
def test_grad_needs_a_float_scalar_output(fn, what):
    for transform in (myc.grad, myc.value_and_grad):
        with pytest.raises(myc.MycTypeError, match="float scalar") as info:
            transform(fn)(X)
        assert what in str(info.value)


@pytest.mark.parametrize("arg", [3, True, np.arange(3), np.ones(3, bool), np.int64(2)],
                         ids=["int", "bool", "int-array", "bool-array", "np-int"])
def test_grad_with_respect_to_int_or_bool_is_refused(arg):
    f = lambda v: np.sum(v * 2.0)
    with pytest.raises(myc.MycTypeError, match="integer or bool"):
        myc.grad(f)(arg)
    # ...but an int argument that is not differentiated is fine
    assert myc.grad(lambda a, n: a * n, argnums=0)(1.5, arg if np.ndim(arg) == 0 else 2) \
        == pytest.approx(float(arg if np.ndim(arg) == 0 else 2))


@pytest.mark.parametrize("argnums", [2, -3, (0, 2), "a", (), True, (0, None)],
                         ids=["too-big", "too-negative", "tuple-out-of-range", "str", "empty",
                              "bool", "none-in-tuple"])
def test_bad_argnums(argnums):
    with pytest.raises(myc.MycTypeError, match="argnums"):
        myc.grad(lambda a, b: a * b, argnums=argnums)(1.0, 2.0)


def test_refusals_are_myc_errors_without_compiler_frames():
    with pytest.raises(myc.MycError) as info:
        myc.grad(lambda v: v * 2.0)(X)
    assert info.value.__traceback__ is not None
    frames = [f.filename for f in __import__("traceback").extract_tb(info.value.__traceback__)]
    assert not any("/myc/ad/" in f or "/myc/backends/" in f for f in frames), frames


# ------------------------------------------------------------------ vjp


def test_vjp_cotangents_mirror_every_argument():
    x = np.array([0.5, -1.0])
    t = (1.5, np.array([2.0, 3.0, 4.0]))
    out, pullback = myc.vjp(A.scale_sum, x, t)
    assert out == pytest.approx(A.scale_sum(x, t))
    dx, dt = pullback(2.0)
    assert isinstance(dx, np.ndarray) and dx.shape == (2,)
    np.testing.assert_allclose(dx, 2.0 * (1.5 + np.array([9.0, 0.0])))
    assert isinstance(dt, tuple) and len(dt) == 2
    assert type(dt[0]) is float and dt[0] == pytest.approx(2.0 * np.sum(x))
    np.testing.assert_allclose(dt[1], np.full(3, 2.0 * x[0]))


def test_vjp_pullback_checks_the_cotangent():
    _, pullback = myc.vjp(lambda v: v * 2.0, X)
    with pytest.raises(myc.MycShapeError, match=r"shape \(4,\)"):
        pullback(np.ones(4))
    with pytest.raises(myc.MycShapeError):
        pullback(1.0)
    np.testing.assert_array_equal(pullback(np.ones(3))[0], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(pullback(np.ones(3))[0], [2.0, 2.0, 2.0])  # reusable
    _, pullback = myc.vjp(lambda v: (v * 2.0, np.sum(v)), X)
    with pytest.raises(myc.MycTypeError, match="tuple"):
        pullback(np.ones(3))
    with pytest.raises(myc.MycTypeError, match="tuple"):
        pullback((np.ones(3),))
    with pytest.raises(myc.MycShapeError, match=r"cotangent\[0\]"):
        pullback((np.ones(2), 1.0))
    np.testing.assert_array_equal(pullback((np.ones(3), 1.0))[0], [3.0, 3.0, 3.0])


def test_vjp_float32_cotangents():
    x32 = X.astype(np.float32)
    _, pullback = myc.vjp(lambda v: v * 2.0, x32)
    (d,) = pullback(np.ones(3))
    assert d.dtype == np.float32


# ------------------------------------------------------------------ jvp


def test_jvp_argument_checks():
    with pytest.raises(myc.MycTypeError, match="tuples"):
        myc.jvp(lambda v: v * 2.0, [X], [X])
    with pytest.raises(myc.MycTypeError, match="1 primals but 0 tangents"):
        myc.jvp(lambda v: v * 2.0, (X,), ())
    out, t = myc.jvp(A.mul_int, (X, 3), (np.ones(3), 0))
    np.testing.assert_array_equal(t, [3.0, 3.0, 3.0])


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_jvp_and_vjp_with_a_function_valued_default(backend):
    """A default that is a function is compiled in, not a primal: forward mode once
    called ``np.tanh(x, tangent)`` (NumPy's ``out=`` argument) and refused."""
    x, w = np.array([0.3, -0.7, 1.1]), 0.8
    f = lambda x, w: np.sum(np.tanh(x * w) ** 2) * 3.0  # noqa: E731
    dfdx = 6.0 * np.tanh(x * w) * (1.0 - np.tanh(x * w) ** 2) * w
    dfdw = np.sum(6.0 * np.tanh(x * w) * (1.0 - np.tanh(x * w) ** 2) * x)
    v = np.array([1.0, -2.0, 0.5])
    out, t = myc.jvp(myc.jit(A.act_default, backend=backend), (x, w), (v, 0.25))
    assert np.isclose(out, f(x, w))
    assert np.isclose(t, dfdx @ v + 0.25 * dfdw)
    out, pull = myc.vjp(A.act_default, x, w, backend=backend)
    gx, gw = pull(1.0)
    np.testing.assert_allclose(gx, dfdx)
    assert np.isclose(gw, dfdw)
    _, t = myc.jvp(A.user_act_default, (x,), (v,), backend=backend)
    assert np.isclose(t, 4.0 * x @ v)


# ------------------------------------------------------------------ inputs are never mutated


def test_inputs_never_mutated():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    idx = np.array([0, 2, 0, 3])
    w = (np.array([1.0, 2.0, 3.0, 4.0]))
    saved = [a.copy() for a in (x, idx, w)]
    grads = myc.grad(A.scatter_program, argnums=(0, 2))(x, idx, w)
    myc.value_and_grad(A.scatter_program)(x, idx, w)
    myc.jvp(A.scatter_program, (x, idx, w), (np.ones(4), np.zeros(4), np.ones(4)))
    restricted = lambda a, b: A.scatter_program(a, np.array([0, 2, 0, 3]), b)
    out, pullback = myc.vjp(restricted, x, w)
    d = pullback(1.0)
    for a, b in zip((x, idx, w), saved, strict=True):
        np.testing.assert_array_equal(a, b)
    # the results are the caller's to mutate: doing so changes nothing myc holds
    for g in (*grads, *d):
        g += 100.0
    np.testing.assert_allclose(pullback(1.0)[0], d[0] - 100.0)
    t = (x, (w, 2.0))
    myc.grad(lambda tt: np.sum(tt[0] * tt[1][0]) * tt[1][1])(t)
    np.testing.assert_array_equal(t[0], saved[0])


# ------------------------------------------------------------------ reproducers of bugs found


def test_fixed_vjp_with_an_int_argument():
    out, pullback = myc.vjp(A.mul_int, 2.0, 3)
    assert out == 6.0
    d = pullback(1.0)
    assert len(d) == 2 and d[0] == 3.0


def test_fixed_grad_with_positional_argnums_inside_a_program():
    assert A.uses_grad_positional_argnums(0.3, 1.1) == pytest.approx(np.sin(1.1))
    assert myc.jit(A.uses_grad_positional_argnums)(0.3, 1.1) == pytest.approx(np.sin(1.1))


@pytest.mark.parametrize("fn, expected", [
    (A.grad_of_nested_def, np.cos(0.5) * 0.5 + np.sin(0.5)),
    (A.grad_of_closure, np.cos(0.5) * 0.5),
], ids=["nested-def", "closure"])
def test_fixed_grad_of_a_nested_function_inside_a_program(fn, expected):
    assert fn(0.5) == pytest.approx(expected)  # CPython
    assert myc.jit(fn)(0.5) == pytest.approx(expected)


def test_fixed_closure_reading_a_variable_reassigned_later():
    expected = A.late_binding_closure(2.0)  # CPython: 2 * 102
    try:
        got = myc.jit(A.late_binding_closure)(2.0)
    except myc.MycError:
        return  # refusing the construct would be fine too
    assert got == pytest.approx(expected)


def test_fixed_float_argnums_raises_a_raw_type_error():
    with pytest.raises(myc.MycTypeError, match="argnums"):
        myc.grad(lambda a, b: a * b, argnums=1.0)(1.0, 2.0)


def test_fixed_jvp_tangent_shape_mismatch_names_an_internal_file():
    with pytest.raises((myc.MycShapeError, myc.MycTypeError)) as info:
        myc.jvp(lambda v: v * 2.0, (X,), (np.ones(5),))
    assert "tangent" in str(info.value) and "jvps.py" not in str(info.value)


def test_jvp_is_compiled_once_per_function():
    """myc.jvp runs the forward-mode graph through the compiled pipeline (specialized
    per signature), not the reference evaluator, and builds it once per function."""
    from myc.api import _graph_of
    from myc.runtime.specialize import SpecializedFunction
    from myc.runtime.vjp import _JVP

    def f(x):
        return np.sum(np.tanh(x) * x)

    x = np.linspace(-1.0, 2.0, 1000)
    t = np.ones_like(x)
    y, dy = myc.jvp(f, (x,), (t,))
    y2, dy2 = myc.jvp(f, (x * 2,), (t,))
    assert y == pytest.approx(f(x)) and y2 == pytest.approx(f(x * 2))
    assert dy == pytest.approx(np.sum(np.tanh(x) + x * (1 - np.tanh(x) ** 2)))
    (run,) = _JVP[_graph_of(f)].values()
    assert isinstance(run, SpecializedFunction)
    assert [p for p in run.cache.values() if p is not None and hasattr(p, "run")]


def test_vjp_forward_and_pullback_are_compiled():
    """myc.vjp's forward pass and its pullback (J(f) and the backpropagator in one graph,
    the forward recomputed) are compiled programs; the pullback can be called many times."""
    from myc.api import _graph_of
    from myc.runtime.specialize import SpecializedFunction
    from myc.runtime.vjp import _VJP

    def f(x, w):
        return np.tanh(x @ w), np.sum(x)

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(6, 4)), rng.normal(size=(4, 3))
    (y, s), pb = myc.vjp(f, x, w)
    t1 = 1 - np.tanh(x @ w) ** 2
    for scale in (1.0, 2.0):
        dx, dw = pb((np.ones_like(y) * scale, 1.0))
        np.testing.assert_allclose(dw, x.T @ t1 * scale)
        np.testing.assert_allclose(dx, t1 @ w.T * scale + 1.0)
    (runs,) = _VJP[_graph_of(f)].values()
    assert all(isinstance(r, SpecializedFunction) and any(
        p is not None and hasattr(p, "run") for p in r.cache.values()) for r in runs)
