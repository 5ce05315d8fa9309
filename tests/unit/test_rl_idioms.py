"""Idioms from reinforcement-learning teaching code (the tenth corpus,
tests/realworld/wild10): ``divmod`` of grid indices, ``rng.choice(a)`` without ``p=``
(NumPy's bounded-integer stream), global sets of constants (``HOLES = {5, 7}``), and a
list appended to through another name, which CPython shows through the container that
holds it (myc's lists are values: refused, was silently the old list)."""

from __future__ import annotations

import numpy as np
import pytest

import myc

HOLES = {5, 7, 12}
NAMES = {"b", "a", "zz", "q"}


@pytest.mark.parametrize("a, b", [(17, 5), (-17, 5), (17, -5), (-7.3, 0.75), (7.5, -2.0)])
def test_divmod_is_pythons(a, b):
    got = myc.jit(lambda x, y: divmod(x, y))(a, b)
    assert got == divmod(a, b)


def test_divmod_of_a_grid_state_with_a_gradient():
    def f(w, s):
        r, c = divmod(s, 4)
        return w[r] * c

    w = np.array([1.0, 2.0, 3.0])
    assert myc.jit(f)(w, 9) == f(w, 9)
    np.testing.assert_array_equal(myc.grad(f)(w, 9), [0.0, 0.0, 1.0])


def _draws(rng, a):
    return (rng.choice([-1, 1]) + rng.choice(5) + rng.choice(a) +
            np.sum(rng.choice(a, size=3)) + np.sum(rng.choice(4, size=(2, 2))))


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_choice_without_p_draws_numpys_stream(make):
    a = np.array([0.5, 1.5, 2.5])
    want = [_draws(make(s), a) for s in range(6)]
    got = [myc.jit(_draws)(make(s), a) for s in range(6)]
    assert got == want


def test_choice_without_p_then_other_draws_follow_the_same_stream():
    def f(rng):
        k = rng.choice(3)
        return k + rng.normal()

    assert myc.jit(f)(np.random.default_rng(4)) == f(np.random.default_rng(4))


def test_choice_of_a_2d_array_is_numpys_error_at_the_line():
    def f(rng, a):
        return rng.choice(a)

    with pytest.raises(myc.MycError, match="1-dimensional") as info:
        myc.jit(f)(np.random.default_rng(0), np.ones((2, 2)))
    assert info.value.loc.line == f.__code__.co_firstlineno + 1


def test_global_set_membership_len_and_iteration():
    def f(x, s):
        return x * (s in HOLES) + (s not in HOLES) * 2.0 + len(HOLES)

    def g(x):
        out = []
        for n in NAMES:  # CPython's iteration order of the set
            out.append(x * len(n))
        return np.array(out)

    for s in (5, 6):
        assert myc.jit(f)(1.5, s) == f(1.5, s)
    np.testing.assert_array_equal(myc.jit(g)(2.0), g(2.0))
    assert myc.grad(f)(2.0, 7) == 1.0 and myc.grad(f)(2.0, 8) == 0.0


def _appended_through_an_item(x):
    d = {"k": [x], "j": [x]}
    lst = d["k"]
    lst.append(x)
    return len(d["k"]) * 1.0


def _appended_through_a_loop_variable(x):
    rows = [[x], [x]]
    for r in rows:
        r.append(x)
    return len(rows[1]) * 1.0


def _appended_through_an_item_in_a_loop(x):
    d = {"k": [x]}
    lst = d["k"]
    for _ in range(2):
        lst.append(x)
    return len(d["k"]) * 1.0


@pytest.mark.parametrize("fn", [_appended_through_an_item, _appended_through_a_loop_variable,
                                _appended_through_an_item_in_a_loop])
def test_a_list_appended_through_another_name_is_refused_not_stale(fn):
    # CPython shows the append through the container (2.0 or 3.0); myc gave 1.0
    assert fn(1.0) > 1.0
    with pytest.raises(myc.MycSyntaxError, match="shares its list or dict"):
        myc.jit(fn)(1.0)


def test_lists_copied_or_appended_directly_still_compile():
    def f(x):
        rows = [[x], [x]]
        out = 0.0
        for r in rows:
            r2 = list(r)
            r2.append(x)
            out = out + len(r2) * x
        hs = []
        for t in range(3):
            hs.append(x * t)
        lst = rows[0]
        return out + np.sum(np.array(hs)) + len(lst)

    assert myc.jit(f)(1.5) == f(1.5)
    assert myc.grad(f)(1.5) == pytest.approx(4.0 + 3.0)
