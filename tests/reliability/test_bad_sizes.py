"""Bad reshape sizes and impossible allocations are located ``MycError``s everywhere.

``x.reshape(2.0, 3)`` was accepted by the CPU backend (Python raises TypeError),
``x.reshape(-2, -1)`` raised a bare ValueError from the code generator, and a 4 TiB
broadcast input gave a bare ``MemoryError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def float_size(x):
    return x.reshape(2.0, 3)


def bool_size(x):
    return x.reshape(True, 6)


def two_unknown(x):
    return x.reshape(-2, -1)


def other_negative(x):
    return x.reshape(-2, 3)


def double(x):
    return x * 2.0


def add(x, y):
    return x + y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, exc, words", [
    (float_size, myc.MycTypeError, "'float' object cannot be interpreted as an integer"),
    (bool_size, myc.MycTypeError, "an integer is required"),
    (two_unknown, myc.MycShapeError, "only specify one unknown dimension"),
], ids=lambda v: getattr(v, "__name__", None))
def test_bad_reshape_sizes(backend, fn, exc, words):
    x = np.arange(6.0)
    with pytest.raises(exc, match=words) as info:
        myc.jit(fn, backend=backend)(x)
    assert info.value.lineno == fn.__code__.co_firstlineno + 1
    with pytest.raises(Exception) as numpy_says:  # the same kind of error as NumPy's
        fn(x)
    assert isinstance(numpy_says.value, TypeError if exc is myc.MycTypeError else ValueError)


@pytest.mark.parametrize("backend", BACKENDS)
def test_any_negative_size_is_the_unknown_one(backend):
    np.testing.assert_array_equal(myc.jit(other_negative, backend=backend)(np.arange(6.0)),
                                  np.arange(6.0).reshape(-2, 3))


HUGE = np.broadcast_to(np.float64(1.0), (1 << 20, 1 << 19))  # 4 TiB in 8 bytes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stepped", [False, True], ids=["native", "stepped"])
def test_impossible_allocation_is_a_located_myc_error(backend, stepped, monkeypatch):
    if stepped:
        monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    with pytest.raises(myc.MycMemoryError, match=r"4\.00 TiB.*\(1048576, 524288\)") as info:
        myc.jit(double, backend=backend)(HUGE)
    assert info.value.lineno == double.__code__.co_firstlineno + 1
    assert isinstance(info.value, myc.MycRuntimeError)
    col, row = np.ones((1 << 20, 1)), np.ones(1 << 19)  # a 4 TiB broadcast result
    with pytest.raises(myc.MycMemoryError, match="TiB") as info:
        myc.jit(add, backend=backend)(col, row)
    assert info.value.lineno == add.__code__.co_firstlineno + 1
