"""Second and higher order: grad of grad, jvp of grad (Hessian-vector products), grad of
jvp, jvp of jvp, through branches, loops, recursion and closures.

Each second derivative is compared with central differences of the first derivative
that myc computes (itself checked against finite differences in test_ad_programs.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import myc

from . import ad_programs as P

try:
    from tests.gradcheck import axpy, check_grads, random_like, vdot, zeros_like_tree
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import axpy, check_grads, random_like, vdot, zeros_like_tree

EPS = 1e-5

# (program, args, index of the differentiated scalar argument)
SCALAR = [
    (P.if_else, (1.3,), 0), (P.if_else, (-0.7,), 0),
    (P.if_elif_else, (0.4, 2.0), 0), (P.if_elif_else, (1.6, 0.5), 1),
    (P.conditional_expression, (2.0,), 0),
    (P.while_data_dependent, (1.1,), 0), (P.while_counter, (3.3,), 0),
    (P.newton_sqrt, (2.0,), 0), (P.loop_break, (0.5,), 0), (P.loop_continue, (0.3,), 0),
    (P.early_return_in_loop, (0.2,), 0), (P.nested_loops, (0.6,), 0),
    (P.while_break_continue, (1.3,), 0), (P.recursion_power, (1.3, 5), 0),
    (P.recursion_tree, (0.7, 6), 0), (P.mutual_recursion, (0.5, 7), 0),
    (P.recursion_tail_accumulator, (0.9,), 0), (P.recursive_nested_def_captures, (0.8, 4), 0),
    (P.closure_captured_variable, (1.2, 0.7), 1), (P.closure_passed_to_hof, (0.6, 1.3), 1),
    (P.trapezoid_integral, (1.3,), 0), (P.newton_implicit_cube_root, (2.0,), 0),
    (P.rk4_ode_closure, (0.5, 1.2), 0), (P.compose_math_and_numpy, (0.4,), 0),
    (P.branch_selects_function, (-0.6,), 0), (P.early_return_in_while_in_for, (1.2,), 0),
    (P.while_calls_closure, (0.3, 2.0), 0), (P.math_module_functions, (1.3, 0.6), 0),
    (P.grad_inside_body, (0.7,), 0),
]

# (program, args, index of the differentiated argument: an array or a tuple of arrays)
ARRAY = [
    (P.while_array_norm, (P._r(3, 3) * 0.3,), 0),
    (P.softmax_cross_entropy, (P._r(17, 5, 4), np.array([0, 3, 1, 1, 2])), 0),
    (P.mlp_loss, ((P._r(18, 3, 5) * 0.5, P._r(19, 5) * 0.1, P._r(20, 5, 2) * 0.5,
                   P._r(21, 2) * 0.1), P._r(22, 4, 3), P._r(23, 4, 2)), 0),
    (P.logsumexp, (P._r(16, 6),), 0),
    (P.normalize_rows, (P._r(14, 4, 5),), 0),
    (P.closure_captures_array, (P._r(7, 3, 4), P._r(8, 4)), 1),
    (P.batched_matmul, (P._r(31, 2, 3, 4), P._r(32, 2, 4, 3)), 0),
    (P.recursion_over_array, (P._r(6, 5),), 0),
    (P.power_tower_array, (P._r(35, 3), 4), 0),
    (P.if_on_array_reduction, (P._r(1, 4),), 0),
    (P.tuple_argument, ((1.5, -0.5, P._r(9, 3)),), 0),
]


def _ids(cases):
    return [f"{fn.__name__}-{i}" for i, (fn, *_rest) in enumerate(cases)]


def _shift(args, i, a, t):
    return tuple(axpy(x, a, t) if j == i else x for j, x in enumerate(args))


def test_enough_second_order_programs():
    assert len({fn for fn, *_ in SCALAR + ARRAY}) >= 15


@pytest.mark.parametrize("fn, args, i", SCALAR, ids=_ids(SCALAR))
def test_grad_of_grad_scalar(fn, args, i):
    d1 = myc.grad(fn, argnums=i)
    d2 = myc.grad(d1, argnums=i)(*args)
    fd = (d1(*_shift(args, i, EPS, 1.0)) - d1(*_shift(args, i, -EPS, 1.0))) / (2 * EPS)
    assert type(d2) is float
    assert d2 == pytest.approx(fd, rel=1e-5, abs=1e-6)
    # forward over reverse gives the same number
    tangents = tuple(1.0 if j == i else 0.0 for j in range(len(args)))
    _, hv = myc.jvp(d1, args, tangents)
    assert hv == pytest.approx(d2, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("fn, args, i", ARRAY, ids=_ids(ARRAY))
def test_hessian_vector_products(fn, args, i):
    rng = np.random.default_rng(0)
    d1 = myc.grad(fn, argnums=i)
    v = random_like(args[i], rng)
    tangents = tuple(v if j == i else zeros_like_tree(a) for j, a in enumerate(args))
    g, hv = myc.jvp(d1, args, tangents)
    fd_hi, fd_lo = d1(*_shift(args, i, EPS, v)), d1(*_shift(args, i, -EPS, v))
    u = random_like(args[i], rng)
    # <u, H v> by finite differences of the gradient, and H symmetric: <u, H v> = <v, H u>
    uhv = vdot(u, hv)
    fd = (vdot(u, fd_hi) - vdot(u, fd_lo)) / (2 * EPS)
    assert uhv == pytest.approx(fd, rel=1e-5, abs=1e-6)
    tangents_u = tuple(u if j == i else zeros_like_tree(a) for j, a in enumerate(args))
    _, hu = myc.jvp(d1, args, tangents_u)
    assert vdot(v, hu) == pytest.approx(uhv, rel=1e-8, abs=1e-10)
    # reverse over reverse: the VJP of the gradient with cotangent u is H u
    _, pullback = myc.vjp(myc.grad(fn), *args) if len(args) == 1 else (None, None)
    if pullback is not None:
        (hu_rev,) = pullback(u)
        assert vdot(v, hu_rev) == pytest.approx(uhv, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("fn, args, i", SCALAR[::3] + ARRAY[::2],
                         ids=_ids(SCALAR[::3]) + _ids(ARRAY[::2]))
def test_check_grads_order_two(fn, args, i):
    check_grads(fn, args, argnums=i, order=2)


# ------------------------------------------------------------------ third order and beyond


def _poly(x):
    return x**5 - 3.0 * x**3 + 2.0 * x


def _poly_loop(x):
    acc = 0.0
    for c in (1.0, 0.0, -3.0, 0.0, 2.0, 0.0):
        acc = acc * x + c
    return acc


@pytest.mark.parametrize("f", [_poly, _poly_loop])
def test_third_and_fourth_order_polynomial(f):
    # d^3/dx^3 (x^5 - 3x^3 + 2x) = 60x^2 - 18, d^4 = 120x
    x = 0.7
    d3 = myc.grad(myc.grad(myc.grad(f)))
    assert d3(x) == pytest.approx(60 * x**2 - 18.0, rel=1e-12)
    if f is _poly:  # the fourth-order graph of the loop version takes a while to build
        assert myc.grad(d3)(x) == pytest.approx(120 * x, rel=1e-12)
    _, t = myc.jvp(myc.grad(myc.grad(f)), (x,), (1.0,))
    assert t == pytest.approx(60 * x**2 - 18.0, rel=1e-12)
    assert myc.jit(d3)(x) == pytest.approx(60 * x**2 - 18.0, rel=1e-12)
    check_grads(f, (x,), order=3)


# ------------------------------------------------------------------ other compositions


def _jvp_of_sin_product(x, y):
    _, t = myc.jvp(P.lambda_two_args, (x, y), (1.0, 0.5))
    return t


def test_grad_of_jvp_reverse_over_forward():
    x, y = 1.5, -0.5
    g = myc.grad(_jvp_of_sin_product, argnums=(0, 1))(x, y)
    h = myc.grad(P.lambda_two_args, argnums=(0, 1))
    hx = [(h(x + EPS, y)[k] - h(x - EPS, y)[k]) / (2 * EPS) for k in range(2)]
    hy = [(h(x, y + EPS)[k] - h(x, y - EPS)[k]) / (2 * EPS) for k in range(2)]
    # d/dx of (f_x + 0.5 f_y) = f_xx + 0.5 f_xy, d/dy likewise
    assert g[0] == pytest.approx(hx[0] + 0.5 * hx[1], rel=1e-5)
    assert g[1] == pytest.approx(hy[0] + 0.5 * hy[1], rel=1e-5)
    check_grads(_jvp_of_sin_product, (x, y))


def _first_tangent(x):
    return myc.jvp(P.while_data_dependent, (x,), (1.0,))[1]


def test_jvp_of_jvp_forward_over_forward():
    x = 1.1
    _, t2 = myc.jvp(_first_tangent, (x,), (1.0,))
    fd = (_first_tangent(x + EPS) - _first_tangent(x - EPS)) / (2 * EPS)
    assert t2 == pytest.approx(fd, rel=1e-5)
    assert t2 == pytest.approx(myc.grad(myc.grad(P.while_data_dependent))(x), rel=1e-10)


_E0 = np.array([1.0, 0.0, 0.0])


def _lse_times_first(a):
    return P.logsumexp(a) * a[0]


def _grad_component(a):
    return np.sum(myc.grad(_lse_times_first)(a) * _E0)


def test_jit_and_grad_compose_at_second_order():
    x = np.array([0.3, -0.8, 1.1])
    _, h_e0 = myc.jvp(myc.grad(_lse_times_first), (x,), (_E0,))  # H e0, H symmetric
    for g in (myc.grad(_grad_component), myc.grad(myc.jit(_grad_component)),
              myc.jit(myc.grad(_grad_component)),
              myc.jit(myc.grad(_grad_component), backend="interp")):
        np.testing.assert_allclose(g(x), h_e0, rtol=1e-10)
    check_grads(_grad_component, (x,), order=2)
