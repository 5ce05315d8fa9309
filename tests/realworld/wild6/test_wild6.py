"""The sixth corpus (tests/realworld/wild6): NumPy/SciPy programs in the styles of
published model code -- a GCN, Cox regression, Holt-Winters, bilevel TV denoising, a
factorization machine, NT-Xent, MaxEnt IRL, an SIR fit, an RBM, camera pose, unrolled
ISTA and robot-arm IK -- run unchanged by myc.  Each program's objective: its gradient
against central differences of the same code under CPython and its ``myc.jit`` value
against NumPy's (cpu backend); the same value and gradient on the interpreter backend;
then the programs' own helpers and drivers, jitted, against NumPy."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import myc
from tests.realworld.run import gradient_fn
from tests.realworld.wild.run import check, check_interpreter
from tests.realworld.wild6 import PROGRAMS

PACKAGE = "tests.realworld.wild6"


def _mod(name):
    return importlib.import_module(f"{PACKAGE}.{name}")


@pytest.mark.parametrize("name", PROGRAMS)
def test_value_and_gradient_match_numpy(name):
    pytest.importorskip("scipy")
    check(name, PACKAGE)


@pytest.mark.parametrize("name", PROGRAMS)
def test_interpreter_backend_agrees(name):
    """The reference interpreter: the same value as NumPy, the same gradient as cpu's."""
    case = _mod(name).case()
    check_interpreter(case, gradient_fn(case))


def test_gcn_adjacency_and_training():
    m = _mod("gcn")
    edges, X, labels, mask = m.make_graph()
    A = myc.jit(m.normalized_adjacency)(edges, X.shape[0])
    np.testing.assert_allclose(A, m.normalized_adjacency(edges, X.shape[0]), rtol=1e-15)
    np.testing.assert_allclose(A, A.T)
    params = m.init_params()
    g = myc.value_and_grad(m.loss)
    v0, _ = g(params, edges, X, labels, mask)
    for _ in range(60):
        v, d = g(params, edges, X, labels, mask)
        params = {k: params[k] - 0.2 * d[k] for k in params}
    assert v < 0.5 * v0
    assert myc.jit(m.accuracy)(params, edges, X, labels, mask) == \
        m.accuracy(params, edges, X, labels, mask)


def test_cox_concordance_and_fit():
    m = _mod("cox_ph")
    X, time, event = m.make_data()
    beta = np.zeros(X.shape[1])
    g = myc.grad(m.neg_log_partial_likelihood)
    for _ in range(100):
        beta = beta - 0.5 * g(beta, X, time, event)
    assert np.sign(beta[0]) == 1 and np.sign(beta[1]) == -1
    c = myc.jit(m.concordance)(X @ beta, time, event)
    assert c == m.concordance(X @ beta, time, event) and c > 0.6


def test_holt_winters_forecast_and_fm_pairwise_identity():
    hw = _mod("holt_winters")
    y = hw.make_series()
    raw = np.array([-0.5, -1.5, -1.0])
    np.testing.assert_allclose(myc.jit(hw.forecast)(raw, y), hw.forecast(raw, y),
                               rtol=1e-13)
    fm = _mod("factorization_machine")
    X, _ = fm.make_data()
    p = fm.init_params()
    fast = myc.jit(fm.fm_scores)(p, X)
    np.testing.assert_allclose(fast, myc.jit(fm.pairwise_reference)(p, X), rtol=1e-10)
    np.testing.assert_allclose(fast, fm.fm_scores(p, X), rtol=1e-14)


def test_tv_denoise_and_ik_solvers_match_numpy():
    tv = _mod("tv_denoise")
    noisy, clean = tv.make_images()
    np.testing.assert_allclose(myc.jit(tv.denoise)(noisy, 0.1), tv.denoise(noisy, 0.1),
                               rtol=1e-13, atol=1e-14)
    ik = _mod("ik_arm")
    args = (np.array([1.2, 0.9]), np.array([0.8, 0.7, 0.5]), np.array([0.3, 0.4, 0.2]))
    theta, err = myc.jit(ik.solve_ik)(*args)
    want_theta, want_err = ik.solve_ik(*args)
    np.testing.assert_allclose(theta, want_theta, rtol=1e-10)
    assert np.linalg.norm(err) < 1e-8
    J = myc.jit(ik.jacobian)(theta, args[1])
    np.testing.assert_allclose(J, ik.jacobian(theta, args[1]), rtol=1e-14)


def test_maxent_irl_visitation_and_rbm_reconstruction():
    irl = _mod("maxent_irl")
    P = irl.gridworld()
    theta = np.linspace(-0.5, 0.5, P.shape[0])
    log_pi = myc.jit(irl.soft_value_iteration)(theta, P)
    np.testing.assert_allclose(log_pi, irl.soft_value_iteration(theta, P), rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_pi).sum(axis=1), 1.0)
    start = np.ones(9) / 9
    D = myc.jit(irl.visitation)(log_pi, P, start, 6)
    np.testing.assert_allclose(D, irl.visitation(log_pi, P, start, 6), rtol=1e-13)
    assert D.sum() == pytest.approx(6.0)
    rbm = _mod("rbm_pseudolikelihood")
    params, v = rbm.init_params(), rbm.make_data()
    got = myc.jit(rbm.reconstruct)(params, v, np.random.default_rng(7))
    np.testing.assert_allclose(got, rbm.reconstruct(params, v, np.random.default_rng(7)),
                               rtol=1e-14)


def test_nt_xent_same_generator_same_loss_and_ista_converges():
    nt = _mod("nt_xent")
    layers, x = nt.init_layers(), nt.make_data()
    f = myc.jit(nt.nt_xent)
    assert f(layers, x, np.random.default_rng(5)) == pytest.approx(
        nt.nt_xent(layers, x, np.random.default_rng(5)), rel=1e-14)
    ista = _mod("ista_lasso")
    A, b, _, _ = ista.make_problem()
    for acc in (False, True):
        x_myc = myc.jit(ista.ista)(A, b, 2.0, 200, 1e-12, acc)
        np.testing.assert_allclose(x_myc, ista.ista(A, b, 2.0, 200, 1e-12, acc),
                                   rtol=1e-10, atol=1e-12)
    assert np.count_nonzero(np.abs(x_myc) > 1e-8) < A.shape[1]
