"""The checker itself: it must fail, readably, when a derivative is wrong."""

from __future__ import annotations

import numpy as np
import pytest

import myc

from . import prim_fns as F

try:
    import tests.gradcheck as gc
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    import gradcheck as gc

X = np.array([0.3, -1.2, 0.8])
Y = np.array([1.5, 0.4, -0.7])


def _corrupt_vjp(monkeypatch, argnum, index, delta=0.5):
    real = myc.vjp

    def vjp(f, *primals):
        out, pullback = real(f, *primals)

        def bad(ct):
            d = list(pullback(ct))
            d[argnum] = np.array(d[argnum], copy=True)
            d[argnum][index] += delta
            return tuple(d)

        return out, bad

    monkeypatch.setattr(myc, "vjp", vjp)


def test_reports_the_argument_and_element_of_a_wrong_vjp(monkeypatch):
    _corrupt_vjp(monkeypatch, 1, (2,))
    with pytest.raises(gc.GradCheckError) as info:
        gc.check_grads(F.mul, (X, Y))
    text = str(info.value)
    assert "reverse mode (vjp)" in text and "argument 1 element (2,)" in text
    assert "argument 0" not in text  # only the corrupted element is named
    assert "1 of 6 elements" in text


def test_reports_a_wrong_vjp_inside_a_tuple_argument(monkeypatch):
    real = myc.vjp

    def vjp(f, *primals):
        out, pullback = real(f, *primals)
        def bad(ct):
            (d,) = pullback(ct)
            return ((d[0], d[1], d[2] * 2.0),)

        return out, bad

    monkeypatch.setattr(myc, "vjp", vjp)
    with pytest.raises(gc.GradCheckError, match=r"argument 0\[2\] element \(1,\)"):
        gc.check_grads(F.getitem_tuple_arg, ((X, 2.0, Y),))


def test_reports_a_wrong_jvp(monkeypatch):
    real = myc.jvp
    monkeypatch.setattr(myc, "jvp", lambda f, p, t: (real(f, p, t)[0], real(f, p, t)[1] * 1.1))
    with pytest.raises(gc.GradCheckError, match="forward mode"):
        gc.check_grads(F.sin, (X,))


def test_reports_a_cotangent_of_the_wrong_structure(monkeypatch):
    real = myc.vjp
    monkeypatch.setattr(myc, "vjp", lambda f, *p: (real(f, *p)[0], lambda ct: (1.0,)))
    with pytest.raises(gc.GradCheckError, match=r"expected an array of shape \(3,\)"):
        gc.check_grads(F.sin, (X,))


def test_second_order_catches_a_wrong_second_derivative(monkeypatch):
    # correct first derivatives, a wrong Hessian-vector product (jvp of grad)
    real = myc.jvp

    def jvp(f, p, t):
        out, tan = real(f, p, t)
        if isinstance(f, myc.api.Transformed):  # a gradient function
            tan = gc.tree_map(lambda v: v * 1.1, tan)
        return out, tan

    monkeypatch.setattr(myc, "jvp", jvp)
    f = lambda v: np.sum(np.sin(v) * v)
    gc.check_grads(f, (X,), order=1)
    with pytest.raises(gc.GradCheckError, match="forward mode"):
        gc.check_grads(f, (X,), order=2)


def test_elementwise_check_names_every_bad_element(monkeypatch):
    real = myc.grad

    def grad(f, argnums=0):
        g = real(f, argnums)
        return lambda *a: tuple(x * np.array([1.0, 1.0, 3.0]) for x in g(*a))

    monkeypatch.setattr(myc, "grad", grad)
    with pytest.raises(gc.GradCheckError) as info:
        gc.check_grad_elementwise(lambda v, w: np.sum(np.sin(v) * w), (X, Y))
    text = str(info.value)
    assert "argument 0 element (2,)" in text and "argument 1 element (2,)" in text
    assert "2 of 6 elements" in text


def test_passes_on_correct_functions_of_every_argument_kind():
    gc.check_grads(F.getitem_arange_labels, (np.ones((2, 3)) * X, np.array([2, 0])), argnums=0)
    gc.check_grads(F.make_tuple, (1.5, X))
    gc.check_grad_elementwise(F.mul, (X, Y))
    gc.check_grads(F.mul, (X.astype(np.float32), Y), eps=1e-3, rtol=1e-4, atol=1e-5)
