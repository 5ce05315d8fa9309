"""The seventh corpus (tests/realworld/wild7): NumPy programs in PyTorch and JAX styles
-- model classes, an optimizer class, SciPy's optimizers with myc's derivatives, an
integrator taking the dynamics as a function, samplers taking ``log_prob``, pytrees,
dataclasses, a hand-rolled ``scan``, composed kernel objects and callbacks -- run
unchanged by myc.  Each program's objective: its gradient against central differences
of the same code under CPython and its ``myc.jit`` value against NumPy's (cpu backend);
the same value and gradient on the interpreter backend; then the programs' own drivers
(training loops, samplers, SciPy fits) against their NumPy runs."""

from __future__ import annotations

import importlib
from functools import partial

import numpy as np
import pytest

import myc
from tests.realworld.run import gradient_fn, leaves
from tests.realworld.wild.run import check, check_interpreter
from tests.realworld.wild7 import PROGRAMS

PACKAGE = "tests.realworld.wild7"


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


def test_module_training_updates_in_place_and_lowers_the_loss():
    m = _mod("mlp_module")
    x, y = m.make_data()
    model = m.make_model()
    before = m.loss_fn(model, x, y)
    grads = m.named_parameters(myc.grad(m.loss_fn)(model, x, y))
    assert list(grads) == list(m.named_parameters(model))
    m.train(model, x, y)
    after = m.loss_fn(model, x, y)
    assert after < 0.6 * before
    assert myc.jit(m.loss_fn)(model, x, y) == pytest.approx(after, rel=1e-12)


def test_adam_class_training_and_the_functional_update_match_numpy():
    m = _mod("adam_class")
    x, y = m.make_data()
    params, history = m.train(m.init_params(), x, y, steps=60)
    assert history[-1] < 0.3 * history[0]
    opt = m.FunctionalAdam(lr=0.05)
    p0 = m.init_params()
    grads = myc.grad(m.mse_loss)(p0, x, y)
    got, st = myc.jit(opt.update)(p0, grads, opt.init(p0))
    want, st2 = opt.update(p0, grads, opt.init(p0))
    assert st.t == st2.t == 1
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_scipy_methods_agree_on_the_minimum():
    pytest.importorskip("scipy")
    m = _mod("scipy_newton")
    X, y = m.make_data()
    results = [m.fit(method, X, y) for method in ("L-BFGS-B", "Newton-CG", "trust-exact")]
    for r in results:
        assert r.success
        np.testing.assert_allclose(r.x, results[0].x, atol=2e-5)
    H = myc.hessian(m.neg_log_likelihood)(results[0].x, X, y)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-10)
    assert np.all(np.linalg.eigvalsh(H) > 0)
    hvp = myc.hessian_vector_product(m.neg_log_likelihood)
    v = np.array([0.3, -0.1, 0.2, 0.5])
    np.testing.assert_allclose(hvp(results[0].x, X, y, v), H @ v, rtol=1e-9)


def test_rk4_trajectory_and_another_model_through_the_same_integrator():
    m = _mod("rk4_fit")
    ts, observed = m.make_data()
    y0 = np.array([4.0, 2.0])
    got = myc.jit(m.rk4)(m.lotka_volterra, y0, ts, 1.0, 0.4, 0.8, 0.2)
    np.testing.assert_allclose(got, m.rk4(m.lotka_volterra, y0, ts, 1.0, 0.4, 0.8, 0.2),
                               rtol=1e-13)
    ts2 = np.linspace(0, 5, 11)
    y02 = np.array([1.0, 0.0])
    obs = m.rk4(m.damped_oscillator, y02, ts2, 2.0, 0.1)
    p = np.array([1.8, 0.15])
    g = myc.grad(m.oscillator_loss)(p, m.damped_oscillator, y02, ts2, obs)
    eps = 1e-6
    fd = [(m.oscillator_loss(p + eps * e, m.damped_oscillator, y02, ts2, obs) -
           m.oscillator_loss(p - eps * e, m.damped_oscillator, y02, ts2, obs)) / (2 * eps)
          for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_hmc_leapfrog_jitted_equals_python_and_samples():
    m = _mod("hmc_class")
    X, y = m.make_data()
    s = m.HMC(m.log_posterior, step_size=0.08, n_leapfrog=8)
    q, p = np.array([0.1, 1.0, -0.5]), np.array([0.3, -0.2, 0.5])
    for a, b in zip(myc.jit(s.leapfrog)(q, p, X, y), s.leapfrog(q, p, X, y), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    samples, rate = s.sample(np.zeros(3), 150, np.random.default_rng(1), X, y)
    assert rate > 0.5 and samples[50:, 1].mean() > 0.5


def test_mala_step_jitted_with_function_arguments_equals_python():
    m = _mod("langevin_partial")
    X, y = m.make_data()
    log_p = partial(m.log_joint, X=X, y=y)
    grad_log_p = myc.grad(log_p)
    rng = np.random.default_rng(4)
    step = myc.jit(m.mala_step)
    x = np.zeros(3)
    for _ in range(20):
        noise, u = rng.normal(size=3), rng.uniform()
        got, acc = step(log_p, grad_log_p, x, noise, u, 0.15)
        want, acc2 = m.mala_step(log_p, grad_log_p, x, noise, u, 0.15)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert bool(acc) == bool(acc2)
        x = got
    assert step.stats().compiles == 1


def test_pytree_update_step_matches_a_python_run():
    m = _mod("pytree_jax")
    params, batch, cfg = m.init_params(), m.make_batch(), m.Config()
    vel = m.tree_map(np.zeros_like, params)
    p1, v1, metrics = m.update(params, vel, batch, cfg)
    (loss, aux), grads = myc.value_and_grad(m.loss_fn, has_aux=True)(params, batch, cfg)
    v_want = m.tree_map(lambda v, g: cfg.momentum * v + g, vel, grads)
    p_want = m.tree_map(lambda p, v: p - cfg.lr * v, params, v_want)
    for (pa, a), (pb, b) in zip(leaves(p1), leaves(p_want), strict=True):
        assert pa == pb
        np.testing.assert_allclose(a, b, rtol=1e-13)
    assert metrics["loss"] == pytest.approx(m.loss_fn(params, batch, cfg)[0], rel=1e-12)
    assert metrics["accuracy"] == aux["accuracy"]


def test_dataclass_block_value_and_keyword_dropout_path():
    m = _mod("dataclass_transformer")
    block = m.init_block(m.Config())
    x = np.random.default_rng(3).normal(size=(6, 16))

    def run(b, v, rng):
        return b(v, train=True, rng=rng)

    np.testing.assert_allclose(myc.jit(run)(block, x, np.random.default_rng(5)),
                               run(block, x, np.random.default_rng(5)), rtol=1e-12)
    relu = m.init_block(m.Config(activation="relu"))
    np.testing.assert_allclose(myc.jit(lambda b, v: b(v))(relu, x), relu(x), rtol=1e-12)


def test_gp_kernel_prediction_and_the_gradient_objects():
    m = _mod("gp_kernels")
    X, y = m.make_data()
    k = m.make_kernel()
    Xn = np.linspace(0, 6, 7)[:, None]
    np.testing.assert_allclose(myc.jit(m.predict)(k, X, y, Xn), m.predict(k, X, y, Xn),
                               rtol=1e-10)
    g = myc.grad(m.neg_log_marginal_likelihood)(k, X, y)
    assert type(g) is m.Sum and type(g.k1.k1) is m.Product and type(g.k2) is m.White


def test_fit_with_callbacks_stops_early_and_logs_the_history():
    m = _mod("callbacks_closures")
    loss = m.make_loss([np.array([1.0, 0.5]), np.array([2.0, 0.25])])
    history = []
    m.fit(loss, m.init_params(), m.make_data(), steps=300,
          callbacks=[m.history_logger(history), m.early_stopping(patience=3)],
          schedule=lambda step: 0.2 * 0.99 ** step)
    assert 10 < len(history) < 300 and history[-1] < 0.1 * history[0]
    x, y = m.make_data()
    assert history[0] == pytest.approx(loss(m.init_params(), x, y), rel=1e-12)
