"""The algebra of sums and gathers (myc/opt/reductions.py, myc/opt/gathers.py).

Structure: a max-shifted softmax/logsumexp gradient loses its pass for the shift's
adjoint, and a picked ``(x - m)[arange(n), labels]`` no longer makes the kernel store
``x - m``.  Values: every rewritten program against the reference evaluator and central
differences, including rows with NaN, -inf, ties for the maximum, and the forms the
rules must leave alone.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from benchmarks.workloads.w3_softmax_xent import softmax_xent
from tests.adversarial.common import fd_grad


def logsumexp_loss(x):
    m = np.max(x, axis=1, keepdims=True)
    s = np.sum(np.exp(x - m), axis=1)
    return np.sum(np.log(s) + m[:, 0])


def softmax_weighted(x, w):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * w)


def lse_unshifted(x):
    return np.sum(np.log(np.sum(np.exp(x), axis=1)))


def picked_scaled(x, m, rows, cols):
    return np.sum((2.0 * x - m)[rows, cols] * (x + m)[rows, cols])


def reciprocal_unshifted(x):
    s = np.sum(x, axis=1)
    return np.sum((1.0 / s) * s)


def _kernels(fn, *args) -> str:
    return myc.ir(fn, *args, stage="kernels")


def _full_passes(text: str, shape: tuple[int, int]) -> list[str]:
    """The kernels over the full 2-d domain, each as its text."""
    blocks = text.split("      kernel ")[1:]
    return [b for b in blocks if f"shape={shape}" in b.splitlines()[0]]


def test_logsumexp_gradient_has_no_pass_for_the_shift():
    x = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
    passes = _full_passes(_kernels(myc.value_and_grad(logsumexp_loss), x), (64, 48))
    # the row max, then the sum of exp (and the argmax count) in the same pass (a row
    # reduction); the gradient.  Before: a pass more for the shift's adjoint with one
    # more exp per element, and the max in a pass of its own.
    assert len(passes) == 2, passes
    assert sum(p.count(" = exp ") for p in passes) == 2


def test_softmax_xent_stores_nothing_but_the_gradient():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((32, 40)).astype(np.float32)
    labels = rng.integers(0, 40, 32)
    passes = _full_passes(_kernels(myc.value_and_grad(softmax_xent), logits, labels),
                          (32, 40))
    stores = [line for p in passes for line in p.splitlines()
              if "= store" in line and "[32, 40]" in line]
    assert len(stores) == 1, stores  # the gradient; no longer logits - m for the gather
    assert len(passes) == 2, passes
    # the one-hot of the picked elements' gradient is a compare inside the last pass,
    # not a zero-filled array with a scatter
    text = _kernels(myc.value_and_grad(softmax_xent), logits, labels)
    assert "getitem_grad" not in text
    from tests.cpu.test_native_program import _native_of

    assert _native_of(myc.value_and_grad(softmax_xent), logits, labels) is not None


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_softmax_xent_values_and_gradient(backend):
    rng = np.random.default_rng(2)
    logits = (3 * rng.standard_normal((12, 9))).astype(np.float64)
    labels = rng.integers(-9, 9, 12)  # negative labels count from the end, as in NumPy
    v, g = myc.jit(myc.value_and_grad(softmax_xent), backend=backend)(logits, labels)
    assert np.isclose(v, softmax_xent(logits, labels), rtol=1e-12)
    fd = fd_grad(lambda a: softmax_xent(a, labels), (logits,), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [logsumexp_loss, lse_unshifted])
def test_logsumexp_gradient_is_the_softmax(fn):
    rng = np.random.default_rng(3)
    x = (5 * rng.standard_normal((7, 11))).astype(np.float64)
    x[2, 3] = x[2, 5] = x[2].max() + 1.0  # a tie for the maximum
    v, g = myc.jit(myc.value_and_grad(fn))(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(g, e / e.sum(axis=1, keepdims=True), rtol=1e-12,
                               atol=1e-15)
    assert np.isclose(v, fn(x), rtol=1e-12)


def test_softmax_weighted_gradient():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5))
    w = rng.standard_normal((6, 5))
    g = myc.jit(myc.grad(softmax_weighted))(x, w)
    np.testing.assert_allclose(g, fd_grad(softmax_weighted, (x, w), 0), rtol=1e-6,
                               atol=1e-9)
    gi = myc.jit(myc.grad(softmax_weighted), backend="interp")(x, w)
    np.testing.assert_allclose(g, gi, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("bad", [np.nan, -np.inf, np.inf])
def test_rows_with_nan_or_infinities_match_the_evaluator(bad):
    x = np.random.default_rng(5).standard_normal((5, 4)).astype(np.float32)
    x[1, 2] = bad
    x[3, :] = -np.inf if bad == -np.inf else x[3, :]
    cpu = myc.jit(myc.value_and_grad(logsumexp_loss))(x)
    ref = myc.jit(myc.value_and_grad(logsumexp_loss), backend="interp")(x)
    np.testing.assert_array_equal(np.isnan(cpu[1]), np.isnan(ref[1]))
    np.testing.assert_allclose(cpu[1], ref[1], rtol=1e-6, atol=1e-7)
    assert np.isnan(cpu[0]) == np.isnan(ref[0])


def test_reciprocal_of_an_unshifted_sum_is_not_cancelled():
    x = np.array([[1.0, -1.0], [2.0, 3.0]])  # row 0 sums to 0: (1/0)*0 is NaN
    with np.errstate(all="ignore"):
        want = reciprocal_unshifted(x)
    assert np.isnan(want)
    assert np.isnan(myc.jit(reciprocal_unshifted)(x))
    assert "truediv" in myc.ir(reciprocal_unshifted, x, stage="optimized")


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_picked_elementwise_values_and_gradients(backend):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 6))
    m = rng.standard_normal((8, 1))
    rows = np.array([0, 3, 3, 7, -1])
    cols = np.array([5, 0, 0, 2, -6])
    f = myc.jit(picked_scaled, backend=backend)
    assert np.isclose(f(x, m, rows, cols), picked_scaled(x, m, rows, cols), rtol=1e-12)
    g = myc.jit(myc.grad(picked_scaled, argnums=(0, 1)), backend=backend)(x, m, rows, cols)
    np.testing.assert_allclose(g[0], fd_grad(picked_scaled, (x, m, rows, cols), 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g[1], fd_grad(picked_scaled, (x, m, rows, cols), 1),
                               rtol=1e-6, atol=1e-8)


def test_picked_out_of_range_still_raises():
    x = np.ones((4, 3))
    m = np.ones((4, 1))
    with pytest.raises(myc.MycError, match="out of bounds|index"):
        myc.jit(picked_scaled)(x, m, np.array([0, 4]), np.array([0, 1]))


def test_integer_arrays_are_not_moved():
    @myc.jit
    def f(a, b, rows, cols):
        return (a - b)[rows, cols]

    a = np.array([[5, 7], [1, 2]])
    b = np.array([[1], [9]])
    r = f(a, b, np.array([1, 0]), np.array([1, 1]))
    np.testing.assert_array_equal(r, (a - b)[[1, 0], [1, 1]])
    assert r.dtype == np.int64
