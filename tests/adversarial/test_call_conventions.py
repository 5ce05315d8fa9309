"""``*args``, keyword-only parameters, ``**kwargs``, star-args in calls and functions as
default arguments, against CPython on every backend (and their gradients)."""

# ruff: noqa: E731

from __future__ import annotations

import numpy as np
import pytest

import myc
from myc.errors import MycSyntaxError, MycTypeError
from tests.adversarial.common import assert_compiled
from tests.adversarial.test_lists_dicts import assert_same
from tests.backends import BACKENDS
from tests.gradcheck import check_grads


def relu(v):
    return np.maximum(v, 0.0)


def var(x, *args, k=3.0, **kw):
    tot = x * k
    for a in args:
        tot = tot + a
    for _, v in kw.items():
        tot = tot + v
    return tot, len(args), list(kw)


def p_star_calls(x, ys, opts):
    a = var(x, 1.0, 2.0, k=1.0, extra=5.0)
    b = var(x, *ys, **opts)
    c = var(*ys, k=2.0)
    d = var(x, *ys, *ys, z=1.0, **{"w": 2.0})
    return a, b, c, d


def p_function_defaults(x, act=np.tanh, post=relu, scale=2.0):
    return post(act(x) * scale - 0.5)


def p_nested_defaults(x):
    def layer(v, f=relu, *, bias=0.5):
        return f(v + bias)

    return layer(x), layer(x, np.sin), layer(x, bias=-1.0)


def p_lambda_stars(x):
    f = lambda *a, **k: (sum(a), sorted_keys(k))
    return f(x, 2.0, b=1.0, a=3.0)


def sorted_keys(d):
    return [k for k in d]


def p_zip_star(pairs):
    firsts, seconds = zip(*pairs)
    return list(firsts), seconds, {**{"p": 1.0}, "q": 2.0, **{"p": 3.0}}


def objective(params, *args):
    x, y = args
    return np.sum((x @ params - y) ** 2)


def kwonly_loss(w, x, *, l2=0.1):
    return np.sum((x @ w) ** 2) + l2 * np.sum(w ** 2)


def p_star_displays(xs, ys, m):
    t = (*xs, 2.0, *ys)
    rows = [*m, m[0] * 2.0]  # an array's rows
    keys = [*{"b": 1.0, "a": 2.0}]
    return len(t), t[-1] + t[0], np.stack((*rows, *xs)), keys, sum([*ys, *xs])


X = np.array([0.3, -1.2, 2.0])
CASES = {
    "p_star_displays": ([X, 2.0 * X], (X - 1.0,), np.arange(6.0).reshape(2, 3)),
    "p_star_calls": (X, [1.0, 2.0], {"k": 4.0, "q": 1.0}),
    "p_function_defaults": (X,),
    "p_nested_defaults": (X,),
    "p_lambda_stars": (1.5,),
    "p_zip_star": ([(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)],),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_cpython(name, backend):
    fn = globals()[name]
    jitted = myc.jit(fn, backend=backend)
    assert_same(fn(*CASES[name]), jitted(*CASES[name]))
    assert_compiled(jitted, name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_top_level_star_parameters(backend):
    f = myc.jit(var, backend=backend)
    assert_same(var(X, 1.0, 2.0, k=1.0, z=4.0), f(X, 1.0, 2.0, k=1.0, z=4.0))
    assert_same(var(X), f(X))
    g = myc.jit(p_function_defaults, backend=backend)
    assert_same(p_function_defaults(X, scale=3.0), g(X, scale=3.0))
    with pytest.raises(MycTypeError, match="unexpected keyword"):
        myc.jit(kwonly_loss, backend=backend)(X, np.eye(3), l1=0.0)


def test_gradients_through_star_parameters():
    w = np.array([0.5, -0.3, 1.0])
    A = np.arange(6.0).reshape(2, 3)
    y = np.array([1.0, 2.0])
    check_grads(objective, (w, A, y))
    g = myc.grad(kwonly_loss)(w, A, l2=0.5)
    np.testing.assert_allclose(g, 2 * A.T @ (A @ w) + 2 * 0.5 * w, rtol=1e-12)
    check_grads(lambda w, x: p_function_defaults(w * x), (w, X))


def e_mutated_list_default(x, seen=[]):  # noqa: B006 - the point of the test
    seen.append(x)  # CPython keeps it for the next call
    return len(seen) * x


def e_mutated_dict_default(x, cache={}):  # noqa: B006
    if x > 0:
        cache["last"] = x
    return x


def p_rebound_list_default(x, seen=[]):  # noqa: B006 - rebound first: fine
    seen = seen + [x]
    seen.append(x)
    return len(seen) * x


def test_a_default_changed_in_place_is_refused():
    for fn, offset in ((e_mutated_list_default, 1), (e_mutated_dict_default, 2)):
        with pytest.raises(MycSyntaxError, match="changed in place") as info:
            myc.jit(fn)(1.0)
        assert info.value.loc.filename == __file__
        assert info.value.loc.line == fn.__code__.co_firstlineno + offset
    assert myc.jit(p_rebound_list_default)(1.5) == p_rebound_list_default(1.5)


def e_star_into_numpy(x):
    t = (x, x)
    return np.maximum(*t)


def e_missing_after_star(x):
    return var(*(), k=1.0)


def e_too_many(x):
    return relu(*(x, x))


@pytest.mark.parametrize("fn, cls, word", [
    (e_star_into_numpy, MycSyntaxError, "np.maximum"),
    (e_missing_after_star, MycTypeError, "missing"),
    (e_too_many, MycTypeError, "too many"),
])
def test_refusals(fn, cls, word):
    with pytest.raises(cls, match=word) as info:
        myc.jit(fn)(1.0)
    assert info.value.loc is not None and info.value.loc.filename == __file__
