"""What the published autodiff programs (tests/realworld) needed from myc: ``slice()``,
``isinstance``, ``map``, ``functools.partial``, ``rs.randn(*shape)``, generator
functions, ``myc.misc`` (autograd's ``flatten`` and optimizers), ``grad(argnum=)``,
``hessian_vector_product``, and errors that name what is missing.  Values against
CPython, derivatives by finite differences (tests/gradcheck), on the evaluator and cpu.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.misc import flatten
from myc.misc.optimizers import adam, rmsprop, sgd
from tests.gradcheck import check_grads, leaves
from tests.unit import realworld_fixtures as F

BACKENDS = ["interp", "cpu"]
X = np.linspace(-1.0, 1.0, 8)
W = np.array([0.3, -0.2, 0.5])
XS = [np.array([[0.1, 0.2, 0.3], [0.0, -0.1, 0.4]]), np.array([[1.0, -1.0, 0.5]])]


def _same(got, want):
    for (pg, g), (pw, w) in zip(leaves(got), leaves(want), strict=True):
        assert pg == pw
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args,argnums", [
    (F.batch_sum, (X, 1, 3), 0),
    (F.by_kind, ([np.ones(3), [2.0 * np.ones(3)], (1.0,)], W), 1),
    (F.mapped, (XS[:1] * 2, [np.ones((2, 3)), 2.0 * np.ones((2, 3))], W), 2),
    (F.partial_fixed, (np.ones((3, 2)) * 0.1, XS), 0),
    (F.partial_star, (W, np.array([1.0, 2.0, 3.0])), 0),
    (F.flat_loss, ({"b": np.ones(2), "a": [np.arange(3.0), 2.0]},), 0),
    (F.yields, (np.array([1.0, 2.0, 3.0, -1.0]),), 0),
])
def test_value_and_gradient(fn, args, argnums, backend):
    _same(myc.jit(fn, backend=backend)(*args), fn(*args))
    check_grads(myc.jit(fn, backend=backend), args, argnums=argnums,
                modes=("rev",) if backend == "interp" else ("rev", "fwd"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_star_dims_draw_is_numpys_stream(backend):
    m = np.arange(6.0).reshape(2, 3)
    want = F.star_draw(m, np.random.RandomState(5))
    rs = np.random.RandomState(5)
    assert myc.jit(F.star_draw, backend=backend)(m, rs) == want
    assert rs.randn() == (r := np.random.RandomState(5), r.randn(2, 3), r.rand(2, 2, 3),
                          r.randn())[-1]  # the generator advanced as CPython's
    g = myc.grad(F.star_draw, backend=backend)(m, np.random.RandomState(5))
    r = np.random.RandomState(5)
    np.testing.assert_allclose(g, r.randn(2, 3) + r.rand(2, 2, 3).sum(0), rtol=1e-14)


def test_partial_draws_its_bound_arguments_once():
    w = np.ones((3, 2)) * 0.1
    want = F.partial_draw(w, np.random.RandomState(2))
    assert myc.jit(F.partial_draw)(w, np.random.RandomState(2)) == want


def test_flatten_matches_autograds_convention():
    tree = {"b": (np.ones((2, 2)), 3.0), "a": [np.arange(3.0)]}
    vec, unflatten = flatten(tree)
    np.testing.assert_array_equal(vec, [0.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 3.0])  # keys sorted
    back = unflatten(vec * 2)
    assert list(back) == ["b", "a"] and isinstance(back["b"], tuple)
    np.testing.assert_array_equal(back["b"][0], 2 * np.ones((2, 2)))
    assert back["b"][1] == 6.0
    np.testing.assert_array_equal(myc.jit(F.flat_loss)(tree), F.flat_loss(tree))


def test_unflatten_inside_compiled_code_is_refused_at_the_line():
    with pytest.raises(myc.MycTypeError, match="unflatten") as info:
        myc.jit(F.flat_unflatten)([np.ones(2)])
    assert info.value.loc is not None and info.value.loc.filename == F.__file__


@pytest.mark.parametrize("opt", [adam, sgd, rmsprop])
def test_optimizers_take_trees_and_myc_gradients(opt):
    """The optimizers run on a tree of parameters with a myc gradient, and agree with
    the same optimizer on the flattened vector with the analytic gradient."""
    target = {"w": np.array([1.0, -2.0]), "b": 0.5}

    def loss(p, i):
        return np.sum((p["w"] - target["w"]) ** 2) + (p["b"] - target["b"]) ** 2

    p0 = {"w": np.zeros(2), "b": 0.0}
    got = opt(myc.grad(loss), p0, num_iters=30, step_size=0.1)
    flat_target = flatten(target)[0]
    want = opt(lambda x, i: 2 * (x - flat_target), flatten(p0)[0], num_iters=30,
               step_size=0.1)
    np.testing.assert_allclose(flatten(got)[0], want, rtol=1e-12)
    assert list(got) == ["w", "b"]


def test_grad_takes_autograds_argnum():
    f = F.quadratic
    x, a = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    _same(myc.grad(f, argnum=1)(x, a), myc.grad(f, 1)(x, a))
    gx, ga = myc.grad(f, argnum=(0, 1))(x, a)
    _same(ga, x ** 2)
    v, g = myc.value_and_grad(f, argnum=0)(x, a)
    assert v == f(x, a)
    with pytest.raises(myc.MycTypeError, match="argnum"):
        myc.grad(f, 1, argnum=0)


def test_hessian_vector_product_against_finite_differences():
    x, a, v = np.array([0.5, -1.0, 0.2]), np.array([2.0, 3.0, 1.0]), np.array([1.0, 0.5, -2.0])
    hv = myc.hessian_vector_product(F.quadratic)(x, a, v)
    g = myc.grad(F.quadratic)
    eps = 1e-6
    fd = (g(x + eps * v, a) - g(x - eps * v, a)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-7, atol=1e-9)


_HVP = myc.hessian_vector_product(F.quadratic)


def _newton_decrement(x, a):
    """Newton's method inside a differentiated objective: the Hessian's columns by
    ``hessian_vector_product`` called from compiled code."""
    d = x.shape[0]
    H = np.stack([_HVP(x, a, np.eye(d)[k]) for k in range(d)], axis=1)
    g = myc.grad(F.quadratic)(x, a)
    return 0.5 * g @ np.linalg.solve(H, g)


def test_hessian_vector_product_inside_compiled_code():
    x, a = np.array([0.5, -1.0, 0.2]), np.array([2.0, 3.0, 1.0])
    eps = 1e-6
    g = myc.grad(F.quadratic)
    H = np.stack([(g(x + eps * e, a) - g(x - eps * e, a)) / (2 * eps) for e in np.eye(3)],
                 axis=1)
    want = 0.5 * g(x, a) @ np.linalg.solve(H, g(x, a))
    np.testing.assert_allclose(myc.jit(_newton_decrement)(x, a), want, rtol=1e-6)
    check_grads(_newton_decrement, (x, a), argnums=0, modes=("rev",), reference="myc")


def test_generator_with_yield_expression_stays_refused():
    with pytest.raises(myc.MycSyntaxError, match="yield"):
        myc.jit(F.yield_expression)(W)


def test_plotting_branch_not_taken_runs():
    assert myc.jit(F.plotting_branch)(X) == F.plotting_branch(X)
    np.testing.assert_allclose(myc.grad(F.plotting_branch)(X), 2 * X)


@pytest.mark.parametrize("call,name,hint", [
    ("solve_ivp(f, (0.0, 1.0), y0).y", "scipy.integrate.solve_ivp", "odeint"),
    ("convolve(y0, t)", "scipy.signal.convolve", "shifted slices"),
])
def test_scipy_source_is_refused_by_its_public_name(tmp_path, call, name, hint):
    pytest.importorskip("scipy")
    src = tmp_path / "prog.py"
    src.write_text("import numpy as np\nfrom scipy.integrate import solve_ivp\n"
                   "from scipy.signal import convolve\n\n\ndef f(y, t):\n    return -y\n\n\n"
                   f"def g(y0, t):\n    return np.sum({call})\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("prog_rw", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(myc.MycNameError) as info:
        myc.jit(mod.g)(np.ones(2), np.linspace(0.0, 1.0, 3))
    assert f"{name} is not supported" in str(info.value)
    assert hint in str(info.value)
    assert info.value.loc.filename == str(src) and info.value.loc.line == 11


def test_object_of_a_users_class_is_compiled():
    x = np.arange(2.0).reshape(1, 2) + 0.5
    assert myc.jit(F.object_loss)(x) == F.object_loss(x)


def test_constructing_an_object_inside_runs_its_init():
    # (refused before session 16: Cls(args) now runs __init__ on a new object)
    x = np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(myc.jit(F.object_built_inside)(x), F.object_built_inside(x))


def test_autograds_convolve_matches_scipy_and_differentiates():
    """``myc.misc.signal.convolve``: SciPy's convolution along ``axes``, summed over
    ``dot_axes`` (autograd's extension), compiled and differentiated."""
    signal = pytest.importorskip("scipy.signal")
    from myc.misc.signal import convolve

    rs = np.random.RandomState(3)
    a, b = rs.randn(6, 5), rs.randn(3, 2)
    def full(a, b):
        return convolve(a, b, mode="full")

    def valid(a, b):
        return convolve(a, b, mode="valid")

    for fn, mode in ((full, "full"), (valid, "valid")):
        np.testing.assert_allclose(myc.jit(fn)(a, b), signal.convolve(a, b, mode=mode),
                                   rtol=1e-12, atol=1e-12)
    x, k = rs.randn(3, 2, 5, 5), rs.randn(2, 4, 3, 3)
    ref = np.zeros((3, 4, 3, 3))
    for n in range(3):
        for f in range(4):
            for c in range(2):
                ref[n, f] += signal.convolve(x[n, c], k[c, f], mode="valid")

    def layer(k):
        return convolve(x, k, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")

    np.testing.assert_allclose(myc.jit(layer)(k), ref, rtol=1e-12, atol=1e-12)
    g = myc.grad(lambda k: np.sum(np.tanh(layer(k))))(k)
    eps, idx = 1e-6, (1, 2, 0, 2)
    d = np.zeros_like(k)
    d[idx] = eps
    fd = (np.sum(np.tanh(layer(k + d))) - np.sum(np.tanh(layer(k - d)))) / (2 * eps)
    np.testing.assert_allclose(g[idx], fd, rtol=1e-6)


def test_autograds_builtins_are_pythons():
    from myc.builtins import dict as d
    from myc.builtins import tuple as t

    assert t is tuple and d is dict


class _Slots:
    """Slices of a flat vector whose bounds come from np.prod (NumPy ints), as
    autograd's WeightsParser builds them."""

    def __init__(self):
        self.where, self.n = {}, 0

    def add(self, key, shape):
        start = self.n
        self.n += np.prod(shape)
        self.where[key] = (slice(start, self.n), shape)

    def get(self, flat, key):
        span, shape = self.where[key]
        return np.reshape(flat[span], shape)


def test_an_object_with_numpy_int_slices_is_read():
    slots = _Slots()
    slots.add("w", (2, 3))
    slots.add("b", (3,))

    def f(flat, x):
        return np.sum(np.tanh(x @ slots.get(flat, "w") + slots.get(flat, "b")))

    flat, x = np.linspace(-1.0, 1.0, 9), np.ones((4, 2))
    np.testing.assert_allclose(myc.jit(f)(flat, x), f(flat, x), rtol=1e-12)
    g = myc.grad(f)(flat, x)
    eps = 1e-6
    fd = [(f(flat + eps * e, x) - f(flat - eps * e, x)) / (2 * eps) for e in np.eye(9)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


class _Flow:
    """A static method called through ``self`` (and one through the class), with a
    default argument; a classmethod stays refused, by name."""

    def __init__(self):
        self.scale = 2.0

    @staticmethod
    def squash(u, w, shift=1.0):
        return u + np.tanh(w) * shift

    @classmethod
    def make(cls, x):
        return x

    def apply(self, u, w):
        return self.scale * self.squash(u, w) + _Flow.squash(u, w, 0.5)


def test_a_static_method_called_through_self_compiles_and_differentiates():
    flow = _Flow()

    def f(u, w):
        return np.sum(flow.apply(u, w) ** 2) + np.sum(flow.squash(u, w, 3.0))

    u, w = np.array([0.3, -0.2]), np.array([0.1, 0.7])
    np.testing.assert_allclose(myc.jit(f)(u, w), f(u, w), rtol=1e-12)
    g = myc.grad(f, argnums=(0, 1))(u, w)
    eps = 1e-6
    for k, x in enumerate((u, w)):
        fd = [(f(*[x + eps * e if j == k else a for j, a in enumerate((u, w))])
               - f(*[x - eps * e if j == k else a for j, a in enumerate((u, w))])) / (2 * eps)
              for e in np.eye(2)]
        np.testing.assert_allclose(g[k], fd, rtol=1e-6)


def test_a_classmethod_called_through_self_is_refused_by_name():
    flow = _Flow()

    def f(x):
        return flow.make(x)

    with pytest.raises(myc.MycError, match="_Flow.make is a classmethod"):
        myc.jit(f)(np.ones(2))
