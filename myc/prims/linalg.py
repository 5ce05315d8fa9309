"""Dense linear-algebra primitives: host steps that call NumPy's LAPACK routines.

A factorization or a solve has no efficient composition of elementwise kernels, so each
is a primitive whose implementation is NumPy's own (``np.linalg.cholesky``, ``solve``,
``inv``, ``slogdet``, ``det``), run as a host step on every backend -- a program with one
runs as a loop over its steps on ``cpu`` rather than as one native function.  All take
stacks of matrices (leading batch dimensions broadcast as NumPy's do).

``linsolve`` always takes a matrix right-hand side ``(..., M, K)``: the vector form of
``np.linalg.solve`` is a reshape around it (``myc/frontend/linalg_library.py``), so one
reverse rule serves both.  ``solve_triangular`` reads only the named triangle of ``a``
(SciPy's contract), ``trans`` solving with its transpose.  ``slogdet`` is two primitives,
``det_sign`` (piecewise constant: no derivative) and ``logabsdet``; ``eigh`` is two too,
``eigh_values`` and ``eigh_vectors`` (LAPACK runs once for each that a program uses).

The reverse and forward rules are compositions of these primitives and the array
primitives (``myc/prims/linalg_rules.py``), so derivatives of any order work.  The shape
rules (``Primitive.infer``) raise NumPy's own errors; the tracer reports them at the
user's line, and a singular or non-positive-definite matrix met at run time is NumPy's
``LinAlgError`` there too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import MycShapeError, MycValueError
from myc.prims.abstract import AArray, AScalar, as_abstract
from myc.prims.registry import register

LinAlgError = np.linalg.LinAlgError


_abs = as_abstract  # (one definition: ``myc.prims.abstract``)


def _float_dtype(*dts: np.dtype) -> np.dtype:
    """NumPy's result dtype for its linalg routines: float32 stays, the rest is float64."""
    out = np.result_type(*dts)
    if out.kind == "f" and out.itemsize <= 4:
        return np.dtype(np.float32)
    if out.kind not in "fbiu":
        raise TypeError(f"linear algebra on arrays of dtype {out} is not supported")
    return np.dtype(np.float64)


def _square(a: Any, what: str) -> AArray:
    a = _abs(a)
    if a.ndim < 2:
        raise MycShapeError(f"{what}: {a.ndim}-dimensional array given; the array must be "
                            "at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise MycShapeError(f"{what}: the last 2 dimensions of the array must be square, "
                            f"not {a.shape[-2]} x {a.shape[-1]}")
    return a


def _typed(rule, what: str):
    """A shape rule naming the NumPy function, and that function's run-time errors."""
    def infer(*args: Any) -> Any:
        return rule(what, *args)
    return infer


def _same_shape(what: str, a: Any) -> AArray:
    a = _square(a, what)
    return AArray(_float_dtype(a.dtype), a.shape)


def _batch_scalar(what: str, a: Any) -> AArray | AScalar:
    a = _square(a, what)
    dt = _float_dtype(a.dtype)
    return AArray(dt, a.shape[:-2]) if a.ndim > 2 else AScalar(dt, False)


def _solve_shape(what: str, a: Any, b: Any) -> AArray:
    a = _square(a, what)
    b = _abs(b)
    if b.ndim < 1 or (b.ndim >= 2 and b.shape[-2] != a.shape[-1]):
        raise MycShapeError(f"{what}: a is {a.shape[-2]} x {a.shape[-1]} but the right-hand "
                            f"side b has {b.shape[-2] if b.ndim >= 2 else 'no'} rows")
    if b.ndim < 2:
        raise MycShapeError(f"{what}: the right-hand side b must be a vector or matrices")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise MycShapeError(f"{what}: the stacks of a {a.shape[:-2]} and b {b.shape[:-2]} "
                            "do not broadcast") from None
    return AArray(_float_dtype(a.dtype, b.dtype), batch + b.shape[-2:])


def _linsolve(a, b):
    return np.linalg.solve(a, b)


def _trans(trans: Any) -> int:
    t = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1, "n": 0, "t": 1, "c": 1}.get(trans)
    if t is None or isinstance(trans, bool):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', not "
                         f"{trans!r}")
    return t


def _triangle(a, lower):
    return np.tril(a) if lower else np.triu(a)


def _solve_triangular(a, b, lower, trans):
    t = _triangle(np.asarray(a), bool(lower))
    if _trans(trans):
        t = np.swapaxes(t, -1, -2)
    return np.linalg.solve(t, b)


def _solve_triangular_shape(what, a, b, lower, trans):
    _trans(trans)
    return _solve_shape(what, a, b)


def _slogdet_sign(a):
    return np.linalg.slogdet(a)[0]


def _logabsdet(a):
    return np.linalg.slogdet(a)[1]


def _raising(impl, what: str):
    """NumPy's ``LinAlgError`` (singular, not positive definite) as a ``MycValueError``
    naming the function; the host step reports it at the user's line."""
    def run(*args: Any) -> Any:
        try:
            return impl(*args)
        except LinAlgError as exc:
            raise MycValueError(f"{what}: {str(exc).lower()}") from None
    run.__name__ = getattr(impl, "__name__", what)
    return run


def _eigh_values(a):
    return np.linalg.eigh(a)[0]


def _eigh_vectors(a):
    return np.linalg.eigh(a)[1]


def _eigh_values_shape(what: str, a: Any) -> AArray:
    a = _square(a, what)
    return AArray(_float_dtype(a.dtype), a.shape[:-1])


def _svd_u(a):
    return np.linalg.svd(a, full_matrices=False)[0]


def _svd_s(a):
    return np.linalg.svd(a, compute_uv=False)


def _svd_vt(a):
    return np.linalg.svd(a, full_matrices=False)[2]


def _svd_shapes(what: str, a: Any) -> tuple[AArray, int, int, int]:
    a = _abs(a)
    if a.ndim < 2:
        raise MycShapeError(f"{what}: {a.ndim}-dimensional array given; the array must be "
                            "at least two-dimensional")
    m, n = a.shape[-2:]
    return a, m, n, min(m, n)


def _svd_u_shape(what: str, a: Any) -> AArray:
    a, m, _n, k = _svd_shapes(what, a)
    return AArray(_float_dtype(a.dtype), a.shape[:-2] + (m, k))


def _svd_s_shape(what: str, a: Any) -> AArray:
    a, _m, _n, k = _svd_shapes(what, a)
    return AArray(_float_dtype(a.dtype), a.shape[:-2] + (k,))


def _svd_vt_shape(what: str, a: Any) -> AArray:
    a, _m, n, k = _svd_shapes(what, a)
    return AArray(_float_dtype(a.dtype), a.shape[:-2] + (k, n))


_PRIMS = [
    ("cholesky", "a", np.linalg.cholesky, _same_shape, True, "np.linalg.cholesky"),
    ("linsolve", "a b", _linsolve, _solve_shape, True, "solve"),
    ("solve_triangular", "a b lower trans", _solve_triangular, _solve_triangular_shape,
     True, "solve_triangular"),
    ("inv", "a", np.linalg.inv, _same_shape, True, "np.linalg.inv"),
    ("det", "a", np.linalg.det, _batch_scalar, True, "np.linalg.det"),
    ("logabsdet", "a", _logabsdet, _batch_scalar, True, "np.linalg.slogdet"),
    ("det_sign", "a", _slogdet_sign, _batch_scalar, False, "np.linalg.slogdet"),
    # np.linalg.eigh (lower triangle read): eigenvalues ascending, eigenvectors in columns
    ("eigh_values", "a", _eigh_values, _eigh_values_shape, True, "np.linalg.eigh"),
    ("eigh_vectors", "a", _eigh_vectors, _same_shape, True, "np.linalg.eigh"),
    # np.linalg.svd, reduced (full_matrices=False): u (..., m, k), s (..., k), vt (..., k, n)
    ("svd_u", "a", _svd_u, _svd_u_shape, True, "np.linalg.svd"),
    ("svd_s", "a", _svd_s, _svd_s_shape, True, "np.linalg.svd"),
    ("svd_vt", "a", _svd_vt, _svd_vt_shape, True, "np.linalg.svd"),
]

for _name, _params, _impl, _infer, _diff, _what in _PRIMS:
    # (LinAlgError: singular, not positive definite, no convergence on nan)
    register(_name, _params, _raising(_impl, _what), differentiable=_diff,
             may_fail=_name not in ("det", "logabsdet", "det_sign")).infer = \
        _typed(_infer, _what)


def _tri_mask(n: int, lower: bool) -> np.ndarray:
    """The boolean mask of the lower (or upper) triangle of an ``n`` x ``n`` matrix."""
    m = np.tri(n, n, 0, dtype=bool)
    return m if lower else m.T


register("tri_mask", "n lower", _tri_mask, differentiable=False)


def _static(what: str):
    def rule(*args: Any) -> Any:
        from myc.errors import MycTypeError

        raise MycTypeError(f"{what} must be known when the program is compiled, not "
                           "computed from array or float data")
    return rule


def _as_bool(v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_, int, np.integer)):
        raise TypeError(f"expected a bool, got {type(v).__name__}")
    return bool(v)


register("linalg_trans", "trans", _trans, differentiable=False).infer = _static(
    "solve_triangular's trans=")
register("linalg_bool", "flag", _as_bool, differentiable=False).infer = _static(
    "the lower= flag")


def _pinv_rtol(shape: tuple, dtype: Any) -> float:
    """``np.linalg.pinv``'s default relative cutoff: ``max(M, N) * eps``."""
    return float(max(shape[-2:]) * np.finfo(dtype).eps)


register("pinv_rtol", "shape dtype", _pinv_rtol, differentiable=False).infer = _static(
    "np.linalg.pinv's shape and dtype")
