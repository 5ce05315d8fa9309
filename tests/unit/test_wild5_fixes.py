"""What the fifth corpus (tests/realworld/wild5) found in myc's AD and test harness, each
against NumPy and finite differences: the gradient of a list repeated (``[np.eye(d)] *
K``, ``2 * [x, y]``) in both modes; the 2-norm's gradient at the zero vector (0, not nan:
pairwise distances have zero vectors on their diagonal); the corpus harness counting a
nan gradient as an error."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS
from tests.realworld.run import max_error

try:
    from tests.gradcheck import check_grads
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from gradcheck import check_grads

X = np.array([0.5, 2.0])


def repeated(x):
    xs = 2 * [x, x ** 2]
    covs = np.stack([np.eye(2)] * 3)
    return np.sum(np.stack(xs) * np.arange(4.0)[:, None]) + np.sum(covs @ x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_repetition_differentiates(backend):
    g = myc.grad(repeated, backend=backend)(X)
    np.testing.assert_allclose(g, 2.0 + 4.0 * 2 * X + 3.0, rtol=1e-12)
    v, t = myc.jvp(repeated, (X,), (np.ones(2),))
    assert np.isclose(v, repeated(X)) and np.isclose(t, np.sum(2.0 + 8.0 * X + 3.0))
    check_grads(repeated, (X,), order=2)


def pairwise_energy(pos):
    diff = pos[None, :, :] - pos[:, None, :]
    dist = np.linalg.norm(diff, axis=-1)          # zeros on the diagonal
    return np.sum(np.exp(-dist ** 2)) + np.linalg.norm(pos - pos) + np.linalg.norm(
        np.zeros(3) * pos[0], keepdims=True)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_gradient_is_zero_at_the_zero_vector(backend):
    pos = np.random.default_rng(0).standard_normal((4, 3))
    assert np.isclose(myc.jit(pairwise_energy, backend=backend)(pos), pairwise_energy(pos))
    g = myc.grad(pairwise_energy, backend=backend)(pos)
    assert np.all(np.isfinite(g))
    check_grads(lambda p: np.sum(np.exp(-np.linalg.norm(p[None] - p[:, None], axis=-1) ** 2)),
                (pos,), order=2)
    assert myc.grad(lambda x: np.linalg.norm(x), backend=backend)(np.zeros(3)).tolist() == \
        [0.0, 0.0, 0.0]
    # values keep NumPy's: nan and inf propagate, a scalar for a whole-array norm
    for v in (np.array([np.nan, 1.0]), np.array([np.inf, 1.0]), np.zeros(2)):
        got = myc.jit(lambda x: np.linalg.norm(x), backend=backend)(v)
        np.testing.assert_equal(got, np.linalg.norm(v))
        assert np.ndim(got) == 0


def test_harness_counts_a_nan_gradient_as_an_error():
    mask = np.ones(2, bool)
    assert max_error(np.array([np.nan, 1.0]), np.array([0.5, 1.0]), mask) == float("inf")
    assert max_error(np.array([0.5, 1.0]), np.array([0.5, 1.0]), mask) == 0.0


def modes(x, mode="train"):
    if mode == "train":
        y = x * 2.0
    elif mode == "test":
        y = x + 1.0
    else:
        raise ValueError(f'Invalid forward mode "{mode}"')
    return np.sum(y ** 2)


def guarded(x):
    if np.sum(x) > 0:
        raise RuntimeError("the sum must not be positive")
    return x * 3.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_raise_statement(backend):
    x = np.array([0.5, -1.5])
    f = myc.jit(modes, backend=backend)
    assert f(x) == modes(x) and f(x, "test") == modes(x, "test")
    np.testing.assert_allclose(myc.grad(modes, backend=backend)(x, "test"), 2 * (x + 1.0))
    with pytest.raises(myc.MycValueError, match='ValueError: Invalid forward mode "bogus"') \
            as info:
        f(x, "bogus")
    assert "test_wild5_fixes.py" in str(info.value)  # the raise's line
    g = myc.jit(guarded, backend=backend)
    np.testing.assert_array_equal(g(-np.ones(2)), -3.0 * np.ones(2))
    with pytest.raises(myc.MycValueError, match="RuntimeError: the sum must not be positive"):
        g(np.ones(2))


def test_bare_raise_is_refused_at_its_line():
    def f(x):
        if x > 0:
            raise
        return x
    with pytest.raises(myc.MycSyntaxError, match="bare 'raise'"):
        myc.jit(f)(1.0)


def made_inside(x, seed=0, n=4):
    rng = np.random.default_rng(seed)
    eps = rng.standard_normal((n, x.shape[0]))
    return np.mean(np.sum((x + eps) ** 2, axis=1)) + rng.normal(0.0, 1.0)


def seeded_global(x, seed):
    np.random.seed(seed)
    mask = (np.random.rand(*x.shape) < 0.5) / 0.5
    return np.sum(x * mask) + np.random.randn()


def random_state_inside(x):
    rs = np.random.RandomState(3)
    return x * rs.rand(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_generators_made_and_seeded_inside_draw_as_numpy(backend):
    x = np.array([0.1, -0.4, 0.3])
    f = myc.jit(made_inside, backend=backend)
    assert f(x, 5) == made_inside(x, 5) and f(x, 5) == made_inside(x, 5)  # fresh each call
    assert f(x, 6) == made_inside(x, 6)
    assert myc.jit(seeded_global, backend=backend)(x, 2) == seeded_global(x, 2)
    after = np.random.rand()           # the global stream continues as NumPy's would
    seeded_global(x, 2)
    assert after == np.random.rand()
    np.testing.assert_array_equal(myc.jit(random_state_inside, backend=backend)(x),
                                  random_state_inside(x))
    g = myc.grad(made_inside, backend=backend)(x, 7)
    e = 1e-6
    fd = [(made_inside(x + e * u, 7) - made_inside(x - e * u, 7)) / (2 * e) for u in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-8)


def one_hots(x, idx):
    xs = {}
    for t in range(len(idx)):
        xs[t] = np.zeros((3, 1))       # min-char-rnn's 1-of-k encoding
        xs[t][idx[t]] = 1
    hs = [np.zeros(2), np.ones(2)]
    hs[1][0] = x
    return sum(xs[t] * x for t in range(len(idx))) + np.sum(hs[0] + hs[1])


def fresh_then_read(x):
    xs = {}
    xs[0] = np.zeros(3)
    h = np.tanh(xs[0] + 1.0)           # a new array: unaffected by the write
    xs[0][1] = x
    return h + xs[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_assignment_through_an_element(backend):
    for f, args in ((one_hots, (2.0, [0, 2, 1])), (fresh_then_read, (2.0,))):
        np.testing.assert_array_equal(myc.jit(f, backend=backend)(*args), f(*args))
    g = myc.grad(lambda x: np.sum(one_hots(x, [0, 2, 1]) * np.arange(3.0)[:, None]),
                 backend=backend)(2.0)
    assert g == 6.0  # rows 2x + 1 (the one-hots times x, plus sum(hs) = x + 1), weighted 0+1+2


def via_dict_alias(x):
    z = np.zeros(3)
    xs = {0: z}
    xs[0][1] = x
    return z                   # CPython: z is xs[0], written


def via_item_read(x):
    xs = [np.zeros(3)]
    y = xs[0]
    xs[0][1] = x
    return y


def via_view(x):
    z = np.zeros(4)
    xs = {}
    xs[0] = z[1:]
    xs[0][0] = x
    return z


def via_values(x):
    xs = {}
    xs["a"] = np.zeros(3)
    vals = list(xs.values())
    xs["a"][1] = x
    return vals[0]


def via_conditional(x, c):
    xs = {}
    xs[0] = np.zeros(3)
    y = xs[0] if c > 0 else np.ones(3)
    xs[0][1] = x
    return y


@pytest.mark.parametrize("f", [via_dict_alias, via_item_read, via_view, via_values,
                               via_conditional])
def test_item_assignment_through_an_element_refuses_reading_another_name_for_it(f):
    """CPython shows the write through every other name for the object; myc's values
    cannot, so reading one afterwards is refused -- never the old values."""
    with pytest.raises(myc.MycValueError, match="updated in place"):
        myc.jit(f)(*(1.0,) * f.__code__.co_argcount)


def through_argument(xs, x):
    xs[0][1] = x
    return xs[0]


def after_a_branch(x, c):
    xs = {}
    xs[0] = np.zeros(3)
    if c > 0:
        y = xs[0]
    else:
        y = np.ones(3)
    xs[0][1] = x               # xs and y come from the join: y may hold xs[0]
    return y


@pytest.mark.parametrize("f,args", [(through_argument, ({0: np.zeros(3)}, 1.0)),
                                    (after_a_branch, (1.0, 1.0))])
def test_item_assignment_through_an_element_of_unknown_origin_is_refused(f, args):
    with pytest.raises(myc.MycSyntaxError, match=r"through an element \(xs\[0\]\[1\]") as info:
        myc.jit(f)(*args)
    assert "v = xs[0]; v[1] = ...; xs[0] = v" in str(info.value)
    assert "xs[0][1] = x" in str(info.value)  # the user's line
