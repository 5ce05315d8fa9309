"""NumPy's writes into an existing array by method or function: ``a.fill(v)``,
``a.sort(axis)``, ``np.copyto(dst, src, casting, where)``.  The variable holds the new
values afterwards, as CPython's does (names sharing its memory are refused if read);
inside loops the loop carries it; an object of the user's class calls its own method."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycError, MycValueError
from tests.backends import BACKENDS


def filled(a, n):
    y = a * 1.0
    y.fill(0.5)
    z = np.zeros(3, dtype=np.int64)
    z.fill(2.7)  # cast to the array's dtype, as NumPy's fill does
    for i in range(n):
        y.fill(float(i))
    return y, z


def sorted_in_place(a):
    y = a * 2.0
    y.sort()
    m = np.reshape(a, (2, 3)) * 1.0
    m.sort(axis=0)
    return y, m


def copied(a):
    y = np.zeros_like(a)
    np.copyto(y, a * 2.0)
    z = np.ones(6)
    np.copyto(z, a, where=a > 0)
    i = np.zeros(6, dtype=np.int32)
    np.copyto(i, a * 10.0, casting="unsafe")
    return y, z, i


PROGRAMS = [(filled, 2), (sorted_in_place,), (copied,)]


@pytest.mark.parametrize("case", PROGRAMS, ids=[c[0].__name__ for c in PROGRAMS])
@pytest.mark.parametrize("backend", BACKENDS)
def test_matches_numpy(case, backend):
    fn, *rest = case
    a = np.array([0.3, -1.2, 2.5, 0.0, -0.4, 1.1])
    want = fn(a.copy(), *rest)
    got = myc.jit(fn, backend=backend)(a, *rest)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == w.dtype


def test_gradient_through_an_in_place_sort():
    def loss(a):
        y = a * a
        y.sort()
        return np.sum(y * np.arange(4.0))

    x = np.array([0.3, -1.2, 2.5, 0.7])
    g = myc.grad(loss)(x)
    eps = 1e-6
    fd = np.array([(loss(x + eps * e) - loss(x - eps * e)) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(g, fd, rtol=1e-7)


class Bag:
    def __init__(self):
        self.w = np.ones(3)

    def fill(self, v):
        return self.w * v


def test_an_object_calls_its_own_method():
    def f(b, a):
        b.fill(2.0)
        return b.w + a

    np.testing.assert_array_equal(myc.jit(f)(Bag(), np.zeros(3)), np.ones(3))


def test_refusals_name_the_line():
    def on_list(a):
        xs = [3.0, 1.0]
        xs.sort()
        return a * xs[0]

    def aliased(a):
        y = a * 1.0
        z = y
        y.fill(0.0)
        return z

    def same_kind(a):
        i = np.zeros(3, dtype=np.int64)
        np.copyto(i, a)
        return i

    with pytest.raises(MycError, match=r"list\.sort\(\) is not supported") as info:
        myc.jit(on_list)(np.ones(3))
    assert "xs.sort()" in str(info.value)
    with pytest.raises(MycValueError, match="updated in place"):
        myc.jit(aliased)(np.ones(3))
    with pytest.raises(MycError, match="same_kind") as info:
        myc.jit(same_kind)(np.ones(3))
    assert "np.copyto(i, a)" in str(info.value)
