"""One rule for int arguments in every transform: they do not vary.

``grad`` refuses them; ``jvp`` took a nonzero tangent for one and dropped it silently
(``jvp(mul, (3, 2.0), (1.0, 1.0))`` gave 3.0, not 5.0). Now its tangent must be None,
zero or a float0 array, and a nonzero one is a ``MycTypeError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.backends import BACKENDS


def mul(a, b):
    return a * b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tangent", [1.0, 1, True, np.ones(()), np.float64(0.5)],
                         ids=repr)
def test_nonzero_int_tangent_is_refused(backend, tangent):
    with pytest.raises(myc.MycTypeError, match="tangent 1 is nonzero.*int"):
        myc.jvp(myc.jit(mul, backend=backend), (3, 2.0), (tangent, 1.0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tangent", [None, 0, 0.0, False, np.zeros((), myc.float0)],
                         ids=repr)
def test_zero_int_tangents_are_accepted(backend, tangent):
    value, tan = myc.jvp(myc.jit(mul, backend=backend), (3, 2.0), (tangent, 1.0))
    assert (value, tan) == (6.0, 3.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_array_and_nested_tuples(backend):
    f = myc.jit(lambda p, s: p[0] * p[1] * s, backend=backend)
    n = np.arange(3)
    value, tan = myc.jvp(f, ((n, 2.0), 1.5), ((None, 1.0), 0.0))
    np.testing.assert_allclose(tan, n * 1.5)
    with pytest.raises(myc.MycTypeError, match=r"tangent 1\[0\] is nonzero"):
        myc.jvp(f, ((n, 2.0), 1.5), ((np.ones(3), 1.0), 0.0))
    with pytest.raises(myc.MycShapeError):
        myc.jvp(f, ((n, 2.0), 1.5), ((np.zeros(2, myc.float0), 1.0), 0.0))


def test_grad_refuses_int_arguments_alike():
    with pytest.raises(myc.MycTypeError, match="integer or bool"):
        myc.grad(mul)(3, 2.0)
