"""The programs of tests/realworld (autograd's examples re-expressed for myc) compile
and their gradients match central differences of the same code under CPython.

Each case is the program's own objective at small sizes (``case()`` in its file); the
driver (``tests/realworld/run.py``, also ``python -m tests.realworld.run``) restores
the program's random generators before each evaluation so myc and the finite
differences see the same draws.  The slowest to compile are marked slow.  Two programs
cannot run yet: their errors must say what is missing, at the program's line.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import myc
from tests.realworld import PROGRAMS
from tests.realworld.run import run_one

REFUSED: dict[str, str] = {}  # program -> what the error names (none refused now)
SLOW = {"fluidsim", "hmm_em", "mixture_variational_inference"}  # 10 s or more to compile


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
    for n in PROGRAMS if n not in REFUSED])
def test_runs_with_correct_gradient(name):
    with contextlib.redirect_stdout(io.StringIO()):
        row = run_one(name, steady_calls=1)
    assert "error" not in row, row["error"]
    assert row["max_err"] <= row["tol"], row


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_missing_feature_is_named_at_the_programs_line(name):
    pytest.importorskip("scipy")
    row = run_one(name, steady_calls=0)
    words = REFUSED[name]
    assert row["error"].startswith("MycNameError"), row["error"]
    assert words in row["error"]
    assert f"tests/realworld/{name}.py" in row["error"]


def test_negative_binomial_fit_runs():
    """The program's own driver: Newton's method with ``grad`` and ``grad(grad(...))``
    of a lambda that itself calls ``grad``, ending at a stationary point."""
    from tests.realworld import negative_binomial_maxlike as m

    m.npr.seed(0)
    data = m.nb_draw(r=5, p=0.5, size=100)
    r, p = m.fit_nb(data, r_start=1)
    loglike = lambda r, p: np.sum(m.nb_log_pmf(r, p, data))  # noqa: E731
    pr = lambda r: np.sum(data) / np.sum(r + data)  # noqa: E731
    eps = 1e-5
    slope = (loglike(r + eps, pr(r)) - loglike(r - eps, pr(r))) / (2 * eps)
    assert abs(slope) < 1e-6
    gr, gp = myc.grad(loglike, argnum=(0, 1))(r, p)  # the program's last check
    assert abs(gr) < 1e-6 and abs(gp) < 1e-6


def test_rosenbrock_minimize_runs():
    from scipy.optimize import minimize

    from tests.realworld import rosenbrock as m

    result = minimize(m.banana_and_slope, x0=np.array([0.0, 0.0]), jac=True, method="CG")
    np.testing.assert_allclose(result.x, [1.0, 1.0], atol=1e-4)


@pytest.mark.slow
def test_hmm_em_runs_to_convergence():
    """EM with ``value_and_grad`` of the log partition function as the E step."""
    from tests.realworld import hmm_em as m

    np.random.seed(0)
    init = m.random_hmm(3, 5)
    data = [np.array([0, 1, 4, 2]), np.array([3, 3, 1])]
    pi, A, B = m.em(init, data)
    np.testing.assert_allclose(A.sum(-1), 1.0)
    np.testing.assert_allclose(B.sum(-1), 1.0)


@pytest.mark.slow  # PoCL compiles each kernel: tens of seconds
@pytest.mark.parametrize("name", ["neural_net", "gaussian_process", "bayesian_neural_net"])
def test_opencl_gradient_agrees_with_cpu(name):
    pytest.importorskip("pyopencl")
    import importlib

    from tests.gradcheck import leaves
    from tests.realworld.run import Replay

    case = importlib.import_module(f"tests.realworld.{name}").case()
    replay = Replay(case)
    grads = []
    for backend in ("cpu", "opencl"):
        replay.reset()
        g = myc.grad(case["fn"], case["argnums"], backend=backend)(*case["args"])
        grads.append(g)
    for (pa, a), (pb, b) in zip(leaves(grads[0]), leaves(grads[1]), strict=True):
        assert pa == pb
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)
