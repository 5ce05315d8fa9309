"""The NumPy functions real autodiff programs use beyond the elementwise/reduction core:
``logaddexp``, concatenation and stacking, ``expand_dims``/``squeeze``/``ravel``,
``prod``/``var``/``std``, ``cov``/``corrcoef``, ``outer``/``diag``/``eye``/``triu``/``tril``, ``repeat``,
``roll``, ``cumsum``, ``linalg.norm``, ``flip``, ``swapaxes``/``moveaxis``, ``take``,
``tile``, ``trace`` and ``meshgrid`` (most are library functions written in the subset,
``myc/frontend/np_library.py``; ``concatenate`` and ``cumsum`` are primitives).

Each program runs under CPython and on every backend (``check_calls``: value, dtype,
shape and Python type agree, errors agree), and its derivatives are checked by
``tests/gradcheck.py`` (reverse mode against central differences, forward mode, and the
identity between them), in float64; float32 forms are in the forward checks.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycError
from tests.adversarial.test_numpy_subset import check_calls, check_raises
from tests.backends import BACKENDS
from tests.gradcheck import check_grads

R = np.random.default_rng(11)
V3 = R.standard_normal(3)
V1 = R.standard_normal(1)
M23 = R.standard_normal((2, 3))
M33 = R.standard_normal((3, 3))
A234 = R.standard_normal((2, 3, 4))
EMPTY = np.zeros((0,))
EMPTY03 = np.zeros((0, 3))
I23 = np.arange(6, dtype=np.int64).reshape(2, 3) - 2


def _f32(*arrays):
    return tuple(a.astype(np.float32) for a in arrays)


# ---------------------------------------------------------------- programs


def p_logaddexp(a, b):
    return np.logaddexp(a, b)


def p_logaddexp_sum(a, b):
    return np.sum(np.logaddexp(a, 2.0 * b))


def p_concat0(a, b):
    return np.concatenate((a, b))


def p_concat1(a, b):
    return np.concatenate([a, b, a], axis=1)


def p_concat_neg(a, b):
    return np.concatenate((a, b), axis=-1)


def p_concat_none(a, b):
    return np.concatenate((a, b), axis=None)


def p_stack0(a, b):
    return np.stack((a, b))


def p_stack_last(a, b):
    return np.stack([a, b, a * b], axis=-1)


def p_stack_tuple(t):
    return np.stack(t, axis=1)


def p_hstack(a, b):
    return np.hstack((a, b))


def p_vstack(a, b):
    return np.vstack([a, b])


def p_column_stack(a, b):
    return np.column_stack((a, b))


def p_expand_dims(a):
    return np.expand_dims(a, 0) * np.expand_dims(a, -1)


def p_expand_dims_tuple(a):
    return np.expand_dims(a, (0, 2))


def p_squeeze(a):
    return np.squeeze(a)


def p_squeeze_axis(a):
    return np.squeeze(a, axis=0)


def p_ravel(a):
    return np.ravel(a), a.ravel(), a.flatten()


def p_prod(a):
    return np.prod(a)


def p_prod_axis(a):
    return np.prod(a, axis=1), a.prod(axis=0, keepdims=True), np.prod(a, axis=(0, -1))


def p_var(a):
    return np.var(a)


def p_var_axis(a):
    return (np.var(a, axis=0), np.var(a, axis=-1, ddof=1, keepdims=True),
            a.var(axis=(0, 1)))


def p_std(a):
    return np.std(a, axis=0, ddof=1), a.std()


def p_cov(a, b):
    return np.cov(a) + np.cov(a.T, rowvar=False, ddof=0)[0, 0] + np.cov(a, b, bias=True)[-1, 1:]


def p_corrcoef(a):
    return np.corrcoef(a) + np.cov(a[0])


def p_outer(a, b):
    return np.outer(a, b)


def p_diag1(v):
    return np.diag(v), np.diag(v, 1), np.diag(v, k=-2)


def p_diag2(m):
    return np.diag(m), np.diag(m, 1), np.diag(m, -1), np.diag(m, 5)


def p_eye(a):
    return np.eye(3) @ a, np.eye(2, 3, k=1), np.identity(2, dtype=np.float32)


def p_eye_int(n):
    return np.eye(n, dtype=np.int64), np.eye(n, n + 1, -1)


def p_triu(m):
    return np.triu(m), np.tril(m), np.triu(m, 1), np.tril(m, k=-1)


def p_repeat(a):
    return np.repeat(a, 2), np.repeat(a, 3, axis=0), a.repeat(2, axis=-1)


def p_repeat_counts(a):
    return np.repeat(a, (1, 0, 2), axis=-1)


def p_roll(a):
    return np.roll(a, 1), np.roll(a, -1, axis=0), np.roll(a, 4, axis=-1)


def p_cumsum(a):
    return np.cumsum(a), np.cumsum(a, axis=0), a.cumsum(axis=-1)


def p_norm(a):
    return np.linalg.norm(a)


def p_norm_axis(a):
    return np.linalg.norm(a, axis=-1), np.linalg.norm(a, axis=0, keepdims=True)


def p_norm_ord(v, m):
    return np.linalg.norm(v, 2), np.linalg.norm(m, "fro")


def p_logaddexp_value(a):
    f = np.logaddexp
    return f(a, 0.5)


def p_flip(a):
    return np.flip(a), np.flip(a, 0), np.flip(a, axis=(0, -1)), np.fliplr(a), np.flipud(a)


def p_swap_move(a):
    return np.swapaxes(a, 0, -1), a.swapaxes(1, 0), np.moveaxis(a, 0, -1), np.moveaxis(
        a, (0, 1), (-1, 0))


def p_take(a, idx):
    return np.take(a, idx), np.take(a, idx, axis=-1), a.take(idx, axis=0)


def p_tile(a):
    return np.tile(a, 2), np.tile(a, (2, 1)), np.tile(a, (1, 2, 3))


def p_trace(a):
    return np.trace(a), np.trace(a, 1), a.trace(offset=-1)


def p_meshgrid(x, y):
    gx, gy = np.meshgrid(x, y)
    hx, hy = np.meshgrid(x, y, indexing="ij")
    sx, sy = np.meshgrid(x, y, sparse=True)
    return gx * gy + hx.T, sx, sy


def p_mlp_stack(w, x):
    # the shape of a typical use: features built by stacking, a loss reduced by std/var
    h = np.tanh(np.hstack([x, x ** 2]) @ w)
    return np.std(h) + np.var(h, axis=0).sum() + np.linalg.norm(w) + np.sum(
        np.logaddexp(0.0, h))


# ---------------------------------------------------------------- forward


SPECIALS = np.array([0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 3.0])
FORWARD = [
    (p_logaddexp, [(V3, V3[::-1].copy()), _f32(V3, V3), (SPECIALS, SPECIALS[::-1].copy()),
                   (SPECIALS, SPECIALS), (1.0, 2.0), (np.array(1.0), 3), (I23, M23),
                   (EMPTY, EMPTY)]),
    (p_concat0, [(V3, V1), _f32(M23, M33), (I23, M23), (EMPTY, V3), (M23, V3), (1.0, 2.0)]),
    (p_concat1, [(M23, M23), (I23, I23), (EMPTY03.T.copy(), EMPTY03.T.copy()), (V3, V3)]),
    (p_concat_neg, [(M23, M23[:, :1].copy()), (A234, A234)]),
    (p_concat_none, [(M23, V3), (A234, 1.0)]),
    (p_stack0, [(V3, V3), _f32(M23, M23), (2.0, 3.0), (EMPTY, EMPTY), (V3, V1)]),
    (p_stack_last, [(V3, V3), (M23, M23)]),
    (p_stack_tuple, [((V3, V3, V3),), ((M23,),), ((),)]),
    (p_hstack, [(V3, V1), (M23, M23), (1.0, V3), (2.0, 3.0)]),
    (p_vstack, [(V3, V3), (M23, V3), (1.0, 2.0), _f32(M23, M33)]),
    (p_column_stack, [(V3, V3), (M23.T.copy(), V3)]),
    (p_expand_dims, [(V3,), (M23,), (2.5,), (np.array(1.0, np.float32),)]),
    (p_expand_dims_tuple, [(V3,), (M23,)]),
    (p_squeeze, [(M23[None],), (np.ones((1, 3, 1)),), (np.array([[2.0]]),), (V3,)]),
    (p_squeeze_axis, [(M23[None],), (M23,)]),
    (p_ravel, [(M23,), (A234.astype(np.float32),), (2.5,), (EMPTY03,)]),
    (p_prod, [(V3,), (M23,), (I23,), (A234.astype(np.float32),), (EMPTY,), (2.5,),
              (np.array([1.5, 0.0, -2.0, np.inf]),), (np.ones(3, bool),)]),
    (p_prod_axis, [(A234,), (np.ones((3, 1, 5)) * 1.5,), (np.arange(24).reshape(2, 3, 4),),
                   (np.zeros((2, 0, 3)),), (M23,)]),
    (p_var, [(V3,), (M23,), (I23,), (M23.astype(np.float32),), (EMPTY,), (2.5,)]),
    (p_var_axis, [(A234,), (A234.astype(np.float32),), (np.zeros((3, 1, 2)),)]),
    (p_std, [(M23,), (I23,), (M23.astype(np.float32),), (np.ones((1, 3)),)]),
    (p_cov, [(M23, V3), (M23.astype(np.float32), V3), (I23, I23[1].copy())]),
    (p_corrcoef, [(M23,), (M23.astype(np.float32),), (M33,)]),
    (p_outer, [(V3, V1), (M23, V3), _f32(V3, V3), (I23, V3), (EMPTY, V3), (2.0, V3)]),
    (p_diag1, [(V3,), (V1,), (I23[0].copy(),), (V3.astype(np.float32),), (EMPTY,)]),
    (p_diag2, [(M23,), (M33,), (M23.T.copy(),), (I23,), (np.zeros((0, 2)),)]),
    (p_diag1, [(M23,)]),
    (p_eye, [(V3,), (M33.astype(np.float32),)]),
    (p_eye_int, [(3,), (1,), (0,)]),
    (p_triu, [(M33,), (M23,), (I23,), (A234,), (np.zeros((0, 2)),)]),
    (p_repeat, [(M23,), (I23,), (M23.astype(np.float32),), (V3,)]),
    (p_repeat_counts, [(V3,), (M23,), (V1,)]),
    (p_roll, [(M23,), (A234[0],), (I23,), (V3,), (EMPTY03,)]),
    (p_cumsum, [(M23,), (I23,), (M23.astype(np.float32),), (V3,), (EMPTY03,),
                (np.ones((2, 3), bool),)]),
    (p_norm, [(V3,), (M23,), (A234,), (I23,), (M23.astype(np.float32),), (EMPTY,)]),
    (p_norm_axis, [(M23,), (A234,), (I23,)]),
    (p_norm_ord, [(V3, M23), (V3.astype(np.float32), I23), (M23, V3)]),
    (p_logaddexp_value, [(V3,), (2.0,)]),
    (p_flip, [(M23,), (I23,), (A234[0].astype(np.float32),)]),
    (p_swap_move, [(A234,), (A234.astype(np.float32),)]),
    (p_take, [(M33, np.array([0, 2, -1])), (M33.astype(np.float32), np.array([[1], [0]]))]),
    (p_tile, [(V3,), (M23,), (I23,), (2.5,)]),
    (p_trace, [(M33,), (M23,), (I23,)]),
    (p_meshgrid, [(V3, V1), (V3.astype(np.float32), M23), (V3, I23[0].copy())]),
    (p_mlp_stack, [(R.standard_normal((6, 2)), M23)]),
]


@pytest.mark.parametrize("fn,argsets", FORWARD, ids=[f.__name__ for f, _ in FORWARD])
def test_forward(fn, argsets):
    check_calls(fn, argsets)


# ---------------------------------------------------------------- derivatives

GRADS = [
    (p_logaddexp_sum, (V3, V3[::-1].copy())),
    (p_logaddexp, (M23, 0.3)),
    (p_concat0, (V3, V1)),
    (p_concat1, (M23, M23 * 2)),
    (p_concat_none, (M23, V3)),
    (p_stack_last, (M23, M23 + 1)),
    (p_stack_tuple, ((V3, V3 * 2, V3 - 1),)),
    (p_hstack, (V3, V1)),
    (p_vstack, (M23, V3)),
    (p_column_stack, (V3, V3 + 1)),
    (p_expand_dims, (V3,)),
    (p_squeeze_axis, (M23[None],)),
    (p_ravel, (M23,)),
    (p_prod, (V3,)),
    (p_prod, (np.array([1.5, 0.0, -2.0, 0.5, 3.0]),)),  # a zero: the derivative is exact
    (p_prod_axis, (A234,)),
    (p_var_axis, (A234,)),
    (p_std, (M23,)),
    (p_outer, (V3, M23)),
    (p_cov, (M23, V3)),
    (p_corrcoef, (M33,)),
    (p_diag1, (V3,)),
    (p_diag2, (M33,)),
    (p_eye, (V3,)),
    (p_triu, (A234,)),
    (p_repeat, (M23,)),
    (p_repeat_counts, (M23,)),
    (p_roll, (M23,)),
    (p_cumsum, (M23,)),
    (p_norm_axis, (A234,)),
    (p_norm_ord, (V3, M23)),
    (p_flip, (M23,)),
    (p_swap_move, (A234,)),
    (p_take, (M33, np.array([0, 2, 2]))),
    (p_tile, (M23,)),
    (p_trace, (M33,)),
    (p_meshgrid, (V3, V1)),
    (p_mlp_stack, (R.standard_normal((6, 2)), M23)),
]


@pytest.mark.parametrize("fn,args", GRADS, ids=[f.__name__ for f, _ in GRADS])
def test_grads(fn, args):
    """Reverse and forward mode against central differences, and against each other."""
    check_grads(fn, args)


@pytest.mark.parametrize("fn,args", [(p_logaddexp_sum, (V3, V1)), (p_concat1, (M23, M23)),
                                     (p_cumsum, (M23,)), (p_prod, (V3,))],
                         ids=["logaddexp", "concatenate", "cumsum", "prod"])
def test_second_order(fn, args):
    check_grads(fn, args, order=2)


def f32_loss(x):
    y = np.cumsum(np.vstack([x, x * x]), axis=0)
    z = np.repeat(np.roll(y, 1, axis=1), 2, axis=0) + np.outer(np.diag(x[:, :2]), x[0])[0]
    return (np.sum(z ** 2) + np.std(np.logaddexp(x, 0.5)) + np.prod(x[0])
            + np.linalg.norm(np.triu(np.tile(x, (1, 2))), axis=1).sum())


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_derivatives_on_every_backend(backend):
    """float32 gradients and tangents through the new functions, on each backend,
    against the evaluator in float64."""
    x = M23.astype(np.float32)
    want = myc.grad(myc.jit(f32_loss, backend="interp"))(M23)
    got = myc.grad(myc.jit(f32_loss, backend=backend))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
    t = np.ones_like(M23)
    _, want_t = myc.jvp(myc.jit(f32_loss, backend="interp"), (M23,), (t,))
    _, got_t = myc.jvp(myc.jit(f32_loss, backend=backend), (x,), (t.astype(np.float32),))
    assert np.asarray(got_t).dtype == np.float32
    np.testing.assert_allclose(got_t, want_t, rtol=2e-4, atol=1e-5)


def test_library_functions_as_transform_arguments():
    """myc.grad/jit/jvp take the NumPy function itself, as they take np.sin."""
    g = myc.grad(np.logaddexp, argnums=(0, 1))(1.0, 1.0)
    assert g == (0.5, 0.5)
    np.testing.assert_allclose(myc.jit(np.logaddexp)(V3, 0.5), np.logaddexp(V3, 0.5))
    out, t = myc.jvp(np.cumsum, (V3,), (np.ones(3),))
    np.testing.assert_allclose(t, [1.0, 2.0, 3.0])


# ---------------------------------------------------------------- errors


def e_repeat_data(a, r):
    return np.repeat(a, r)


def e_roll_data(a, s):
    return np.roll(a, s)


def e_concat_mismatch(a, b):
    return np.concatenate((a, b), axis=1)


def e_stack_mismatch(a, b):
    return np.stack((a, b))


def e_diag_3d(a):
    return np.diag(a)


def e_norm_ord(a):
    return np.linalg.norm(a, "nuc")  # singular values: not computed by myc


def e_expand_axis(a):
    return np.expand_dims(a, 3)


def e_squeeze_axis(a):
    return np.squeeze(a, 1)


def e_roll_axes(a):
    return np.roll(a, 1, axis=(0, 1))


def e_var_out(a, o):
    return np.var(a, out=o)


def e_concat_scalars(a):
    return np.concatenate((a, a))


def test_data_dependent_counts_are_refused():
    """A repeat count or shift computed from array data cannot fix a shape at compile
    time: a MycError at the user's line, naming the function."""
    for fn, args in [(e_repeat_data, (V3, np.array(2))), (e_roll_data, (V3, np.array(1)))]:
        with pytest.raises(MycError) as info:
            myc.jit(fn)(*args)
        msg = str(info.value)
        _assert_at_call(info.value)
        assert ("np.repeat" if "repeat" in fn.__name__ else "np.roll") in msg, msg


def _assert_at_call(exc: MycError) -> None:
    """The error is located at the user's line calling the NumPy function."""
    assert exc.loc is not None and exc.loc.filename == __file__, exc
    assert "np." in exc.loc.source_line and "return" in exc.loc.source_line, exc


@pytest.mark.parametrize("fn,argsets", [
    (e_concat_mismatch, [(M23, V3), (M23, M33)]),
    (e_stack_mismatch, [(M23, M33)]),
    (e_diag_3d, [(A234,), (2.0,)]),
    (e_norm_ord, [(M23,)]),
    (e_expand_axis, [(M23,)]),
    (e_squeeze_axis, [(M23,)]),
    (e_concat_scalars, [(2.0,)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_errors(fn, argsets):
    """Where NumPy raises (or myc does not support the form) myc raises a MycError at the
    user's line, not at a line of the library."""
    check_raises(fn, argsets)
    for args in argsets:
        with pytest.raises(MycError) as info:
            myc.jit(fn)(*args)
        _assert_at_call(info.value)
        with pytest.raises(MycError) as info:
            myc.jit(fn, backend="interp")(*args)
        _assert_at_call(info.value)


def test_unsupported_forms_name_the_function():
    """Forms NumPy has but myc does not: a MycError at the call naming the function."""
    for fn, args, words in [(e_roll_axes, (M23,), "np.roll"),
                            (e_norm_ord, (M23,), "np.linalg.norm")]:
        with pytest.raises(MycError) as info:
            myc.jit(fn)(*args)
        _assert_at_call(info.value)
        assert words in str(info.value)


def test_unsupported_keyword_names_the_call():
    with pytest.raises(MycError) as info:
        myc.jit(e_var_out)(V3, V3)
    _assert_at_call(info.value)
    assert "out=" in str(info.value)
