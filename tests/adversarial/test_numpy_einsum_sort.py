"""``np.einsum`` (a static plan of transposes, reshapes, sums and matmuls:
``myc/prims/einsum_plan.py``) and ``np.sort``/``np.argsort`` (NumPy's own argsort as a
host step; ``sort`` the gather by its permutation), in the style of
``test_numpy_library.py``; and ``np.linalg.norm``'s other orders: forward against NumPy on every backend, derivatives by
``tests/gradcheck.py`` (reverse and forward mode), errors at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycError
from tests.adversarial.test_numpy_subset import check_calls, check_raises
from tests.gradcheck import check_grads

R = np.random.default_rng(17)
V3 = R.standard_normal(3)
V4 = R.standard_normal(4)
M23 = R.standard_normal((2, 3))
M34 = R.standard_normal((3, 4))
A234 = R.standard_normal((2, 3, 4))
B523 = R.standard_normal((5, 2, 3))
I23 = np.arange(6, dtype=np.int64).reshape(2, 3) - 2
I34 = np.arange(12, dtype=np.int64).reshape(3, 4) % 5


# ---------------------------------------------------------------- einsum


def p_ein_matmul(a, b):
    return np.einsum("ij,jk->ik", a, b), np.einsum("ij,jk", a, b)


def p_ein_unary(a):
    return np.einsum("ij->ji", a), np.einsum("ij", a), np.einsum("ij->", a), np.einsum(
        "ji", a), np.einsum("ij->j", a)


def p_ein_vectors(u, v):
    return np.einsum("i,i", u, u), np.einsum("i,j->ij", u, v), np.einsum("i,i->", u, u), \
        np.einsum("i,j->", u, v)


def p_ein_batch(a, b):
    return np.einsum("bij,jk->bik", a, b), np.einsum("...ij,jk->...ik", a, b), np.einsum(
        "bij,bkj->bik", a, a), np.einsum("bij->b", a)


def p_ein_three(a, b, c):
    return np.einsum("ij,jk,k->i", a, b, c), np.einsum("ij, jk, k", a, b, c)


def p_ein_elementwise(a, b):
    return np.einsum("ij,ij->ij", a, b), np.einsum("ij,ij->i", a, b), np.einsum(
        "...j,j", a, b[0]), np.einsum("...", a)


def p_ein_3d(a):
    return np.einsum("ijk->kji", a), np.einsum("ijk,ijk->k", a, a), np.einsum("ijk->", a)


def p_ein_diagonal(m, a):
    # a label repeated within one operand: a diagonal (a gather), a trace
    t = a[:, :, None] * a[:, None, :2]  # (2, 3, 2)
    return (np.einsum("ii->i", m), np.einsum("ii", m), np.einsum("ij,jj->i", a, m),
            np.einsum("bii->b", np.einsum("bij,bkj->bik", a[None], a[None])),
            np.einsum("iji->j", t))


def p_ein_attention(q, k, v):
    # the shape of a typical use: scores, softmax, weighted values
    s = np.einsum("bqd,bkd->bqk", q, k)
    w = np.exp(s - np.max(s, axis=-1, keepdims=True))
    w = w / np.sum(w, axis=-1, keepdims=True)
    return np.einsum("bqk,bkd->bqd", w, v)


# ---------------------------------------------------------------- sort


def p_sort(a):
    return np.sort(a), np.sort(a, axis=0), np.sort(a, axis=None), np.sort(a, kind="stable")


def p_argsort(a):
    return np.argsort(a), np.argsort(a, axis=0), np.argsort(a, axis=None), a.argsort(
        kind="stable")


def p_sort_loss(a):
    # a differentiable use: weights on order statistics (a trimmed mean)
    s = np.sort(a, axis=-1)
    return np.sum(s[..., 1:-1]) + np.max(np.sort(a, axis=0)[-1])


def p_argsort_gather(a, w):
    i = np.argsort(w)
    return a[..., i] * 2.0


# ---------------------------------------------------------------- norm orders


def p_norm_vector_ords(x):
    return (np.linalg.norm(x, 1), np.linalg.norm(x, np.inf), np.linalg.norm(x, -np.inf),
            np.linalg.norm(x, 0), np.linalg.norm(x, 3), np.linalg.norm(x, 0.5),
            np.linalg.norm(x, -1))


def p_norm_matrix_ords(m):
    return (np.linalg.norm(m, 1), np.linalg.norm(m, -1), np.linalg.norm(m, np.inf),
            np.linalg.norm(m, -np.inf), np.linalg.norm(m, 1, keepdims=True))


def p_norm_axis_ords(a):
    return (np.linalg.norm(a, 1, axis=(2, 0)), np.linalg.norm(a, np.inf, axis=(0, -1),
                                                              keepdims=True),
            np.linalg.norm(a, 3, axis=1), np.linalg.norm(a, 1, axis=-1))


def p_norm_smooth(x, a):
    # the orders whose derivative exists at a generic point
    return (np.linalg.norm(x, 3), np.linalg.norm(x, 1), np.linalg.norm(x, np.inf),
            np.linalg.norm(a, 1, axis=(2, 0)), np.linalg.norm(a, np.inf, axis=(0, 1)))


FORWARD = [
    (p_norm_vector_ords, [(np.array([1.0, -2.0, 0.0, 3.0]),), (np.arange(4) - 1,),
                          (V4.astype(np.float32),)]),
    (p_norm_matrix_ords, [(M23,), (I23,), (M34.astype(np.float32),)]),
    (p_norm_axis_ords, [(A234,), (A234.astype(np.float32),)]),
    (p_ein_matmul, [(M23, M34), (I23, I34), (M23.astype(np.float32), M34.astype(np.float32))]),
    (p_ein_unary, [(M23,), (I23,), (M34.astype(np.float32),)]),
    (p_ein_vectors, [(V3, V4), (V3.astype(np.float32), V4.astype(np.float32))]),
    (p_ein_batch, [(B523, M34), (B523.astype(np.float32), M34.astype(np.float32))]),
    (p_ein_three, [(M23, M34, V4)]),
    (p_ein_elementwise, [(M23, M23 + 1.0), (B523, M23[:1])]),
    (p_ein_3d, [(A234,)]),
    (p_ein_diagonal, [(M34[:, :3].copy(), M23), (I34[:, :3].copy(), I23)]),
    (p_ein_attention, [(B523, B523 * 0.5, B523 + 1.0)]),
    (p_sort, [(M34,), (I34,), (M34.astype(np.float32),), (np.array([[2.0, np.nan, 1.0]]),),
              (np.ones((2, 3)),)]),
    (p_argsort, [(M34,), (I34,), (np.ones((2, 3)),), (A234[0],)]),
    (p_sort_loss, [(M34,), (A234,)]),
    (p_argsort_gather, [(M23, V3), (A234, V4)]),
]


@pytest.mark.parametrize("fn,argsets", FORWARD, ids=[f.__name__ for f, _ in FORWARD])
def test_forward(fn, argsets):
    check_calls(fn, argsets)


GRADS = [
    (p_norm_smooth, (V4, A234)),
    (p_ein_matmul, (M23, M34)),
    (p_ein_unary, (M23,)),
    (p_ein_vectors, (V3, V4)),
    (p_ein_batch, (B523, M34)),
    (p_ein_three, (M23, M34, V4)),
    (p_ein_elementwise, (M23, M23 + 1.0)),
    (p_ein_3d, (A234,)),
    (p_ein_diagonal, (M34[:, :3].copy(), M23)),
    (p_ein_attention, (B523, B523 * 0.5, B523 + 1.0)),
    (p_sort, (M34,)),
    (p_sort_loss, (A234,)),
]


@pytest.mark.parametrize("fn,args", GRADS, ids=[f.__name__ for f, _ in GRADS])
def test_grads(fn, args):
    """Reverse and forward mode against central differences, and against each other."""
    check_grads(fn, args)


def test_argsort_is_not_differentiated():
    """argsort is an index: the gradient flows only through the gathered values."""
    g = myc.grad(lambda a, w: np.sum(p_argsort_gather(a, w)), argnums=(0, 1))(M23, V3)
    np.testing.assert_array_equal(g[0], np.full_like(M23, 2.0))
    np.testing.assert_array_equal(g[1], np.zeros_like(V3))


# ---------------------------------------------------------------- errors


def e_ein_mismatch(a, b):
    return np.einsum("ij,jk->ik", a, b)


def e_ein_diag(a):
    return np.einsum("ii->i", a)


def e_ein_count(a):
    return np.einsum("ij,jk->ik", a)


def e_ein_output(a):
    return np.einsum("ij->k", a)


def e_sort_axis(a):
    return np.sort(a, axis=2)


def e_norm_nuc(a):
    return np.linalg.norm(a, 2)


def e_norm_fro_vector(a):
    return np.linalg.norm(a, "fro")


def _at_call(exc: MycError) -> None:
    assert exc.loc is not None and exc.loc.filename == __file__, exc
    assert "np." in exc.loc.source_line and "return" in exc.loc.source_line, exc


@pytest.mark.parametrize("fn,args,words", [
    (e_ein_mismatch, (M23, M23), "np.einsum"),
    (e_ein_diag, (M23,), "sizes 2 and 3"),
    (e_ein_count, (M23,), "np.einsum"),
    (e_ein_output, (M23,), "'k'"),
    (e_sort_axis, (M23,), "axis"),
    (e_norm_nuc, (M23,), "singular values"),
    (e_norm_fro_vector, (V4,), "for matrices"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_errors(fn, args, words):
    # (NumPy computes the matrix 2-norm; myc refuses it, saying so)
    check_raises(fn, [args])
    for backend in ("cpu", "interp"):
        with pytest.raises(MycError) as info:
            myc.jit(fn, backend=backend)(*args)
        _at_call(info.value)
        assert words in str(info.value), info.value
