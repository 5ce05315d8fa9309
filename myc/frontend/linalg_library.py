"""``np.linalg`` and ``scipy.linalg`` functions, written in the myc subset over the
linear-algebra primitives (``myc/prims/linalg.py``).

Like ``np_library.py``, these are parsed like user code where a program calls the
function of that name (``NAMES``: the called object's id -> this module's function).
They hold NumPy's and SciPy's calling conventions -- the vector right-hand side of
``solve``, ``slogdet``'s pair, SciPy's ``lower=``/``trans=`` and ``(c, lower)`` factor
pairs -- so the primitives each have one form.  SciPy's names are recognized only when
SciPy can be imported.
"""

from __future__ import annotations

import numpy as np

from myc.prims import P

_VECTOR_RHS_1D = int(np.__version__.split(".")[0]) >= 2  # NumPy 2: b is a vector iff 1-d


def _vector_rhs(a, b):
    if _VECTOR_RHS_1D:
        return np.ndim(b) == 1
    return np.ndim(b) == np.ndim(a) - 1


def _solve_vector(a, b):
    r = P.linsolve(a, np.reshape(b, np.shape(b) + (1,)))
    return np.reshape(r, np.shape(r)[:-1])


# ---------------------------------------------------------------- numpy.linalg
def cholesky(a, upper=False):
    low = P.cholesky(a)
    if upper:
        return P.mT(low)
    return low


def solve(a, b):
    if _vector_rhs(a, b):
        return _solve_vector(a, b)
    return P.linsolve(a, b)


def inv(a):
    return P.inv(a)


def det(a):
    return P.det(a)


def slogdet(a):
    return (P.det_sign(a), P.logabsdet(a))


def eigh(a, UPLO="L"):
    if UPLO == "U":  # the upper triangle of a is the lower one of its transpose
        a = P.mT(a)
    elif UPLO != "L":
        return P.lib_error("np.linalg.eigh: UPLO must be 'L' or 'U'")
    return (P.eigh_values(a), P.eigh_vectors(a))


def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO)[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        return P.svd_s(a)
    if full_matrices and np.shape(a)[-1] != np.shape(a)[-2]:
        return P.lib_error("np.linalg.svd: full_matrices=True of a non-square matrix is not "
                           "supported (its extra singular vectors are not unique); pass "
                           "full_matrices=False")
    return (P.svd_u(a), P.svd_s(a), P.svd_vt(a))


def pinv(a, rcond=None, hermitian=False, rtol=None):
    if not (P.is_none(rcond) and P.is_none(rtol)):
        return P.lib_error("np.linalg.pinv: rcond= and rtol= are not supported (the default "
                           "cutoff, max(M, N) * eps * the largest singular value, is used)")
    u = P.svd_u(a)
    s = P.svd_s(a)
    vt = P.svd_vt(a)
    cut = np.max(s, axis=-1, keepdims=True) * P.pinv_rtol(np.shape(a), s.dtype)
    big = s > cut
    inv_s = np.where(big, 1.0 / np.where(big, s, 1.0), 0.0)
    return P.matmul(P.mT(vt) * np.expand_dims(inv_s, -2), P.mT(u))


# ---------------------------------------------------------------- scipy.linalg
def _tri(a, b, lower, trans):
    if np.ndim(b) == 1:
        r = P.solve_triangular(a, np.reshape(b, np.shape(b) + (1,)), lower, trans)
        return np.reshape(r, np.shape(r)[:-1])
    return P.solve_triangular(a, b, lower, trans)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    if unit_diagonal:  # the diagonal is taken to be ones, whatever ``a`` holds there
        n = np.shape(a)[-1]
        eye = np.reshape(np.arange(n), (-1, 1)) == np.reshape(np.arange(n), (1, -1))
        a = np.where(eye, np.ones_like(a), a)
    return _tri(a, b, P.linalg_bool(lower), P.linalg_trans(trans))


def sp_cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    low = P.cholesky(a)
    if P.linalg_bool(lower):
        return low
    return P.mT(low)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    # the other triangle of SciPy's factor is unspecified: here it is zeros
    return (sp_cholesky(a, lower), P.linalg_bool(lower))


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    if P.linalg_bool(lower):  # A = L L^T
        return _tri(c, _tri(c, b, True, 0), True, 1)
    return _tri(c, _tri(c, b, False, 1), False, 0)  # A = U^T U


def sp_solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
             assume_a=None, transposed=False):
    if transposed:
        a = P.mT(a)
    if np.ndim(b) == 1:
        return _solve_vector(a, b)
    return P.linsolve(a, b)


_MOD = __name__
NAMES: dict[int, str] = {
    id(np.linalg.cholesky): f"{_MOD}.cholesky", id(np.linalg.solve): f"{_MOD}.solve",
    id(np.linalg.inv): f"{_MOD}.inv", id(np.linalg.det): f"{_MOD}.det",
    id(np.linalg.slogdet): f"{_MOD}.slogdet", id(np.linalg.eigh): f"{_MOD}.eigh",
    id(np.linalg.eigvalsh): f"{_MOD}.eigvalsh", id(np.linalg.svd): f"{_MOD}.svd",
    id(np.linalg.pinv): f"{_MOD}.pinv",
}
_SCIPY_ADDED = False


def note_callee(callee: object, library: dict[int, str]) -> None:
    """Add SciPy's names to ``library`` the first time a program names a function of
    ``scipy.linalg`` (SciPy is optional, and importing it costs time myc does not spend
    unless the program uses it)."""
    global _SCIPY_ADDED
    if _SCIPY_ADDED or not str(getattr(callee, "__module__", None)).startswith("scipy.linalg"):
        return
    _SCIPY_ADDED = True
    import scipy.linalg as sl

    library.update({
        id(sl.solve_triangular): f"{_MOD}.solve_triangular",
        id(sl.cholesky): f"{_MOD}.sp_cholesky", id(sl.cho_factor): f"{_MOD}.cho_factor",
        id(sl.cho_solve): f"{_MOD}.cho_solve", id(sl.inv): f"{_MOD}.inv",
        id(sl.det): f"{_MOD}.det", id(sl.solve): f"{_MOD}.sp_solve",
    })
