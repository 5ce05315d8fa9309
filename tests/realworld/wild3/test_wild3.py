"""The third corpus (tests/realworld/wild3): NumPy/SciPy programs that fill tables in
nested loops, iterate to convergence, integrate ODEs and draw inside the objective, run
unchanged by myc.  Each program's objective: its gradient against central differences
of the same code under CPython, its value under ``myc.jit`` against NumPy's; then the
programs' own drivers and non-differentiated parts (Viterbi, Newton's method)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import myc
from tests.realworld.wild.run import check
from tests.realworld.wild3 import PROGRAMS

PACKAGE = "tests.realworld.wild3"
SLOW = {"soft_dtw", "lotka_volterra", "neural_ode"}  # 20 s or more here, first compile


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in PROGRAMS])
def test_value_and_gradient_match_numpy(name):
    pytest.importorskip("scipy")
    check(name, PACKAGE)


def _mod(name):
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_viterbi_jitted_matches_numpy():
    m = _mod("crf")
    params, data = m.init_params(), m.make_data()
    for X, _tags in data:
        E = m.emissions(params, X)
        path, best = m.viterbi(E, params["trans"], params["start"])
        want_path, want_best = m.viterbi.__wrapped__(E, params["trans"], params["start"])
        assert path.dtype == np.int64 and np.array_equal(path, want_path)
        assert best == want_best
        # the decoded path's score is the best score
        assert np.isclose(m.path_score(E, params["trans"], params["start"], path), best)


def test_poisson_newton_converges_with_hvp_hessians():
    m = _mod("poisson_newton")
    X, y = m.make_data()
    beta, it = m.newton(np.zeros(3), X, y)
    assert it < 30
    assert np.max(np.abs(m.gradient(beta, X, y))) < 1e-8
    np.testing.assert_allclose(m.hessian(beta, X, y), m.hessian_fwd_over_rev(beta, X, y),
                               rtol=1e-10)


def test_reinforce_draws_match_numpy_and_training_prefers_good_arms():
    m = _mod("reinforce")
    c = m.case()
    theta, contexts, _ = c["args"]
    got = myc.jit(m.surrogate_loss)(theta, contexts, np.random.default_rng(5))
    assert got == m.surrogate_loss(theta, contexts, np.random.default_rng(5))
    theta, contexts = m.train(steps=60)
    probs = np.exp(m.log_softmax(m.policy_logits(theta, contexts), axis=1))
    best = np.argmax(contexts @ m.ARM_MEANS, axis=1)
    assert np.mean(probs[np.arange(len(best)), best]) > 0.45


def test_sinkhorn_fixed_and_tolerance_solvers_agree():
    m = _mod("sinkhorn")
    X, Y, a, b = m.case()["args"]
    # (a function is an argument of a compiled function only inside the program)
    fixed = myc.jit(lambda *d: m.transport_cost(*d, 0.5, m.sinkhorn_fixed))(X, Y, a, b)
    tol = myc.jit(lambda *d: m.transport_cost(*d, 0.5, m.sinkhorn_tol))(X, Y, a, b)
    assert abs(fixed - tol) < 1e-4  # 50 iterations against a 1e-9 marginal tolerance
    assert abs(fixed - m.transport_cost(X, Y, a, b, 0.5, m.sinkhorn_fixed)) < 1e-12
