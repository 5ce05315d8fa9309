"""Lists, dicts and namedtuples in compiled code, against CPython.

Each program runs under CPython and through ``myc.jit`` on every backend; results must
agree in structure (list vs tuple vs dict, keys in order, namedtuple class), kind and
value, and the caller's arguments must be left as they were (myc's lists and dicts are
values: ``append`` rebinds the variable).  The refusals -- a list whose length depends
on data, a dict key computed from data, mutating through another name -- are
``MycError``s at the user's line.
"""

# ruff: noqa: E731

from __future__ import annotations

import copy
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import myc
from myc.errors import MycError, MycIndexError, MycSyntaxError, MycTypeError, MycValueError
from tests.adversarial.common import assert_compiled
from tests.backends import BACKENDS

Pair = namedtuple("Pair", ["w", "b"])
Config = namedtuple("Config", ["scale", "shift"], defaults=[0.0])

WEIGHTS = [np.array([1.0, 2.0]), np.array([0.5, -1.0])]
TABLE = {"a": 2.0, "b": np.array([1.0, -1.0])}


def assert_same(ref, got, path="out"):
    """Same structure (container classes, keys), kinds and values."""
    if isinstance(ref, dict):
        assert type(got) is dict, f"{path}: dict expected, got {type(got).__name__}"
        assert list(got) == list(ref), f"{path}: keys {list(ref)} vs {list(got)}"
        for k in ref:
            assert_same(ref[k], got[k], f"{path}[{k!r}]")
        return
    if isinstance(ref, (list, tuple)):
        assert type(got) is type(ref), f"{path}: {type(ref).__name__} expected, got " \
            f"{type(got).__name__} {got!r}"
        assert len(got) == len(ref), f"{path}: length {len(ref)} vs {len(got)}"
        for i, (r, g) in enumerate(zip(ref, got, strict=True)):
            assert_same(r, g, f"{path}[{i}]")
        return
    if isinstance(ref, np.ndarray):
        assert isinstance(got, np.ndarray), f"{path}: array expected, got {got!r}"
        assert got.shape == ref.shape and got.dtype == ref.dtype, f"{path}: {got!r} vs {ref!r}"
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=path)
        return
    if isinstance(ref, str):
        assert got == ref, f"{path}: {ref!r} vs {got!r}"
        return
    assert isinstance(got, (bool, np.bool_)) == isinstance(ref, (bool, np.bool_)), path
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=path)


# ---------------------------------------------------------------- programs


def p_list_basics(x, y):
    xs = [x, y, x * y]
    a, b, c = xs
    tail = xs[1:]
    both = xs + [c, a]
    return [xs[-1], len(both), tail, both[-2], a + b, [v * 2.0 for v in reversed(xs)]]


def p_append_static_loop(h, xs):
    out = []
    for t in range(xs.shape[0]):
        h = np.tanh(h + xs[t])
        out.append(h)
    return np.stack(out), len(out)


def p_comprehensions(xs):
    evens = [x * i for i, x in enumerate(xs) if i % 2 == 0]
    pairs = [(i, j) for i in range(3) for j in range(i)]
    squares = {k: x ** 2 for k, x in zip(("a", "b", "c", "d"), xs)}
    total = sum(x.sum() for x in xs)
    return evens, pairs, squares, total


def p_builtins(xs, ys):
    zipped = [a * b for a, b in zip(xs, ys)]
    idx = list(range(1, 4))
    t = tuple(xs)
    rev = list(reversed(ys))
    return zipped, idx, t, rev, sum(zipped, 1.0), max([len(xs), 2, 7]), min(idx)


def p_dict_basics(d, x):
    e = {"x": x, "y": d["a"] * x}
    e["z"] = d["b"] + 1.0     # a new key goes last
    e["x"] = e["x"] * 3.0     # an existing key keeps its place
    e["y"] += 1.0
    ks = list(e.keys())
    vs = [v for v in e.values()]
    total = 0.0
    for k, v in e.items():
        total = total + np.sum(v)
    order = [k for k in e]
    return e, ks, vs, total, order, "z" in e, "w" not in e, e.get("w", 5.0), len(e)


def p_dict_constructors(x):
    a = dict(w=x, b=2.0)
    b = dict(zip(("p", "q"), (x, x + 1.0)))
    c = dict(a)
    c["w"] = 0.0
    return a, b, c


def p_namedtuple(p, x):
    q = Pair(w=p.w * 2.0, b=p.b)
    c = Config(3.0)
    w, b = q
    return q, Pair(x, b), w * c.scale + c.shift, q[1]


def p_nested(params, x):
    for layer in params["layers"]:
        x = np.tanh(x @ layer["W"] + layer["b"])
    return {"out": x, "sizes": [layer["W"].shape for layer in params["layers"]]}


def p_list_state_in_data_loop(x):
    """A fixed-length list carried by a loop whose trip count depends on data."""
    hs = [x, x * 2.0]
    while np.sum(hs[0]) < 100.0:
        hs = [h * 2.0 for h in hs]
        hs[1] = hs[1] + 1.0
    return hs


def p_closure_list(x):
    scales = [1.0, 2.0, 3.0]
    f = lambda v: [v * s for s in scales]
    return f(x)


def p_globals(x):
    return [w * x for w in WEIGHTS], TABLE["a"] * TABLE["b"] + x


def p_default_list(x, scales=[1.0, 2.0]):  # noqa: B006 - read, never mutated
    return [x * s for s in scales]


def p_mutate_argument(xs, d):
    xs.append(1.0)
    xs[0] = xs[0] * 2.0
    d["new"] = 3.0
    return len(xs), xs, d


def p_list_items_assigned(x):
    out = [0.0] * 3
    for i in range(3):
        out[i] = x * i
    out[-1] = out[-1] + 1.0
    out.insert(1, x)
    out.extend([x, x])
    return out


R = np.random.default_rng(3)
A2, B2 = R.standard_normal(2), R.standard_normal(2)
CASES = {
    "p_list_basics": (1.5, np.array([1.0, 2.0])),
    "p_append_static_loop": (np.zeros(3), R.standard_normal((4, 3))),
    "p_comprehensions": ([A2, B2, A2 * 2, B2 * 3],),
    "p_builtins": ([A2, B2, A2], [B2, A2, 2.0]),
    "p_dict_basics": ({"a": 2.0, "b": A2}, B2),
    "p_dict_constructors": (1.5,),
    "p_namedtuple": (Pair(A2, 0.5), B2),
    "p_nested": ({"layers": [{"W": R.standard_normal((2, 3)), "b": R.standard_normal(3)},
                             {"W": R.standard_normal((3, 1)), "b": R.standard_normal(1)}]},
                 R.standard_normal((4, 2))),
    "p_list_state_in_data_loop": (np.array([0.5, 1.0]),),
    "p_closure_list": (A2,),
    "p_globals": (A2,),
    "p_default_list": (A2,),
    "p_mutate_argument": ([A2, 2.0], {"a": 1.0}),
    "p_list_items_assigned": (1.5,),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_cpython(name, backend):
    fn = globals()[name]
    args = CASES[name]
    before = copy.deepcopy(args)
    ref = fn(*copy.deepcopy(args))
    jitted = myc.jit(fn, backend=backend)
    got = jitted(*args)
    assert_same(ref, got)
    assert_same(before, args, "arguments after the call")  # never mutated
    assert_compiled(jitted, name)


# ---------------------------------------------------------------- structure is signature


def test_list_length_and_dict_keys_are_part_of_the_signature():
    f = myc.jit(lambda xs: sum(xs))
    assert f([1.0, 2.0]) == 3.0
    assert f([1.0, 2.0, 3.0]) == 6.0
    g = myc.jit(lambda d: [k for k in d])
    assert g({"a": 1.0}) == ["a"]
    assert g({"b": 1.0, "a": 2.0}) == ["b", "a"]
    assert f.stats().compiles == 2 and g.stats().compiles == 2


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=1, max_size=6), st.integers(-6, 5),
       st.floats(-5, 5))
def test_list_ops_match_python(values, index, new):
    def f(xs, v):
        ys = [x * 2.0 for x in xs]
        i = len(ys) - 1
        ys.append(v)
        ys[i] = ys[i] + v
        return ys, ys[-1], sum(ys), list(zip(ys, xs))

    ref = f(list(values), new)
    assert_same(ref, myc.jit(f)(values, new))
    if -len(values) <= index < len(values):
        g = lambda xs: xs[index] * 1.0
        assert_same(g(values), myc.jit(g)(values))
    else:
        with pytest.raises(MycIndexError):
            myc.jit(lambda xs: xs[index])(values)


# ---------------------------------------------------------------- refusals


def e_grows_with_data(x):
    out = []
    while np.sum(x) < 10.0:
        out.append(x)
        x = x * 2.0
    return out


def test_list_growing_in_a_data_dependent_loop_is_refused():
    with pytest.raises(MycTypeError) as info:
        myc.jit(e_grows_with_data)(np.ones(2))
    msg = str(info.value)
    assert "'out'" in msg and "length" in msg
    assert info.value.loc.line == e_grows_with_data.__code__.co_firstlineno + 2


def e_key_from_data(x):
    d = {}
    d[x] = 1.0
    return d


def e_key_from_data_literal(x):
    return {x: 1.0}


@pytest.mark.parametrize("fn", [e_key_from_data, e_key_from_data_literal])
def test_dict_key_computed_from_data_is_refused(fn):
    with pytest.raises(MycTypeError) as info:
        myc.jit(fn)(np.float64(2.0))
    assert "key" in str(info.value)
    assert info.value.loc is not None and info.value.loc.filename == __file__


def e_unsupported_method(xs):
    return xs.pop()


def e_sort_statement(xs):
    xs.sort()
    return xs


def e_append_expression(xs):
    y = xs.append(1.0)
    return y


def e_append_global(x):
    WEIGHTS.append(x)
    return x


def e_alias_then_mutate(x):
    a = [x]
    b = a
    b.append(x)
    return a


def e_missing_key(d):
    return d["nope"]


def e_unknown_field(p):
    return p.c


def e_append_to_array(x):
    x.append(1.0)
    return x


ERRORS = [
    (e_unsupported_method, ([1.0],), MycSyntaxError, ".pop()"),
    (e_sort_statement, ([1.0],), MycValueError, "list.sort() is not supported"),
    (e_append_expression, ([1.0],), MycSyntaxError, "statement"),
    (e_append_global, (1.0,), MycSyntaxError, "global"),
    (e_alias_then_mutate, (1.0,), MycSyntaxError, "'a'"),
    (e_missing_key, ({"a": 1.0},), MycIndexError, "'nope'"),
    (e_unknown_field, (Pair(1.0, 2.0),), MycTypeError, "'c'"),
    (e_append_to_array, (np.ones(2),), MycTypeError, "append"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, cls, word", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_refusals_name_the_users_line(fn, args, cls, word, backend):
    with pytest.raises(cls) as info:
        myc.jit(fn, backend=backend)(*args)
    assert word in str(info.value)
    assert isinstance(info.value, MycError)
    loc = info.value.loc
    assert loc is not None and loc.filename == __file__, str(info.value)
    first, last = fn.__code__.co_firstlineno, fn.__code__.co_firstlineno + 4
    assert first < loc.line <= last, str(info.value)


# ------------------------------------------------ a list shared by two names, across joins
# CPython mutates the one list both names hold; myc's lists are values, so the name not
# mutated is stale -- refused when read, through an if's join, a loop's next iteration,
# a break and the loop's end alike (these once returned the old list in silence).


def s_if_join(x):
    state = {"n": 0.0}
    if x[0] > 0:
        s2 = state
        s2["n"] = 5.0
    return state["n"] * x


def s_if_join_list(x):
    hs = [x]
    h2 = hs
    if x[0] > 0:
        h2.append(x)
    return len(hs) * x


def s_next_iteration(x):
    hs = [x]
    for _ in range(3):
        h2 = hs
        h2.append(x)
    return len(hs) * x


def s_after_break(x):
    hs = [x]
    for _ in range(3):
        h2 = hs
        h2.append(x)
        break
    return len(hs) * x


def s_dict_counter(x):
    state = {"n": 0}
    for _ in range(3):
        s2 = state
        s2["n"] = s2["n"] + 1
    return state["n"] * x


def s_alias_before_loop(x):
    hs = []
    h2 = hs
    for t in range(5):
        h2.append(x * t)
    return np.stack(hs)


def s_while_test(x):
    hs = [x]
    while len(hs) < 4:
        h2 = hs
        h2.append(x)
    return len(hs) * x


SHARED = [s_if_join, s_if_join_list, s_next_iteration, s_after_break, s_dict_counter,
          s_alias_before_loop, s_while_test]


@pytest.mark.parametrize("fn", SHARED, ids=[f.__name__ for f in SHARED])
def test_a_list_shared_across_a_join_is_refused(fn):
    with pytest.raises(MycSyntaxError, match="shares its list or dict") as info:
        myc.jit(fn, backend="interp")(np.array([0.5, 1.0]))
    assert info.value.loc is not None and info.value.loc.filename == __file__


def c_rebuilt_each_iteration(x):
    total = 0
    for _ in range(3):
        hs = [x]  # a new list: the stale one is not read again
        h2 = hs
        h2.append(x)
        total = total + len(h2)
    return total * x


def c_copied(x):
    hs = [x]
    for _ in range(3):
        h2 = list(hs)
        h2.append(x)
    return len(hs) * x


def c_rebound(x):
    hs = [x]
    for _ in range(3):
        h2 = hs
        hs = h2 + [x]
    return len(hs) * x


COPIED = [c_rebuilt_each_iteration, c_copied, c_rebound]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", COPIED, ids=[f.__name__ for f in COPIED])
def test_lists_not_shared_still_run(fn, backend):
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(myc.jit(fn, backend=backend)(x), fn(x))


# ------------------------------------------------ closures made in loops, called later


def late_comprehension(x):
    fs = [lambda: x * i for i in range(3)]  # CPython: every one gives x * 2
    return fs[0]() + fs[1]()


def late_append(x):
    fs = []
    for i in range(3):
        fs.append(lambda v: v * i)
    return fs[0](x) + fs[2](x)


def late_dict_item(x):
    d = {}
    for i in range(3):
        d[i] = lambda v: v * i
    return d[0](x)


def late_dict_comprehension(x):
    d = {i: (lambda v: v * i) for i in range(3)}
    return d[0](x)


LATE = [late_comprehension, late_append, late_dict_item, late_dict_comprehension]


@pytest.mark.parametrize("fn", LATE, ids=[f.__name__ for f in LATE])
def test_a_closure_stored_from_a_loop_is_refused(fn):
    """These returned each iteration's value in silence (CPython: the last one)."""
    with pytest.raises(MycSyntaxError, match="closure created in a loop") as info:
        myc.jit(fn, backend="interp")(np.array([0.5, 1.0]))
    assert "i=i" in str(info.value)
    assert info.value.loc is not None and info.value.loc.filename == __file__


def bound_by_default(x):
    fs = [lambda v, i=i: v * i for i in range(3)]
    return fs[1](x) + fs[2](x)


def called_in_its_iteration(x):
    s = 0.0
    for i in range(3):
        f = lambda v: v * i  # noqa: E731
        s = s + f(x)
    return s


def passed_to_grad_at_once(x):
    return sum(myc.grad(lambda w: np.sum(w * xi))(x) for xi in [1.0, 2.0])


EARLY = [bound_by_default, called_in_its_iteration, passed_to_grad_at_once]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", EARLY, ids=[f.__name__ for f in EARLY])
def test_closures_called_at_once_or_bound_by_default_run(fn, backend):
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(myc.jit(fn, backend=backend)(x), fn(x))
