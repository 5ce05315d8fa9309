"""Idioms of "from scratch" teaching code (tests/realworld/wild9) that myc compiles:
``parameters["W" + str(l)]`` keys built in loops over layers, ``(J + reg).item()``.
Each against CPython/NumPy, gradients against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import myc


def _layers_cost(parameters, X):
    A = X
    L = len(parameters) // 2
    for l in range(1, L + 1):
        A = np.tanh(np.dot(parameters["W" + str(l)], A) + parameters["b" + str(l)])
    return np.sum(A ** 2)


def _params(rng):
    return {"W1": rng.normal(size=(4, 3)), "b1": rng.normal(size=(4, 1)),
            "W2": rng.normal(size=(2, 4)), "b2": rng.normal(size=(2, 1))}


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_keys_built_by_str_of_a_loop_counter(backend):
    rng = np.random.default_rng(0)
    params, X = _params(rng), rng.normal(size=(3, 5))
    want = _layers_cost(params, X)
    assert myc.jit(_layers_cost, backend=backend)(params, X) == pytest.approx(want, rel=1e-13)
    g = myc.grad(_layers_cost, backend=backend)(params, X)
    assert list(g) == list(params)
    eps = 1e-6
    for k, v in params.items():
        for idx in [(0, 0), (v.shape[0] - 1, v.shape[1] - 1)]:
            up, dn = {**params, k: v.copy()}, {**params, k: v.copy()}
            up[k][idx] += eps
            dn[k][idx] -= eps
            fd = (_layers_cost(up, X) - _layers_cost(dn, X)) / (2 * eps)
            assert g[k][idx] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def _strs(x, n, flag):
    return str(n) + "-" + str(2.5) + str(flag) + str("s") + str(None), np.sum(x)  # noqa: UP018


def test_str_of_static_values_is_pythons():
    x = np.arange(3.0)
    assert myc.jit(_strs)(x, 7, True) == _strs(x, 7, True)


def _str_of_data(x):
    return "v" + str(x[0])


def test_str_of_data_is_refused_at_the_line():
    with pytest.raises(myc.MycError, match=r"str\(\) of a value computed") as info:
        myc.jit(_str_of_data)(np.arange(3.0))
    assert "_str_of_data" in str(info.value) or "test_from_scratch_idioms.py" in str(
        info.value)


def _cost_item(theta, X, y):
    h = 1 / (1 + np.exp(-(X @ theta)))
    J = -(y.T @ np.log(h) + (1 - y).T @ np.log(1 - h)) / len(y)
    return (J + 0.1 * np.sum(theta[1:] ** 2)).item()


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_item_of_a_one_element_array(backend):
    rng = np.random.default_rng(1)
    theta, X = rng.normal(size=(3, 1)), rng.normal(size=(8, 3))
    y = (rng.normal(size=(8, 1)) > 0).astype(float)
    want = _cost_item(theta, X, y)
    got = myc.jit(_cost_item, backend=backend)(theta, X, y)
    assert got == pytest.approx(want, rel=1e-13) and np.shape(got) == ()
    g = myc.grad(_cost_item, backend=backend)(theta, X, y)
    eps = 1e-6
    fd = np.array([[(_cost_item(theta + eps * e[:, None], X, y) -
                     _cost_item(theta - eps * e[:, None], X, y)) / (2 * eps)]
                   for e in np.eye(3)]).reshape(3, 1)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def _item_of_many(x):
    return x.item()


def test_item_of_a_bigger_array_is_numpys_error_at_the_line():
    with pytest.raises(ValueError):
        np.arange(3.0).item()
    with pytest.raises(myc.MycError, match="size 1") as info:
        myc.jit(_item_of_many)(np.arange(3.0))
    assert "x.item()" in str(info.value)


def _joins(theta, X, v):
    a = np.r_[[[0]], theta[1:]]               # the bias row of an L2 gradient
    b = np.c_[np.ones(X.shape[0]), X]         # a bias column
    c = np.r_[v, 2.0, v * 3]
    d = np.c_[X, v[:X.shape[0]], 1.5 * X]
    e = np.c_[1.0, 2.0]
    z = np.array(X, copy=True)
    z[0] = 0
    return a, b, c, d, e, z


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_r_and_c_join_as_numpy_does(backend):
    theta = np.arange(4.0).reshape(4, 1)
    X, v = np.arange(6.0).reshape(3, 2), np.array([1.0, -2.0, 3.0])
    for got, want in zip(myc.jit(_joins, backend=backend)(theta, X, v), _joins(theta, X, v),
                         strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)

    def s(theta, X, v):
        return np.sum(np.r_[theta[1:] ** 2, [[1.0]]]) + np.sum(np.c_[v, X] ** 3)

    g = myc.grad(s, (0, 1, 2), backend=backend)(theta, X, v)
    np.testing.assert_allclose(g[0], np.r_[[[0.0]], 2 * theta[1:]])
    np.testing.assert_allclose(g[1], 3 * X ** 2)
    np.testing.assert_allclose(g[2], 3 * v ** 2)


def _r_slice(x):
    return np.r_[0:3, x]


def _array_no_copy(x):
    return np.array(x, copy=False)


def test_r_with_a_slice_and_array_without_copy_are_refused_at_the_line():
    with pytest.raises(myc.MycError, match="slices or string directives") as info:
        myc.jit(_r_slice)(np.ones(2))
    assert info.value.loc.line == _r_slice.__code__.co_firstlineno + 1
    with pytest.raises(myc.MycError, match="copy=True") as info:
        myc.jit(_array_no_copy)(np.ones(2))
    assert info.value.loc.line == _array_no_copy.__code__.co_firstlineno + 1
