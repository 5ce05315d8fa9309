"""A gradient through a loop that appends to a list stays linear in the trip count.

Each append is a row store at the run-time count (``index_set``, ``myc.infer.stacked``):
its adjoint reads the cotangent's row and zeroes it, and reads nothing of the buffer, so
the taped rerun stores only the states its backward loop reads
(``LoopBody.taped_states``) -- not the ``(trips, *item)`` buffer every iteration, which
made the tape ``trips**2 x item``.  Native loops store the row into the state's own
buffer as the state advances (no copy of the buffer per iteration), forward and
backward.  Gradients of 1000-step loops are checked against differences on every
backend, in forward mode too."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.lower import program

try:
    from tests.backends import BACKENDS
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from backends import BACKENDS


def rnn(W, xs, h0):
    h = h0
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = np.tanh(W @ h + 0.5 * xs[t])
        hs.append(h)
        hs.append(np.sin(h))
    return np.sum(np.stack(hs) ** 2)


def reads_the_last(W, xs, h0):
    ys = [h0]
    for t in range(xs.shape[0]):
        y = np.tanh(W @ ys[-1] + xs[t])      # the buffer is read: restored, not taped
        ys.append(np.tanh(W @ y))
    return np.sum(np.stack(ys) ** 2)


def _args(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return (0.4 * rng.standard_normal((d, d)), 0.5 * rng.standard_normal((n, d)),
            rng.standard_normal(d))


@pytest.fixture
def tapes(monkeypatch):
    """The leaves of every tape a taped loop hands back (native or stepped)."""
    seen: list[list] = []
    init = program.Tape.__init__

    def record(self, leaves, count, specs):
        seen.append(list(leaves))
        init(self, leaves, count, specs)

    monkeypatch.setattr(program.Tape, "__init__", record)
    return seen


@pytest.mark.parametrize("native", [True, False])
def test_the_tape_holds_only_what_the_adjoint_reads(tapes, monkeypatch, native):
    if not native:
        monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    n, d = 300, 3
    args = _args(n, d)
    myc.grad(rnn)(*args)
    assert tapes, "no taped loop ran"
    leaves = [leaf for tape in tapes for leaf in tape if leaf is not None]
    # the two (n - 1, d) buffers are not stored per iteration
    assert not any(np.ndim(leaf) == 3 for leaf in leaves), [np.shape(x) for x in leaves]
    assert any(leaf is None for tape in tapes for leaf in tape)
    assert sum(np.asarray(leaf).nbytes for leaf in leaves) < 64 * n * d * 8


def test_a_buffer_the_loop_reads_is_restored_not_taped(tapes):
    # the rows each append overwrites are taped instead (an undo log,
    # ``myc.infer.undo_log``): the buffer was stored whole every iteration before
    args = _args(200)
    g = myc.grad(reads_the_last, argnums=(0, 1))(*args)
    assert tapes
    assert not any(np.ndim(leaf) == 3 for tape in tapes for leaf in tape if leaf is not None)
    _check_rev(reads_the_last, args, g, (0, 1))


def test_a_long_list_the_loop_reads_is_a_loop_node():
    # 3000 steps read by ``ys[-1]`` (trips**2 x item past 2**24): unrolled before, with
    # its buffers taped every iteration; now a loop node whose tape holds rows
    args = _args(3000)
    g = myc.grad(reads_the_last, argnums=(0,))(*args)
    _check_rev(reads_the_last, args, g, (0,))


def _fd(f, args, i, direction, eps=1e-6):
    up = list(args)
    dn = list(args)
    up[i] = args[i] + eps * direction
    dn[i] = args[i] - eps * direction
    return (f(*up) - f(*dn)) / (2 * eps)


def _check_rev(f, args, grads, argnums):
    rng = np.random.default_rng(1)
    for i, g in zip(argnums, grads, strict=True):
        v = rng.standard_normal(args[i].shape)
        np.testing.assert_allclose(np.vdot(g, v), _fd(f, args, i, v), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_thousand_steps_by_differences(backend):
    args = _args(1000)
    g = myc.grad(rnn, argnums=(0, 1, 2), backend=backend)(*args)
    _check_rev(rnn, args, g, (0, 1, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_mode_through_a_thousand_appends(backend):
    args = _args(1000)
    rng = np.random.default_rng(3)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    value, tangent = myc.jvp(rnn, args, tangents, backend=backend)
    np.testing.assert_allclose(value, rnn(*args), rtol=1e-10)
    eps = 1e-6
    fd = (rnn(*[a + eps * t for a, t in zip(args, tangents, strict=True)]) -
          rnn(*[a - eps * t for a, t in zip(args, tangents, strict=True)])) / (2 * eps)
    assert abs(tangent) > 1e-3  # (not a tangent lost: a zero would pass a loose check)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)


def test_appends_store_rows_not_wheres():
    text = myc.ir(rnn, *_args(300), stage="optimized")
    assert "index_set(" in text and "where(" not in text, text


def test_long_appending_loops_stay_loops():
    # the cap on trips**2 x item (the quadratic tape) is gone: 3000 steps of 16 floats
    W, xs, h0 = _args(3000, d=16)
    args = (0.25 * W, xs, h0)  # (contracting: differences stay accurate)
    assert myc.ir(rnn, *args, stage="typed").count("= loop(") == 1
    g = myc.grad(rnn, argnums=(0,))(*args)
    _check_rev(rnn, args, g, (0,))
