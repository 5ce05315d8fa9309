"""Gradients on ``backend="opencl"`` against the reference evaluator, over the whole AD
program corpus (``tests/ad/ad_programs.py``): every program whose result is a float
scalar, differentiated in reverse mode with respect to its float arguments."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.ad import ad_programs as P
from tests.gradcheck import _normalize_argnums, assert_tree_close

pytest.importorskip("pyopencl")


def _scalar_float(v) -> bool:
    return isinstance(v, float) or (isinstance(v, np.generic) and v.dtype.kind == "f") or (
        isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind == "f")


CASES = [pytest.param(fn, args, argnums, id=f"{fn.__name__}-{i}")
         for fn, args, argnums, _tags, i in P.PROGRAMS]


@pytest.mark.parametrize("fn, args, argnums", CASES)
def test_gradient_matches_the_evaluator(fn, args, argnums):
    if not _scalar_float(fn(*args)):
        pytest.skip("not a float scalar result")
    vg = myc.value_and_grad(fn, argnums=_normalize_argnums(argnums, args))
    want = myc.jit(vg, backend="interp")(*args)
    got = myc.jit(vg, backend="opencl")(*args)
    assert_tree_close(got, want, 2e-5, 1e-6, fn.__name__)
