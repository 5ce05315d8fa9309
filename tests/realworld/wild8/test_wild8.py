"""The eighth corpus (tests/realworld/wild8): a published solver written as scalar loops
over cells.  Its objective's gradient against central differences and its value against
NumPy's (cpu backend), the interpreter backend's value and gradient, and that its loops
compile to loop nodes: the program myc specializes does not grow with the grid."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc
from tests.realworld.wild.run import check
from tests.realworld.wild8 import PROGRAMS
from tests.realworld.wild8 import stable_fluids as fluids

PACKAGE = "tests.realworld.wild8"


@pytest.mark.parametrize("name", PROGRAMS)
def test_value_and_gradient_match_numpy(name):
    check(name, PACKAGE)


def test_interpreter_backend_agrees():
    args = fluids.make_state()
    want = fluids.objective(*args)
    assert myc.jit(fluids.objective, backend="interp")(*args) == pytest.approx(
        want, rel=1e-12)
    g_int = myc.grad(fluids.objective, (1, 2), backend="interp")(*args)
    g_cpu = myc.grad(fluids.objective, (1, 2))(*args)
    for a, b in zip(g_int, g_cpu, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _density(n):
    def density(dens, source, u, v):
        return fluids.density_step(n, dens, source, u, v, 0.001, 0.1)
    return density


@pytest.mark.parametrize("n", [12, 24])
def test_density_step_matches_numpy_exactly_without_a_graph_break(n):
    args = fluids.make_state(n, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph break, no fallback to the evaluator
        got = myc.jit(_density(n))(*args)
    np.testing.assert_allclose(got, _density(n)(*args), rtol=0, atol=1e-12)


def test_the_programs_size_does_not_grow_with_the_grid():
    sizes = []
    for n in (16, 32):
        text = myc.ir(_density(n), *fluids.make_state(n), stage="typed")
        assert "= loop(" in text
        sizes.append(len(text.splitlines()))
    assert sizes[1] <= sizes[0] + 10, sizes
