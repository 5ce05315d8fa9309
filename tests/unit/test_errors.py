"""Bad input gives a located ``MycError``, never an internal traceback.

The functions under test live in ``err_fixtures.py``; each marks the line its error
belongs to with ``# ERR``.  For every error we check the exception class, that the
message names the problem, that ``exc.loc.line`` is the marked line, that ``str(exc)``
shows ``file:line``, the source line and a caret under the construct, and that no
file of the compiler itself appears in it.
"""

import inspect
import os

import numpy as np
import pytest

import myc
from myc.errors import (
    MycError,
    MycIndexError,
    MycNameError,
    MycRuntimeError,
    MycShapeError,
    MycSyntaxError,
    MycTypeError,
    MycValueError,
)

try:
    from tests.unit import err_fixtures as F
except ModuleNotFoundError:  # plain `pytest` puts tests/unit, not the repo root, on sys.path
    import err_fixtures as F

INTERNAL_NAMES = ("myc/frontend", "myc/backends", "myc/ir", "myc/prims", "lower.py",
                  "interp.py", "Traceback")


def run(fn, *args, **kwargs):
    return myc.jit(fn, backend="interp")(*args, **kwargs)


def err_line(fn):
    """The line of ``fn``'s source that carries the ``# ERR`` marker."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, text in enumerate(lines) if text.rstrip().endswith("# ERR")]
    assert len(hits) == 1, f"{fn.__name__} must mark exactly one line with '# ERR'"
    return hits[0]


def def_line(fn):
    return inspect.getsourcelines(fn)[1]


def source_line(line):
    with open(F.__file__) as fh:
        return fh.read().splitlines()[line - 1]


def caret_text(exc):
    """The rendered source line from where the caret starts."""
    lines = str(exc).splitlines()
    for i, text in enumerate(lines[1:], 1):
        if text.strip() and set(text.strip()) == {"^"}:
            return lines[i - 1][text.index("^"):]
    raise AssertionError(f"no caret line in:\n{exc}")


def check(exc, cls, line, *words, at=None, fixture_file=True):
    """The common contract of a located user error."""
    assert type(exc) is cls, f"expected {cls.__name__}, got {type(exc).__name__}: {exc}"
    assert isinstance(exc, MycError)
    assert exc.loc is not None, f"error without a location: {exc}"
    assert exc.loc.line == line, f"error at line {exc.loc.line}, expected {line}:\n{exc}"
    assert exc.lineno == line
    text = str(exc)
    for w in words:
        assert w in exc.message, f"{w!r} not in message {exc.message!r}"
    if fixture_file:
        assert os.path.samefile(exc.loc.filename, F.__file__)
        assert f"{exc.loc.filename}:{line}:" in text
        assert source_line(line).strip() in text
    caret = caret_text(exc)
    if at is not None:
        assert caret.startswith(at), f"caret under {caret!r}, expected {at!r}:\n{text}"
    for internal in INTERNAL_NAMES:
        assert internal not in text, f"internal name {internal!r} leaked:\n{text}"


def expect(cls, fn, *args, words=(), at=None, line=None, **kwargs):
    with pytest.raises(MycError) as info:
        run(fn, *args, **kwargs)
    check(info.value, cls, err_line(fn) if line is None else line, *words, at=at)
    return info.value


# ---------------------------------------------------------------- unsupported constructs

ARR = np.arange(3.0)

CONSTRUCTS = [
    # fixture, args, class, words the message must contain, text under the caret
    ("c_try", (1.0,), MycSyntaxError, ("try",), "try"),
    ("c_with", (1.0,), MycSyntaxError, ("with",), "with"),
    ("c_yield", (1.0,), MycSyntaxError, ("yield",), "yield"),
    ("c_yield_from", (1.0,), MycSyntaxError, ("yield from",), "yield from"),
    ("c_global", (1.0,), MycSyntaxError, ("global",), "global"),
    ("c_nonlocal", (1.0,), MycSyntaxError, ("nonlocal",), "nonlocal"),
    ("c_setcomp", (1.0,), MycSyntaxError, ("set comprehension",), "{x * i"),
    ("c_del", (1.0,), MycSyntaxError, ("del",), "del"),
    ("c_call_varargs", (1.0,), MycSyntaxError, ("star-args", "call"), "*t"),
    ("c_call_kwargs", (1.0,), MycTypeError, ("**", "dict"), "**d"),
    # (objects of the user's classes take attributes inside since session 16; an array not)
    ("c_attr_assign", (ARR,), MycTypeError, ("attribute assignment",), "y.shape"),
    ("c_class", (1.0,), MycSyntaxError, ("class",), "class"),
    ("c_import", (1.0,), MycSyntaxError, ("import",), "import"),
    ("c_from_import", (1.0,), MycSyntaxError, ("import",), "from math"),
    # (raise is a path ending in the exception: Python's, named, at its line)
    ("c_raise", (1.0,), MycValueError, ("ValueError: no",), "raise"),
    ("c_walrus", (1.0,), MycSyntaxError, (":=",), "y := x"),
    # `is` compares identity with None, True or False only (`x is None` compiles)
    ("c_is", (1.0,), MycTypeError, ("None, True or False",), "x is x * 2.0"),
    ("c_is_not", (1.0,), MycTypeError, ("None, True or False",), "x is not x * 2.0"),
    ("c_match", (1.0,), MycSyntaxError, ("match",), "match"),
    ("c_method", (ARR,), MycSyntaxError, (".nonzero()",), "y.nonzero()"),
    ("c_attribute", (ARR,), MycSyntaxError, (".flat",), "x.flat"),
    ("c_np_fft", (ARR,), MycNameError, ("np.fft.fft", "not supported"), "np.fft.fft"),
    ("c_np_linalg", (np.eye(2),), MycNameError, ("np.linalg.eig", "not supported"),
     "np.linalg.eig"),
    ("c_np_missing", (ARR,), MycNameError, ("np.unique", "not supported"), "np.unique"),
    ("c_np_no_attr", (ARR,), MycNameError, ("no_such_function",), "np.no_such_function"),
]


# NumPy functions myc does not implement, applied to data: refused when the program is
# specialized (on static arguments NumPy would run them at compile time); the reference
# evaluator runs them on the values it is given
STATIC_ONLY = frozenset(["c_np_fft", "c_np_linalg", "c_np_missing"])


@pytest.mark.parametrize("name,args,cls,words,at", CONSTRUCTS, ids=[c[0] for c in CONSTRUCTS])
def test_unsupported_construct(name, args, cls, words, at):
    if name in STATIC_ONLY:
        with pytest.raises(MycError) as info:
            myc.jit(getattr(F, name), backend="cpu")(*args)
        check(info.value, cls, err_line(getattr(F, name)), *words,
              "supported only with static arguments", at=at)
        return
    expect(cls, getattr(F, name), *args, words=(*words, "not supported") if cls is
           MycSyntaxError else words, at=at)


def test_fstring_of_data_is_refused_in_compiled_code_at_its_line():
    # (of static values it is a string: tests/unit/test_frontend_constructs.py; the
    # evaluator formats any value, as Python does)
    with pytest.raises(MycSyntaxError) as info:
        myc.jit(F.c_fstring, backend="cpu")(np.float64(1.5))
    check(info.value, MycSyntaxError, err_line(F.c_fstring), "f-string", "not supported",
          at='f"')
    assert run(F.c_fstring, 1.5) == "1.5"


def test_construct_error_says_not_supported_and_where():
    exc = expect(MycSyntaxError, F.c_try, 1.0)
    first = str(exc).splitlines()[0]
    assert first == f"{exc.loc.filename}:{err_line(F.c_try)}:5"
    assert str(exc).splitlines()[-1] == "'try' statement is not supported"


def test_construct_error_repeats_on_every_call():
    """A failed parse is not cached as a success."""
    for _ in range(2):
        expect(MycSyntaxError, F.c_try, 1.0)
    with pytest.raises(MycSyntaxError):
        myc.ir(F.c_try)


def test_ir_reports_construct_errors():
    with pytest.raises(MycSyntaxError) as info:
        myc.ir(F.c_setcomp)
    check(info.value, MycSyntaxError, err_line(F.c_setcomp), "set comprehension")


# ---------------------------------------------------------------- rejected before running


@pytest.mark.timeout(20)
@pytest.mark.parametrize("name", [
    "up_front_after_loop", "up_front_dead_branch", "up_front_after_return",
    "up_front_nested_never_called", "up_front_set_dead",
])
def test_rejected_before_running(name):
    """The bad construct follows a loop that never ends, or sits in dead code."""
    expect(MycSyntaxError, getattr(F, name), 1.0, words=("not supported",))


def test_unsupported_method_in_dead_code_runs_as_python():
    """An unknown method is Python's AttributeError, raised only if its line runs: a
    branch specialization removes (plotting under ``if ax:``) may call one."""
    np.testing.assert_array_equal(run(F.up_front_method_dead, ARR), ARR)


def test_rejected_before_a_runtime_error():
    """A division by zero earlier in the function would be reported if it ran first."""
    expect(MycSyntaxError, F.up_front_after_error, 3, words=("set literal",))


@pytest.mark.timeout(20)
@pytest.mark.parametrize("name", ["up_front_in_callee", "up_front_callee_dead_branch"])
def test_rejected_in_callee_before_running(name):
    """A called module-level function is parsed, and checked, when its caller is."""
    expect(MycSyntaxError, getattr(F, name), 1, words=("with",),
           line=err_line(F.up_front_in_callee_helper))


# ---------------------------------------------------------------- names and arity


def test_undefined_name():
    expect(MycNameError, F.n_undefined, 1.0, words=("undefined_thing", "not defined"),
           at="undefined_thing")


def test_undefined_name_in_branch_never_taken():
    """As in Python, a NameError only if the line runs (``plt`` never imported, in a
    plotting branch the program does not take)."""
    assert run(F.n_undefined_dead, 1.0) == 1.0
    expect(MycNameError, F.n_undefined_dead, 1e301, words=("undefined_thing",))


def test_assigned_in_one_branch_only():
    assert run(F.n_one_branch, 2.0) == 2.0  # the assigning path is fine
    expect(MycNameError, F.n_one_branch, -1.0, words=("'y'", "referenced before assignment"),
           at="y")


def test_loop_variable_of_empty_loop():
    assert run(F.n_loop_var, 3) == 2
    expect(MycNameError, F.n_loop_var, 0, words=("'i'", "referenced before assignment"))


@pytest.mark.parametrize("name,words", [
    ("a_inner_too_many", ("_one()", "2 were given")),
    ("a_inner_too_few", ("_two()", "missing", "'b'")),
    ("a_inner_bad_kw", ("_two()", "unexpected keyword", "'c'")),
    ("a_inner_dup_kw", ("_two()", "multiple values", "'a'")),
    ("a_nested_arity", ("inner()", "missing", "'b'")),
    ("a_lambda_arity", ("lambda", "2 were given")),
    ("a_prim_arity", ("exp()", "2 were given")),
    ("a_math_arity", ("math.sin()", "2 arguments")),
])
def test_wrong_arity_inside_program(name, words):
    expect(MycTypeError, getattr(F, name), 1.0, words=words)


def test_wrong_arity_of_a_function_value():
    """Which function is called is only known at run time here."""
    assert run(F.a_dynamic_arity, 1.0, False) == 2.0
    expect(MycTypeError, F.a_dynamic_arity, 1.0, True, words=("_one()", "2 were given"))


@pytest.mark.parametrize("args,kwargs,words", [
    ((1.0, 2.0, 3.0), {}, ("a_top()", "3 were given")),
    ((), {}, ("a_top()", "missing", "'x'")),
    ((), {"y": 1.0}, ("missing", "'x'")),
    ((1.0,), {"z": 1.0}, ("unexpected keyword", "'z'")),
    ((1.0,), {"x": 1.0}, ("multiple values", "'x'")),
])
def test_wrong_arity_at_top_level_call(args, kwargs, words):
    assert run(F.a_top, 1.0) == 3.0
    assert run(F.a_top, y=1.0, x=1.0) == 2.0
    expect(MycTypeError, F.a_top, *args, words=words, **kwargs)


@pytest.mark.parametrize("name,args", [("a_call_number", (1.0,)), ("a_call_param", (2.0, 1.0))])
def test_calling_a_non_function(name, args):
    expect(MycTypeError, getattr(F, name), *args, words=("float", "not callable"))


def test_jit_of_a_non_function():
    with pytest.raises(MycTypeError, match="Python functions"):
        myc.jit(3, backend="interp")(1.0)
    with pytest.raises(MycTypeError, match="Python functions"):
        myc.jit(np.sin, backend="interp")(1.0)


def test_function_without_source():
    scope = {}
    exec("def nosrc(x):\n    return x\n", scope)
    with pytest.raises(MycSyntaxError, match="source") as info:
        run(scope["nosrc"], 1.0)
    assert info.value.loc is not None and info.value.loc.line == 1


def test_returning_a_function_is_an_error():
    def returns_closure(x):
        def g(a):
            return a + x
        return g

    def returns_prim(x):
        return np.sin

    with pytest.raises(MycTypeError, match="function 'g'"):
        run(returns_closure, 1.0)
    with pytest.raises(MycTypeError, match="function 'sin'"):
        run(returns_prim, 1.0)


def test_range_of_a_float():
    expect(MycTypeError, F.a_range_float, 2.5, words=("range()", "integers"), at="range(x)")


def test_unpack_wrong_length():
    expect(MycValueError, F.a_unpack_wrong, 1.0, words=("unpack", "3", "2"))


def test_bad_operand_types():
    expect(MycTypeError, F.a_add_tuple_number, 1.0, words=("add",), at="t + 1.0")


# ---------------------------------------------------------------- shapes


def test_broadcast_mismatch():
    assert run(F.s_broadcast, ARR, ARR).shape == (3,)
    expect(MycShapeError, F.s_broadcast, np.ones(3), np.ones(4), words=("(3,)", "(4,)"),
           at="z + y")


def test_broadcast_mismatch_float32():
    expect(MycShapeError, F.s_broadcast, np.ones((2, 3), np.float32),
           np.ones((3, 2), np.float32), words=("broadcast",))


def test_matmul_mismatch():
    assert run(F.s_matmul, np.ones((2, 3)), np.ones((3, 4))).shape == (2, 4)
    expect(MycShapeError, F.s_matmul, np.ones((2, 3)), np.ones((2, 3)), words=("matmul",),
           at="c @ b")


def test_dot_mismatch():
    expect(MycShapeError, F.s_dot, np.ones((2, 3)), np.ones((2, 3)), words=("dot",))


def test_bad_reshape_method():
    expect(MycShapeError, F.s_reshape, np.ones(6), words=("reshape", "6"),
           at="y.reshape((4, 5))")


def test_bad_reshape_function():
    expect(MycShapeError, F.s_np_reshape, np.ones(6), words=("reshape",))


def test_where_mismatch():
    expect(MycShapeError, F.s_where, np.ones(3, bool), np.ones(3), np.ones(4),
           words=("where",))


# ---------------------------------------------------------------- indices and values


def test_array_index_out_of_bounds():
    expect(MycIndexError, F.i_array, np.ones(3), words=("10", "out of bounds"), at="y[10]")


def test_array_index_out_of_bounds_2d():
    expect(MycIndexError, F.i_array_2d, np.ones((2, 3)), words=("5",))


@pytest.mark.parametrize("name", ["i_tuple", "i_tuple_neg"])
def test_tuple_index_out_of_range(name):
    expect(MycIndexError, getattr(F, name), 1.0, words=("tuple index",))


@pytest.mark.parametrize("name", ["v_ambiguous_if", "v_ambiguous_while", "v_ambiguous_and"])
def test_ambiguous_truth_value(name):
    expect(MycValueError, getattr(F, name), np.ones(3), words=("ambiguous",))


def test_size_one_array_has_a_truth_value():
    assert run(F.v_ambiguous_if, np.ones(1)) == 1.0


# ---------------------------------------------------------------- run-time failures


@pytest.mark.parametrize("name,op", [("r_int_div_zero", "n // m"),
                                     ("r_int_truediv_zero", "n / (n - n)"),
                                     ("r_int_mod_zero", "n % 0")])
def test_integer_division_by_zero(name, op):
    expect(MycRuntimeError, getattr(F, name), 3, words=("zero",), at=op)


def test_float_division_by_zero_follows_numpy():
    """Float arrays divide by zero as NumPy does: inf, no error."""

    def f(x):
        return x / (x - x)

    assert np.isinf(run(f, np.ones(2))).all()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["r_recurse_forever", "r_nested_recursion"])
def test_infinite_recursion(name):
    expect(MycRuntimeError, getattr(F, name), 0, words=("recursion",))


def test_deep_but_finite_recursion_still_works():
    def count(n):
        if n == 0:
            return 0
        return count(n - 1) + 1

    assert run(count, 2000) == 2000


def test_recursion_error_does_not_poison_later_calls():
    expect(MycRuntimeError, F.r_recurse_forever, 0)
    assert run(F.a_top, 1.0) == 3.0


def test_runtime_error_then_good_call():
    """An error at run time leaves the compiled function usable."""
    jitted = myc.jit(F.s_broadcast, backend="interp")
    with pytest.raises(MycShapeError):
        jitted(np.ones(3), np.ones(4))
    np.testing.assert_array_equal(jitted(np.ones(3), np.ones(3)), np.full(3, 3.0))


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("value,words", [
    (b"text", ("bytes",)),  # (a str, like None, is a static value: accepted)
    ([1.0, b"a"], ("bytes",)),  # (lists and dicts are accepted: their leaves are checked)
    ({"a": object()}, ("object",)),
    ({object(): 1.0}, ("dict", "key")),
    (object(), ("object",)),
    (Ellipsis, ("ellipsis",)),
    (1 + 2j, ("complex",)),
    (2**70, ("int64",)),
    (np.ones(2, np.int32), ("int32",)),
    (np.ones(2, np.float16), ("float16",)),
    (np.ones(2, np.complex128), ("complex128",)),
    (np.ones(2, np.uint8), ("uint8",)),
    (np.array(["a"]), ("dtype",)),
    (np.int32(1), ("int32",)),
    (np.complex64(1), ("complex64",)),
])
def test_bad_argument_type(value, words):
    def f(a, x):
        return a

    with pytest.raises(MycTypeError) as info:
        run(f, 1.0, value)
    msg = info.value.message
    assert "argument 2" in msg and "'x'" in msg, msg
    for w in words:
        assert w in msg, msg
    for internal in INTERNAL_NAMES:
        assert internal not in str(info.value)


def test_bad_argument_inside_a_tuple():
    def f(t):
        return t[0]

    with pytest.raises(MycTypeError) as info:
        run(f, (1.0, (2.0, b"s")))
    assert "argument 1 ('t')[1][1]" in info.value.message
    assert "bytes" in info.value.message


def test_bad_argument_passed_by_keyword():
    with pytest.raises(MycTypeError) as info:
        run(F.a_top, 1.0, y=b"s")  # (a str is a static value: an error where it is added)
    assert "'y'" in info.value.message and "bytes" in info.value.message


@pytest.mark.parametrize("value", [True, 3, 2.5, np.float32(1.5), np.int64(2), np.bool_(True),
                                   np.ones(2, np.float32), np.ones(2, np.int64),
                                   np.ones(2, bool), (1.0, (np.ones(2), 3))])
def test_good_argument_types(value):
    def ident(x):
        return x

    got = run(ident, value)
    assert type(got) is type(value) or isinstance(value, (np.generic, bool))


# ---------------------------------------------------------------- inputs and outputs


def _snapshot(a):
    return (a.dtype, a.shape, a.strides, a.tobytes(), a.flags.writeable)


def _same(a, snap):
    return _snapshot(a) == snap


@pytest.mark.parametrize("body", [
    lambda x: x,
    lambda x: x.T,
    lambda x: x.reshape((-1,)),
    lambda x: x[0],
    lambda x: x[:, 1:],
    lambda x: (x, x),
    lambda x: x + 0.0,
    lambda x: x.astype(np.float64),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inputs_never_mutated_and_outputs_owned(body, dtype):
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    snap = _snapshot(x)
    out = run(body, x)
    assert _same(x, snap)
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        assert isinstance(o, np.ndarray)
        assert o.flags.writeable, "output must be writeable"
        assert not np.shares_memory(o, x), "output shares memory with the input"
        o[...] = -1  # the caller owns it
    assert _same(x, snap)
    if isinstance(out, tuple):
        assert not np.shares_memory(out[0], out[1])


def test_identity_returns_a_copy():
    x = np.arange(3.0)
    out = run(lambda x: x, x)
    assert out is not x and not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, x)


def test_read_only_input_stays_read_only():
    x = np.arange(3.0)
    x.flags.writeable = False
    out = run(lambda x: x * 2.0, x)
    assert not x.flags.writeable
    assert out.flags.writeable


def test_inputs_in_tuples_never_mutated():
    x, y = np.ones(3), np.arange(3.0)
    snaps = (_snapshot(x), _snapshot(y))

    def f(t):
        a, b = t
        return (b, a), a + b

    (b, a), s = run(f, (x, y))
    for o in (a, b, s):
        assert o.flags.writeable and not np.shares_memory(o, x) and not np.shares_memory(o, y)
    assert (_snapshot(x), _snapshot(y)) == snaps


def test_inputs_untouched_when_the_program_fails():
    x, y = np.ones(3), np.ones(4)
    snaps = (_snapshot(x), _snapshot(y))
    with pytest.raises(MycShapeError):
        run(F.s_broadcast, x, y)
    assert (_snapshot(x), _snapshot(y)) == snaps


GLOBAL_ARRAY = np.arange(4.0)


def _return_global(x):
    return GLOBAL_ARRAY


def test_global_constant_output_is_a_fresh_copy():
    first = run(_return_global, 0.0)
    first[...] = 99.0
    second = run(_return_global, 0.0)
    np.testing.assert_array_equal(second, np.arange(4.0))
    np.testing.assert_array_equal(GLOBAL_ARRAY, np.arange(4.0))
    assert second.flags.writeable
