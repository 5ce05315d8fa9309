"""Programs that make myc raise each kind of MycError; docs/errors.md shows the output.

Run this file to print every message:  python docs/examples/errors_examples.py
"""

# --- block setup
import numpy as np

import myc


def show(thunk):
    try:
        thunk()
    except myc.MycError as exc:
        print(f"{type(exc).__name__}: {exc}")


a3 = np.ones(3)


# --- block try
def uses_try(x):
    try:
        x = x * 2
    except ValueError:
        x = 0.0
    return x


show(lambda: myc.jit(uses_try)(1.0))


# --- block item_assign
def item_assign(x):
    y = x + 1.0
    y[0] = 2.0
    return y


show(lambda: myc.jit(item_assign)(a3))


# --- block comprehension
def comprehension(x):
    return sum({x * i for i in range(3)})


show(lambda: myc.jit(comprehension)(1.0))


# --- block star_args
def star_args(x):
    pair = (x, 2.0 * x)
    return np.maximum(*pair)


show(lambda: myc.jit(star_args)(1.0))


# --- block bad_method
def bad_method(x):
    return x.nonzero()


show(lambda: myc.jit(bad_method)(a3))


# --- block bad_attribute
def bad_attribute(a):
    return a.flat


show(lambda: myc.jit(bad_attribute)(a3))


# --- block dead_code
def dead_code(x):
    return x
    with open("f"):
        pass


show(lambda: myc.jit(dead_code)(1.0))


# --- block no_source
show(lambda: myc.jit(eval("lambda x: x + 1"))(1.0))


# --- block undefined
def undefined(x):
    return x + yy  # noqa: F821


show(lambda: myc.jit(undefined)(1.0))


# --- block maybe_unset
def maybe_unset(x):
    if x > 0:
        y = 1.0
    return y


print(myc.jit(maybe_unset)(2.0))
show(lambda: myc.jit(maybe_unset)(-1.0))


# --- block late_free
def late_free(x):
    def f():
        return y

    y = x
    return f()


show(lambda: myc.jit(late_free)(1.0))


# --- block late_binding
def late_binding(x):
    a = x
    g = lambda t: t * a
    a = a + 100.0
    return g(x)


show(lambda: myc.jit(late_binding)(2.0))


# --- block dict_global
CONFIG = {"scale": 2.0}


def uses_dict_global(x):
    return x * CONFIG["scale"]


show(lambda: myc.jit(uses_dict_global)(1.0))


# --- block module_value
def uses_module_value(x):
    m = np
    return m.sin(x)


show(lambda: myc.jit(uses_module_value)(1.0))


# --- block arity
def _two(a, b):
    return a + b


def wrong_arity(x):
    return _two(x)


show(lambda: myc.jit(wrong_arity)(1.0))
show(lambda: myc.jit(_two)(1.0))
show(lambda: myc.jit(_two)(1.0, 2.0, c=3.0))


# --- block kw_of_value
def kw_of_value(f, x):
    return f(x=x)


show(lambda: myc.jit(kw_of_value)(np.sin, 1.0))


# --- block arg_types
show(lambda: myc.jit(_two)("a", 1.0))
show(lambda: myc.jit(_two)([1.0, "b"], 1.0))
show(lambda: myc.jit(_two)((1.0, {"k": b"raw"}), 1.0))
show(lambda: myc.jit(_two)(np.array(["x"]), 1.0))
show(lambda: myc.jit(_two)(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), 1.0))


# --- block returns_function
def returns_function(x):
    return lambda y: x + y


show(lambda: myc.jit(returns_function)(1.0))


# --- block not_a_function
show(lambda: myc.jit(3.0)(1.0))


# --- block grad_checks
def vector_loss(w):
    return w * 2.0


def int_arg(n, x):
    return n * x


show(lambda: myc.grad(vector_loss)(a3))
show(lambda: myc.grad(int_arg)(3, 2.0))
print(myc.grad(int_arg, argnums=1)(3, 2.0))
show(lambda: myc.grad(int_arg, argnums=2)(3, 2.0))
show(lambda: myc.grad(int_arg, argnums=1.0)(3, 2.0))


# --- block vjp_jvp_checks
_, pullback = myc.vjp(_two, a3, a3)
show(lambda: pullback(np.ones(4)))
show(lambda: myc.jvp(_two, [1.0, 2.0], [1.0, 1.0]))
show(lambda: myc.jvp(_two, (1.0, 2.0), (1.0,)))
show(lambda: myc.jvp(_two, (a3, a3), (a3, np.ones(5))))


# --- block broadcast
def broadcast(a, b):
    return a + b


show(lambda: myc.jit(broadcast)(np.ones(3), np.ones(4)))


# --- block matmul
def matmul(a, b):
    return a @ b


show(lambda: myc.jit(matmul)(np.ones((2, 3)), np.ones((2, 3))))
show(lambda: myc.jit(matmul, backend="interp")(np.ones((2, 3)), np.ones((2, 3))))


# --- block reshape
def reshape(a):
    return a.reshape(4, 4)


show(lambda: myc.jit(reshape)(np.ones(10)))


# --- block index
def index(a):
    return a[10]


def tuple_index(t):
    return t[3]


show(lambda: myc.jit(index)(a3))
show(lambda: myc.jit(tuple_index)((1.0, 2.0)))


# --- block ambiguous
def ambiguous(a):
    if a > 0:
        return 1.0
    return 0.0


show(lambda: myc.jit(ambiguous)(a3))
print(myc.jit(ambiguous)(np.ones(1)))


# --- block unpack
def unpack(t):
    a, b = t
    return a + b


show(lambda: myc.jit(unpack)((1.0, 2.0, 3.0)))


# --- block int_div
def int_div(n, d):
    return n // d


show(lambda: myc.jit(int_div)(3, 0))
show(lambda: myc.jit(int_div)(3.0, 0.0))
print(myc.jit(int_div)(np.ones(2), np.zeros(2)))


# --- block recursion
def forever(n):
    return forever(n + 1) + 1


show(lambda: myc.jit(forever)(0))


# --- block backend_stage
show(lambda: myc.jit(broadcast, backend="gpu")(1.0, 2.0))
show(lambda: myc.ir(broadcast, 1.0, 2.0, stage="lowered"))


# --- block fallback
import os  # noqa: E402
import warnings  # noqa: E402


def dot3(x):
    return np.dot(np.ones((2, 3, 3)), x)


f = myc.jit(dot3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    f(a3)
    f(a3)
for w in caught:
    print(f"{w.category.__name__}: {w.message}")
print(f.stats())
os.environ["MYC_STRICT"] = "1"
show(lambda: myc.jit(dot3)(a3))
del os.environ["MYC_STRICT"]
