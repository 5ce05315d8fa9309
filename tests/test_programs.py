"""Run every program in ``tests/programs`` through myc and compare with CPython.

Each registered ``(func, args)`` pair is called once as plain Python (the
reference) and once through ``myc.jit(func, backend=...)``.  Results must have
the same structure (tuples recursively), the same kinds of scalars and the same
array dtypes and shapes, and agree numerically.  Inputs must not be mutated.
"""

import ast
import copy
import inspect
import time

import numpy as np
import pytest

import myc

try:
    from tests.programs import all_cases
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from programs import all_cases

try:
    from tests.backends import BACKENDS
except ModuleNotFoundError:  # plain `pytest` puts tests/, not the repo root, on sys.path
    from backends import BACKENDS

RTOL = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-5}
ATOL = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-5}


def _params():
    params = []
    for func, arg_tuples in all_cases():
        module = func.__module__.rsplit(".", 1)[-1]
        for i, args in enumerate(arg_tuples):
            params.append(pytest.param(func, args, id=f"{module}.{func.__name__}-{i}"))
    return params


PROGRAM_CASES = _params()


# --- comparison helpers -------------------------------------------------------


def _kind(x):
    """A dtype describing a leaf value: Python and NumPy scalars of one kind agree."""
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    if isinstance(x, (np.generic, np.ndarray)):
        return x.dtype
    raise TypeError(f"unexpected leaf of type {type(x).__name__}: {x!r}")


def _is_leaf(x):
    return isinstance(x, (bool, int, float, np.generic, np.ndarray))


def assert_same(got, expected, path="result"):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple), f"{path}: expected a tuple, got {type(got).__name__}"
        assert len(got) == len(expected), f"{path}: tuple length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{path}[{i}]")
        return
    assert _is_leaf(expected), f"{path}: reference produced {type(expected).__name__}"
    assert _is_leaf(got), f"{path}: expected a number or array, got {type(got).__name__}: {got!r}"
    ek, gk = _kind(expected), _kind(got)
    assert gk == ek, f"{path}: dtype {gk} != expected {ek}"
    e_shape, g_shape = np.shape(expected), np.shape(got)
    if isinstance(expected, np.ndarray) and expected.ndim > 0:
        assert isinstance(got, np.ndarray), f"{path}: expected an array, got {type(got).__name__}"
    assert g_shape == e_shape, f"{path}: shape {g_shape} != expected {e_shape}"
    if ek.kind == "f":
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(expected), rtol=RTOL[ek], atol=ATOL[ek], err_msg=path
        )
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected), err_msg=path)


def assert_unchanged(now, before, path="args"):
    """Exact equality, dtype included, between an argument and its snapshot."""
    if isinstance(before, tuple):
        assert isinstance(now, tuple) and len(now) == len(before), f"{path} changed structure"
        for i, (n, b) in enumerate(zip(now, before)):
            assert_unchanged(n, b, f"{path}[{i}]")
        return
    if isinstance(before, np.ndarray):
        assert now.dtype == before.dtype and now.shape == before.shape, f"{path} changed"
        assert np.array_equal(now, before, equal_nan=True), f"{path} was mutated"
    else:
        assert type(now) is type(before) and (now == before or now != now), f"{path} changed"


# --- tests --------------------------------------------------------------------


def test_registry_is_large_and_distinct():
    funcs = [f for f, _ in all_cases()]
    assert len(funcs) >= 90
    assert len({(f.__module__, f.__name__) for f in funcs}) == len(funcs)


_FORBIDDEN = (
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Dict, ast.Set,
    ast.Global, ast.Nonlocal, ast.Try, ast.With, ast.Yield, ast.YieldFrom, ast.Delete,
    ast.Starred, ast.ClassDef, ast.Await, ast.JoinedStr, ast.AsyncFunctionDef,
)  # fmt: skip


def _subset_violations(tree):
    allowed_lists = set()
    for node in ast.walk(tree):
        # a list literal is allowed only as the data of np.array([...])
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "np.array" and node.args:
            for sub in ast.walk(node.args[0]):
                if isinstance(sub, ast.List):
                    allowed_lists.add(id(sub))
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, _FORBIDDEN):
            yield f"line {line}: {type(node).__name__}"
        elif isinstance(node, ast.List) and id(node) not in allowed_lists:
            yield f"line {line}: list literal"
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            yield f"line {line}: item/attribute assignment"
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            yield f"line {line}: string value"
        elif isinstance(node, ast.Name) and node.id == "print":
            yield f"line {line}: print"
        elif isinstance(node, ast.arguments) and (node.vararg or node.kwarg or node.kwonlyargs):
            yield f"line {line}: star-args or keyword-only arguments"


def test_programs_stay_in_subset():
    """Every function in the program modules (helpers too) uses only the myc subset."""
    problems = []
    modules = {inspect.getmodule(func) for func, _ in all_cases()}
    for module in sorted(modules, key=lambda m: m.__name__):
        for fdef in ast.parse(inspect.getsource(module)).body:
            if isinstance(fdef, ast.FunctionDef):
                fdef.decorator_list = []  # @case(...) runs in Python, not in myc
                for p in _subset_violations(fdef):
                    problems.append(f"{module.__name__}.{fdef.name}: {p}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("func,args", PROGRAM_CASES)
def test_reference_runs_in_python(func, args):
    """The programs themselves are valid Python with the documented value semantics."""
    snapshot = copy.deepcopy(args)
    with np.errstate(all="raise"):
        func(*copy.deepcopy(args))
    func(*args)
    assert_unchanged(args, snapshot)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("func,args", PROGRAM_CASES)
def test_program(func, args, backend):
    snapshot = copy.deepcopy(args)
    expected = func(*copy.deepcopy(args))
    got = myc.jit(func, backend=backend)(*args)
    assert_unchanged(args, snapshot)
    assert_same(got, expected)


def _count_up(n):
    acc = 0.0
    i = 0
    while i < n:
        acc = acc + 0.5
        i += 1
    return acc, i


@pytest.mark.parametrize("backend", BACKENDS)
def test_long_while_loop(backend):
    n = 100_000
    t0 = time.perf_counter()
    got = myc.jit(_count_up, backend=backend)(n)
    elapsed = time.perf_counter() - t0
    assert_same(got, _count_up(n))
    assert elapsed < 60.0, f"100k-iteration while loop took {elapsed:.1f}s"


def run_corpus_module(module: str, backend: str) -> int:
    """Every argument set of the corpus programs in ``module`` (the last part of its name)
    on ``backend`` against CPython, arguments unchanged; how many ran (error cases are
    left to the tests above).  The GPU corpus tests use it."""
    import copy

    import myc
    from tests.programs import all_cases

    ran = 0
    for func, arg_tuples in all_cases():
        if func.__module__.rsplit(".", 1)[-1] != module:
            continue
        for args in arg_tuples:
            try:
                want = func(*copy.deepcopy(args))
            except Exception:  # noqa: BLE001, S112 - an error case: checked above
                continue
            snapshot = copy.deepcopy(args)
            got = myc.jit(func, backend=backend)(*args)
            assert_same(got, want, f"{func.__name__}{args!r:.80}")
            assert_unchanged(args, snapshot)
            ran += 1
    return ran
