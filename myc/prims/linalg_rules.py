"""Reverse and forward rules of the linear-algebra primitives (``myc/prims/linalg.py``).

Written in the myc subset like ``bprops.py``/``jvps.py`` (which import them), so they
are graphs of primitives -- the linear-algebra ones included -- and differentiate again.
The adjoints are the standard matrix-calculus ones (Giles 2008; Murray 2016 for the
Cholesky factor), for stacks of matrices:

* ``X = solve(A, B)``: ``B̄ = solve(Aᵀ, X̄)``, ``Ā = -B̄ Xᵀ``; tangent ``solve(A, dB - dA X)``.
* ``Y = inv(A)``: ``Ā = -Yᵀ Ȳ Yᵀ``; tangent ``-Y dA Y``.
* ``logabsdet``: ``Ā = ȳ A⁻ᵀ``; ``det``: ``Ā = ȳ det(A) A⁻ᵀ``; tangents ``tr(A⁻¹ dA)``
  (times ``det(A)``).
* ``L = cholesky(A)``: ``Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹)`` with ``Φ`` the lower triangle with
  the diagonal halved and ``sym(X) = (X + Xᵀ)/2``: the gradient is symmetric, as
  autograd's and JAX's are (a perturbation of ``A`` is taken symmetric); tangent
  ``L Φ(L⁻¹ sym(dA) L⁻ᵀ)``.
* ``w, V = eigh(A)``: ``Ā = sym(V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ)`` with
  ``F_ij = 1/(w_j - w_i)`` off the diagonal and 0 on it (symmetric, as cholesky's);
  tangents ``dw = diag(Vᵀ sym(dA) V)``, ``dV = V (F ∘ (Vᵀ sym(dA) V))``.  Repeated
  eigenvalues make ``F`` infinite, as in every framework: the eigenvectors are not a
  differentiable function of ``A`` there.
* ``solve_triangular``: as ``solve``, the matrix sensitivity restricted to the triangle
  the routine reads.
"""

# ruff: noqa: ARG001
from __future__ import annotations

import numpy as np

from myc.prims.namespace import P
from myc.prims.registry import forward_rule, reverse_rule
from myc.prims.values import ZERO

__all__ = [
    "bprop_cholesky", "bprop_linsolve", "bprop_solve_triangular", "bprop_inv",
    "bprop_det", "bprop_logabsdet", "jvp_cholesky", "jvp_linsolve",
    "jvp_solve_triangular", "jvp_inv", "jvp_det", "jvp_logabsdet",
    "bprop_eigh_values", "bprop_eigh_vectors", "jvp_eigh_values", "jvp_eigh_vectors",
    "bprop_svd_u", "bprop_svd_s", "bprop_svd_vt", "jvp_svd_u", "jvp_svd_s", "jvp_svd_vt",
]


def _per_matrix(g, a):
    """A per-matrix value (a scalar for one matrix, ``(...,)`` for a stack) broadcast
    against the stack of matrices ``a``."""
    if np.ndim(a) > 2:
        return np.reshape(g, np.shape(g) + (1, 1))
    return g


def _phi(x, n):
    """The lower triangle of ``x`` with its diagonal halved."""
    low = P.tri_mask(n, True)
    diag = P.tri_mask(n, True) & P.tri_mask(n, False)
    return np.where(low, x, 0.0) - 0.5 * np.where(diag, x, 0.0)


def _sym(x):
    return 0.5 * (x + P.mT(x))


def _inv_t(a):
    return P.mT(P.inv(a))


# ---------------------------------------------------------------- reverse rules
@reverse_rule(P.cholesky)
def bprop_cholesky(a, out, dout):
    n = np.shape(out)[-1]
    inner = _phi(P.matmul(P.mT(out), dout), n)
    left = P.solve_triangular(out, inner, True, 1)  # L^-T inner
    full = P.mT(P.solve_triangular(out, P.mT(left), True, 1))  # ... L^-1
    return (_sym(full),)


@reverse_rule(P.linsolve)
def bprop_linsolve(a, b, out, dout):
    db = P.linsolve(P.mT(a), dout)
    da = -P.matmul(db, P.mT(out))
    return (P.sum_to(da, np.shape(a)), P.sum_to(db, np.shape(b)))


@reverse_rule(P.solve_triangular)
def bprop_solve_triangular(a, b, lower, trans, out, dout):
    db = P.solve_triangular(a, dout, lower, 1 - trans)
    if trans == 0:
        dt = -P.matmul(db, P.mT(out))
    else:
        dt = -P.matmul(out, P.mT(db))
    da = np.where(P.tri_mask(np.shape(a)[-1], lower), dt, 0.0)
    return (P.sum_to(da, np.shape(a)), P.sum_to(db, np.shape(b)), ZERO, ZERO)


@reverse_rule(P.inv)
def bprop_inv(a, out, dout):
    yt = P.mT(out)
    return (-P.matmul(P.matmul(yt, dout), yt),)


@reverse_rule(P.logabsdet)
def bprop_logabsdet(a, out, dout):
    return (_per_matrix(dout, a) * _inv_t(a),)


@reverse_rule(P.det)
def bprop_det(a, out, dout):
    return (_per_matrix(dout * out, a) * _inv_t(a),)


def _eye_mask(n):
    return P.tri_mask(n, True) & P.tri_mask(n, False)


def _eig_f(w):
    """``F_ij = 1/(w_j - w_i)`` off the diagonal, 0 on it (per matrix of a stack)."""
    n = np.shape(w)[-1]
    d = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    eye = _eye_mask(n)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, d))


@reverse_rule(P.eigh_values)
def bprop_eigh_values(a, out, dout):
    v = P.eigh_vectors(a)
    return (_sym(P.matmul(v * np.expand_dims(dout, -2), P.mT(v))),)


@reverse_rule(P.eigh_vectors)
def bprop_eigh_vectors(a, out, dout):
    inner = _eig_f(P.eigh_values(a)) * P.matmul(P.mT(out), dout)
    return (_sym(P.matmul(P.matmul(out, inner), P.mT(out))),)


def _svd_f(s):
    """``F_ij = 1/(s_j² - s_i²)`` off the diagonal, 0 on it."""
    q = s * s
    return _eig_f(q)


@reverse_rule(P.svd_s)
def bprop_svd_s(a, out, dout):
    u = P.svd_u(a)
    vt = P.svd_vt(a)
    return (P.matmul(u * np.expand_dims(dout, -2), vt),)


@reverse_rule(P.svd_u)
def bprop_svd_u(a, out, dout):
    # Townsend (2016): U (F ∘ (UᵀŪ - ŪᵀU)) S Vᵀ + (I - UUᵀ) Ū S⁻¹ Vᵀ
    s = P.svd_s(a)
    vt = P.svd_vt(a)
    utd = P.matmul(P.mT(out), dout)
    inner = _svd_f(s) * (utd - P.mT(utd))
    core = P.matmul(P.matmul(out, inner * np.expand_dims(s, -2)), vt)
    rest = dout - P.matmul(out, utd)
    return (core + P.matmul(rest / np.expand_dims(s, -2), vt),)


@reverse_rule(P.svd_vt)
def bprop_svd_vt(a, out, dout):
    # with V = vtᵀ, V̄ = doutᵀ: U S (F ∘ (VᵀV̄ - V̄ᵀV)) Vᵀ + U S⁻¹ V̄ᵀ (I - VVᵀ)
    s = P.svd_s(a)
    u = P.svd_u(a)
    vtd = P.matmul(out, P.mT(dout))  # VᵀV̄
    inner = _svd_f(s) * (vtd - P.mT(vtd))
    core = P.matmul(u, P.matmul(np.expand_dims(s, -1) * inner, out))
    rest = dout - P.matmul(P.mT(vtd), out)  # V̄ᵀ (I - VVᵀ)
    return (core + P.matmul(u, rest / np.expand_dims(s, -1)),)


# ---------------------------------------------------------------- forward rules
@forward_rule(P.cholesky)
def jvp_cholesky(a, ta, out):
    n = np.shape(out)[-1]
    left = P.solve_triangular(out, _sym(ta), True, 0)  # L^-1 dA
    inner = P.mT(P.solve_triangular(out, P.mT(left), True, 0))  # ... L^-T
    return P.cast_grad(P.matmul(out, _phi(inner, n)), out)


@forward_rule(P.linsolve)
def jvp_linsolve(a, b, ta, tb, out):
    return P.cast_grad(P.linsolve(a, tb - P.matmul(ta, out)), out)


@forward_rule(P.solve_triangular)
def jvp_solve_triangular(a, b, lower, trans, ta, tb, tlower, ttrans, out):
    dt = np.where(P.tri_mask(np.shape(a)[-1], lower), ta, 0.0)
    if trans != 0:
        dt = P.mT(dt)
    return P.cast_grad(P.solve_triangular(a, tb - P.matmul(dt, out), lower, trans), out)


@forward_rule(P.inv)
def jvp_inv(a, ta, out):
    return P.cast_grad(-P.matmul(P.matmul(out, ta), out), out)


def _trace_of(a, ta):
    """``tr(A⁻¹ dA)`` per matrix."""
    return np.sum(_inv_t(a) * ta, axis=(-2, -1))


@forward_rule(P.logabsdet)
def jvp_logabsdet(a, ta, out):
    return P.cast_grad(_trace_of(a, ta), out)


@forward_rule(P.det)
def jvp_det(a, ta, out):
    return P.cast_grad(out * _trace_of(a, ta), out)


def _rotated(v, ta):
    """``Vᵀ sym(dA) V``."""
    return P.matmul(P.matmul(P.mT(v), _sym(ta)), v)


@forward_rule(P.eigh_values)
def jvp_eigh_values(a, ta, out):
    m = _rotated(P.eigh_vectors(a), ta)
    return P.cast_grad(np.sum(np.where(_eye_mask(np.shape(out)[-1]), m, 0.0), axis=-1), out)


@forward_rule(P.eigh_vectors)
def jvp_eigh_vectors(a, ta, out):
    m = _rotated(out, ta)
    return P.cast_grad(P.matmul(out, _eig_f(P.eigh_values(a)) * m), out)


def _svd_dp(a, ta):
    """``dP = Uᵀ dA V`` and the factors."""
    u = P.svd_u(a)
    s = P.svd_s(a)
    vt = P.svd_vt(a)
    return u, s, vt, P.matmul(P.matmul(P.mT(u), ta), P.mT(vt))


@forward_rule(P.svd_s)
def jvp_svd_s(a, ta, out):
    _u, _s, _vt, dp = _svd_dp(a, ta)
    return P.cast_grad(np.sum(np.where(_eye_mask(np.shape(out)[-1]), dp, 0.0), axis=-1), out)


@forward_rule(P.svd_u)
def jvp_svd_u(a, ta, out):
    u, s, vt, dp = _svd_dp(a, ta)
    sr = np.expand_dims(s, -2)  # scales columns: X S
    sl = np.expand_dims(s, -1)  # scales rows: S X
    du = P.matmul(u, _svd_f(s) * (dp * sr + sl * P.mT(dp)))
    rest = P.matmul(ta, P.mT(vt)) - P.matmul(u, dp)  # (I - UUᵀ) dA V
    return P.cast_grad(du + rest / sr, out)


@forward_rule(P.svd_vt)
def jvp_svd_vt(a, ta, out):
    u, s, vt, dp = _svd_dp(a, ta)
    sr = np.expand_dims(s, -2)
    sl = np.expand_dims(s, -1)
    dv = P.matmul(P.mT(vt), _svd_f(s) * (sl * dp + P.mT(dp) * sr))
    rest = P.matmul(P.mT(ta), u) - P.matmul(P.mT(vt), P.mT(dp))  # (I - VVᵀ) dAᵀ U
    return P.cast_grad(P.mT(dv + rest / sr), out)
