"""Symbolic sizes: polynomials in named dimensions (``N``, ``B``...) with integer
coefficients, for programs compiled once for every value of a size (``myc.aot`` with
``"f32[N,4]"``).

A :class:`Dim` stands where kernel IR and host programs hold an ``int`` size, stride or
count.  It supports what planning does with sizes (``+``, ``-``, ``*``, equality as
polynomial identity, ``prod``), and refuses ``int()``: a stage that needs a concrete
number must say how to compute it at run time (:meth:`Dim.terms`).  Polynomials are
found by :func:`fit`: the program is specialized at several sample sizes, and every
number that changes between them is interpolated, then checked on a sample not used to
fit it.  A ``SymFloat`` is a float constant computed from sizes (``x.sum() / n``):
``coef * monomial`` or ``coef / monomial``.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations_with_replacement
from math import prod

import numpy as np

Monomial = tuple[str, ...]  # sorted symbol names, repeated for powers; () is 1


class Dim:
    """An integer polynomial in named sizes; never a constant (constants are ints)."""

    __slots__ = ("_terms", "_hash")

    def __init__(self, terms: dict[Monomial, int]):
        self._terms = {m: c for m, c in sorted(terms.items()) if c}
        self._hash = hash(tuple(self._terms.items()))

    @staticmethod
    def of(terms: dict[Monomial, int]) -> int | Dim:
        """The polynomial, or a plain ``int`` when it has no symbol left."""
        terms = {m: c for m, c in terms.items() if c}
        if all(m == () for m in terms):
            return terms.get((), 0)
        return Dim(terms)

    @staticmethod
    def symbol(name: str) -> Dim:
        return Dim({(name,): 1})

    def terms(self) -> dict[Monomial, int]:
        return dict(self._terms)

    @property
    def symbols(self) -> set[str]:
        return {s for m in self._terms for s in m}

    @property
    def degree(self) -> int:
        return max(len(m) for m in self._terms)

    def evaluate(self, env: dict[str, int]) -> int:
        return sum(c * prod(env[s] for s in m) for m, c in self._terms.items())

    # ------------------------------------------------------------------ arithmetic
    @staticmethod
    def _terms_of(x: int | Dim) -> dict[Monomial, int]:
        if isinstance(x, Dim):
            return x._terms
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"not a size: {x!r}")
        return {(): x}

    def __add__(self, other):
        if not isinstance(other, (int, Dim)):
            return NotImplemented
        out = dict(self._terms)
        for m, c in self._terms_of(other).items():
            out[m] = out.get(m, 0) + c
        return Dim.of(out)

    __radd__ = __add__

    def __neg__(self):
        return Dim.of({m: -c for m, c in self._terms.items()})

    def __sub__(self, other):
        if not isinstance(other, (int, Dim)):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if not isinstance(other, (int, Dim)):
            return NotImplemented
        out: dict[Monomial, int] = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in self._terms_of(other).items():
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return Dim.of(out)

    __rmul__ = __mul__

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and self._terms == other._terms

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    # Planning compares sizes with small constants (``size != 1``, ``d >= 0``): a
    # symbolic size is taken as large (the library checks its lower bound at run time).
    def _big(self) -> int:
        return self.evaluate({s: 1 << 20 for s in self.symbols})

    def __lt__(self, other):
        return self._big() < (other._big() if isinstance(other, Dim) else other)

    def __le__(self, other):
        return self._big() <= (other._big() if isinstance(other, Dim) else other)

    def __gt__(self, other):
        return self._big() > (other._big() if isinstance(other, Dim) else other)

    def __ge__(self, other):
        return self._big() >= (other._big() if isinstance(other, Dim) else other)

    def __int__(self):
        raise TypeError(f"the size {self} is only known at run time")

    __index__ = __int__

    def __repr__(self) -> str:
        parts = []
        for m, c in self._terms.items():
            name = "*".join(m)
            if not m:
                parts.append(str(c))
            elif c == 1:
                parts.append(name)
            else:
                parts.append(f"{c}*{name}")
        return "+".join(parts).replace("+-", "-")

    __str__ = __repr__


class SymFloat:
    """``coef * monomial`` (``inverse=False``) or ``coef / monomial``: a float constant
    of the program that depends on sizes."""

    __slots__ = ("coef", "mono", "inverse")

    def __init__(self, coef: float, mono: Monomial, inverse: bool):
        self.coef, self.mono, self.inverse = float(coef), mono, inverse

    def evaluate(self, env: dict[str, int]) -> float:
        m = float(prod(env[s] for s in self.mono))
        return self.coef / m if self.inverse else self.coef * m

    def __float__(self):
        raise TypeError(f"the constant {self} is only known at run time")

    def __eq__(self, other) -> bool:
        return isinstance(other, SymFloat) and (self.coef, self.mono, self.inverse) == (
            other.coef, other.mono, other.inverse)

    def __hash__(self) -> int:
        return hash((self.coef, self.mono, self.inverse))

    def __repr__(self) -> str:
        m = "*".join(self.mono)
        return f"{self.coef!r}/{m}" if self.inverse else f"{self.coef!r}*{m}"

    def hex(self) -> str:  # Const's structural key calls float.hex
        return repr(self)


def monomials(symbols: list[str], degree: int = 2) -> list[Monomial]:
    out: list[Monomial] = [()]
    for d in range(1, degree + 1):
        out.extend(combinations_with_replacement(sorted(symbols), d))
    return out


def sample_points(symbols: list[str], base: int = 101) -> list[dict[str, int]]:
    """Points at which a degree-2 polynomial in ``symbols`` is determined (the base
    point, two steps along each symbol, one along each pair), then one more point to
    check the fit on.  Sizes are distinct primes-ish numbers away from the small sizes
    programs use, so no two symbols (or a symbol and a constant size) coincide."""
    bases = {s: base + 10 * i for i, s in enumerate(symbols)}
    steps = {s: 6 + 2 * i for i, s in enumerate(symbols)}
    pts = [dict(bases)]
    for s in symbols:
        for k in (1, 2):
            p = dict(bases)
            p[s] += k * steps[s]
            pts.append(p)
    for i, s in enumerate(symbols):
        for t in symbols[i + 1:]:
            p = dict(bases)
            p[s] += steps[s]
            p[t] += steps[t]
            pts.append(p)
    pts.append({s: 2 * v + 37 + 4 * i for i, (s, v) in enumerate(bases.items())})
    return pts


class FitError(ValueError):
    pass


def fit(values: list, points: list[dict[str, int]],
        single: bool = False) -> int | float | Dim | SymFloat:
    """The number (``int``/``float``) or size expression that takes ``values[i]`` at
    ``points[i]``; the last point checks the fit.  ``single``: the floats were rounded
    to float32 (the fit must then reproduce them after that rounding).  Raises
    :class:`FitError`."""
    first = values[0]
    if all(v == first and type(v) is type(first) for v in values):
        return first
    symbols = sorted(points[0])
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        basis = monomials(symbols)
        coefs = _solve([[Fraction(prod(p[s] for s in m)) for m in basis] for p in points[:-1]],
                       [Fraction(v) for v in values[:-1]])
        if coefs is None or any(c.denominator != 1 for c in coefs):
            raise FitError("not a polynomial in the sizes")
        got = Dim.of({m: int(c) for m, c in zip(basis, coefs, strict=True)})
        check = got if isinstance(got, int) else got.evaluate(points[-1])
        if check != values[-1]:
            raise FitError("not a polynomial in the sizes")
        return got
    if all(isinstance(v, float) for v in values):
        rnd = (lambda x: float(np.float32(x))) if single else (lambda x: x)
        for m in monomials(symbols)[1:]:
            for inverse in (False, True):
                ms = [float(prod(p[s] for s in m)) for p in points]
                raw = values[0] * ms[0] if inverse else values[0] / ms[0]
                # the coefficient as a simple fraction (2/3 for a mean's gradient), so
                # the value computed at run time rounds like the one computed at trace
                for coef in (float(Fraction(raw).limit_denominator(1 << 20)), raw):
                    cand = SymFloat(coef, m, inverse)
                    if all(rnd(cand.evaluate(p)) == v for p, v in
                           zip(points, values, strict=True)):
                        return cand
        raise FitError("a float computed from the sizes in a way myc cannot follow")
    raise FitError("values of different kinds")


def _solve(rows: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Exact solution of a (possibly overdetermined, consistent) system by Gaussian
    elimination over fractions; ``None`` when it is singular or inconsistent."""
    n = len(rows[0])
    aug = [r[:] + [b] for r, b in zip(rows, rhs, strict=True)]
    piv_row = 0
    for col in range(n):
        pivot = next((r for r in range(piv_row, len(aug)) if aug[r][col] != 0), None)
        if pivot is None:
            return None
        aug[piv_row], aug[pivot] = aug[pivot], aug[piv_row]
        pv = aug[piv_row][col]
        aug[piv_row] = [x / pv for x in aug[piv_row]]
        for r in range(len(aug)):
            if r != piv_row and aug[r][col] != 0:
                f = aug[r][col]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[piv_row], strict=True)]
        piv_row += 1
    if any(row[-1] != 0 for row in aug[piv_row:]):
        return None
    return [aug[i][-1] for i in range(n)]
