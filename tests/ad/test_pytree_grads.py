"""Gradients through lists, dicts and namedtuples, with JAX's pytree convention.

``argnums`` picks whole arguments; the gradient of a list is a list, of a dict a dict
with the same keys in the same order, of a namedtuple the same namedtuple class; vjp's
cotangents and jvp's tangents are given in the structure of the output and of the
primals.  Every gradient is checked against finite differences (``tests/gradcheck``:
vjp, jvp and their inner-product identity).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import myc
from myc.errors import MycTypeError
from tests.backends import BACKENDS
from tests.gradcheck import check_grads

Layer = namedtuple("Layer", ["W", "b"])
R = np.random.default_rng(7)


def mlp_list(params, x):
    for W, b in params:
        x = np.tanh(x @ W + b)
    return np.sum(x ** 2)


def mlp_dict(p, x):
    h = np.tanh(x @ p["w1"] + p["b1"])
    return np.mean((h @ p["w2"] + p["b2"]) ** 2)


def mlp_namedtuple(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer.W + layer.b)
    return np.sum(x ** 2)


def rnn_outputs(h, xs, W):
    out = []
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
        out.append(h)
    return np.stack(out)


def dict_out(p, x):
    h = x * p["a"]
    return {"h": h, "s": np.sum(h * p["b"]), "parts": [h[0], h[1] * 2.0]}


def built_inside(x, y):
    d = {}
    d["x"] = x * 2.0
    d["y"] = y
    d["x"] += y
    vals = [v * v for v in d.values()]
    return sum(np.sum(v) for v in vals) + np.sum(d["x"])


def list_state_data_loop(x):
    hs = [x, x * 0.5]
    while np.sum(hs[0] ** 2) < 50.0:
        hs = [h * 1.5 + 0.1 for h in hs]
    return np.sum(hs[0] * hs[1])


PARAMS = [(R.standard_normal((3, 4)), R.standard_normal(4)),
          (R.standard_normal((4, 2)), R.standard_normal(2))]
X = R.standard_normal((5, 3))
DPARAMS = {"w1": R.standard_normal((3, 4)), "b1": R.standard_normal(4),
           "w2": R.standard_normal((4, 2)), "b2": R.standard_normal(2)}
NPARAMS = [Layer(*p) for p in PARAMS]

CASES = {
    "mlp_list": (mlp_list, ([list(p) for p in PARAMS], X)),
    "mlp_list_of_tuples": (mlp_list, (PARAMS, X)),
    "mlp_dict": (mlp_dict, (DPARAMS, X)),
    "mlp_namedtuple": (mlp_namedtuple, (NPARAMS, X)),
    "rnn_outputs": (rnn_outputs, (R.standard_normal(3), R.standard_normal((4, 3)),
                                  R.standard_normal((3, 3)) * 0.5)),
    "dict_out": (dict_out, ({"a": R.standard_normal(2), "b": 1.5}, R.standard_normal(2))),
    "built_inside": (built_inside, (R.standard_normal(3), R.standard_normal(3))),
    "list_state_data_loop": (list_state_data_loop, (np.array([0.7, 1.1]),)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_check_grads(name, backend):
    fn, args = CASES[name]
    check_grads(myc.jit(fn, backend=backend), args)


def test_gradient_has_the_structure_of_its_argument():
    g = myc.grad(mlp_list)(PARAMS, X)
    assert type(g) is list and all(type(t) is tuple and len(t) == 2 for t in g)
    gd = myc.grad(mlp_dict)(DPARAMS, X)
    assert type(gd) is dict and list(gd) == list(DPARAMS)
    gn = myc.grad(mlp_namedtuple)(NPARAMS, X)
    assert type(gn) is list and all(type(t) is Layer for t in gn)
    for got, want in zip(gn, g, strict=True):
        np.testing.assert_allclose(got.W, want[0], rtol=1e-12)
        np.testing.assert_allclose(got.b, want[1], rtol=1e-12)


def test_argnums_picks_whole_trees():
    gp, gx = myc.grad(mlp_dict, argnums=(0, 1))(DPARAMS, X)
    assert type(gp) is dict and gx.shape == X.shape
    value, g = myc.value_and_grad(mlp_dict)(DPARAMS, X)
    np.testing.assert_allclose(value, mlp_dict(DPARAMS, X), rtol=1e-12)
    for k in DPARAMS:
        np.testing.assert_allclose(g[k], gp[k], rtol=1e-12)


def test_vjp_and_jvp_take_trees():
    p = {"a": R.standard_normal(2), "b": 1.5}
    x = R.standard_normal(2)
    out, pullback = myc.vjp(dict_out, p, x)
    assert type(out) is dict and type(out["parts"]) is list
    ct = {"h": np.ones(2), "s": 1.0, "parts": [1.0, 0.0]}
    dp, dx = pullback(ct)
    assert type(dp) is dict and list(dp) == ["a", "b"]
    with pytest.raises(MycTypeError) as info:
        pullback({"h": np.ones(2), "s": 1.0})  # a key short
    assert "dict" in str(info.value)
    tangent = {"a": np.ones(2), "b": 0.0}
    y, t = myc.jvp(dict_out, (p, x), (tangent, np.zeros(2)))
    assert type(y) is dict and type(t) is dict and type(t["parts"]) is list
    np.testing.assert_allclose(t["h"], x, rtol=1e-12)


def test_grad_inside_a_program_returns_the_structure():
    @myc.jit
    def step(p, x):
        g = myc.grad(mlp_dict)(p, x)
        return {k: p[k] - 0.1 * g[k] for k in p}

    new = step(DPARAMS, X)
    g = myc.grad(mlp_dict)(DPARAMS, X)
    assert list(new) == list(DPARAMS)
    for k in DPARAMS:
        np.testing.assert_allclose(new[k], DPARAMS[k] - 0.1 * g[k], rtol=1e-12)


def test_second_order_through_a_list():
    def f(ws, x):
        return np.sum(np.sin(ws[0] * x) * ws[1])

    ws = [R.standard_normal(3), R.standard_normal(3)]
    check_grads(f, (ws, R.standard_normal(3)), order=2)
