"""ndarray subclasses whose semantics compiled code would drop are refused.

A masked array was silently unmasked on cpu/opencl (its sum 6.0 where the evaluator and
NumPy give 4.0).  Masked arrays, ``np.matrix`` and any subclass overriding arithmetic,
indexing or NumPy's dispatch are a ``MycTypeError`` on every backend; a subclass with no
behaviour of its own (and ``np.memmap``) is computed with as a plain array.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def total(x):
    return np.sum(x)


class Tagged(np.ndarray):
    """A subclass that only carries an attribute."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", None)


class Doubling(np.ndarray):
    def __add__(self, other):
        return np.add(np.asarray(self), other) * 2


class Dispatching(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented


def masked():
    return np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])


REFUSED = {
    "masked": (masked, "masked array"),
    "matrix": (lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]), "np.matrix"),
    "operator": (lambda: np.arange(3.0).view(Doubling), "__add__"),
    "ufunc": (lambda: np.arange(3.0).view(Dispatching), "__array_ufunc__"),
}


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_semantic_subclasses_are_refused(backend, kind):
    make, words = REFUSED[kind]
    with pytest.raises(myc.MycTypeError, match=words):
        myc.jit(total, backend=backend)(make())
    with pytest.raises(myc.MycTypeError, match=words):
        myc.grad(myc.jit(total, backend=backend))(make())


@pytest.mark.parametrize("backend", BACKENDS)
def test_plain_subclass_and_memmap_are_plain_arrays(backend, tmp_path):
    f = myc.jit(lambda x: x * 2.0, backend=backend)
    t = np.arange(4.0).view(Tagged)
    out = f(t)
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, np.arange(4.0) * 2.0)
    m = np.memmap(tmp_path / "m.bin", dtype=np.float64, mode="w+", shape=(4,))
    m[:] = np.arange(4.0)
    np.testing.assert_array_equal(f(m), np.arange(4.0) * 2.0)
    assert type(f(m)) is np.ndarray
