"""The fifth corpus (tests/realworld/wild5): NumPy/SciPy programs in the styles of course
assignments, blog posts and library examples -- CS231n layers, min-char-rnn, a
JAX-examples MLP, DP-SGD, kernel ridge, unrolled EM, a GRU in a dataclass, n-body,
Bayesian evidence, ranking losses, RealNVP, black-box VI -- run unchanged by myc.  Each
program's objective: its gradient against central differences of the same code under
CPython, its value under ``myc.jit`` against NumPy's; then the programs' own drivers
(min-char-rnn's whole ``lossFun`` with its in-place ``np.clip(..., out=dparam)``, and its
Adagrad step through ``zip`` over lists of the parameters)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import myc
from tests.realworld.wild.run import check
from tests.realworld.wild5 import PROGRAMS

PACKAGE = "tests.realworld.wild5"


@pytest.mark.parametrize("name", PROGRAMS)
def test_value_and_gradient_match_numpy(name):
    pytest.importorskip("scipy")
    check(name, PACKAGE)


def _mod(name):
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_min_char_rnn_loss_fun_runs_unchanged_with_its_in_place_clip():
    """Its one-hot writes ``xs[t][inputs[t]] = 1`` and its ``for dparam in [dWxh, ...]:
    np.clip(dparam, -5, 5, out=dparam)`` (which CPython clips through the list's items)
    compile; with weights large enough that the clip bites, the whole ``lossFun`` equals
    NumPy's; the forward pass's myc gradient equals its hand-written backward pass."""
    m = _mod("min_char_rnn")
    case = m.case()
    inputs, targets = m.batch(3)
    hprev = 0.1 * np.ones((m.hidden_size, 1))
    big = tuple(p * 30.0 for p in m.init_params())
    want = m.lossFun(inputs, targets, hprev, *big)
    assert sum(int(np.sum(np.abs(w) == 5.0)) for w in want[1:6]) > 10  # clipped
    got = myc.jit(m.lossFun)(inputs, targets, hprev, *big)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)

    def step(inputs, targets, hprev, Wxh, Whh, Why, bh, by, mWxh, mWhh, mWhy, mbh, mby):
        # the published driver's Adagrad update, verbatim
        loss, dWxh, dWhh, dWhy, dbh, dby, hprev = m.lossFun(inputs, targets, hprev,
                                                            Wxh, Whh, Why, bh, by)
        for param, dparam, mem in zip([Wxh, Whh, Why, bh, by],
                                      [dWxh, dWhh, dWhy, dbh, dby],
                                      [mWxh, mWhh, mWhy, mbh, mby]):
            mem += dparam * dparam
            param += -0.1 * dparam / np.sqrt(mem + 1e-8)
        return Wxh, Whh, Why, bh, by, mWxh, mWhh, mWhy, mbh, mby, hprev

    params = m.init_params()
    mems = [np.zeros_like(p) for p in params]
    want = step(inputs, targets, hprev, *[p.copy() for p in params],
                *[q.copy() for q in mems])
    got = myc.jit(step)(inputs, targets, hprev, *params, *mems)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    assert all(not np.any(q) for q in mems)  # the caller's arrays: never written

    def forward(params, inputs, targets, hprev):   # lossFun's forward pass, verbatim
        Wxh, Whh, Why, bh, by = params
        xs, hs, ys, ps = {}, {}, {}, {}
        hs[-1] = np.copy(hprev)
        loss = 0
        for t in range(len(inputs)):
            xs[t] = np.zeros((m.vocab_size, 1))
            xs[t][inputs[t]] = 1
            hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
            ys[t] = np.dot(Why, hs[t]) + by
            ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
            loss += -np.log(ps[t][targets[t], 0])
        return loss

    params, inputs, targets, hprev = case["args"]
    assert np.isclose(myc.jit(forward)(*case["args"]), case["fn"](*case["args"]), rtol=1e-13)
    g = myc.grad(forward)(*case["args"])
    manual = m.lossFun(inputs, targets, hprev, *params)[1:6]
    for got, want in zip(g, manual, strict=True):  # (no entry reaches the clip at 5)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_mnist_jitted_update_matches_numpy_step():
    m = _mod("mnist_mlp")
    params = m.init_random_params(0.3, [16, 12, 8, 5], rng=np.random.RandomState(0))
    batch = m.make_data()
    got = m.update(params, batch)
    grads = myc.grad(m.loss)(params, batch)
    for (w, b), (gw, gb), (dw, db) in zip(got, params, grads, strict=True):
        np.testing.assert_allclose(w, gw - 0.1 * dw, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(b, gb - 0.1 * db, rtol=1e-12, atol=1e-14)
    before = m.loss(params, batch)
    for _ in range(100):
        params = m.update(params, batch)
    assert m.loss(params, batch) < 0.5 * before and m.accuracy(params, batch) > 0.7


def test_nbody_jitted_simulation_matches_numpy_and_conserves_energy():
    m = _mod("nbody")
    pos, vel, masses, _ = m.make_system()
    p, v = myc.jit(m.simulate)(pos, vel, masses)
    p0, v0 = m.simulate(pos, vel, masses)
    np.testing.assert_allclose(p, p0, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(v, v0, rtol=1e-12, atol=1e-13)
    e0, e1 = m.energy(pos, vel, masses), myc.jit(m.energy)(p, v, masses)
    assert abs(e1 - e0) < 1e-2 * abs(e0)
    L = myc.jit(m.angular_momentum)(p, v, masses)
    np.testing.assert_allclose(L, m.angular_momentum(pos, vel, masses), atol=1e-8)


def test_gru_gradient_is_a_dataclass_and_descends():
    m = _mod("gru_dataclass")
    p, (xs, ys) = m.init_params(), m.make_data()
    d = myc.grad(m.seq2seq_nll)(p, xs, ys)
    assert isinstance(d, m.GRUParams) and d.W.shape == p.W.shape
    q = m.GRUParams(**{k: getattr(p, k) - 0.05 * getattr(d, k) for k in vars(p)})
    assert m.seq2seq_nll(q, xs, ys) < m.seq2seq_nll(p, xs, ys)


def test_ranking_ndcg_and_training():
    m = _mod("ranking")
    X, labels = m.make_data()
    w = np.zeros(X.shape[2])
    g = myc.grad(m.ranking_loss)
    for _ in range(30):
        w = w - 0.2 * g(w, X, labels)
    assert m.ranking_loss(w, X, labels) < m.ranking_loss(np.zeros(X.shape[2]), X, labels)
    assert np.isclose(myc.jit(m.ndcg)(X @ w, labels), m.ndcg(X @ w, labels), rtol=1e-14)


def test_bayes_evidence_fixed_point_and_shape_assert():
    m = _mod("bayes_linreg")
    x, t = m.make_data()
    gamma, trace = myc.jit(m.effective_parameters)(0.5, 2.0, x)
    want = m.effective_parameters(0.5, 2.0, x)
    np.testing.assert_allclose((gamma, trace), want, rtol=1e-10)
    np.testing.assert_allclose(gamma, trace, rtol=1e-8)   # two forms of one quantity
    with pytest.raises(myc.MycValueError, match=r"AssertionError: targets have shape \(24,\)"):
        myc.jit(m.log_evidence)(0.5, 2.0, x, t[:-1])


def test_bbvi_same_seed_same_draws_and_dp_sgd_step():
    m = _mod("bbvi_rng")
    X, y = m.make_data()
    p = np.concatenate([np.zeros(3), -np.ones(3)])
    f = myc.jit(m.neg_elbo)
    assert f(p, X, y, 16, 3) == m.neg_elbo(p, X, y, 16, 3) == f(p, X, y, 16, 3)
    assert f(p, X, y, 16, 4) != f(p, X, y, 16, 3)
    d = _mod("dp_sgd")
    X, y, _, _ = d.make_data()
    w = 0.1 * np.ones(X.shape[1])
    got = myc.jit(d.private_gradient)(w, X, y, np.random.default_rng(3))
    np.testing.assert_allclose(got, d.private_gradient(w, X, y, np.random.default_rng(3)),
                               rtol=1e-12)
