"""API misuse is a ``MycError`` saying what was expected, never a Python internal one.

A pullback called with the wrong number of arguments raised a plain TypeError naming
an inner function; a tuple argument nested 2,000 deep raised an internal RecursionError.
Tuples may nest up to ``MAX_NESTING`` levels (documented in docs/errors.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.runtime.args import MAX_NESTING
from tests.backends import BACKENDS


def mul(x, y):
    return x * y


def unwrap(t, depth):
    for _ in range(depth):
        t = t[0]
    return t * 2.0


def nest(depth: int):
    t = 1.5
    for _ in range(depth):
        t = (t,)
    return t


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("args, kwargs, got", [((), {}, 0), ((1.0, 2.0), {}, 2),
                                              ((1.0,), {"extra": 1.0}, 2)])
def test_pullback_arity(backend, args, kwargs, got):
    _, pullback = myc.vjp(myc.jit(mul, backend=backend), 2.0, 3.0)
    with pytest.raises(myc.MycTypeError, match=f"takes 1 argument.*but {got} were given"):
        pullback(*args, **kwargs)
    assert pullback(1.0) == (3.0, 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nesting_limit(backend):
    f = myc.jit(unwrap, backend=backend)
    assert f(nest(MAX_NESTING), MAX_NESTING) == 3.0
    for depth in (MAX_NESTING + 1, 2000, 100_000):
        with pytest.raises(myc.MycTypeError, match=f"more than {MAX_NESTING} levels"):
            f(nest(depth), 0)


def test_nesting_limit_in_tangents_and_gradients():
    deep = nest(MAX_NESTING + 1)
    with pytest.raises(myc.MycTypeError, match="levels"):
        myc.grad(mul)(deep, 1.0)
    with pytest.raises(myc.MycTypeError, match="levels"):
        myc.jvp(mul, (deep, 3.0), (deep, 1.0))
    with pytest.raises(myc.MycTypeError):
        myc.jvp(mul, (2.0, 3.0), (deep, 1.0))
    _, pullback = myc.vjp(mul, np.ones(2), 3.0)
    with pytest.raises(myc.MycError):
        pullback(deep)
