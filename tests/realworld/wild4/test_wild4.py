"""The fourth corpus (tests/realworld/wild4): NumPy/SciPy programs in the style of
published JAX/autograd tutorials -- VAE, GP regression, HMC for a Bayesian net, MAML, a
transformer in a class, GloVe, k-means, SciPy fits with ``functools.partial``, a 2-D
convnet, PCA by power iteration, actor-critic -- run unchanged by myc.  Each program's
objective: its gradient against central differences of the same code under CPython,
its value under ``myc.jit`` against NumPy's; then the programs' own drivers."""

from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest

import myc
from tests.realworld.wild.run import check
from tests.realworld.wild4 import PROGRAMS

PACKAGE = "tests.realworld.wild4"
SLOW: set[str] = set()  # none passes 20 s at first compile here


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in PROGRAMS])
def test_value_and_gradient_match_numpy(name):
    pytest.importorskip("scipy")
    check(name, PACKAGE)


def _mod(name):
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_hmc_step_matches_numpy_and_samples():
    m = _mod("bnn_hmc")
    X, y = m.make_data()
    theta = 0.1 * np.random.default_rng(0).standard_normal(m.N_PARAMS)
    got, acc = m.hmc_step(theta, X, y, np.random.default_rng(7))
    want, want_acc = m.hmc_step.__wrapped__(theta, X, y, np.random.default_rng(7))
    assert bool(acc) == bool(want_acc)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    _, rate = m.sample(n=20)
    assert rate > 0.3


def test_lloyd_jitted_matches_numpy():
    m = _mod("soft_kmeans")
    X = m.make_data()
    C, labels, it = m.lloyd(X, X[:3])
    C0, labels0, it0 = m.lloyd.__wrapped__(X, X[:3])
    assert it == it0 and np.array_equal(labels, labels0)
    np.testing.assert_allclose(C, C0, rtol=1e-12)


def test_softmax_regression_fits_with_partial_and_scipy():
    m = _mod("softmax_lbfgs")
    X, y = m.make_data()
    res1, res2 = m.fit(X, y)
    assert res1.success and res2.success
    np.testing.assert_allclose(res1.x, res2.x, atol=1e-4)
    f = functools.partial(m.nll, X=X, y=y, k=3)
    assert np.max(np.abs(myc.grad(f)(res1.x))) < 1e-4


def test_gp_hyperparameters_fit_and_predict():
    m = _mod("gp_regression")
    res = m.fit()
    x, y = m.make_data()
    assert res.fun < m.neg_log_marginal(np.zeros(6), x, y)
    xs = np.linspace(0.5, 5.5, 7)
    got = myc.jit(m.posterior_mean)(res.x, x, y, xs)
    np.testing.assert_allclose(got, m.posterior_mean(res.x, x, y, xs), rtol=1e-9)


def test_pca_components_match_eigh():
    m = _mod("pca_power")
    X = m.make_data()
    V, vals = myc.jit(m.top_components)(X)
    w, U = np.linalg.eigh(np.cov(X.T))
    np.testing.assert_allclose(vals, w[::-1][:2], rtol=1e-8)
    np.testing.assert_allclose(np.abs(V @ U[:, ::-1][:, :2]), np.eye(2), atol=1e-5)


def test_training_loops_reduce_their_losses():
    _, losses = _mod("vae").train(steps=60)
    assert np.mean(losses[-10:]) < losses[0]
    _, losses = _mod("glove").train(steps=30)
    assert losses[-1] < 0.5 * losses[0]
    _, losses = _mod("maml").meta_train(steps=8)
    assert all(np.isfinite(losses))


def test_transformer_bound_method_jits_and_steps_inside_jit():
    m = _mod("transformer")
    params = m.model.init_params()
    tokens, targets = m.make_data()
    want = m.model.loss(params, tokens, targets)
    assert np.isclose(myc.jit(m.model.loss)(params, tokens, targets), want, rtol=1e-12)
    step = myc.jit(lambda p, t, y: myc.value_and_grad(m.model.loss)(p, t, y))
    v, g = step(params, tokens, targets)
    assert np.isclose(v, want, rtol=1e-12)
    g2 = myc.grad(m.model.loss)(params, tokens, targets)
    np.testing.assert_allclose(g["embed"], g2["embed"], rtol=1e-10, atol=1e-12)
