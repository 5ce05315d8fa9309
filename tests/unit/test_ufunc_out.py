"""NumPy's ``out=`` on ufuncs and ``np.clip``: the result written into the array given
(cast under NumPy's ``same_kind`` rule, broadcast to its shape), the call returning that
array.  The variable passed as ``out=`` holds the new values afterwards, as CPython's
does; other names for the same array are refused if read afterwards; the program's own
arguments are never written."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from myc.errors import MycError, MycTypeError, MycValueError
from tests.backends import BACKENDS


def chain(a, b):
    c = a * 1.0
    np.add(c, b, out=c)
    np.exp(c, out=(c,))
    r = np.multiply(c, 0.5, out=c)
    return r, c


def clipped(a):
    g = a * 3.0
    np.clip(g, -1.0, 2.0, out=g)
    h = a * 1.0
    np.clip(h, None, 0.5, out=h)
    k = a - 0.25
    k.clip(0.0, None, out=k)  # the array method
    return g, h, k


def broadcast_into(a):
    c = np.zeros((2, 3))
    np.add(c, a, out=c)
    np.subtract(c, 1.0, out=None)  # out=None: NumPy's plain call
    return c


def into_argument(a, b):
    np.maximum(a, b, out=a)
    return a * 2.0


def masked(a, b):
    q = np.divide(a, b, out=np.zeros_like(a), where=b > 0)  # the safe-division idiom
    c = np.ones_like(a)
    np.add(a, b, out=c, where=a > 0)
    return q, c


PROGRAMS = [chain, clipped, broadcast_into, into_argument, masked]


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
@pytest.mark.parametrize("backend", BACKENDS)
def test_out_matches_numpy(fn, backend):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=3), rng.normal(size=3)
    args = (a, b)[: fn.__code__.co_argcount]
    want = fn(*[x.copy() for x in args])
    before = [x.copy() for x in args]
    with np.errstate(all="ignore"):
        got = myc.jit(fn, backend=backend)(*args)
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        np.testing.assert_allclose(g, w, rtol=1e-15)
    for x, y in zip(args, before, strict=True):  # the caller's arrays: never written
        np.testing.assert_array_equal(x, y)


def test_gradient_through_out_matches_differences():
    def loss(a):
        r, c = chain(a, a[::-1])
        return np.sum(r * c)

    x = np.array([0.3, -0.4, 0.1])
    g = myc.grad(loss)(x)
    eps = 1e-6
    fd = np.array([(loss(x + eps * e) - loss(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(g, fd, rtol=1e-7)


def masked_domain(a, b):
    q = np.divide(a, b, out=np.zeros_like(a), where=b != 0)
    r = np.log(b, out=np.full_like(b, -3.0), where=b > 0)
    s = np.sqrt(a, out=np.zeros_like(a), where=a > 0)
    return np.sum(q * q) + np.sum(r * a) + np.sum(s)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_where_the_mask_is_off_is_zero_not_nan(backend):
    """The function's derivative at the masked-off inputs (1/0, log 0, sqrt 0) is
    infinite; the gradient there must still be 0 (was nan: "double where")."""
    a = np.array([0.7, -0.4, 0.0, 1.3])
    b = np.array([2.0, 0.0, -1.0, 0.5])
    with np.errstate(all="ignore"):
        want = masked_domain(a, b)
    assert myc.jit(masked_domain, backend=backend)(a, b) == pytest.approx(want, rel=1e-14)
    ga, gb = myc.grad(masked_domain, argnums=(0, 1), backend=backend)(a, b)
    assert np.all(np.isfinite(ga)) and np.all(np.isfinite(gb))
    eps = 1e-6
    for x, g, i, ks in ((a, ga, 0, (0, 1, 3)), (b, gb, 1, (0, 2, 3))):
        for k in ks:  # (a[2] = 0 and b[1] = 0 sit on a mask's edge)
            e = np.zeros(4)
            e[k] = eps
            hi = [a, b]
            lo = [a, b]
            hi[i], lo[i] = x + e, x - e
            with np.errstate(all="ignore"):
                fd = (masked_domain(*hi) - masked_domain(*lo)) / (2 * eps)
            assert g[k] == pytest.approx(fd, rel=1e-6, abs=1e-8)
    assert gb[1] == 0.0  # (every term masked off there)


def test_out_made_by_full_like_of_an_argument_is_not_a_write_into_it():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        myc.jit(masked_domain)(np.ones(2), np.ones(2))


def test_out_of_another_kind_is_refused_at_the_line():
    def to_int(a):
        i = np.zeros(3, dtype=np.int64)
        np.add(i, a, out=i)
        return i

    with pytest.raises(MycTypeError, match="same_kind") as info:
        myc.jit(to_int)(np.ones(3))
    assert "np.add(i, a, out=i)" in str(info.value)
    with pytest.raises(TypeError):  # NumPy's own refusal, for comparison
        to_int(np.ones(3))


def test_other_names_for_the_out_array_are_refused_if_read():
    def aliased(a):
        c = a * 1.0
        z = c
        np.add(c, 1.0, out=c)
        return z

    with pytest.raises(MycValueError, match="given as out=") as info:
        myc.jit(aliased)(np.ones(3))
    assert "return z" in str(info.value)


def test_two_outputs_are_refused_clearly():
    def two(a):
        np.add(a, 1.0, out=(a, a))
        return a

    with pytest.raises(MycError, match="out= takes one array"):
        myc.jit(two)(np.ones(3))


def test_out_of_a_reduction_method_is_refused_clearly():
    def into(a):
        s = np.zeros(())
        a.sum(out=s)
        return s

    with pytest.raises(MycError, match="out") as info:
        myc.jit(into)(np.ones(3))
    assert "a.sum(out=s)" in str(info.value)
