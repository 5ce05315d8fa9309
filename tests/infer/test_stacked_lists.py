"""Loops that append to a list are ``loop`` nodes (``myc.infer.stacked``): each append
slot is a buffer carried by the loop, the list after it the earlier items then the
buffers' rows; a list of arrays indexed by the loop counter (``for x in steps``) is
stacked once before the loop.  Loops that cannot be converted (a list read inside the
loop, a Python float appended, a trip count that depends on data) keep their old
behaviour: unrolled, or the clear error of a list growing in a data-dependent loop."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycTypeError

try:
    from tests.backends import BACKENDS
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from backends import BACKENDS
    from gradcheck import check_grads


def rnn(W, xs, h0):
    h = h0
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = np.tanh(W @ h + 0.5 * xs[t])
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def two_slots_and_prefix(W, xs, h0):
    h = h0
    hs = [h0, 2.0 * h0]
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = np.tanh(W @ h - xs[t])
        hs.append(h)
        hs.append(np.sin(h))
    out = np.stack(hs)                       # the buffers, interleaved
    # the list is an ordinary list after the loop
    return np.sum(out * np.arange(out.shape[0])[:, None]) + np.sum(hs[3] * hs[-1]) + len(hs)


def scalars_appended(W, xs, h0):
    h = h0
    losses = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = np.tanh(W @ h + xs[t])
        losses.append(np.sum(h ** 2))        # a NumPy scalar
    return np.sum(np.array(losses) * np.linspace(0.0, 1.0, len(losses))) + sum(losses)


def as_arrays(W, xs, h0):
    h = h0
    hs = [h0, 2.0 * h0]
    ls = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = np.tanh(W @ h - xs[t])
        hs.append(h)
        hs.append(np.sin(h))
        ls.append(np.sum(h))
    A = np.array(hs)                         # np.array of the list: the buffers whole
    return np.sum(A * np.arange(A.shape[0])[:, None]) + np.sum(np.array(ls) ** 2)


def reads_the_last(W, xs, h0):
    ys = [h0]
    for t in range(xs.shape[0]):
        y = ys[-1]                           # the last item appended (or h0, first)
        y = np.tanh(W @ y + xs[t]) * (len(ys) % 3)
        ys.append(np.tanh(W @ y + 0.5 * ys[0]))
    return np.sum(np.stack(ys) ** 2)


def over_a_list(W, steps, h0):
    h = h0
    hs = []
    for x in steps:                          # a list of arrays, indexed by the counter
        h = np.tanh(W @ h + x)
        h = np.tanh(W @ h + x)
        hs.append(h)
    return np.sum(np.stack(hs)[::3])


def read_inside(W, xs, h0):
    hs = [h0]
    for t in range(xs.shape[0]):
        h = np.tanh(W @ hs[t] + xs[t])       # the list read inside the loop
        h = np.tanh(W @ h + xs[t])
        hs.append(h)
    return np.sum(np.stack(hs))


def python_floats(W, xs, h0):
    h = h0
    out = []
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = np.tanh(W @ h + xs[t])
        out.append(float(t))                 # a Python float: not stacked
    return np.sum(h) + sum(out)


def grows_with_data(x):
    out = []
    while np.sum(x) > 1.0:
        x = 0.5 * x
        out.append(x)
    return len(out)


def _args(n=160, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return (0.4 * rng.standard_normal((d, d)), rng.standard_normal((n, d)),
            rng.standard_normal(d))


def _loops(f, *args) -> int:
    return myc.ir(f, *args, stage="typed").count("= loop(")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [rnn, two_slots_and_prefix, scalars_appended, as_arrays,
                               reads_the_last])
def test_appending_loops_are_loop_nodes(f, backend):
    args = _args()
    assert _loops(f, *args) == 1, myc.ir(f, *args, stage="typed")[:2000]
    np.testing.assert_allclose(myc.jit(f, backend=backend)(*args), f(*args), rtol=1e-10)


@pytest.mark.parametrize("f", [rnn, two_slots_and_prefix, scalars_appended, as_arrays,
                               reads_the_last])
def test_gradients_through_appending_loops(f):
    # forward mode too: its tangents are appended (and stacked) beside the values
    check_grads(f, _args(n=140), argnums=(0, 1, 2), modes=("rev", "fwd"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_list_indexed_by_the_loop_counter(backend):
    W, xs, h0 = _args()
    steps = [x for x in xs]
    assert _loops(over_a_list, W, steps, h0) == 1
    np.testing.assert_allclose(myc.jit(over_a_list, backend=backend)(W, steps, h0),
                               over_a_list(W, steps, h0), rtol=1e-10)
    g = myc.grad(over_a_list, argnums=(0, 1))(W, steps, h0)
    eps = 1e-6
    for k in (0, 57, 159):                     # one step's gradient, by differences
        e = np.zeros_like(steps[k])
        e[1] = eps
        up = steps[:k] + [steps[k] + e] + steps[k + 1:]
        dn = steps[:k] + [steps[k] - e] + steps[k + 1:]
        fd = (over_a_list(W, up, h0) - over_a_list(W, dn, h0)) / (2 * eps)
        np.testing.assert_allclose(g[1][k][1], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [read_inside, python_floats])
def test_what_is_not_stacked_still_runs(f):
    args = _args(n=60)
    np.testing.assert_allclose(myc.jit(f)(*args), f(*args), rtol=1e-10)
    check_grads(f, args, argnums=(0,), modes=("rev",))


def test_a_list_growing_in_a_data_dependent_loop_is_refused():
    with pytest.raises(MycTypeError, match="changes length in a loop whose trip count"):
        myc.jit(grows_with_data)(np.ones(4))


def test_the_stacked_list_is_taken_whole():
    args = _args()
    for f in (rnn, as_arrays, two_slots_and_prefix):
        text = myc.ir(f, *args, stage="optimized")
        assert text.count("getitem(") < 10, text
