"""The autograd-style corpus (``tests/programs/autograd_style``) runs unchanged.

For each program: the value through ``myc.jit`` equals CPython's (NumPy's); the
gradient has the structure of the differentiated argument (a list of tuples, a dict, a
list of namedtuples) and agrees with finite differences of the CPython function
(``tests/gradcheck``: vjp and jvp); a few steps of gradient descent written as users
write them (``params = [(W - lr * dW, ...) for ...]``) match a NumPy-only run; where
the program has a hand-written gradient, it matches that too.  On interp and cpu; on
OpenCL the value and gradient are compared with the CPU's.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import myc
from tests.gradcheck import check_grads, leaves, set_path, tree_map
from tests.programs.autograd_style import MODULES

try:
    import pyopencl  # noqa: F401
    HAS_OPENCL = True
except ImportError:
    HAS_OPENCL = False


def _case(name):
    return importlib.import_module(f"tests.programs.autograd_style.{name}").CASE


def _close(got, want, rtol=1e-9, atol=1e-12):
    assert type(got) is type(want) or (np.ndim(want) == 0 and np.ndim(got) == 0), \
        (type(got), type(want))
    for (pg, g), (pw, w) in zip(leaves(got), leaves(want), strict=True):
        assert pg == pw
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=str(pg))


def _same_structure(g, x):
    assert type(g) is type(x), (type(g), type(x))
    if isinstance(x, dict):
        assert list(g) == list(x)
        for k in x:
            _same_structure(g[k], x[k])
    elif isinstance(x, (list, tuple)):
        assert len(g) == len(x)
        for a, b in zip(g, x, strict=True):
            _same_structure(a, b)
    else:
        assert np.shape(g) == np.shape(x)


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize("name", MODULES)
def test_value_and_gradient(name, backend):
    case = _case(name)
    fn, args, argnums = case["fn"], case["args"], case["argnums"]
    _close(myc.jit(fn, backend=backend)(*args), fn(*args))
    g = myc.grad(fn, argnums, backend=backend)(*args)
    _same_structure(g, args[argnums])
    check_grads(myc.jit(fn, backend=backend), args, argnums=argnums, modes=("rev",)
                if backend == "interp" else ("rev", "fwd"))


def _fd_grad(fn, args, argnums, eps=1e-6):
    """The gradient of ``fn`` w.r.t. argument ``argnums`` by central differences, leaf by
    leaf, element by element (NumPy only)."""
    tree = args[argnums]
    grads = []
    for path, leaf in leaves(tree):
        arr = np.asarray(leaf, np.float64)
        d = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            vals = []
            for delta in (eps, -eps):
                v = np.array(arr, copy=True)
                v[idx] += delta
                a = list(args)
                a[argnums] = set_path(tree, path, v if np.ndim(leaf) else float(v))
                vals.append(fn(*a))
            d[idx] = (vals[0] - vals[1]) / (2 * eps)
        grads.append(d if np.ndim(leaf) else float(d))
    it = iter(grads)
    return tree_map(lambda _: next(it), tree)


@pytest.mark.parametrize("name", MODULES)
def test_gradient_descent_matches_numpy(name):
    """A user's training loop, the step written over the parameter tree, against the
    same loop with finite-difference gradients in NumPy."""
    case = _case(name)
    fn, argnums = case["fn"], case["argnums"]
    grad = myc.grad(fn, argnums)
    args, ref_args = list(case["args"]), list(case["args"])
    for _ in range(2):
        g = grad(*args)
        args[argnums] = tree_map(lambda p, d: p - 0.05 * d, args[argnums], g)
        ref_args[argnums] = tree_map(lambda p, d: p - 0.05 * d, ref_args[argnums],
                                     _fd_grad(fn, ref_args, argnums))
    _same_structure(args[argnums], case["args"][argnums])
    for (_, a), (_, b) in zip(leaves(args[argnums]), leaves(ref_args[argnums]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_logistic_regression_hand_gradient():
    from tests.programs.autograd_style import logistic_regression as m

    w, x, t = m.CASE["args"]
    np.testing.assert_allclose(myc.grad(m.training_loss)(w, x, t), m.reference_grad(w, x, t),
                               rtol=1e-10)


@pytest.mark.skipif(not HAS_OPENCL, reason="PyOpenCL is not installed")
@pytest.mark.parametrize("name", ["logistic_regression", *[
    pytest.param(n, marks=pytest.mark.slow)  # PoCL compiles each kernel: tens of seconds
    for n in ("neural_net", "mixture_model", "variational_inference")]])
def test_opencl_agrees_with_cpu(name):
    case = _case(name)
    fn, args, argnums = case["fn"], case["args"], case["argnums"]
    _close(myc.jit(fn, backend="opencl")(*args), fn(*args), rtol=1e-9)
    want = myc.grad(fn, argnums)(*args)
    got = myc.grad(fn, argnums, backend="opencl")(*args)
    _close(got, want, rtol=1e-9, atol=1e-11)
