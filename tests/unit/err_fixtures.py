"""Functions that myc must reject, for ``test_errors.py``.

Each function marks the line where the error belongs with a trailing ``# ERR``
comment; the tests find that line in this file's source, so the functions can move
without the tests changing.  None of these functions is meant to be run by Python.
"""
# ruff: noqa: F401, F811, F821, F841, B018, E701, E731, UP, B

import math

import numpy as np

G = 1.0


def _forever():
    i = 0
    while i >= 0:
        i = i + 1
    return i


# ---------------------------------------------------------------- unsupported constructs


def c_try(x):
    y = x + 1
    try:  # ERR
        y = y * 2
    except ValueError:
        y = 0
    return y


def c_with(x):
    with open("f") as fh:  # ERR
        x = x + 1
    return x


def c_yield(x):  # a generator whose yield takes a value in has no list form
    y = x * 2
    z = yield y  # ERR
    return z


def c_yield_from(x):
    yield from (x, x)  # ERR


def c_global(x):
    global G  # ERR
    G = x
    return x


def c_nonlocal(x):
    y = x

    def inner():
        nonlocal y  # ERR
        y = 2.0
        return y

    return inner()


def c_listcomp(x):
    ys = [x * i for i in range(3)]  # ERR
    return ys


def c_setcomp(x):
    ys = {x * i for i in range(3)}  # ERR
    return ys


def c_dictcomp(x):
    ys = {i: x * i for i in range(3)}  # ERR
    return ys


def c_genexp(x):
    s = sum(x * i for i in range(3))  # ERR
    return s


def c_del(x):
    y = x + 1
    del y  # ERR
    return x


def c_def_varargs(*args):  # ERR
    return args


def c_def_kwargs(x, **kwargs):  # ERR
    return x


def c_call_varargs(x):
    t = (x, x)
    return np.maximum(*t)  # ERR


def _two(a, b):
    return a + b


def c_call_kwargs(x):
    d = 1.0
    return _two(x, **d)  # ERR


def c_attr_assign(x):
    y = x + 1.0
    y.shape = (3,)  # ERR
    return y


def c_class(x):
    class K:  # ERR
        pass

    return x


def c_import(x):
    import os  # ERR

    return x


def c_from_import(x):
    from math import sin  # ERR

    return sin(x)


def c_raise(x):
    if x > 0:
        raise ValueError("no")  # ERR
    return x


def c_lambda_star(x):
    f = lambda *a: a  # ERR
    return f(x)


def c_fstring(x):
    s = f"{x}"  # ERR
    return s  # used: an unused f-string is dropped, as its value is


def c_walrus(x):
    if (y := x + 1) > 0:  # ERR
        return y
    return x


def c_is(x):
    return x is x * 2.0  # ERR


def c_is_not(x):
    return x is not x * 2.0  # ERR


def c_in(x):
    return x in (1.0, 2.0)  # ERR


def c_not_in(x):
    return x not in (1.0, 2.0)  # ERR


def c_dict_literal(x):
    d = {"a": x}  # ERR
    return x


def c_method(x):
    y = x * 2.0
    return y.nonzero()  # ERR


def c_np_fft(x):
    y = x * 2.0
    return np.fft.fft(y)  # ERR


def c_np_linalg(x):
    y = x * 2.0
    return np.linalg.eig(y)  # ERR


def c_np_missing(x):
    return np.unique(x)  # ERR


def c_np_no_attr(x):
    return np.no_such_function(x)  # ERR


def c_attribute(x):
    return x.flat  # ERR


def c_match(x):
    match x:  # ERR
        case 1:
            return 1
    return 0


# ---------------------------------------------------------------- rejected before running


def up_front_after_loop(x):
    i = _forever()
    ys = {x for _ in range(2)}  # ERR
    return i


def up_front_dead_branch(x):
    if x > 1e300:
        try:  # ERR
            x = x + 1
        finally:
            x = x - 1
    return x


def up_front_after_return(x):
    return x
    del x  # ERR


def up_front_in_callee_helper(x):
    with open("f"):  # ERR
        return x


def up_front_in_callee(x):
    i = _forever()
    return up_front_in_callee_helper(i)


def up_front_after_error(n):
    m = n // (n - n)
    s = {n, m}  # ERR
    return m


def up_front_callee_dead_branch(n):
    if n < 0:
        return up_front_in_callee_helper(n)
    return n


def up_front_lambda_star_dead(x):
    return x
    f = lambda **k: k  # ERR


def up_front_set_dead(x):
    return x
    y = {x}  # ERR


def up_front_nested_never_called(x):
    def never():
        global G  # ERR
        return 1.0

    return x


def up_front_item_assign_dead(x):
    return x
    x[0] = 1.0  # ERR


def up_front_method_dead(x):
    if x.ndim > 100:
        return x.nonzero()  # ERR
    return x


# ---------------------------------------------------------------- names and arity


def n_undefined(x):
    y = x + 1
    return y + undefined_thing  # ERR


def n_undefined_dead(x):
    if x > 1e300:
        return undefined_thing  # ERR
    return x


def n_one_branch(x):
    if x > 0:
        y = x
    return y  # ERR


def n_loop_var(n):
    for i in range(n):
        pass
    return i  # ERR


def _one(a):
    return a


def a_inner_too_many(x):
    return _one(x, x)  # ERR


def a_inner_too_few(x):
    return _two(x)  # ERR


def a_inner_bad_kw(x):
    return _two(x, c=1.0)  # ERR


def a_inner_dup_kw(x):
    return _two(x, a=1.0)  # ERR


def a_nested_arity(x):
    def inner(a, b):
        return a * b

    return inner(x)  # ERR


def a_lambda_arity(x):
    f = lambda a: a + 1
    return f(x, x)  # ERR


def a_dynamic_arity(x, flag):
    f = _one if flag else _two
    return f(x, x)  # ERR


def a_top(x, y=2.0):  # ERR
    return x + y


def a_prim_arity(x):
    return np.exp(x, x)  # ERR


def a_math_arity(x):
    return math.sin(x, x)  # ERR


def a_call_number(x):
    y = 3.0
    return y(x)  # ERR


def a_call_param(f, x):
    return f(x)  # ERR


def a_range_float(x):
    s = 0
    for i in range(x):  # ERR
        s = s + i
    return s


def a_unpack_wrong(x):
    a, b = (x, x, x)  # ERR
    return a + b


def a_add_tuple_number(x):
    t = (x, x)
    return t + 1.0  # ERR


# ---------------------------------------------------------------- shapes, indices, values


def s_broadcast(x, y):
    z = x * 2.0
    return z + y  # ERR


def s_matmul(a, b):
    c = a + 0.0
    return c @ b  # ERR


def s_dot(a, b):
    return np.dot(a, b)  # ERR


def s_reshape(x):
    y = x + 1.0
    return y.reshape((4, 5))  # ERR


def s_np_reshape(x):
    return np.reshape(x, (7,))  # ERR


def s_where(c, x, y):
    return np.where(c, x, y)  # ERR


def i_array(x):
    y = x * 2.0
    return y[10]  # ERR


def i_array_2d(x):
    return x[0, 5]  # ERR


def i_tuple(x):
    t = (x, x + 1.0)
    return t[2]  # ERR


def i_tuple_neg(x):
    t = (x, x + 1.0)
    return t[-3]  # ERR


def v_ambiguous_if(x):
    if x > 0:  # ERR
        return 1.0
    return 0.0


def v_ambiguous_while(x):
    while x > 0:  # ERR
        x = x - 1.0
    return x


def v_ambiguous_and(x):
    return x > 0 and x < 1  # ERR


def r_int_div_zero(n):
    m = n - n
    return n // m  # ERR


def r_int_truediv_zero(n):
    return n / (n - n)  # ERR


def r_int_mod_zero(n):
    return n % 0  # ERR


def r_recurse_forever(n):
    return r_recurse_forever(n + 1) + 1  # ERR


def r_nested_recursion(n):
    def go(k):
        return go(k + 1) * 2  # ERR

    return go(n)
