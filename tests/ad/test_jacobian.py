"""``myc.jacrev``/``jacfwd``/``jacobian``/``hessian``/``elementwise_grad`` (JAX's and
autograd's): every Jacobian against central differences of the function run as plain
NumPy and against a Jacobian derived by hand, in JAX's shapes (``out.shape +
in.shape``) and pytree nesting (the output's structure outside, the input's inside)."""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def numeric_jacobian(f, x, eps=1e-6):
    """Central differences of ``f`` (arrays or numbers out) at ``x``: ``out.shape +
    x.shape``."""
    x = np.asarray(x, dtype=float)
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        jac[(...,) + idx] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return jac


def tanh_scaled(x):
    return np.tanh(x) * np.sum(x ** 2)


def tanh_scaled_jacobian(x):
    th = np.tanh(x)
    return np.diag((1 - th ** 2) * np.sum(x ** 2)) + np.outer(th, 2 * x)


X5 = np.random.default_rng(0).normal(size=5)


@pytest.mark.parametrize("transform", [myc.jacrev, myc.jacfwd, myc.jacobian])
def test_vector_to_vector_against_analytic_and_differences(transform):
    jac = transform(tanh_scaled)(X5)
    assert jac.shape == (5, 5)
    np.testing.assert_allclose(jac, tanh_scaled_jacobian(X5), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jac, numeric_jacobian(tanh_scaled, X5), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("transform", [myc.jacrev, myc.jacfwd])
def test_every_backend(transform, backend):
    jac = transform(tanh_scaled, backend=backend)(X5)
    np.testing.assert_allclose(jac, tanh_scaled_jacobian(X5), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_and_elementwise_grad_on_every_backend(backend):
    H = myc.hessian(norm2_sin, backend=backend)(X5)
    np.testing.assert_allclose(H, np.diag(2 - np.sin(X5)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(myc.elementwise_grad(np.tanh, backend=backend)(X5),
                               1 - np.tanh(X5) ** 2, rtol=1e-12)


def norm2_sin(x):
    return np.sum(x ** 2 + np.sin(x))


def layer(W, v):
    return np.tanh(W @ v)


def test_matrix_input_has_out_shape_plus_in_shape():
    rng = np.random.default_rng(1)
    W, v = rng.normal(size=(3, 4)), rng.normal(size=4)
    expected = numeric_jacobian(lambda w: layer(w, v), W)
    # by hand: d tanh(W v)_i / d W_jk = (1 - tanh^2)_i [i == j] v_k
    h = 1 - np.tanh(W @ v) ** 2
    analytic = np.einsum("i,ij,k->ijk", h, np.eye(3), v)
    for transform in (myc.jacrev, myc.jacfwd):
        jac = transform(layer)(W, v)
        assert jac.shape == (3, 3, 4)
        np.testing.assert_allclose(jac, analytic, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(jac, expected, rtol=1e-6, atol=1e-8)


def gram(X):
    return X @ X.T


def test_matrix_to_matrix():
    X = np.random.default_rng(2).normal(size=(3, 2))
    expected = numeric_jacobian(gram, X)
    rev, fwd = myc.jacrev(gram)(X), myc.jacfwd(gram)(X)
    assert rev.shape == fwd.shape == (3, 3, 3, 2)
    np.testing.assert_allclose(rev, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-14)


def model(params):
    w, b = params["w"], params["b"]
    return {"y": np.sin(w) * b[0] + b[1], "s": (np.sum(w * w), w[:2] * b[1])}


def test_pytrees_nest_as_jax():
    rng = np.random.default_rng(3)
    params = {"w": rng.normal(size=3), "b": rng.normal(size=2)}
    for transform in (myc.jacrev, myc.jacfwd):
        jac = transform(model)(params)
        assert set(jac) == {"y", "s"} and isinstance(jac["s"], tuple)
        assert jac["y"]["w"].shape == (3, 3) and jac["y"]["b"].shape == (3, 2)
        assert jac["s"][0]["w"].shape == (3,) and jac["s"][0]["b"].shape == (2,)
        assert jac["s"][1]["w"].shape == (2, 3)
        for key in ("w", "b"):  # each block against differences along that input
            def part(v, key=key):
                p = dict(params, **{key: v})
                out = model(p)
                return np.concatenate([np.ravel(out["y"]), np.ravel(out["s"][0]),
                                       np.ravel(out["s"][1])])
            num = numeric_jacobian(part, params[key])
            got = np.concatenate([jac["y"][key].reshape(3, -1),
                                  jac["s"][0][key].reshape(1, -1),
                                  jac["s"][1][key].reshape(2, -1)])
            np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-8)


def three(x, y, z):
    return x * y[0] + np.sin(z) * np.sum(y)


def test_argnums_tuple_gives_a_tuple():
    rng = np.random.default_rng(4)
    x, y, z = rng.normal(size=3), rng.normal(size=2), rng.normal(size=3)
    for transform in (myc.jacrev, myc.jacfwd):
        jx, jz = transform(three, argnums=(0, 2))(x, y, z)
        np.testing.assert_allclose(jx, np.diag(np.full(3, y[0])), atol=1e-14)
        np.testing.assert_allclose(jz, np.diag(np.cos(z) * np.sum(y)), atol=1e-14)
        jy = transform(three, argnums=1)(x, y, z)
        np.testing.assert_allclose(jy, numeric_jacobian(lambda v: three(x, v, z), y),
                                   rtol=1e-6, atol=1e-8)
        (last,) = transform(three, argnums=(-1,))(x, y, z)
        np.testing.assert_allclose(last, jz, atol=1e-14)


def with_aux(x):
    y = np.exp(x)
    return y * 2.0, {"mean": np.mean(y)}


def test_has_aux():
    for transform in (myc.jacrev, myc.jacfwd):
        jac, aux = transform(with_aux, has_aux=True)(X5)
        np.testing.assert_allclose(jac, np.diag(2 * np.exp(X5)), rtol=1e-13)
        np.testing.assert_allclose(aux["mean"], np.mean(np.exp(X5)), rtol=1e-13)


def cube(x):
    return x ** 3


def norm2(x):
    return np.sum(x ** 2)


def test_scalars_and_zero_d():
    for transform in (myc.jacrev, myc.jacfwd):
        j = transform(cube)(2.0)
        assert np.shape(j) == () and np.isclose(j, 12.0)
        j0 = transform(cube)(np.array(2.0))
        assert np.shape(j0) == () and np.isclose(j0, 12.0)
        g = transform(norm2)(X5)  # scalar out: in.shape
        assert g.shape == (5,)
        np.testing.assert_allclose(g, 2 * X5, rtol=1e-13)


def energy(x, scale):
    return scale * (np.sum(np.sin(x) * x[0]) + np.sum(x ** 4)) + np.prod(x[:2])


def test_hessian_against_differences_of_grad_and_hvp():
    x = np.random.default_rng(5).normal(size=6)
    H = myc.hessian(energy)(x, 1.5)
    assert H.shape == (6, 6)
    grad = myc.grad(energy)
    num = numeric_jacobian(lambda v: grad(v, 1.5), x)
    np.testing.assert_allclose(H, num, rtol=1e-6, atol=1e-7)
    hvp = myc.hessian_vector_product(energy)
    for e in np.eye(6):
        np.testing.assert_allclose(H @ e, hvp(x, 1.5, e), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


def test_hessian_of_pytree_and_argnums_tuple():
    rng = np.random.default_rng(6)
    p = {"a": rng.normal(size=2), "b": rng.normal(size=(2, 2))}

    def f(p):
        return np.sum(p["a"] ** 2 * np.sum(p["b"])) + np.sum(np.exp(p["b"]))

    H = myc.hessian(f)(p)
    assert H["a"]["a"].shape == (2, 2) and H["a"]["b"].shape == (2, 2, 2)
    assert H["b"]["a"].shape == (2, 2, 2) and H["b"]["b"].shape == (2, 2, 2, 2)
    np.testing.assert_allclose(H["a"]["a"], 2 * np.sum(p["b"]) * np.eye(2), rtol=1e-12)
    np.testing.assert_allclose(H["a"]["b"], np.broadcast_to(2 * p["a"][:, None, None],
                                                            (2, 2, 2)), rtol=1e-12)
    np.testing.assert_allclose(H["b"]["b"].reshape(4, 4), np.diag(np.exp(p["b"]).ravel()),
                               rtol=1e-12)

    def g(x, y):
        return np.sum(x ** 2 * y) + np.sum(y ** 3)

    x, y = rng.normal(size=2), rng.normal(size=2)
    (hxx, hxy), (hyx, hyy) = myc.hessian(g, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(hxx, np.diag(2 * y), rtol=1e-12)
    np.testing.assert_allclose(hxy, np.diag(2 * x), rtol=1e-12)
    np.testing.assert_allclose(hyx, np.diag(2 * x), rtol=1e-12)
    np.testing.assert_allclose(hyy, np.diag(6 * y), rtol=1e-12)


def test_jacfwd_equals_jacrev_on_a_network():
    rng = np.random.default_rng(7)
    W1, W2 = rng.normal(size=(4, 3)), rng.normal(size=(2, 4))

    def net(x, W1, W2):
        return W2 @ np.tanh(W1 @ x) + np.log1p(np.exp(x[:2]))

    x = rng.normal(size=3)
    for nums in (0, 1, (0, 2)):
        rev = myc.jacrev(net, argnums=nums)(x, W1, W2)
        fwd = myc.jacfwd(net, argnums=nums)(x, W1, W2)
        for r, f in zip(np.atleast_1d(rev) if not isinstance(rev, tuple) else rev,
                        np.atleast_1d(fwd) if not isinstance(fwd, tuple) else fwd,
                        strict=True):
            np.testing.assert_allclose(r, f, rtol=1e-12, atol=1e-14)


def power(x, k):
    return x ** k


class Scaled:
    def __init__(self, a):
        self.a = a

    def apply(self, x):
        return self.a * np.sin(x)


def test_jitted_partial_and_bound_method_functions():
    """JAX's transforms take any callable: a myc.jit function, a partial (its bound
    arguments held constant), a bound method; int arguments not differentiated pass."""
    x = X5[:3]
    np.testing.assert_allclose(myc.jacrev(myc.jit(power))(x, 3), np.diag(3 * x ** 2),
                               rtol=1e-13)
    np.testing.assert_allclose(myc.jacfwd(functools.partial(power, k=2))(x),
                               np.diag(2 * x), rtol=1e-13)
    np.testing.assert_allclose(myc.jacrev(Scaled(3.0).apply)(x), np.diag(3 * np.cos(x)),
                               rtol=1e-13)
    h = myc.hessian(lambda x: np.sum(x ** 3))(x.astype(np.float32))
    assert h.dtype == np.float32


def test_pickles_as_the_transform():
    h = pickle.loads(pickle.dumps(myc.hessian(norm2)))
    np.testing.assert_allclose(h(X5), 2 * np.eye(5), atol=1e-14)


def test_elementwise_grad():
    x = np.linspace(-2, 2, 7)
    np.testing.assert_allclose(myc.elementwise_grad(np.tanh)(x), 1 - np.tanh(x) ** 2,
                               rtol=1e-13)

    def f(a, x):
        return a * np.sin(x)

    np.testing.assert_allclose(myc.elementwise_grad(f, 1)(2.0, x), 2 * np.cos(x),
                               rtol=1e-13)
    np.testing.assert_allclose(myc.elementwise_grad(f, argnums=1)(2.0, x), 2 * np.cos(x),
                               rtol=1e-13)


def test_errors_name_the_problem():
    with pytest.raises(myc.MycTypeError, match="integer, bool or non-float"):
        myc.jacrev(tanh_scaled)(np.arange(3))
    with pytest.raises(myc.MycTypeError, match="integer, bool or non-float"):
        myc.hessian(norm2)({"a": np.arange(3)})
    with pytest.raises(myc.MycTypeError, match="out of range"):
        myc.jacfwd(tanh_scaled, argnums=2)(X5)
    with pytest.raises(myc.MycTypeError, match="argnums must be"):
        myc.jacrev(tanh_scaled, argnums="x")
    with pytest.raises(myc.MycTypeError, match="has_aux"):
        myc.jacrev(tanh_scaled, has_aux=3)
    with pytest.raises(myc.MycTypeError, match="keyword argument"):
        myc.jacrev(tanh_scaled)(x=X5)


def test_long_jacobian_is_one_loop_not_unrolled():
    """600 rows: compiled as a loop node, one compile, not 600 copies of the body."""
    x = np.random.default_rng(8).normal(size=600)
    jac = myc.jacrev(tanh_scaled)
    got = jac(x)
    np.testing.assert_allclose(got, tanh_scaled_jacobian(x), rtol=1e-12, atol=1e-12)
    (program,) = jac._programs.values()
    assert "loop" in myc.ir(program, x, stage="typed")
    assert program.stats().compiles == 1


# ---------------------------------------------------------------- inside compiled code


def _quartic(x):
    return np.sum(x ** 4) + x[0] * x[1] + np.sum(np.exp(0.1 * x))


def _newton(x, n):
    # JAX users' Newton step: the Hessian and gradient taken inside the compiled loop
    for _ in range(n):
        H = myc.hessian(_quartic)(x)
        g = myc.grad(_quartic)(x)
        x = x - np.linalg.solve(H, g)
    return x


def _layer(v, m):
    return np.tanh(m @ v)


def _jacobians_inside(x, w):
    J = myc.jacobian(np.tanh)(x)
    Jf = myc.jacfwd(_layer, argnums=1)(x, w)
    Jr = myc.jacrev(_layer)(x, w)
    e = myc.elementwise_grad(np.sin)(x)
    return J @ x, Jf, Jr, e


@pytest.mark.parametrize("backend", BACKENDS)
def test_transforms_inside_compiled_code_match_outside(backend):
    x0 = np.array([1.0, -0.5, 0.7])
    H_, G_ = myc.hessian(_quartic), myc.grad(_quartic)
    want = x0
    for _ in range(3):
        want = want - np.linalg.solve(H_(want), G_(want))
    np.testing.assert_allclose(myc.jit(_newton, backend=backend)(x0, 3), want, rtol=1e-12)
    w = np.arange(6.0).reshape(2, 3) / 5.0
    got = myc.jit(_jacobians_inside, backend=backend)(x0, w)
    outside = (myc.jacobian(np.tanh)(x0) @ x0, myc.jacfwd(_layer, argnums=1)(x0, w),
               myc.jacrev(_layer)(x0, w), np.cos(x0))
    for g, o in zip(got, outside, strict=True):
        assert np.shape(g) == np.shape(o)
        np.testing.assert_allclose(g, o, rtol=1e-12, atol=1e-15)


def _twice_a(q):
    return q["a"] * 2.0


def _product(a, b):
    return a * b


def test_transforms_inside_compiled_code_refuse_what_they_cannot_do_clearly():
    def tree_arg(p):
        return myc.jacobian(_twice_a)(p)

    def two_argnums(x):
        return myc.jacobian(_product, argnums=(0, 1))(x, x)

    def nested(x):
        return myc.hessian(lambda v: np.sum(v ** 3))(x)

    with pytest.raises(myc.MycError, match="one array argument"):
        myc.jit(tree_arg)({"a": np.ones(2)})
    with pytest.raises(myc.MycError, match="one argnums int") as info:
        myc.jit(two_argnums)(np.ones(2))
    assert "myc.jacobian(" in str(info.value)
    with pytest.raises(myc.MycError, match="written inside the compiled function"):
        myc.jit(nested)(np.ones(2))


def _second_differences(f, x, eps=1e-4):
    """d2 f / dx_j dx_k by central differences of central differences: shape
    ``f(x).shape + x.shape + x.shape``."""
    n = x.size
    out = np.zeros(np.shape(f(x)) + (n, n))
    for j in range(n):
        for k in range(n):
            ej, ek = np.eye(n)[j] * eps, np.eye(n)[k] * eps
            out[..., j, k] = (f(x + ej + ek) - f(x + ej - ek) - f(x - ej + ek) +
                              f(x - ej - ek)) / (4 * eps * eps)
    return out


def mixed_outputs(x):
    return np.sin(x) * x[0] + x[1] ** 2 * x


def test_hessian_of_an_array_valued_function_is_jacfwd_of_jacrev():
    """JAX's definition (was refused): shape out.shape + x.shape + x.shape."""
    x = np.array([0.3, 0.7, 1.1])
    H = myc.hessian(mixed_outputs)(x)
    assert H.shape == (3, 3, 3)
    np.testing.assert_allclose(H, _second_differences(mixed_outputs, x), atol=1e-6)
    np.testing.assert_allclose(myc.hessian(cube)(X5), _second_differences(cube, X5),
                               atol=1e-5)
    np.testing.assert_allclose(myc.jacfwd(myc.jacrev(mixed_outputs))(x), H, rtol=1e-14)


def wavy(x):
    return np.sum(np.sin(x) ** 2) * x[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_transforms_compose_and_compile(backend):
    """myc.jacfwd(myc.jacrev(f)), myc.jacrev(myc.jacrev(f)), myc.jit(myc.hessian(f)),
    a Hessian object called in a compiled function (each was "holds an object of class
    'Jacobian'")."""
    x = np.array([0.3, 0.7, 1.1])
    want = _second_differences(wavy, x)
    np.testing.assert_allclose(myc.jacrev(myc.jacrev(wavy, backend=backend))(x), want,
                               atol=1e-6)
    np.testing.assert_allclose(myc.jacfwd(myc.jacrev(wavy), backend=backend)(x), want,
                               atol=1e-6)
    np.testing.assert_allclose(myc.jit(myc.hessian(wavy), backend=backend)(x), want,
                               atol=1e-6)
    h = myc.hessian(wavy)

    def newton(v):
        return v - np.linalg.solve(h(v) + 3.0 * np.eye(3), myc.grad(wavy)(v))

    got = myc.jit(newton, backend=backend)(x)
    hx = myc.hessian(wavy)(x)
    np.testing.assert_allclose(got, x - np.linalg.solve(hx + 3.0 * np.eye(3),
                                                        myc.grad(wavy)(x)), rtol=1e-12)
