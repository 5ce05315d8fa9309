"""Derivatives of whole programs (``ad_programs.py``) against finite differences.

Every program is checked in reverse mode (vjp with a random cotangent) and forward mode
(jvp along a random direction), with the inner-product identity tying the two; for
programs of scalar arguments the gradient from ``myc.grad`` must equal the tangents from
``myc.jvp`` with unit tangents (reverse == forward).  The API behaviours of issue 3 that
concern gradient values (dtypes, zeros, argnums, value_and_grad, composition with jit,
grad inside programs) are checked at the end.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc

from . import ad_programs as P

try:
    from tests.gradcheck import (
        assert_mirrors,
        assert_tree_close,
        check_grads,
        has_float_leaf,
    )
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import (
        assert_mirrors,
        assert_tree_close,
        check_grads,
        has_float_leaf,
    )

CASES = [pytest.param(fn, args, argnums, id=f"{fn.__name__}-{i}")
         for fn, args, argnums, _tags, i in P.PROGRAMS]
SCALAR_CASES = [pytest.param(fn, args, id=f"{fn.__name__}-{i}")
                for fn, args, _argnums, tags, i in P.PROGRAMS if "scalar" in tags]


def test_corpus_size():
    assert len({fn for fn, *_ in P.PROGRAMS}) >= 50


@pytest.mark.parametrize("fn, args, argnums", CASES)
def test_program_derivatives(fn, args, argnums):
    check_grads(fn, args, argnums=argnums)


def _is_scalar_float(v):
    return isinstance(v, float) or (isinstance(v, np.generic) and v.dtype.kind == "f")


@pytest.mark.parametrize("fn, args", SCALAR_CASES)
def test_reverse_equals_forward_on_scalar_programs(fn, args):
    assert all(_is_scalar_float(a) for a in args)
    assert _is_scalar_float(fn(*args))
    for i in range(len(args)):
        rev = myc.grad(fn, argnums=i)(*args)
        tangents = tuple(1.0 if j == i else 0.0 for j in range(len(args)))
        _, fwd = myc.jvp(fn, args, tangents)
        assert rev == pytest.approx(fwd, rel=1e-10, abs=1e-12), f"argument {i}"


@pytest.mark.parametrize("fn, args, argnums", [
    c for c in CASES if _is_scalar_float(c.values[0](*c.values[1]))])
def test_grad_agrees_with_vjp(fn, args, argnums):
    """``myc.grad`` (a graph of its own) gives what ``myc.vjp`` with seed 1.0 gives."""
    nums = tuple(i for i, a in enumerate(args) if has_float_leaf(a)) if argnums is None else (
        (argnums,) if isinstance(argnums, int) else tuple(argnums))
    grads = myc.grad(fn, argnums=nums)(*args)
    for k, i in enumerate(nums):
        assert_mirrors(grads[k], args[i], f"grad of argument {i}")
    value, grads2 = myc.value_and_grad(fn, argnums=nums)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert_tree_close(grads2, grads, 1e-12, 1e-14, "value_and_grad vs grad")


# ------------------------------------------------------------------ gradient values and types


def _poly(x, y, z):
    return np.sum(x * x) * 3.0 + np.sum(y) * 0.0


def test_float32_in_float32_gradient_out():
    x = np.array([1.0, 2.0, -0.5], np.float32)
    g = myc.grad(lambda v: np.sum(np.sin(v) * v))(x)
    assert isinstance(g, np.ndarray) and g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-5)
    s = myc.grad(lambda v: v * v * 3.0)(np.float32(1.5))
    assert isinstance(s, np.float32) and s == pytest.approx(9.0)
    p = myc.grad(lambda v: v * v * 3.0)(1.5)
    assert type(p) is float and p == pytest.approx(9.0)
    t = myc.grad(lambda a, b: np.sum(a * b), argnums=(0, 1))(x, np.float64(2.0))
    assert t[0].dtype == np.float32 and isinstance(t[1], np.float64)


def test_unused_arguments_get_zero_gradients():
    x = np.array([1.0, 2.0])
    y32 = np.ones((2, 3), np.float32)
    gx, gy, gz = myc.grad(_poly, argnums=(0, 1, 2))(x, y32, 2.5)
    np.testing.assert_array_equal(gx, 6.0 * x)
    assert gy.shape == (2, 3) and gy.dtype == np.float32 and not gy.any()
    assert gz == 0.0 and isinstance(gz, float)
    only_z = myc.grad(lambda a, b: np.sum(a) * 2.0, argnums=1)(x, (1.0, np.zeros(2)))
    assert only_z[0] == 0.0 and isinstance(only_z[1], np.ndarray) and not only_z[1].any()


def test_argnums_tuple_order_and_value_and_grad():
    f = lambda a, b, c: a * b * b + np.sin(c)
    g = myc.grad(f, argnums=(2, 0))(2.0, 3.0, 0.5)
    assert isinstance(g, tuple) and len(g) == 2
    assert g[0] == pytest.approx(np.cos(0.5)) and g[1] == pytest.approx(9.0)
    assert myc.grad(f, argnums=-2)(2.0, 3.0, 0.5) == pytest.approx(12.0)
    v, gs = myc.value_and_grad(f, argnums=(0, 1))(2.0, 3.0, 0.5)
    assert v == pytest.approx(f(2.0, 3.0, 0.5))
    assert gs == pytest.approx((9.0, 12.0))
    v1, g1 = myc.value_and_grad(f)(2.0, 3.0, 0.5)
    assert v1 == pytest.approx(v) and g1 == pytest.approx(9.0)


def test_grad_of_jit_and_jit_of_grad():
    x = np.array([0.3, -1.2, 2.0])
    expected = np.cos(x) * x + np.sin(x)
    f = lambda v: np.sum(np.sin(v) * v)
    np.testing.assert_allclose(myc.grad(myc.jit(f))(x), expected)
    np.testing.assert_allclose(myc.grad(myc.jit(f, backend="interp"))(x), expected)
    np.testing.assert_allclose(myc.jit(myc.grad(f))(x), expected)
    np.testing.assert_allclose(myc.jit(myc.grad(f), backend="interp")(x), expected)
    np.testing.assert_allclose(myc.jit(myc.grad(myc.jit(f)))(x), expected)
    check_grads(myc.jit(P.while_data_dependent), (1.1,))


def test_grad_inside_program_values():
    x = 0.7
    dg = lambda t: np.cos(t) * t * t + 2.0 * t * np.sin(t)
    assert P.grad_inside_body(x) == pytest.approx(dg(x) * x + P._g(x))
    assert P.module_level_grad(x) == pytest.approx(dg(2 * x) + x * dg(x))
    assert myc.jit(P.grad_inside_body)(x) == pytest.approx(P.grad_inside_body(x))
