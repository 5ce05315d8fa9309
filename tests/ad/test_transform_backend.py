"""``backend=`` on the transforms: ``grad(f, backend=b)`` runs where ``jit(f, backend=b)``
would, and agrees with the default backend."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycValueError
from tests.backends import BACKENDS


def loss(w, x):
    return np.mean(np.tanh(x @ w) ** 2)


W = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
X = np.linspace(0.0, 2.0, 12).reshape(4, 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_transforms_take_a_backend(backend):
    ref = myc.grad(loss)(W, X)
    g = myc.grad(loss, backend=backend)
    assert g.backend == backend
    np.testing.assert_allclose(g(W, X), ref, rtol=1e-10)
    v, d = myc.value_and_grad(loss, argnums=(0, 1), backend=backend)(W, X)
    np.testing.assert_allclose(v, loss(W, X), rtol=1e-10)
    np.testing.assert_allclose(d[0], ref, rtol=1e-10)
    out, pullback = myc.vjp(loss, W, X, backend=backend)
    np.testing.assert_allclose(pullback(1.0)[0], ref, rtol=1e-10)
    _, t = myc.jvp(loss, (W, X), (np.ones_like(W), np.zeros_like(X)), backend=backend)
    np.testing.assert_allclose(t, ref.sum(), rtol=1e-10)
    if backend == "interp":
        assert g.stats().evaluator_calls >= 1


def test_backend_overrides_the_jitted_functions_own():
    g = myc.grad(myc.jit(loss, backend="interp"), backend="cpu")
    assert g.backend == "cpu"
    assert myc.grad(myc.jit(loss, backend="interp")).backend == "interp"


def test_unknown_backend_is_refused():
    with pytest.raises(MycValueError, match="unknown backend"):
        myc.grad(loss, backend="tpu")
    with pytest.raises(MycValueError, match="unknown backend"):
        myc.vjp(loss, W, X, backend="tpu")
