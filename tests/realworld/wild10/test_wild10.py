"""The tenth corpus (tests/realworld/wild10): reinforcement learning and
sequence/scientific teaching code.  Each program's gradient against central differences
and its value against NumPy (cpu), the interpreter backend's value and gradient, myc's
gradients against the programs' own hand-written backward passes (the five whose
random draws are decided by data run on the reference evaluator: warned, correct)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import myc
from tests.realworld.wild.run import check, check_interpreter
from tests.realworld.wild10 import PROGRAMS

PACKAGE = "tests.realworld.wild10"
# a random draw decided by data (``2 if rng.uniform() < p else 3``): these run on the
# reference evaluator (a MycFallbackWarning), correct but slow
ON_EVALUATOR = {"pong_policy", "reinforce_chain", "td_lambda", "q_learning", "metropolis"}
pytestmark = pytest.mark.filterwarnings("ignore::myc.MycFallbackWarning")


def _mod(name):
    return importlib.import_module(f"{PACKAGE}.{name}")


@pytest.mark.parametrize("name", PROGRAMS)
def test_value_and_gradient_match_numpy(name):
    check(name, PACKAGE)


@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in ON_EVALUATOR])
def test_interpreter_backend_agrees(name):
    check_interpreter(_mod(name).case())


def test_pong_gradient_equals_the_scripts_backward_pass():
    m = _mod("pong_policy")
    model, frames = m.init_model(), m.make_frames()
    g = myc.grad(m.surrogate)(model, frames, np.random.default_rng(11))
    hand = m.hand_gradient(model, frames, np.random.default_rng(11))
    assert list(g) == list(hand)
    for k in g:
        np.testing.assert_allclose(g[k], hand[k], rtol=1e-10, atol=1e-12)
    r = np.array([[0.0], [0.0], [1.0], [0.0], [-1.0]])
    np.testing.assert_allclose(myc.jit(m.discount_rewards)(r), m.discount_rewards(r),
                               rtol=1e-15)


def test_lstm_gradient_equals_the_hand_written_bptt():
    m = _mod("lstm_bptt")
    params, inputs, targets, h0, c0 = m.case()["args"]
    g = myc.grad(m.sequence_loss)(params, inputs, targets, h0, c0)
    loss, cache = m.lstm_forward(inputs, targets, h0, c0, params)
    hand = m.lstm_backward(inputs, targets, cache, params, clip=False)
    for k in params:
        np.testing.assert_allclose(g[k], hand[k], rtol=1e-9, atol=1e-12)


def test_reinforce_gradient_equals_the_score_function_by_hand():
    m = _mod("reinforce_chain")
    theta, env, _ = m.case()["args"]
    g = myc.grad(m.reinforce_loss)(theta, env, np.random.default_rng(21))
    hand = m.reinforce_gradient(theta, env, np.random.default_rng(21))
    np.testing.assert_allclose(g, hand, rtol=1e-10, atol=1e-12)
    # the environment object is the caller's: CPython's episode moved it, myc's did not
    env2 = m.ChainEnv()
    myc.jit(m.reinforce_loss)(theta, env2, np.random.default_rng(21))
    assert not hasattr(env2, "state")


def test_metropolis_acceptance_rate_and_hopfield_recall_compile():
    m = _mod("metropolis")
    mu = np.array([0.5, -0.3])
    assert myc.jit(m.acceptance_rate)(mu, np.random.default_rng(3)) == \
        m.acceptance_rate(mu, np.random.default_rng(3))
    h = _mod("hopfield")
    patterns = h.make_patterns()
    W = h.train_hebbian(patterns)
    for seed in range(3):  # for i in rng.permutation(n): NumPy's order
        cue = h.noisy_cue(patterns[seed % 3], flips=4, seed=seed)
        np.testing.assert_array_equal(
            myc.jit(h.recall)(W, cue, np.random.default_rng(seed)),
            h.recall(W, cue, np.random.default_rng(seed)))
