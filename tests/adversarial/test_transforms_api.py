"""Adversarial tests for myc's public transformations and their compositions.

``jit``, ``grad``, ``value_and_grad``, ``vjp``, ``jvp`` and ``ir`` (DESIGN.md "Public API",
docs/ad.md, docs/errors.md), composed in every order and on both backends (the default
``cpu`` and ``interp``), are checked against CPython/NumPy and central finite differences:

* compositions: ``jit(grad)``, ``grad(jit)``, ``grad(grad)``, ``jvp(grad)``, ``vjp(grad)``,
  ``value_and_grad(jit)``, ``jit(jit)``, and ``grad`` of programs that call ``myc.grad``,
  ``myc.value_and_grad`` or ``myc.jvp`` themselves;
* ``argnums`` (int, negative, tuples, one-element tuples, bad values) and non-float
  arguments in and out of ``argnums``;
* pytrees: tuple arguments, outputs, primals, tangents and cotangents, and mismatches;
* closures, returned lambdas, ``compose``, NumPy/``math`` functions as values,
  recursion (static and data-dependent depth), mutual recursion, loops in closures;
* keyword arguments and defaults; dtypes (float32 stays float32, Python floats stay
  Python floats); inputs are never mutated and outputs are owned by the caller;
* ~40 small programs against finite differences (float64);
* ``myc.ir`` at every stage; error quality (class, message, the user's source line);
  the signature cache (re-specialization on a new shape/dtype/kind and back).

Programs live at module level (or nested in a test): myc reads their source.  The bugs
this file found are kept as ``xfail(strict=True)`` tests whose reason names the likely
culprit.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

import myc
from myc.errors import (
    MycError,
    MycIndexError,
    MycShapeError,
    MycTypeError,
    MycValueError,
)
from tests.adversarial.common import copy_args
from tests.backends import BACKENDS

THIS_FILE = os.path.abspath(__file__)

# -- helpers ------------------------------------------------------------------------------


_copy = copy_args


def _leaves(t):
    if isinstance(t, tuple):
        return [leaf for v in t for leaf in _leaves(v)]
    return [t]


def _rebuild(like, it):
    if isinstance(like, tuple):
        return tuple(_rebuild(v, it) for v in like)
    return next(it)


def _is_float_leaf(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, float):
        return True
    return isinstance(v, (np.ndarray, np.generic)) and np.result_type(v).kind == "f"


def _kind(v):
    """What a leaf is, as far as the API promises: Python type, or NumPy dtype/shape."""
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape)
    if isinstance(v, np.generic):
        return ("numpy", v.dtype.str)
    return (type(v).__name__,)


def assert_mirrors(grad, arg, where=""):
    """A gradient has its argument's structure and, leaf by leaf, its kind and dtype."""
    if isinstance(arg, tuple):
        assert isinstance(grad, tuple) and len(grad) == len(arg), \
            f"{where}: gradient {grad!r} does not mirror argument {arg!r}"
        for i, (g, a) in enumerate(zip(grad, arg, strict=True)):
            assert_mirrors(g, a, f"{where}[{i}]")
        return
    assert _kind(grad) == _kind(arg), f"{where}: gradient {grad!r} ({_kind(grad)}) vs " \
                                      f"argument {arg!r} ({_kind(arg)})"


def assert_close(got, want, rtol=1e-5, atol=1e-7, where=""):
    """Same tuple structure, same shapes, close values."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), \
            f"{where}: {got!r} vs {want!r}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_close(g, w, rtol, atol, f"{where}[{i}]")
        return
    assert not isinstance(got, tuple), f"{where}: got a tuple {got!r}, want {want!r}"
    assert np.shape(got) == np.shape(want), f"{where}: shape {np.shape(got)} vs " \
                                            f"{np.shape(want)}"
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                               np.asarray(want, dtype=np.float64),
                               rtol=rtol, atol=atol, err_msg=where)


def assert_same(ref, got, rtol=1e-12, atol=1e-14, where="out"):
    """CPython's result vs myc's: structure, kinds (Python vs NumPy scalar), dtype, value."""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), f"{where}: {ref!r} vs {got!r}"
        for i, (r, g) in enumerate(zip(ref, got, strict=True)):
            assert_same(r, g, rtol, atol, f"{where}[{i}]")
        return
    assert _kind(got) == _kind(ref), f"{where}: {ref!r} ({_kind(ref)}) vs {got!r} " \
                                     f"({_kind(got)})"
    if np.result_type(ref).kind in "biu":
        np.testing.assert_array_equal(got, ref, err_msg=where)
    else:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, err_msg=where)


def _run(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def fd_grad(fn, args, i, eps=1e-6, kwargs=None):
    """Central differences of scalar ``fn`` w.r.t. every float leaf of ``args[i]``."""
    kwargs = kwargs or {}
    leaves = _leaves(args[i])

    def at(k, change):
        new = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in leaves]
        new[k] = change(new[k])
        a = list(_copy(args))
        a[i] = _rebuild(args[i], iter(new))
        return float(_run(fn, *a, **kwargs))

    out = []
    for k, leaf in enumerate(leaves):
        if not _is_float_leaf(leaf):
            out.append(0.0)
        elif isinstance(leaf, np.ndarray):
            g = np.zeros(leaf.shape)
            for idx in np.ndindex(leaf.shape):
                def shift(v, s, idx=idx):
                    v = v.copy()
                    v[idx] += s
                    return v
                g[idx] = (at(k, lambda v: shift(v, eps)) - at(k, lambda v: shift(v, -eps))) \
                    / (2 * eps)
            out.append(g)
        else:
            out.append((at(k, lambda v: v + eps) - at(k, lambda v: v - eps)) / (2 * eps))
    return _rebuild(args[i], iter(out))


def tree_step(x, t, s):
    """``x + s * t`` on float leaves (int/bool leaves are left alone)."""
    if isinstance(x, tuple):
        return tuple(tree_step(a, b, s) for a, b in zip(x, t, strict=True))
    if not _is_float_leaf(x):
        return x
    if isinstance(x, np.ndarray):
        return x + s * np.asarray(t, dtype=x.dtype)
    return type(x)(x + s * t)


def tree_sub_div(a, b, d):
    if isinstance(a, tuple):
        return tuple(tree_sub_div(x, y, d) for x, y in zip(a, b, strict=True))
    return (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)) / d


def tangent_like(x, rng):
    """A random tangent of ``x``'s structure; zeros for int/bool leaves."""
    if isinstance(x, tuple):
        return tuple(tangent_like(v, rng) for v in x)
    if not _is_float_leaf(x):
        return np.zeros_like(x) if isinstance(x, np.ndarray) else type(x)(0)
    if isinstance(x, np.ndarray):
        return rng.normal(size=x.shape).astype(x.dtype)
    return type(x)(rng.normal())


def fd_jvp(fn, args, tangents, eps=1e-6):
    plus = _run(fn, *tree_step(tuple(args), tangents, eps))
    minus = _run(fn, *tree_step(tuple(args), tangents, -eps))
    return tree_sub_div(plus, minus, 2 * eps)


def _same_input(before, after):
    if isinstance(before, tuple):
        return all(_same_input(b, a) for b, a in zip(before, after, strict=True))
    if isinstance(before, np.ndarray):
        return (after.dtype == before.dtype and after.shape == before.shape
                and np.array_equal(after, before))
    return before == after


def _as_tuple(g, argnums):
    return (g,) if isinstance(argnums, int) else g


def f64(*vals):
    return np.array(vals, dtype=np.float64)


def f32(*vals):
    return np.array(vals, dtype=np.float32)


def _frames(exc):
    out = []
    tb = exc.__traceback__
    while tb is not None:
        out.append(os.path.abspath(tb.tb_frame.f_code.co_filename))
        tb = tb.tb_next
    return out


def assert_good_error(exc, line_text=None):
    """A MycError that reads like docs/errors.md: no raw traceback, no myc internals."""
    assert isinstance(exc, MycError), f"{type(exc).__name__}: {exc}"
    text = str(exc)
    assert text.strip(), "empty error message"
    assert "Traceback (most recent call last)" not in text, text
    myc_dir = os.path.dirname(os.path.abspath(myc.__file__))
    assert myc_dir not in text, f"the message points inside myc: {text}"
    if exc.loc is not None and exc.loc.filename:
        assert os.path.abspath(exc.loc.filename) != os.path.abspath(myc.__file__)
        assert not os.path.abspath(exc.loc.filename).startswith(myc_dir + os.sep), text
    if line_text is not None:
        assert line_text in text, f"{line_text!r} not in the message:\n{text}"
        assert THIS_FILE in text or f"{os.path.basename(THIS_FILE)}:" in text, text
    # the compiler's own frames are dropped (at most the one re-raising frame is left)
    inside = [f for f in _frames(exc) if f.startswith(myc_dir + os.sep)]
    assert len(inside) <= 1, inside


# -- programs: compositions ----------------------------------------------------------------


def c_vec(x, y):
    return np.sum(np.sin(x) * y) + np.sum(np.tanh(x * y) ** 2)


def c_vec_grad(x, y):  # analytic, plain NumPy: the reference for second-order checks
    t = np.tanh(x * y)
    s = 2.0 * t * (1.0 - t * t)
    return np.cos(x) * y + s * y, np.sin(x) + s * x


def c_scal(x):
    return x ** 3 * math.sin(x) + math.exp(-x * x)


def c_scal_d1(x):  # analytic, plain Python
    return 3 * x ** 2 * math.sin(x) + x ** 3 * math.cos(x) - 2 * x * math.exp(-x * x)


def c_inner_grad(x):
    d = myc.grad(c_scal)
    return d(x) * x + c_scal(x)


def c_inner_grad_ref(x):
    return c_scal_d1(x) * x + c_scal(x)


def c_inner_vg(x):
    v, d = myc.value_and_grad(c_scal)(x)
    return v * d


def c_inner_jvp(x):
    s, ds = myc.jvp(c_scal, (x,), (1.0,))
    return s + ds * ds


def c_inner_grad_arr(w):
    g = myc.grad(lambda u: np.sum(np.tanh(u) ** 2))(w)
    return np.sum(g * w)


def c_inner_grad_arr_ref(w):
    t = np.tanh(w)
    return np.sum(2.0 * t * (1.0 - t * t) * w)


def c_inner_grad_grad(x):
    return myc.grad(myc.grad(c_scal))(x) + x


X3 = f64(0.3, -0.8, 1.4)
Y3 = f64(1.1, 0.4, -0.7)
TX3 = f64(0.5, -1.0, 0.25)
TY3 = f64(-0.3, 0.2, 0.9)


def _hvp_ref(tx, ty, eps=1e-6):
    """The directional derivative of the analytic gradient of ``c_vec`` along (tx, ty)."""
    gp = c_vec_grad(X3 + eps * tx, Y3 + eps * ty)
    gm = c_vec_grad(X3 - eps * tx, Y3 - eps * ty)
    return tuple((a - b) / (2 * eps) for a, b in zip(gp, gm, strict=True))


def _comp_jit_grad(be):
    got = myc.jit(myc.grad(c_vec, argnums=(0, 1)), backend=be)(X3, Y3)
    assert_close(got, c_vec_grad(X3, Y3), 1e-12, 1e-14)
    assert_mirrors(got, (X3, Y3))


def _comp_grad_jit(be):
    got = myc.grad(myc.jit(c_vec, backend=be), argnums=(0, 1))(X3, Y3)
    assert_close(got, c_vec_grad(X3, Y3), 1e-12, 1e-14)
    assert_close(got, (fd_grad(c_vec, (X3, Y3), 0), fd_grad(c_vec, (X3, Y3), 1)))


def _comp_grad_grad(be):
    got = myc.grad(myc.grad(myc.jit(c_scal, backend=be)))(0.7)
    assert type(got) is float
    assert_close(got, fd_grad(c_scal_d1, (0.7,), 0))


def _comp_jit_grad_grad(be):
    got = myc.jit(myc.grad(myc.grad(c_scal)), backend=be)(0.7)
    assert type(got) is float
    assert_close(got, fd_grad(c_scal_d1, (0.7,), 0))


def _comp_jvp_grad(be):
    (g, hv) = myc.jvp(myc.grad(myc.jit(c_vec, backend=be), argnums=(0, 1)), (X3, Y3),
                      (TX3, TY3))
    assert_close(g, c_vec_grad(X3, Y3), 1e-12, 1e-14)
    assert_close(hv, _hvp_ref(TX3, TY3))


def _comp_vjp_grad(be):
    out, pb = myc.vjp(myc.grad(myc.jit(c_vec, backend=be), argnums=(0, 1)), X3, Y3)
    assert_close(out, c_vec_grad(X3, Y3), 1e-12, 1e-14)
    got = pb((TX3, TY3))
    # the Hessian is symmetric: the pullback of (tx, ty) is H (tx, ty)
    assert isinstance(got, tuple) and len(got) == 2
    assert_close(got, _hvp_ref(TX3, TY3))


def _comp_value_and_grad_jit(be):
    v, g = myc.value_and_grad(myc.jit(c_vec, backend=be), argnums=1)(X3, Y3)
    assert_same(c_vec(X3, Y3), v)
    assert_close(g, c_vec_grad(X3, Y3)[1], 1e-12, 1e-14)


def _comp_jit_value_and_grad(be):
    v, g = myc.jit(myc.value_and_grad(c_vec), backend=be)(X3, Y3)
    assert_same(c_vec(X3, Y3), v)
    assert_close(g, c_vec_grad(X3, Y3)[0], 1e-12, 1e-14)


def _comp_jit_jit(be):
    assert_same(c_vec(X3, Y3), myc.jit(myc.jit(c_vec, backend=be))(X3, Y3))
    assert_same(c_scal(0.7), myc.jit(myc.jit(c_scal), backend=be)(0.7))


def _comp_grad_inner_grad(be):
    got = myc.grad(myc.jit(c_inner_grad, backend=be))(0.7)
    assert type(got) is float
    assert_close(got, fd_grad(c_inner_grad_ref, (0.7,), 0))
    assert_close(myc.jit(c_inner_grad, backend=be)(0.7), c_inner_grad_ref(0.7), 1e-12)


def _comp_grad_inner_vg_jvp(be):
    ref_vg = lambda x: c_scal(x) * c_scal_d1(x)
    ref_jvp = lambda x: c_scal(x) + c_scal_d1(x) ** 2
    assert_close(myc.grad(myc.jit(c_inner_vg, backend=be))(0.7), fd_grad(ref_vg, (0.7,), 0))
    assert_close(myc.grad(myc.jit(c_inner_jvp, backend=be))(0.7), fd_grad(ref_jvp, (0.7,), 0))


def _comp_grad_inner_grad_arr(be):
    got = myc.jit(myc.grad(c_inner_grad_arr), backend=be)(X3)
    assert_close(got, fd_grad(c_inner_grad_arr_ref, (X3,), 0))
    got2 = myc.grad(myc.jit(c_inner_grad_arr, backend=be))(X3)
    assert_close(got2, got, 1e-12, 1e-14)


def _comp_grad_of_grad_inside(be):
    # a second derivative written in the program, differentiated once more (third order)
    d2 = myc.jit(c_inner_grad_grad, backend=be)(0.7)
    assert_close(d2, fd_grad(c_scal_d1, (0.7,), 0) + 0.7)
    d3 = myc.grad(myc.jit(c_inner_grad_grad, backend=be))(0.7)
    ref = fd_grad(lambda t: float(myc.grad(myc.grad(c_scal))(t)), (0.7,), 0) + 1.0
    assert_close(d3, ref, 1e-5, 1e-6)


def _comp_jvp_vjp_of_jit(be):
    jf = myc.jit(c_vec, backend=be)
    out, tan = myc.jvp(jf, (X3, Y3), (TX3, TY3))
    assert_same(c_vec(X3, Y3), out)
    g = c_vec_grad(X3, Y3)
    assert_close(tan, np.dot(g[0], TX3) + np.dot(g[1], TY3), 1e-12, 1e-14)
    out2, pb = myc.vjp(jf, X3, Y3)
    assert_same(c_vec(X3, Y3), out2)
    assert_close(pb(2.0), (2.0 * g[0], 2.0 * g[1]), 1e-12, 1e-14)


def _comp_third_order(be):
    jf = myc.jit(c_scal, backend=be)
    g3 = myc.grad(myc.grad(myc.grad(jf)))(0.7)
    d2 = lambda t: fd_grad(c_scal_d1, (t,), 0, eps=1e-5)
    assert_close(g3, fd_grad(d2, (0.7,), 0, eps=1e-4), 1e-5, 1e-6)
    out, t = myc.jvp(myc.grad(myc.grad(jf)), (0.7,), (1.0,))
    assert_close(t, g3, 1e-12, 1e-14)
    v, d = myc.value_and_grad(myc.grad(jf))(0.7)
    assert_close(v, c_scal_d1(0.7), 1e-12)
    assert_close(d, out, 1e-12)


COMPOSITIONS = {
    "jit(grad)": _comp_jit_grad,
    "grad(jit)": _comp_grad_jit,
    "grad(grad(jit))": _comp_grad_grad,
    "jit(grad(grad))": _comp_jit_grad_grad,
    "jvp(grad(jit))": _comp_jvp_grad,
    "vjp(grad(jit))": _comp_vjp_grad,
    "value_and_grad(jit)": _comp_value_and_grad_jit,
    "jit(value_and_grad)": _comp_jit_value_and_grad,
    "jit(jit)": _comp_jit_jit,
    "grad(program calling grad)": _comp_grad_inner_grad,
    "grad(program calling value_and_grad/jvp)": _comp_grad_inner_vg_jvp,
    "grad(program calling grad of a lambda)": _comp_grad_inner_grad_arr,
    "grad(program calling grad(grad))": _comp_grad_of_grad_inside,
    "jvp/vjp(jit)": _comp_jvp_vjp_of_jit,
    "third order": _comp_third_order,
}


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_composition(name, be):
    COMPOSITIONS[name](be)


def test_compositions_agree_across_backends():
    ref = myc.grad(c_vec, argnums=(0, 1))(X3, Y3)
    for got in (myc.grad(myc.jit(c_vec, backend="interp"), argnums=(0, 1))(X3, Y3),
                myc.jit(myc.grad(myc.jit(c_vec, backend="interp"), argnums=(0, 1)))(X3, Y3),
                myc.grad(myc.jit(myc.jit(c_vec)), argnums=(0, 1))(X3, Y3)):
        assert_close(got, ref, 1e-12, 1e-14)


def test_transformed_backend_follows_inner_jit():
    assert myc.grad(myc.jit(c_vec, backend="interp")).backend == "interp"
    assert myc.value_and_grad(myc.jit(c_vec, backend="interp")).backend == "interp"
    with pytest.raises(MycValueError, match="unknown backend"):
        myc.grad(myc.jit(c_vec, backend="nope"))(X3, Y3)


# fixed: backend_dropped

@pytest.mark.parametrize("wrap", ["grad", "value_and_grad", "jit"])
def test_jit_of_transformed_keeps_its_backend(wrap):
    inner = {"grad": myc.grad(c_vec), "value_and_grad": myc.value_and_grad(c_vec),
             "jit": myc.jit(c_vec)}[wrap]
    assert myc.jit(inner, backend="interp").backend == "interp"
    with pytest.raises(MycValueError, match="unknown backend"):
        myc.jit(inner, backend="nope")(X3, Y3)


# -- argnums ---------------------------------------------------------------------------------


def a_three(x, y, z):
    return np.sum(x * y) * z + z * z


A_ARGS = (f64(0.5, -1.0), f64(2.0, 3.0), 1.5)
A_WANT = (A_ARGS[1] * 1.5, A_ARGS[0] * 1.5, float(np.sum(A_ARGS[0] * A_ARGS[1])) + 3.0)


@pytest.mark.parametrize("argnums,want", [
    (0, A_WANT[0]),
    (2, A_WANT[2]),
    (-1, A_WANT[2]),
    (-3, A_WANT[0]),
    ((0, 2), (A_WANT[0], A_WANT[2])),
    ((2, 0), (A_WANT[2], A_WANT[0])),
    ((1,), (A_WANT[1],)),
    ((-2,), (A_WANT[1],)),
    ((0, 1, 2), A_WANT),
], ids=str)
@pytest.mark.parametrize("be", BACKENDS)
def test_argnums_values_and_structure(argnums, want, be):
    for g in (myc.grad(myc.jit(a_three, backend=be), argnums),
              myc.jit(myc.grad(a_three, argnums), backend=be)):
        got = g(*_copy(A_ARGS))
        assert isinstance(got, tuple) == isinstance(argnums, tuple)
        assert_close(got, want, 1e-12, 1e-14)
        nums = _as_tuple(argnums, argnums)
        assert_mirrors(_as_tuple(got, argnums), tuple(A_ARGS[i] for i in nums))
    v, got = myc.value_and_grad(a_three, argnums)(*A_ARGS)
    assert_same(a_three(*A_ARGS), v)
    assert_close(got, want, 1e-12, 1e-14)


@pytest.mark.parametrize("argnums", [3, -4, (0, 3), (), 1.0, "0", True, (0, None), (False,)],
                         ids=repr)
def test_argnums_invalid(argnums):
    for make in (myc.grad, myc.value_and_grad):
        with pytest.raises(MycTypeError, match="argnums") as info:
            make(a_three, argnums)(*A_ARGS)
        assert_good_error(info.value)


@pytest.mark.xfail(strict=True, reason=(
    "ad/grad.py normalize_argnums: repeated argnums ((0, 0), (0, -3)) are accepted and "
    "return the same gradient twice; the brief asks for a MycTypeError (errors.md only "
    "says 'within range')"))
@pytest.mark.parametrize("argnums", [(0, 0), (0, -3)], ids=repr)
def test_argnums_duplicates_refused(argnums):
    with pytest.raises(MycError, match="argnums"):
        myc.grad(a_three, argnums)(*A_ARGS)


def a_int_mix(n, x, flags, k):
    s = np.sum(np.where(flags, x, -x)) * n
    return s + k * 0.5 * np.sum(x * x)


INT_MIX = (3, f64(0.5, 1.5, -2.0), np.array([True, False, True]), np.int64(2))


@pytest.mark.parametrize("be", BACKENDS)
def test_non_float_arguments_outside_argnums(be):
    n, x, flags, k = INT_MIX
    want = n * np.where(flags, 1.0, -1.0) + k * x
    for g in (myc.grad(myc.jit(a_int_mix, backend=be), argnums=1),
              myc.jit(myc.grad(a_int_mix, argnums=1), backend=be)):
        got = g(*INT_MIX)
        assert_close(got, want, 1e-12, 1e-14)
        assert_mirrors(got, x)
    out, pb = myc.vjp(myc.jit(a_int_mix, backend=be), *INT_MIX)
    cts = pb(1.0)
    # docs/ad.md: "A vjp pullback gives an int argument a zero cotangent"
    assert cts[0] == 0 and type(cts[0]) is int
    assert_close(cts[1], want, 1e-12, 1e-14)
    assert cts[2].dtype == np.bool_ and not cts[2].any()
    assert np.asarray(cts[3]).dtype == np.int64 and cts[3] == 0
    _, tan = myc.jvp(myc.jit(a_int_mix, backend=be), INT_MIX,
                     (0, np.ones(3), np.zeros(3, bool), np.int64(0)))
    assert_close(tan, np.sum(want), 1e-12, 1e-14)


def n_scalar(n, x):
    return n * x


def n_array(n, x):
    return np.sum(n * x)


def n_tuple(t, x):
    return t[0] * t[1] * x


def n_nested(t, x):
    return np.sum(t[0] * t[1][0]) * x


@pytest.mark.parametrize("fn,arg,argnums", [
    (n_scalar, 3, 0), (n_scalar, True, 0), (n_scalar, np.int64(3), 0),
    (n_scalar, np.bool_(True), 0), (n_array, np.arange(3), 0), (n_array, np.arange(3), (1, 0)),
    (n_tuple, (2.0, 3), 0), (n_nested, (np.ones(2), (np.arange(2),)), 0),
], ids=["int", "bool", "np.int64", "np.bool_", "int-array", "int-array-in-tuple-argnums",
        "int-in-tuple", "int-array-nested"])
@pytest.mark.parametrize("be", BACKENDS)
def test_int_or_bool_argument_in_argnums_refused(fn, arg, argnums, be):
    with pytest.raises(MycTypeError, match="integer or bool argument") as info:
        myc.grad(myc.jit(fn, backend=be), argnums)(arg, 2.0)
    assert_good_error(info.value)
    assert "argnums" in (info.value.hint or "")


def a_mask_only(m, x):
    return np.sum(np.where(m, x, 0.0))


def a_unused(n, x):
    return np.sum(x * 2.0)


def a_index_only(idx, x):
    return np.sum(x[idx])


# fixed: zero_int_grad

@pytest.mark.parametrize("fn,arg", [
    pytest.param(a_mask_only, np.array([True, False, True]), id="bool-mask"),
    pytest.param(a_unused, np.arange(3), id="unused-int-array"),
    pytest.param(a_index_only, np.array([0, 2]), id="int-index-array"),
])
@pytest.mark.parametrize("be", [
    "interp", "cpu"])
def test_int_array_without_sensitivity_in_argnums_refused(fn, arg, be):
    g = myc.grad(myc.jit(fn, backend=be)) if be == "interp" else myc.grad(fn)
    with pytest.raises(MycTypeError, match="integer or bool argument"):
        g(arg, f64(1.0, 2.0, 3.0))


# -- pytrees ---------------------------------------------------------------------------------


def t_loss(params, x):
    w, (b, c) = params
    return np.sum((x * w + b) ** 2) + c * c * np.sum(x)


def t_loss_grad(params, x):
    w, (b, c) = params
    r = 2.0 * (x * w + b)
    return (float(np.sum(r * x)), (r, 2.0 * c * float(np.sum(x))))


def t_out(p, x):
    a, (b, c) = p
    return (a * x, (np.sum(b * x) * c, b + c))


T_PARAMS = (1.5, (f64(0.1, 0.2, -0.3), 0.7))
T_X = f64(0.5, 1.0, 2.0)


@pytest.mark.parametrize("be", BACKENDS)
def test_grad_of_tuple_argument_mirrors_structure(be):
    for g in (myc.grad(myc.jit(t_loss, backend=be)), myc.jit(myc.grad(t_loss), backend=be)):
        got = g(T_PARAMS, T_X)
        assert_mirrors(got, T_PARAMS)
        assert_close(got, t_loss_grad(T_PARAMS, T_X), 1e-12, 1e-14)
        assert_close(got, fd_grad(t_loss, (T_PARAMS, T_X), 0))


@pytest.mark.parametrize("be", BACKENDS)
def test_grad_of_tuple_argument_with_other_argnums(be):
    got = myc.grad(myc.jit(t_loss, backend=be), argnums=(1, 0))(T_PARAMS, T_X)
    assert isinstance(got, tuple) and len(got) == 2
    assert_mirrors(got[1], T_PARAMS)
    assert_close(got[0], fd_grad(t_loss, (T_PARAMS, T_X), 1))
    assert_close(got[1], t_loss_grad(T_PARAMS, T_X), 1e-12, 1e-14)
    v, g1 = myc.value_and_grad(t_loss, argnums=(0,))(T_PARAMS, T_X)
    assert_same(t_loss(T_PARAMS, T_X), v)
    assert isinstance(g1, tuple) and len(g1) == 1
    assert_mirrors(g1[0], T_PARAMS)


def test_grad_of_tuple_argument_float32_leaves():
    p = (np.float32(1.5), (f32(0.1, 0.2, -0.3), np.float32(0.7)))
    g = myc.grad(t_loss)(p, T_X.astype(np.float32))
    assert_mirrors(g, p)
    assert_close(g, t_loss_grad(p, T_X.astype(np.float32)), 1e-5, 1e-6)


@pytest.mark.parametrize("be", BACKENDS)
def test_tuple_outputs_jit_vjp_jvp(be):
    jf = myc.jit(t_out, backend=be)
    assert_same(t_out(T_PARAMS, T_X), jf(T_PARAMS, T_X))
    out, pb = myc.vjp(jf, T_PARAMS, T_X)
    assert_same(t_out(T_PARAMS, T_X), out)
    rng = np.random.default_rng(1)
    ct = tangent_like(out, rng)
    got = pb(ct)
    assert isinstance(got, tuple) and len(got) == 2
    assert_mirrors(got[0], T_PARAMS)

    # the pullback of ct is the gradient of <ct, t_out(...)>
    def dotted(p, x):
        o = t_out(p, x)
        return float(sum(np.sum(np.asarray(a) * np.asarray(b))
                         for a, b in zip(_leaves(o), _leaves(ct), strict=True)))

    assert_close(got[0], fd_grad(dotted, (T_PARAMS, T_X), 0))
    assert_close(got[1], fd_grad(dotted, (T_PARAMS, T_X), 1))
    tans = (tangent_like(T_PARAMS, rng), tangent_like(T_X, rng))
    out2, tan = myc.jvp(jf, (T_PARAMS, T_X), tans)
    assert_same(t_out(T_PARAMS, T_X), out2)
    assert_close(tan, fd_jvp(t_out, (T_PARAMS, T_X), tans))


@pytest.mark.parametrize("bad,err", [
    ((np.ones(3), 1.0), MycTypeError),                       # inner tuple missing
    ((np.ones(3), (1.0, np.ones(3), 2.0)), MycTypeError),    # inner tuple too long
    ((np.ones(4), (1.0, np.ones(3))), MycShapeError),        # leaf shape
    ((np.ones(3), (np.ones(3), np.ones(3))), MycShapeError),  # array for a scalar
    ((np.ones(3), [1.0, np.ones(3)]), MycTypeError),         # list for a tuple
    (None, MycTypeError),
    ("ct", MycTypeError),
], ids=["missing-inner-tuple", "long-inner-tuple", "leaf-shape", "array-for-scalar",
        "list", "None", "str"])
def test_cotangent_mismatch_refused(bad, err):
    _, pb = myc.vjp(t_out, T_PARAMS, T_X)
    with pytest.raises(err) as info:
        pb(bad)
    assert_good_error(info.value)
    assert "cotangent" in str(info.value)


@pytest.mark.parametrize("bad,err", [
    ((1.0, np.zeros(3)), MycTypeError),                 # tuple primal, scalar tangent
    (((1.0, (np.zeros(4), 0.0)), np.zeros(3)), MycShapeError),
    (((1.0, (np.zeros(3), np.zeros(2))), np.zeros(3)), MycShapeError),
    (((1.0, (np.zeros(3), 0.0)),), MycTypeError),       # one tangent for two primals
    (((1.0, [np.zeros(3), 0.0]), np.zeros(3)), MycTypeError),
    (((1.0, (np.zeros(3), 0.0)), 1.0), MycShapeError),
], ids=["scalar-for-tuple", "leaf-shape", "array-for-scalar", "count", "list",
        "scalar-for-array"])
def test_tangent_mismatch_refused(bad, err):
    with pytest.raises(err) as info:
        myc.jvp(t_out, (T_PARAMS, T_X), bad)
    assert_good_error(info.value)


@pytest.mark.parametrize("bad", ["t", None], ids=["str", "None"])
@pytest.mark.parametrize("primal", [T_X, 0.5], ids=["array", "scalar"])
def test_non_numeric_tangent_is_a_type_error_naming_the_tangent(primal, bad):
    with pytest.raises(MycTypeError, match="tangent") as info:
        myc.jvp(lambda a: a * 2.0, (primal,), (bad,))
    assert type(bad).__name__ in str(info.value)


def test_jvp_primals_must_be_tuples():
    with pytest.raises(MycTypeError, match="tuples"):
        myc.jvp(t_out, [T_PARAMS, T_X], [T_PARAMS, T_X])


def test_tuple_cotangent_for_array_output_refused_up_front():
    _, pb = myc.vjp(lambda v: np.sin(v) * 2.0, f64(1.0, 2.0))
    with pytest.raises(MycError) as info:
        pb((1.0, 1.0))
    assert_good_error(info.value)
    assert "cotangent" in str(info.value)


def test_tuple_tangent_for_array_primal_refused():
    with pytest.raises(MycError):
        myc.jvp(lambda v: np.sum(v * v), (f64(1.0, 2.0),), ((1.0, 0.0),))


@pytest.mark.parametrize("which", ["jvp-bool", "jvp-int", "vjp-bool"])
def test_tangent_cotangent_dtype_kind_mismatch_refused(which):
    x = f64(1.0, 2.0)
    f = lambda v: np.sin(v) * 2.0
    with pytest.raises(MycError):
        if which == "jvp-bool":
            myc.jvp(f, (x,), (np.array([True, False]),))
        elif which == "jvp-int":
            myc.jvp(f, (x,), (np.array([1, 0]),))
        else:
            myc.vjp(f, x)[1](np.array([True, False]))


def test_tangent_float_kinds_accepted():
    # a Python float tangent for a NumPy float32 scalar, a float32 tangent for float32
    out, t = myc.jvp(lambda v: v * v, (np.float32(2.0),), (1.0,))
    assert type(out) is np.float32 and type(t) is np.float32 and t == 4.0
    out, t = myc.jvp(lambda v: v * v, (f32(1.0, 2.0),), (f32(1.0, 1.0),))
    assert t.dtype == np.float32
    assert_close(t, f64(2.0, 4.0))


# -- closures and higher-order functions under AD --------------------------------------------


W_GLOBAL = f64(0.3, -0.2, 0.5)


def h_closure_array(x):
    w = W_GLOBAL * 2.0 + x[0]

    def inner(t):
        return np.sum(np.sin(t * w))

    return inner(x) + inner(x * x)


def h_make_model(scale):
    return lambda t: scale * np.tanh(t) + t * t


def h_returned_lambda(scale, x):
    model = h_make_model(scale)
    return np.sum(model(x) ** 2)


def h_compose(f, g):
    return lambda t: f(g(t))


def h_square(t):
    return t * t


def h_compose_math(x):
    h = h_compose(math.sin, h_square)
    k = h_compose(math.exp, h_compose(math.cos, h))
    return h(x) + k(x)


def h_compose_np(v):
    h = h_compose(np.tanh, h_compose(h_square, np.sin))
    return np.sum(h(v) * v)


def h_apply_twice(f, x):
    return f(f(x))


def h_fns_as_arguments(x):
    return h_apply_twice(np.tanh, x) + h_apply_twice(math.cos, x) * x + h_apply_twice(
        h_square, x)


def h_tuple_of_fns(v):
    acc = 0.0
    for f in (np.sin, np.tanh, h_square, abs):
        acc = acc + np.sum(f(v))
    return acc


def h_rec_pow(x, n):
    if n == 0:
        return 1.0
    return x * h_rec_pow(x, n - 1)


def h_rec_data(x):
    if x < 0.1:
        return x * x + 1.0
    return math.sin(h_rec_data(x * 0.5)) + x


def h_rec_arr(v):
    if np.sum(v * v) < 0.05:
        return np.sum(np.cos(v))
    return h_rec_arr(v * 0.6) * 1.2 + np.sum(v * v)


def h_even(n, x):
    if n == 0:
        return x
    return h_odd(n - 1, x * 1.5)


def h_odd(n, x):
    if n == 0:
        return math.sin(x)
    return h_even(n - 1, x + x * x * 0.1)


def h_loop_in_closure(x, n):
    def step(v):
        acc = v
        for i in range(n):
            acc = acc * 0.9 + np.sin(acc) * x[0]
        return acc

    return np.sum(step(x))


def h_while_in_closure(x):
    def settle(v):
        k = 0
        while np.max(np.abs(v)) > 0.1 and k < 40:
            v = v * 0.7 + 0.01 * np.sin(v)
            k += 1
        return v

    return np.sum(settle(x) * x)


def h_closure_of_closure(a, x):
    def outer(s):
        def inner(t):
            return np.tanh(t * s * a)

        return inner

    f = outer(2.0)
    g = outer(a)
    return np.sum(f(x) * g(x))


H_PROGRAMS = [
    (h_closure_array, (f64(0.4, -0.6, 1.2),), 0),
    (h_returned_lambda, (1.5, f64(0.0, 0.5, -0.4)), (0, 1)),
    (h_compose_math, (0.7,), 0),
    (h_compose_np, (f64(0.4, -0.6, 1.2),), 0),
    (h_fns_as_arguments, (0.7,), 0),
    (h_tuple_of_fns, (f64(0.4, -0.6, 1.2),), 0),
    (h_rec_pow, (1.3, 5), 0),
    (h_rec_data, (3.0,), 0),
    (h_rec_arr, (f64(0.9, -0.4),), 0),
    (h_even, (5, 0.3), 1),
    (h_even, (4, 0.3), 1),
    (h_loop_in_closure, (f64(0.4, -0.6, 1.2), 3), 0),
    (h_while_in_closure, (f64(0.9, -0.4),), 0),
    (h_closure_of_closure, (0.8, f64(0.4, -0.6, 1.2)), (0, 1)),
]


@pytest.mark.parametrize("fn,args,argnums", H_PROGRAMS,
                         ids=[f"{p[0].__name__}-{i}" for i, p in enumerate(H_PROGRAMS)])
def test_higher_order_and_recursion(fn, args, argnums):
    nums = _as_tuple(argnums, argnums)
    want = tuple(fd_grad(fn, args, i) for i in nums)
    for label, g in (("grad", myc.grad(fn, argnums)),
                     ("grad(jit interp)", myc.grad(myc.jit(fn, backend="interp"), argnums))):
        got = _as_tuple(g(*_copy(args)), argnums)
        assert_close(got, want, 1e-5, 1e-6, where=label)
        for i, gi in zip(nums, got, strict=True):
            assert_mirrors(gi, args[i], label)
    v = myc.jit(fn)(*args)
    assert_close(v, fn(*args), 1e-12, 1e-14)


@pytest.mark.parametrize("fn,x", [(h_rec_data, 3.0), (h_compose_math, 0.7),
                                  (h_fns_as_arguments, 0.7)], ids=lambda v: getattr(v, "__name__", repr(v)))
@pytest.mark.parametrize("be", BACKENDS)
def test_second_order_through_higher_order(fn, x, be):
    d1 = lambda t: float(myc.grad(fn)(t))
    want = fd_grad(d1, (x,), 0)
    assert_close(myc.grad(myc.grad(myc.jit(fn, backend=be)))(x), want, 1e-5, 1e-6)
    out, t = myc.jvp(myc.grad(myc.jit(fn, backend=be)), (x,), (1.0,))
    assert_close(out, d1(x), 1e-12, 1e-14)
    assert_close(t, want, 1e-5, 1e-6)


def test_recursion_second_order_int_depth():
    # d2/dx2 x^5 = 20 x^3, with the depth an int argument
    for be in BACKENDS:
        got = myc.grad(myc.grad(myc.jit(h_rec_pow, backend=be)))(1.3, 5)
        assert_close(got, 20 * 1.3 ** 3, 1e-12)
        got = myc.jit(myc.grad(myc.grad(h_rec_pow)), backend=be)(1.3, 2)
        assert_close(got, 2.0, 1e-12)


def test_grad_of_numpy_and_math_functions_as_values():
    assert_close(myc.grad(np.tanh)(0.4), 1 - np.tanh(0.4) ** 2, 1e-12)
    assert_close(myc.grad(math.sin)(0.4), math.cos(0.4), 1e-12)
    assert_close(myc.grad(myc.grad(np.sin))(0.4), -math.sin(0.4), 1e-12)
    assert_close(myc.grad(np.power, argnums=(0, 1))(2.0, 3.0), (12.0, 8 * math.log(2.0)),
                 1e-12)
    assert_close(myc.jit(myc.grad(np.exp))(0.4), math.exp(0.4), 1e-12)
    out, t = myc.jvp(np.tanh, (f64(0.1, 0.2),), (f64(1.0, 2.0),))
    assert_close(t, (1 - np.tanh(f64(0.1, 0.2)) ** 2) * f64(1.0, 2.0), 1e-12)
    with pytest.raises(MycTypeError, match="float scalar"):
        myc.grad(np.tanh)(f64(0.1, 0.2))


def h_math_value_f32(x):
    h = h_compose(math.sin, h_square)
    return h(x)


def h_math_value_apply(x):
    return h_apply_twice(math.exp, x * 0.1)


@pytest.mark.parametrize("fn", [h_math_value_f32, h_math_value_apply], ids=lambda f: f.__name__)
def test_math_function_as_value_on_float32(fn):
    x = np.float32(0.3)
    want = fn(x)
    assert type(want) is float
    got = myc.jit(fn)(x)
    assert type(got) is float, f"{got!r}"
    assert_close(got, want, 1e-12, 1e-14)
    v, _ = myc.value_and_grad(fn)(x)
    assert type(v) is float


def test_function_as_runtime_argument_is_compiled_in():
    # (was refused: a function argument is now a static value, myc/runtime/static_args)
    g = myc.grad(h_apply_twice, argnums=1)(np.sin, 0.3)
    np.testing.assert_allclose(g, np.cos(np.sin(0.3)) * np.cos(0.3), rtol=1e-12)
    with pytest.raises(MycTypeError, match="unsupported type") as info:
        myc.grad(h_apply_twice, argnums=1)(print, 0.3)  # a builtin myc does not know
    assert_good_error(info.value)


# -- keyword arguments and defaults ------------------------------------------------------------


def k_poly(x, a=2.0, b=1.0):
    return a * x * x * x + b * x


def k_arr_default(x, scale=0.5, shift=(0.1, 0.2)):
    return np.sum(np.tanh(x * scale + shift[0])) + shift[1] * np.sum(x)


def k_calls_with_keywords(x):
    return k_poly(b=x, x=2.0) + k_poly(x, b=0.5) + k_arr_default(np.ones(2) * x, shift=(x, 0.0))


@pytest.mark.parametrize("be", BACKENDS)
def test_grad_keywords_and_defaults(be):
    jp = myc.jit(k_poly, backend=be)
    assert_close(myc.grad(jp)(2.0), 2.0 * 3 * 4.0 + 1.0, 1e-12)          # defaults
    assert_close(myc.grad(jp)(2.0, b=5.0), 24.0 + 5.0, 1e-12)
    assert_close(myc.grad(jp, argnums=1)(2.0), 8.0, 1e-12)                # a default
    assert_close(myc.grad(jp, argnums=2)(2.0, a=0.0), 2.0, 1e-12)
    assert_close(myc.grad(jp, argnums=(2, 0))(b=3.0, x=2.0), (2.0, 27.0), 1e-12)
    assert_close(myc.grad(jp, argnums=-1)(x=2.0), 2.0, 1e-12)
    v, g = myc.value_and_grad(jp, argnums=(1, 2))(2.0, a=0.5)
    assert_same(k_poly(2.0, a=0.5), v)
    assert_close(g, (8.0, 2.0), 1e-12)
    assert type(g[0]) is float and type(g[1]) is float
    assert_close(myc.jit(myc.grad(k_poly), backend=be)(x=2.0, a=1.0), 13.0, 1e-12)
    assert_close(myc.grad(myc.grad(jp, argnums=1))(2.0, b=7.0), 12.0, 1e-12)


@pytest.mark.parametrize("be", BACKENDS)
def test_grad_wrt_tuple_default(be):
    g = myc.grad(myc.jit(k_arr_default, backend=be), argnums=(1, 2))(f64(0.3, -0.2))
    assert isinstance(g, tuple) and type(g[0]) is float
    assert_mirrors(g[1], (0.1, 0.2))
    want = (fd_grad(k_arr_default, (f64(0.3, -0.2), 0.5, (0.1, 0.2)), 1),
            fd_grad(k_arr_default, (f64(0.3, -0.2), 0.5, (0.1, 0.2)), 2))
    assert_close(g, want)
    g2 = myc.grad(myc.jit(k_arr_default, backend=be), argnums=2)(f64(0.3, -0.2),
                                                                  shift=(np.float32(0.1), 0.2))
    assert type(g2[0]) is np.float32 and type(g2[1]) is float


@pytest.mark.parametrize("be", BACKENDS)
def test_keywords_inside_program_under_grad(be):
    got = myc.grad(myc.jit(k_calls_with_keywords, backend=be))(0.6)
    assert_close(got, fd_grad(k_calls_with_keywords, (0.6,), 0))
    assert_same(k_calls_with_keywords(0.6), myc.jit(k_calls_with_keywords, backend=be)(0.6))


@pytest.mark.parametrize("call,match", [
    (lambda g: g(2.0, 1.0, 1.0, 1.0), "takes 3 arguments but 4 were given"),
    (lambda g: g(), "missing required argument 'x'"),
    (lambda g: g(2.0, x=1.0), "multiple values for argument 'x'"),
    (lambda g: g(2.0, c=1.0), "unexpected keyword argument 'c'"),
], ids=["too-many", "too-few", "duplicate", "unknown-kw"])
@pytest.mark.parametrize("wrap", ["jit", "grad", "value_and_grad", "jit(grad)", "grad(grad)"])
def test_bad_calls_of_transformed_functions(call, match, wrap):
    g = {"jit": lambda: myc.jit(k_poly), "grad": lambda: myc.grad(k_poly),
         "value_and_grad": lambda: myc.value_and_grad(k_poly),
         "jit(grad)": lambda: myc.jit(myc.grad(k_poly)),
         "grad(grad)": lambda: myc.grad(myc.grad(k_poly))}[wrap]()
    with pytest.raises(MycTypeError, match=match.replace("(", r"\(")) as info:
        call(g)
    assert_good_error(info.value, "def k_poly(x, a=2.0, b=1.0):")


def test_vjp_with_defaults():
    out, pb = myc.vjp(k_poly, 2.0)
    assert_same(k_poly(2.0), out)
    got = pb(1.0)
    assert len(got) == 1 and type(got[0]) is float
    assert_close(got[0], 25.0, 1e-12)
    out, pb = myc.vjp(myc.grad(k_poly), 2.0)
    assert_close(pb(1.0), (24.0,), 1e-12)


# fixed: jvp_arity (myc.jvp fills defaults, also inside a program)


def k_jvp_default_inside(x):
    return myc.jvp(k_poly, (x,), (1.0,))[1]


@pytest.mark.parametrize("fn", ["k_poly", "grad(k_poly)", "inside-a-program"])
def test_jvp_with_defaults(fn):
    if fn == "inside-a-program":
        assert_close(myc.jit(k_jvp_default_inside)(2.0), 25.0, 1e-12)
        return
    f = k_poly if fn == "k_poly" else myc.grad(k_poly)
    out, t = myc.jvp(f, (2.0,), (1.0,))
    if fn == "k_poly":
        assert_close((out, t), (k_poly(2.0), 25.0), 1e-12)
    else:
        assert_close((out, t), (25.0, 24.0), 1e-12)


def test_jvp_wrong_arity_is_a_type_error():
    with pytest.raises(MycTypeError):
        myc.jvp(c_scal, (1.0, 2.0), (1.0, 1.0))


def test_vjp_wrong_arity_message():
    with pytest.raises(MycTypeError) as info:
        myc.vjp(c_scal, 1.0, 2.0)
    text = str(info.value)
    assert "J:" not in text and "takes 1 argument" in text, text


# -- dtypes, Python scalars, mutation, ownership ------------------------------------------------


def d_loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2) * 0.5 + np.sum(w * w) * 0.01


def d_scalar(s):
    return s * s * 0.5 + math.sin(s)


W32 = (np.arange(6, dtype=np.float32).reshape(3, 2) - 2.5) * np.float32(0.1)
XM32 = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5.0) * np.float32(0.2)


@pytest.mark.parametrize("be", BACKENDS)
def test_float32_values_and_gradients_stay_float32(be):
    w, x = W32.copy(), XM32.copy()
    ref64 = myc.grad(d_loss, argnums=(0, 1))(w.astype(np.float64), x.astype(np.float64))
    results = {
        "grad(jit)": myc.grad(myc.jit(d_loss, backend=be), argnums=(0, 1))(w, x),
        "jit(grad)": myc.jit(myc.grad(d_loss, argnums=(0, 1)), backend=be)(w, x),
        "value_and_grad": myc.value_and_grad(myc.jit(d_loss, backend=be), argnums=(0, 1))(w, x),
        "vjp": myc.vjp(myc.jit(d_loss, backend=be), w, x)[1](np.float32(1.0)),
    }
    for name, r in results.items():
        g = r[1] if name == "value_and_grad" else r
        if name == "value_and_grad":
            assert type(r[0]) is np.float32, (name, r[0])
        assert_mirrors(g, (w, x), name)
        assert_close(g, ref64, 1e-4, 1e-5, name)
    out, hv = myc.jvp(myc.grad(myc.jit(d_loss, backend=be)), (w, x), (w, x))
    assert out.dtype == np.float32 and hv.dtype == np.float32
    v = myc.jit(d_loss, backend=be)(w, x)
    assert type(v) is np.float32
    assert np.array_equal(w, W32) and np.array_equal(x, XM32)


@pytest.mark.parametrize("be", BACKENDS)
def test_float32_scalar_second_order(be):
    s = np.float32(0.8)
    g2 = myc.grad(myc.grad(myc.jit(d_scalar, backend=be)))(s)
    assert type(g2) is np.float32
    assert_close(g2, 1.0 - math.sin(0.8), 1e-5)
    v, g = myc.jit(myc.value_and_grad(d_scalar), backend=be)(s)
    assert type(g) is np.float32
    assert type(v) is type(d_scalar(s))  # math.sin makes it a Python float in CPython
    out, t = myc.jvp(myc.grad(myc.jit(d_scalar, backend=be)), (s,), (np.float32(1.0),))
    assert type(out) is np.float32 and type(t) is np.float32


@pytest.mark.parametrize("be", BACKENDS)
def test_python_float_gradients_are_python_floats(be):
    jd = myc.jit(d_scalar, backend=be)
    checks = {
        "grad": myc.grad(jd)(0.8),
        "jit(grad)": myc.jit(myc.grad(d_scalar), backend=be)(0.8),
        "grad(grad)": myc.grad(myc.grad(jd))(0.8),
        "value_and_grad": myc.value_and_grad(jd)(0.8)[1],
        "vjp": myc.vjp(jd, 0.8)[1](1.0)[0],
        "jvp": myc.jvp(jd, (0.8,), (1.0,))[1],
        "jvp(grad)": myc.jvp(myc.grad(jd), (0.8,), (1.0,))[1],
    }
    for name, g in checks.items():
        assert type(g) is float, (name, g)
    assert type(myc.value_and_grad(jd)(0.8)[0]) is float


def d_half_square(s):
    return s * s * 0.5


@pytest.mark.parametrize("arg,kind", [
    (np.float64(0.8), ("numpy", "<f8")),
    (np.array(0.8), ("ndarray", "<f8", ())),
    (np.float32(0.8), ("numpy", "<f4")),
    (np.array(0.8, np.float32), ("ndarray", "<f4", ())),
], ids=["np.float64", "0d-f64", "np.float32", "0d-f32"])
def test_numpy_scalar_gradients_keep_their_kind(arg, kind):
    for g in (myc.grad(d_half_square), myc.jit(myc.grad(d_half_square))):
        got = g(arg)
        assert _kind(got) == kind, got
        assert_close(got, 0.8, 1e-6)


def d_int_arg(n, x):
    return n * x * x


def d_int_arr(n, x):
    return np.sum(n * x * x)


def test_int64_argument_to_grad_is_a_clear_error():
    with pytest.raises(MycTypeError) as info:
        myc.grad(d_int_arg)(np.int64(3), 2.0)
    assert_good_error(info.value, "def d_int_arg(n, x):")
    assert "integer or bool" in str(info.value) and "int64" in str(info.value)
    with pytest.raises(MycTypeError) as info:
        myc.grad(d_int_arr)(np.arange(3), 2.0)
    assert "int64" in str(info.value)
    # a function of ints only: the int output is what is refused, clearly too
    with pytest.raises(MycTypeError, match="int"):
        myc.grad(lambda n: n * n)(3)
    assert_close(myc.grad(d_int_arg, argnums=1)(np.int64(3), 2.0), 12.0, 1e-12)


@pytest.mark.parametrize("be", BACKENDS)
def test_transforms_never_mutate_inputs(be):
    w, x = f64(0.5, -1.0, 2.0), f64(1.0, 2.0, 3.0)
    tup = (f64(0.1, 0.2, 0.3), (2.0, f64(1.0, 1.0, 1.0)))
    before = _copy((w, x, tup))
    f = lambda a, b, t: np.sum(a * b * t[0]) + t[1][0] * np.sum(t[1][1] * a)
    jf = myc.jit(f, backend=be)
    myc.grad(jf, argnums=(0, 1, 2))(w, x, tup)
    myc.jit(myc.grad(f, argnums=(0, 2)), backend=be)(w, x, tup)
    myc.value_and_grad(jf)(w, x, tup)
    myc.vjp(jf, w, x, tup)[1](1.0)
    myc.jvp(jf, (w, x, tup), (w, x, tup))
    myc.jvp(myc.grad(jf), (w, x, tup), (x, w, tup))
    myc.vjp(myc.grad(jf, argnums=2), w, x, tup)[1](tup)
    assert _same_input(before, (w, x, tup))
    # read-only and non-contiguous inputs work and stay untouched
    ro = f64(0.5, -1.0, 2.0)
    ro.flags.writeable = False
    strided = f64(1.0, 9.0, 2.0, 9.0, 3.0, 9.0)[::2]
    assert_close(myc.grad(jf)(ro, strided, tup), myc.grad(jf)(ro.copy(), strided.copy(), tup),
                 1e-14)
    assert not ro.flags.writeable


C_CONST = f64(1.0, 2.0, 3.0)


def d_linear_in_const(x):
    return np.sum(x * C_CONST)


@pytest.mark.parametrize("be", BACKENDS)
def test_gradient_outputs_are_owned_by_the_caller(be):
    g = myc.grad(myc.jit(d_linear_in_const, backend=be))
    x = f64(0.5, 0.5, 0.5)
    first = g(x)
    assert first.flags.writeable
    first[:] = -7.0
    assert_close(g(x), C_CONST, 0)
    assert_close(C_CONST, f64(1.0, 2.0, 3.0), 0)
    _, pb = myc.vjp(myc.jit(lambda v: v * 1.0, backend=be), x)
    ct = f64(1.0, 2.0, 3.0)
    out = pb(ct)[0]
    out[:] = 0.0
    assert_close(ct, f64(1.0, 2.0, 3.0), 0)
    assert_close(pb(ct)[0], f64(1.0, 2.0, 3.0), 0)


# -- finite differences: ~40 small programs -------------------------------------------------


def p_poly_default(x, a=2.0, b=1.0):
    return a * x ** 3 + b * x


def p_closure(x, y):
    def g(t):
        return np.sin(t * y) + t * y

    return np.sum(g(x) * g(x * 0.5))


def p_lambda_returned(a, x):
    f = h_make_model(a)
    g = lambda t: f(t) * a
    return np.sum(g(x))


def p_compose_builtin(x):
    f = h_compose(abs, h_compose(math.exp, h_square))
    return f(x) + h_compose(float, h_square)(x)


def p_rec_pow_arr(v, n):
    if n == 0:
        return np.sum(v)
    return np.sum(v * p_rec_pow_arr(v, n - 1))


def p_rec_halve(x):
    if x < 1.0:
        return x
    return p_rec_halve(x / 2.0) + math.log(x)


def p_even(n, v):
    if n == 0:
        return v
    return p_odd(n - 1, v * 1.5)


def p_odd(n, v):
    if n == 0:
        return np.sin(v)
    return p_even(n - 1, v + v * v * 0.1)


def p_mutual_arr(v, n):
    return np.sum(p_even(n, v))


def p_tuple_params(params, x):
    (w1, b1), (w2, b2) = params
    h = np.tanh(x @ w1 + b1)
    return np.sum((h @ w2 + b2) ** 2)


def p_tuple_helper(x):
    def stats(v):
        return np.mean(v), np.max(v) - np.min(v), (np.sum(v * v),)

    m, r, (s,) = stats(x)
    return m * r + s


def p_nested_grad_closure(x, y):
    def inner(b):
        return np.sin(b) * b * y

    return myc.grad(inner)(x) * y


def p_nested_vg_arr(w):
    v, g = myc.value_and_grad(lambda u: np.sum(np.sin(u) * u))(w)
    return v + np.sum(g * g)


def p_nested_jvp_arr(w):
    y, t = myc.jvp(lambda u: np.tanh(u) * u, (w,), (np.ones_like(w),))
    return np.sum(y * t)


def p_newton_sqrt(a):
    r = a
    while abs(r * r - a) > 1e-13 * a:
        r = 0.5 * (r + a / r)
    return r


def p_for_rows(m, v):
    acc = np.zeros(v.shape[0])
    for row in m:
        acc = acc + np.tanh(row * v)
    return np.sum(acc * v)


def p_break_continue(x, t):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        acc = acc + x[i] * x[i] * t
        if acc > 3.0:
            break
    return acc


def p_early_return(x):
    for i in range(5):
        if x * i > 2.0:
            return x * i + math.sin(x)
    return x * x


def p_cond_expr(x, y):
    z = x * y if x > y else x + y
    return z * z + (np.exp(x) if z > 0 else np.exp(y))


def p_matmul(w, x):
    return np.sum(np.tanh(x @ w) ** 2) + np.sum(w.T @ w)


def p_softmax_xent(logits, labels):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(logits.shape[0]), labels])


def p_where_clip(v):
    return np.sum(np.where(v > 0.0, v * v, np.sin(v))) + np.sum(np.clip(v, -0.5, 0.5) ** 3)


def p_max_min(v, w):
    return np.sum(np.maximum(v, w) * np.minimum(v, w * 2.0)) + max(v[0], w[0]) * min(v[1], w[1])


def p_max_min_builtin(v, w):
    return np.sum(np.maximum(v, w) * w) + max(v[0], w[0]) * min(v[1], w[1]) + np.sum(
        np.minimum(v, w * 2.0))


def p_reductions(m):
    return np.sum(np.mean(m, axis=0) ** 2) + np.sum(np.max(m, axis=1, keepdims=True) * m) + \
        m.sum() * m.min()


def p_reshape_transpose(m):
    r = m.reshape(3, 2).T
    return np.sum(r @ m.reshape(3, 2)) + np.sum(m.T[0] * 2.0)


def p_pow_log(x):
    return np.sum(np.power(x, 2.5) + np.log1p(x) * np.expm1(x) + np.sqrt(x) / (1.0 + x))


def p_abs_sign(v):
    return np.sum(np.abs(v) * np.sign(v) * v + np.arctan(v))


def p_astype(v):
    return np.sum(v.astype(np.float64) * v) + np.sum(np.floor(v) * v)


def p_mean_var(v):
    m = np.mean(v)
    return np.mean((v - m) ** 2) + m * m


def p_linspace(x):
    t = np.linspace(0.0, 1.0, 5)
    return np.sum(np.sin(t * x) * np.arange(5) * np.ones(5))


def p_chained_compare(x, y):
    s = 0.0
    if 0.0 < x < y:
        s = x * y
    else:
        s = x - y
    return s * s


def p_closures_in_loop(x):
    total = 0.0
    for k in range(3):
        f = lambda t, k=k: t ** (k + 1) * x
        total = total + f(x)
    return total


def p_global_transformed(x):
    return JC_GLOBAL(x) * 2.0 + GC_GLOBAL(x) * x


def p_defaults_and_keywords(x, y):
    return p_poly_default(x, b=y) + p_poly_default(a=y, x=x * 0.5)


def p_integer_argument(x, n, flags):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.where(flags, x * i, -x))
    return s


def p_tuple_loop(t):
    acc = 1.0
    for v in t:
        acc = acc * np.sum(v) + 0.5
    return acc


def p_tan_floor(x):
    return math.tan(x) + np.floor(x * 3.0) * x + math.ceil(x) * x


def p_zero_trip(v, n):
    acc = v
    for i in range(n):
        acc = acc * 2.0
    return np.sum(acc * v)


def _gd_loss(w):
    return np.sum((w - 1.0) ** 2 * np.array([1.0, 3.0])) + np.sum(np.sin(w))


def p_unrolled_gd(w, lr):
    # gradient descent written in the program, differentiated w.r.t. its start and step
    for i in range(3):
        w = w - lr * myc.grad(_gd_loss)(w)
    return _gd_loss(w)


def p_while_gd(w, lr):
    k = 0
    while k < 3 and np.sum(w * w) < 100.0:
        w = w - lr * myc.grad(_gd_loss)(w)
        k += 1
    return _gd_loss(w)


def p_capture_transformed(x):
    d = myc.grad(_gd_loss)
    f = lambda t: np.sum(d(t) * t)
    return f(x) + f(x * 2.0)


def _hvp_target(x):
    return np.sum(np.sin(x) * x * x)


def p_hvp_sum(x, v):
    # a Hessian-vector product (jvp of grad) written in the program, differentiated again
    hv = myc.jvp(myc.grad(_hvp_target), (x,), (v,))[1]
    return np.sum(hv * x)


def p_tuple_jvp_inside(x, y):
    out, t = myc.jvp(lambda p: (p[0] * p[1], np.sum(p[0])), ((x, y),), ((y, x),))
    return np.sum(t[0]) + t[1] + np.sum(out[0])


def _cube(v):
    return v ** 3


JC_GLOBAL = myc.jit(_cube)
GC_GLOBAL = myc.grad(_cube)

RNG = np.random.default_rng(7)
M23 = RNG.normal(size=(2, 3))
PARAMS2 = ((RNG.normal(size=(3, 4)) * 0.5, RNG.normal(size=4) * 0.1),
           (RNG.normal(size=(4, 2)) * 0.5, RNG.normal(size=2) * 0.1))

FD_PROGRAMS = [
    (p_poly_default, (1.3, 2.0, 1.0), (0, 1, 2)),
    (p_closure, (f64(0.4, -0.6, 1.2), 0.7), (0, 1)),
    (p_lambda_returned, (1.5, f64(0.3, -0.5)), (0, 1)),
    (p_compose_builtin, (0.6,), 0),
    (p_rec_pow_arr, (f64(0.8, 1.1), 3), 0),
    (p_rec_halve, (13.0,), 0),
    (p_mutual_arr, (f64(0.3, 0.5), 3), 0),
    (p_tuple_params, (PARAMS2, M23), (0, 1)),
    (p_tuple_helper, (f64(0.4, -0.6, 1.2),), 0),
    (p_nested_grad_closure, (0.5, 1.5), (0, 1)),
    (p_nested_vg_arr, (f64(0.4, -0.6, 1.2),), 0),
    (p_nested_jvp_arr, (f64(0.4, -0.6, 1.2),), 0),
    (p_newton_sqrt, (2.0,), 0),
    (p_for_rows, (M23, f64(0.3, 0.2, -0.1)), (0, 1)),
    (p_break_continue, (f64(0.5, -1.0, 1.5, 1.0, 2.0), 1.1), (0, 1)),
    (p_early_return, (0.7,), 0),
    (p_early_return, (0.3,), 0),
    (p_cond_expr, (0.7, 0.4), (0, 1)),
    (p_cond_expr, (-0.7, 0.4), (0, 1)),
    (p_matmul, (RNG.normal(size=(3, 2)), M23), (0, 1)),
    (p_softmax_xent, (RNG.normal(size=(3, 4)), np.array([0, 3, 1])), 0),
    (p_where_clip, (f64(-0.8, -0.3, 0.2, 0.7),), 0),
    (p_max_min, (f64(0.3, -0.2, 0.9), f64(0.1, 0.4, -0.5)), (0, 1)),
    (p_max_min_builtin, (f64(0.3, -0.2, 0.9), f64(0.1, 0.4, -0.5)), (0, 1)),
    (p_reductions, (M23,), 0),
    (p_reshape_transpose, (M23,), 0),
    (p_pow_log, (f64(0.3, 1.2, 2.5),), 0),
    (p_abs_sign, (f64(-0.8, 0.3, 1.7),), 0),
    (p_astype, (f64(0.3, -1.2),), 0),
    (p_mean_var, (f64(0.3, -1.2, 2.0, 0.1),), 0),
    (p_linspace, (0.9,), 0),
    (p_chained_compare, (0.5, 0.9), (0, 1)),
    (p_chained_compare, (1.5, 0.9), (0, 1)),
    (p_closures_in_loop, (0.8,), 0),
    (p_global_transformed, (1.2,), 0),
    (p_defaults_and_keywords, (0.7, 1.3), (0, 1)),
    (p_integer_argument, (f64(0.3, -0.4), 3, np.array([True, False])), 0),
    (p_tuple_loop, ((f64(0.3, 0.4), 0.5, (f64(1.0, -2.0) * 0.1)),), 0),
    (p_tan_floor, (0.4,), 0),
    (p_zero_trip, (f64(0.3, -0.4), 0), 0),
    (p_zero_trip, (f64(0.3, -0.4), 2), 0),
    (t_loss, (T_PARAMS, T_X), (0, 1)),
    (p_unrolled_gd, (f64(0.3, -0.2), 0.1), (0, 1)),
    (p_while_gd, (f64(0.3, -0.2), 0.1), (0, 1)),
    (p_capture_transformed, (f64(0.3, -0.2),), 0),
    (p_hvp_sum, (f64(0.3, -0.7), f64(1.0, 0.5)), (0, 1)),
    (p_tuple_jvp_inside, (f64(0.3, -0.7), f64(1.0, 0.5)), (0, 1)),
]


def _fd_id(case):
    if hasattr(case, "marks"):  # a pytest.param
        return case.id
    fn, args, _ = case
    first = args[0]
    tag = f"{first:.2g}" if isinstance(first, float) else ""
    return f"{fn.__name__}{'-' + tag if tag else ''}"


@pytest.mark.parametrize("fn,args,argnums", FD_PROGRAMS, ids=[_fd_id(c) for c in FD_PROGRAMS])
def test_finite_differences(fn, args, argnums):
    nums = _as_tuple(argnums, argnums)
    want = tuple(fd_grad(fn, args, i) for i in nums)
    want_v = _run(fn, *_copy(args))
    makers = {
        "grad": lambda: myc.grad(fn, argnums),
        "grad(jit interp)": lambda: myc.grad(myc.jit(fn, backend="interp"), argnums),
        "jit(grad)": lambda: myc.jit(myc.grad(fn, argnums)),
    }
    for label, make in makers.items():
        got = _run(make(), *_copy(args))
        if isinstance(argnums, tuple):
            assert isinstance(got, tuple) and len(got) == len(argnums), label
        got = _as_tuple(got, argnums)
        assert_close(got, want, 1e-5, 1e-6, where=label)
        for i, gi in zip(nums, got, strict=True):
            assert_mirrors(gi, args[i], label)
    v, g = _run(myc.value_and_grad(myc.jit(fn), argnums), *_copy(args))
    assert_close(v, want_v, 1e-12, 1e-13, "value_and_grad value")
    assert_close(_as_tuple(g, argnums), want, 1e-5, 1e-6, "value_and_grad")
    out, pb = _run(myc.vjp, fn, *_copy(args))
    assert_close(out, want_v, 1e-12, 1e-13, "vjp value")
    cts = pb(1.0)
    assert len(cts) == len(args)
    assert_close(tuple(cts[i] for i in nums), want, 1e-5, 1e-6, "vjp")
    tans = tangent_like(tuple(args), np.random.default_rng(3))
    out, tan = _run(myc.jvp, fn, tuple(_copy(args)), tans)
    assert_close(out, want_v, 1e-12, 1e-13, "jvp value")
    assert_close(tan, fd_jvp(fn, args, tans), 1e-5, 1e-6, "jvp")


def f_fusion_cycle(v):
    return np.sum(np.maximum(v, 0.0) * np.minimum(v, v * 2.0))


def test_value_and_grad_fusion_cycle():
    """Fusion groups that recompute a value another group stores read its inputs, not
    that group: ordering them by the storing group made a false cycle (under MYC_STRICT
    an AssertionError; without it the program ran op by op)."""
    v = f64(0.3, -0.2, 0.9)
    assert_close(myc.grad(f_fusion_cycle)(v), f64(0.6, 0.0, 1.8), 1e-12)
    val, g = myc.value_and_grad(f_fusion_cycle)(v)
    assert_close((val, g), (0.9, f64(0.6, 0.0, 1.8)), 1e-12)


# -- myc.ir ----------------------------------------------------------------------------------


def i_jvp_composed(x, y):
    return myc.jvp(c_vec, (x, y), (y, x))[1]


def i_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x * i)
    return s


IR_FUNCS = {
    "plain": (c_vec, (X3, Y3)),
    "jit": (myc.jit(c_vec), (X3, Y3)),
    "grad": (myc.grad(c_vec, argnums=(0, 1)), (X3, Y3)),
    "grad(grad)": (myc.grad(myc.grad(c_scal)), (0.7,)),
    "jvp-composed": (i_jvp_composed, (X3, Y3)),
    "grad(jvp-composed)": (myc.grad(i_jvp_composed), (X3, Y3)),
    "jit(value_and_grad) with int": (myc.jit(myc.value_and_grad(i_loop)), (X3, 3)),
    "grad(np.sin)": (myc.grad(np.sin), (0.7,)),
    "defaults": (k_poly, (2.0,)),
}


@pytest.mark.parametrize("name", list(IR_FUNCS))
def test_ir_every_stage(name):
    fn, args = IR_FUNCS[name]
    for stage in ("parsed", "ad", "typed", "optimized", "kernels"):
        text = myc.ir(fn, *args, stage=stage)
        assert isinstance(text, str) and text.strip(), (name, stage)
        if stage == "ad":
            assert "J:" in text
        if stage in ("typed", "optimized"):
            assert "float64" in text, text[:300]
    assert myc.ir(fn, *args) == myc.ir(fn, *args, stage="parsed")


def test_ir_invalid_stage():
    for stage in ("lowered", "", "PARSED", None, 3):
        for fn, args in ((c_vec, (X3, Y3)), (myc.grad(c_vec), (X3, Y3))):
            with pytest.raises(MycError, match="stage") as info:
                myc.ir(fn, *args, stage=stage)
            assert_good_error(info.value)


# -- error quality -----------------------------------------------------------------------------


def e_nonscalar(x):
    return x * 2.0


def e_bad_index(x):
    return x[5] * 2.0


def e_bad_shape(x, y):
    z = np.sin(x)
    return np.sum(z + y)


def e_calls_grad_of_bad(x):
    return myc.grad(e_bad_index)(x)


@pytest.mark.parametrize("make", [
    lambda: myc.grad(e_nonscalar),
    lambda: myc.value_and_grad(e_nonscalar),
    lambda: myc.jit(myc.grad(e_nonscalar)),
    lambda: myc.grad(myc.jit(e_nonscalar, backend="interp")),
], ids=["grad", "value_and_grad", "jit(grad)", "grad(jit interp)"])
def test_grad_of_non_scalar_names_the_problem(make):
    with pytest.raises(MycTypeError) as info:
        make()(f64(1.0, 2.0, 3.0))
    text = str(info.value)
    assert "float scalar" in text and "shape (3,)" in text, text
    assert "np.sum" in (info.value.hint or "")
    assert_good_error(info.value, "def e_nonscalar(x):")


@pytest.mark.parametrize("bad", [
    lambda v: (v, v),
    lambda v: v > 0.0,
    lambda v: len(v),
], ids=["tuple", "bool-array", "int"])
def test_grad_of_non_float_output_refused(bad):
    with pytest.raises(MycTypeError, match="float scalar") as info:
        myc.grad(bad)(f64(1.0, 2.0))
    assert_good_error(info.value)


def test_errors_carry_the_source_line_plain_jit_and_jvp():
    with pytest.raises(MycIndexError) as info:
        myc.jit(e_bad_index)(X3)
    assert_good_error(info.value, "return x[5] * 2.0")
    with pytest.raises(MycShapeError) as info:
        myc.jit(e_bad_shape)(X3, np.ones(4))
    assert_good_error(info.value, "return np.sum(z + y)")
    with pytest.raises(MycShapeError) as info:
        myc.jvp(e_bad_shape, (X3, np.ones(4)), (X3, np.ones(4)))
    assert_good_error(info.value, "return np.sum(z + y)")


# fixed: loc_lost (errors under reverse mode carry the user's line)


@pytest.mark.parametrize("call,line", [
    (lambda: myc.grad(e_bad_index)(X3), "return x[5] * 2.0"),
    (lambda: myc.value_and_grad(e_bad_index)(X3), "return x[5] * 2.0"),
    (lambda: myc.jit(myc.grad(e_bad_index))(X3), "return x[5] * 2.0"),
    (lambda: myc.grad(myc.jit(e_bad_index, backend="interp"))(X3), "return x[5] * 2.0"),
    (lambda: myc.grad(myc.grad(lambda v: e_bad_index(v) * v[0]))(X3), "return x[5] * 2.0"),
    (lambda: myc.vjp(e_bad_index, X3), "return x[5] * 2.0"),
    (lambda: myc.jit(e_calls_grad_of_bad)(X3), "return x[5] * 2.0"),
    (lambda: myc.grad(e_bad_shape)(X3, np.ones(4)), "return np.sum(z + y)"),
    (lambda: myc.grad(myc.grad(e_nonscalar))(X3), "def e_nonscalar(x):"),
], ids=["grad", "value_and_grad", "jit(grad)", "grad(jit interp)", "grad(grad)", "vjp",
        "program-calling-grad", "grad-shape", "grad(grad)-nonscalar"])
def test_errors_under_reverse_mode_carry_the_source_line(call, line):
    with pytest.raises(MycError) as info:
        call()
    assert_good_error(info.value, line)


def test_no_raw_exceptions_from_bad_api_use():
    bad = [
        lambda: myc.grad(c_vec)(X3),                               # too few
        lambda: myc.grad(c_vec)("a", X3),                          # str argument
        lambda: myc.grad(c_vec)([1.0, 2.0], X3),                   # list argument
        lambda: myc.grad(c_vec)(X3.astype(np.int32), X3),          # unsupported dtype
        lambda: myc.jvp(c_vec, (X3, Y3), (X3,)),                   # tangent count
        lambda: myc.jvp(c_vec, X3, Y3),                            # not tuples
        lambda: myc.vjp(c_vec, X3, Y3)[1](X3),                     # cotangent shape
        lambda: myc.grad(3.0)(1.0),                                # not a function
        lambda: myc.jit(c_vec, backend="gpu")(X3, Y3),             # unknown backend
        lambda: myc.grad(c_vec, argnums=(0, 5))(X3, Y3),
        lambda: myc.ir(c_vec, X3, stage="typed"),                  # too few for ir
        lambda: myc.grad(lambda t: t[0] * t[1])((2.0, "x")),       # str inside a tuple
    ]
    for i, call in enumerate(bad):
        try:
            call()
        except MycError as exc:
            assert_good_error(exc)
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"case {i}: raw {type(exc).__name__}: {exc}")
        else:
            pytest.fail(f"case {i}: no error")


def e_jit_inside(x):
    return myc.jit(_cube)(x) + x


def e_vjp_inside(x):
    y, pb = myc.vjp(_cube, x)
    return pb(1.0)[0] + y


@pytest.mark.parametrize("fn,want", [(e_jit_inside, 8.0 + 2.0), (e_vjp_inside, 12.0 + 8.0)],
                         ids=["jit", "vjp"])
def test_jit_or_vjp_called_inside_a_program(fn, want):
    try:
        got = myc.jit(fn)(2.0)
    except MycError as exc:
        assert_good_error(exc, "myc.")
    else:
        assert_close(got, want, 1e-12)


def e_nth_derivative(x, n):
    if n == 0:
        return math.sin(x)
    return myc.grad(e_nth_derivative)(x, n - 1)


@pytest.mark.parametrize("how", ["eager", "jit"])
def test_function_differentiating_itself_recursively(how):
    fn = e_nth_derivative if how == "eager" else myc.jit(e_nth_derivative)
    try:
        got = fn(0.3, 2)
    except MycError as exc:
        assert_good_error(exc, "myc.grad(e_nth_derivative)")
    else:
        assert_close(got, -math.sin(0.3), 1e-12)


def test_transform_of_unknown_function_inside_program_is_located():
    def grad_of_param(f, x):
        return myc.grad(f)(x)

    def caller(x):
        return grad_of_param(_cube, x)

    # (a transform of a function passed in runs, transformed when the program
    # specializes; a derivative of such a program is refused at the transform's line)
    assert_close(myc.jit(caller)(2.0), 12.0, 1e-12)
    with pytest.raises(MycTypeError, match="itself differentiated") as info:
        myc.grad(caller)(2.0)
    assert_good_error(info.value, "return myc.grad(f)(x)")


# -- caching and re-specialization ---------------------------------------------------------------


def s_fn(x, y):
    return np.sum(np.sin(x) * y) * 0.5


def _s_fn_grads(x, y):
    return (np.cos(x) * y * 0.5 * np.ones_like(np.sin(x) * y),
            np.sin(x) * 0.5 * np.ones_like(np.sin(x) * y))


S_SIGNATURES = [
    (f64(0.1, 0.2, 0.3), f64(1.0, 2.0, 3.0)),
    (f64(0.1, 0.2, 0.3, 0.4, 0.5), f64(1.0, 2.0, 3.0, 4.0, 5.0)),
    (f32(0.1, 0.2, 0.3), f32(1.0, 2.0, 3.0)),
    (np.full((2, 2), 0.3), np.full((2, 2), 2.0)),
    (0.5, 2.0),
    (np.float32(0.5), 2.0),
    (np.float64(0.5), np.float64(2.0)),
    (np.array(0.5), 2.0),
    (f64(0.1, 0.2, 0.3), 2.0),
    (f64(0.1, 0.2, 0.3), f64(1.0, 2.0, 3.0)),
]


@pytest.mark.parametrize("wrap", ["jit(grad)", "grad(jit)", "grad(jit interp)", "grad"])
def test_new_signatures_respecialize_and_old_ones_still_right(wrap):
    g = {"jit(grad)": lambda: myc.jit(myc.grad(s_fn, argnums=(0, 1))),
         "grad(jit)": lambda: myc.grad(myc.jit(s_fn), argnums=(0, 1)),
         "grad(jit interp)": lambda: myc.grad(myc.jit(s_fn, backend="interp"), argnums=(0, 1)),
         "grad": lambda: myc.grad(s_fn, argnums=(0, 1))}[wrap]()
    vg = myc.value_and_grad(myc.jit(s_fn), argnums=(0, 1))
    for rnd in range(2):
        for x, y in S_SIGNATURES:
            got = g(x, y)
            want = _s_fn_grads(np.asarray(x, np.float64), np.asarray(y, np.float64))
            want = tuple(np.sum(w) if np.ndim(a) == 0 else w for w, a in zip(want, (x, y),
                                                                            strict=True))
            tol = 1e-6 if np.result_type(x, y) == np.float32 else 1e-12
            assert_close(got, want, tol, tol, where=f"{wrap} round {rnd} {x!r}")
            assert_mirrors(got, (x, y), f"{wrap} {x!r}, {y!r}")
            v, _ = vg(x, y)
            assert_same(s_fn(x, y), v, tol, tol)


def s_shape_branch(x):
    if x.ndim == 1:
        return np.sum(x ** 2) * 0.5
    return np.sum(x @ x.T)


def s_struct(t):
    acc = 0.0
    for v in t:
        acc = acc + np.sum(v * v)
    return acc


def test_respecialize_on_rank_tuple_structure_and_int_values():
    g = myc.jit(myc.grad(s_shape_branch))
    a1, a2 = f64(0.5, 1.0, 1.5), np.arange(6.0).reshape(2, 3)
    for _ in range(2):
        assert_close(g(a1), a1, 1e-12)
        assert_close(g(a2), fd_grad(s_shape_branch, (a2,), 0))
    gs = myc.jit(myc.grad(s_struct))
    for _ in range(2):
        t2 = (f64(1.0, 2.0), 3.0)
        t3 = (f64(1.0, 2.0), 3.0, (np.float32(1.0)))
        assert_close(gs(t2), (f64(2.0, 4.0), 6.0), 1e-12)
        got = gs(t3)
        assert_close(got, (f64(2.0, 4.0), 6.0, 2.0), 1e-6)
        assert_mirrors(got, t3)
    gp = myc.jit(myc.grad(h_rec_pow))
    for n in (3, 5, 3, 0):
        assert_close(gp(1.3, n), n * 1.3 ** (n - 1) if n else 0.0, 1e-12)


def s_bool_arith(b, y):
    return (b + b) * y


@pytest.mark.parametrize("wrap", ["jit", "jit(grad)"])
def test_python_bool_and_numpy_bool_do_not_share_a_specialization(wrap):
    f = myc.jit(s_bool_arith) if wrap == "jit" else myc.jit(myc.grad(s_bool_arith, argnums=1))
    ref = s_bool_arith if wrap == "jit" else (lambda b, y: float(b + b))
    first = f(np.True_, 1.5)
    assert_close(first, ref(np.True_, 1.5), 1e-12)
    second = f(True, 1.5)
    assert_close(second, ref(True, 1.5), 1e-12)  # 3.0 (jit) / 2.0 (grad) in CPython


def test_python_bool_and_numpy_bool_fresh_objects_are_right():
    # each kind alone (a fresh jitted object per call) is right: only the cache mixes them
    for b in (np.True_, True):
        assert_close(myc.jit(s_bool_arith)(b, 1.5), s_bool_arith(b, 1.5), 1e-12)
