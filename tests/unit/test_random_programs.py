"""Random programs in the myc subset: myc's reference evaluator must agree with CPython.

``tests/progen.py`` generates the source of ``def f(a, b, x):`` bodies full of
arithmetic, NumPy calls, reductions, branches, loops with break/continue, closures and
tuples.  Each program is written to a real file (myc reads source with ``inspect``),
imported, run by plain Python and by ``myc.jit(f, backend="interp")``, and the results
compared.  On failure the program's source is printed (``note``) and is in the
assertion message.
"""

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

try:
    from tests import progen
except ImportError:  # run from somewhere that does not put the repo root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests import progen

import myc

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
F64_TOL = {"rtol": 1e-9, "atol": 1e-12}
F32_TOL = {"rtol": 1e-5, "atol": 1e-6}


@pytest.fixture(scope="module")
def progdir(tmp_path_factory):
    return tmp_path_factory.mktemp("progen")


@pytest.fixture(scope="module", params=["interp", "cpu"])
def jit(request):
    """Both the reference evaluator and the compiled path (specialization, guards,
    fusion into LLVM kernels) must agree with CPython."""
    if importlib.util.find_spec("myc.api") is None:
        pytest.skip("myc.api (myc.jit) is not written yet")
    return lambda f: myc.jit(f, backend=request.param)


def run_python(f, args):
    """Plain CPython result; by construction it neither raises nor warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            return f(*args)


def check_result(got, expected, prog, tol):
    outs_g, outs_e = got, expected
    if len(prog.ret) > 1:
        assert isinstance(got, tuple) and len(got) == len(prog.ret), (
            f"expected a {len(prog.ret)}-tuple, got {got!r}\n{prog.source}"
        )
    else:
        outs_g, outs_e = (got,), (expected,)
    for i, (g, e) in enumerate(zip(outs_g, outs_e)):
        g, e = np.asarray(g), np.asarray(e)
        where = f"output {i}" if len(prog.ret) > 1 else "output"
        assert g.shape == e.shape, f"{where}: shape {g.shape} != {e.shape}\n{prog.source}"
        assert g.dtype == e.dtype, f"{where}: dtype {g.dtype} != {e.dtype}\n{prog.source}"
        np.testing.assert_allclose(g, e, err_msg=f"{where} differs\n{prog.source}", **tol)


def compare(prog, args, progdir, jit, tol):
    note(prog.source)
    f, modname = progen.load(prog, progdir)
    try:
        a, b, x = args
        x_before = x.copy()
        try:
            expected = run_python(f, args)
        except Exception:  # the generator should never produce this
            assume(False)
        np.testing.assert_array_equal(x, x_before, err_msg="plain Python mutated x")
        got = jit(f)(a, b, x)
        np.testing.assert_array_equal(x, x_before, err_msg=f"myc mutated x\n{prog.source}")
        check_result(got, expected, prog, tol)
    finally:
        sys.modules.pop(modname, None)


@SETTINGS
@given(progen.program(), st.data())
def test_interp_agrees_with_python(progdir, jit, prog, data):
    args = data.draw(progen.arguments(prog), label="args (a, b, x)")
    compare(prog, args, progdir, jit, F64_TOL)


@SETTINGS
@given(progen.tuple_program(), st.data())
def test_interp_agrees_with_python_tuple_result(progdir, jit, prog, data):
    args = data.draw(progen.arguments(prog), label="args (a, b, x)")
    compare(prog, args, progdir, jit, F64_TOL)


@settings(SETTINGS, max_examples=40)
@given(progen.f32_program(), st.data())
def test_interp_float32_in_float32_out(progdir, jit, prog, data):
    args = data.draw(progen.arguments(prog), label="args (a, b, x)")
    assert args[2].dtype == np.float32
    compare(prog, args, progdir, jit, F32_TOL)


@settings(SETTINGS, max_examples=150)
@given(st.one_of(progen.program(), progen.tuple_program(), progen.f32_program()), st.data())
def test_generated_programs_run_in_plain_python(progdir, prog, data):
    """The generator's own invariants: runs, finite, right kinds/shapes/dtypes, no mutation."""
    note(prog.source)
    args = data.draw(progen.arguments(prog), label="args (a, b, x)")
    f, modname = progen.load(prog, progdir)
    try:
        x_before = args[2].copy()
        out = run_python(f, args)
        np.testing.assert_array_equal(args[2], x_before)
    finally:
        sys.modules.pop(modname, None)
    outs = out if len(prog.ret) > 1 else (out,)
    assert isinstance(outs, tuple) and len(outs) == len(prog.ret)
    for o, kind in zip(outs, prog.ret):
        o = np.asarray(o)
        assert np.all(np.isfinite(o))
        if kind == "s":
            assert o.shape == ()
        else:
            assert o.shape == prog.shape and o.dtype == np.dtype(prog.dtype)


# -- reproducers of bugs the random programs found ----------------------------------------


def _apply_twice(fn, z):
    return fn(fn(z))


def _negative_default_through_value(a):
    g = lambda t, k=-0.75: t * k
    return _apply_twice(g, a)


def test_found_negative_default_of_function_value(jit):
    assert jit(_negative_default_through_value)(0.5) == _negative_default_through_value(0.5)
