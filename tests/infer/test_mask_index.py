"""``x[mask]`` with a boolean mask computed from data: the result's shape is data.  It was
typed as if the mask were all False (``float64[0]``), which gave ``x[x > 0.5].shape[0] ==
0`` silently and a gradient that crashed.  A selection only reduced compiles as a masked
reduction (``tests/runtime/test_masked_selection.py``); one whose shape the program needs
(a mask over leading axes, a selection returned) runs on the evaluator, with the warning
that says why, and is right."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import myc

X = np.linspace(0.1, 0.9, 6)


def count_selected(x):
    return x[x > 0.5].shape[0]


def ones_of_selected(x):
    return np.sum(np.ones_like(x[x > 0.5]))


def sq_selected(x):
    return np.sum(x[x > 0.5] ** 2)


def rows_selected(a):
    return np.sum(a[a[:, 0] > 0.3] ** 2) + np.sum(a[1, a[0] > 0.1])


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_values_match_numpy(backend):
    for fn in (count_selected, ones_of_selected, sq_selected):
        with warnings.catch_warnings():
            warnings.simplefilter("error", myc.MycFallbackWarning)
            got = myc.jit(fn, backend=backend)(X)
        assert got == fn(X), fn.__name__


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_gradients_scatter_into_the_selected_places(backend):
    g = myc.grad(sq_selected, backend=backend)(X)
    a = np.arange(12.0).reshape(3, 4) / 10
    with pytest.warns(myc.MycFallbackWarning, match="boolean-mask") if backend == "cpu" \
            else warnings.catch_warnings():
        ga = myc.grad(rows_selected, backend=backend)(a)
    np.testing.assert_allclose(g, 2 * X * (X > 0.5))
    want = 2 * a * (a[:, :1] > 0.3)
    want[1] += a[0] > 0.1
    np.testing.assert_allclose(ga, want)


def test_a_constant_mask_still_compiles():
    mask = np.array([True, False, True, False, True, False])

    def pick(x):
        return np.sum(x[mask])

    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)
        assert myc.jit(pick)(X) == pick(X)
