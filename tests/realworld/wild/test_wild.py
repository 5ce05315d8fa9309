"""The second corpus (tests/realworld/wild): NumPy/SciPy programs written the way
published autodiff examples are, run unchanged by myc.  Each program's objective: its
gradient (by the transform the program builds) against central differences of the same
code under CPython, and its value under ``myc.jit`` against NumPy's; then the programs'
own drivers (samplers, optimizers, SciPy's L-BFGS-B with ``jac=myc.grad(f)``)."""

from __future__ import annotations

import contextlib
import importlib
import io

import numpy as np
import pytest

import myc
from tests.realworld.wild import PROGRAMS
from tests.realworld.wild.run import run

SLOW = {"conv1d"}  # 10 s or more here (it compiles twice: gradient and value)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in PROGRAMS])
def test_value_and_gradient_match_numpy(name):
    pytest.importorskip("scipy")
    with contextlib.redirect_stdout(io.StringIO()):
        row = run(name, steady_calls=1)
    assert "error" not in row, row["error"]
    assert row["max_err"] <= row["tol"], row
    assert row["value_err"] <= 1e-9, row


def _mod(name):
    return importlib.import_module(f"tests.realworld.wild.{name}")


def test_logistic_regression_fits_with_lbfgs_and_myc_jacobian():
    pytest.importorskip("scipy")
    m = _mod("logistic_lbfgs")
    X, y = m.make_data()
    res = m.fit(X, y)
    assert res.success
    g = myc.grad(m.penalized_nll)(res.x, X, y, 1.0)
    assert np.max(np.abs(g)) < 1e-4


def test_count_glms_fit_with_lbfgs():
    pytest.importorskip("scipy")
    m = _mod("count_glm")
    X, y = m.make_data()
    for nll, x0 in ((m.poisson_nll, np.zeros(3)), (m.negbin_nll, np.zeros(4))):
        res = m.fit(nll, x0, X, y)
        assert res.success and np.max(np.abs(myc.grad(nll)(res.x, X, y))) < 1e-3


def test_hmc_samples_with_a_jitted_leapfrog():
    m = _mod("hmc")
    draws, rate = m.sample(np.zeros(2), 40)
    assert draws.shape == (40, 2) and 0.3 < rate <= 1.0
    # the integrator nearly conserves energy: the sampler's acceptance rests on it
    assert abs(m.energy_error(np.array([0.7, -0.3]), np.array([0.4, 1.1]), 0.05,
                              np.ones(2))) < 1e-2


def test_adam_training_lowers_the_loss():
    m = _mod("adam_mlp")
    x, y = m.make_data()
    layers, history = m.train(m.init_layers([1, 16, 16, 1]), x, y, epochs=60)
    assert history[-1] < 0.5 * history[0]
    assert [tuple(np.shape(W)) for W, _ in layers] == [(1, 16), (16, 16), (16, 1)]


def test_skipgram_trains_with_sparse_updates():
    m = _mod("skipgram")
    vocab, centers, contexts = m.build_pairs(m.CORPUS)
    rng = np.random.default_rng(2)
    negatives = rng.integers(0, len(vocab), size=(len(centers), 3))
    e_in = 0.1 * np.random.default_rng(0).standard_normal((len(vocab), 8))
    before = m.sgns_loss(e_in, np.zeros((len(vocab), 8)), centers, contexts, negatives)
    e_in, e_out = m.train(vocab, centers, contexts, epochs=10)
    after = m.sgns_loss(e_in, e_out, centers, contexts, negatives)
    assert after < before


def test_svgd_moves_particles_toward_the_modes():
    pytest.importorskip("scipy")
    m = _mod("svgd")
    x0 = np.random.default_rng(0).normal(size=(20, 2))
    out = m.run(x0, steps=30)
    assert np.mean(m.log_target(out)) > np.mean(m.log_target(x0))
