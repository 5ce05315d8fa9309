"""The code of docs/ad.md, block by block; run it with ``python docs/examples/ad_examples.py``."""

# --- block api
import numpy as np

import myc


def f(x, y):
    return np.sum(np.sin(x) * y)


x = np.array([0.0, 1.0, 2.0])
y = np.array([1.0, 2.0, 3.0])

print(myc.grad(f)(x, y))                          # df/dx
print(myc.grad(f, argnums=(0, 1))(x, y))          # (df/dx, df/dy)
print(myc.value_and_grad(f, argnums=1)(x, y))     # (f, df/dy)

out, pullback = myc.vjp(f, x, y)                  # reverse mode, any output
print(out, pullback(1.0))                         # one cotangent per input

print(myc.jvp(f, (x, y), (np.ones(3), np.zeros(3))))  # forward mode: (f, J @ t)


# --- block keywords
def poly(x, a=2.0, b=1.0):
    return a * x * x + b


print(myc.grad(poly)(3.0))                 # defaults are kept
print(myc.grad(poly, argnums=2)(3.0, b=5.0))  # keywords work on the result


# --- block structure
def tuple_loss(params, x):
    w, b = params
    return np.sum((x * w + b) ** 2)


params = (np.float32(2.0), np.zeros(3, np.float32))
g = myc.grad(tuple_loss)(params, np.ones(3, np.float32))
print(g)

out, pullback = myc.vjp(lambda v, n: v * n, 2.0, 3)
print(pullback(1.0))                  # an int argument gets a zero cotangent
print(myc.jvp(lambda v, n: v * n, (2.0, 3), (1.0, None)))  # an int's tangent: None or 0


# --- block jacobians
def layer(W, x):
    return np.tanh(W @ x)


W = np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]])
xv = np.array([0.5, -0.2])
print(myc.jacrev(layer, argnums=1)(W, xv))     # (3, 2): out.shape + in.shape
print(myc.jacfwd(layer)(W, xv).shape)          # w.r.t. W: (3, 3, 2)


def energy(p):
    return np.sum(p["a"] ** 2) * p["s"] + np.sin(p["s"])


hess = myc.hessian(energy)({"a": np.array([1.0, 2.0]), "s": 0.5})
print(hess["a"]["a"], hess["a"]["s"], hess["s"]["s"])   # nested as JAX's
print(myc.elementwise_grad(np.tanh)(np.array([0.0, 1.0])))  # 1 - tanh(x)**2


# --- block conventions
print(myc.grad(np.maximum, argnums=(0, 1))(1.0, 1.0))            # tie: split evenly
print(myc.grad(lambda v: np.max(v))(np.array([1.0, 3.0, 3.0])))  # tie: split evenly
print(myc.grad(lambda a, b: max(a, b), argnums=(0, 1))(1.0, 1.0))  # builtin: picks a
print(myc.grad(abs)(0.0), myc.grad(np.sign)(0.5), myc.grad(np.floor)(0.5))
print(myc.grad(lambda v: np.sum(np.clip(v, 0.0, 1.0)))(np.array([-1.0, 0.0, 0.5, 1.0, 2.0])))
print(myc.grad(lambda a, b: a * 2.0, argnums=(0, 1))(1.0, np.ones(2)))  # unused: zeros
print(myc.grad(lambda v: np.sum(v * v))(np.ones(2, np.float32)).dtype)   # float32 stays
print(myc.grad(lambda n, v: n * v, argnums=1)(3, 2.0))                   # int arg: skip it


# --- block while
def newton_sqrt(a):
    r = a
    while abs(r * r - a) > 1e-12:
        r = 0.5 * (r + a / r)
    return r


print(myc.grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0))


def compound(x, n):
    i = 0
    while i < n:
        x = x * 1.00001
        i += 1
    return x


print(myc.grad(compound)(1.0, 10_000), 1.00001 ** 10_000)


# --- block closures
def make_model(scale):
    return lambda t: scale * np.tanh(t)


def fit(scale, t):
    model = make_model(scale)
    return np.sum(model(t) ** 2)


print(myc.grad(fit, argnums=(0, 1))(1.5, np.array([0.0, 0.5])))


# --- block recursion
def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


print(myc.grad(power)(2.0, 5), myc.grad(myc.grad(power))(2.0, 5))


# --- block compose
def cube(v):
    return v ** 3


print(myc.grad(myc.grad(cube))(2.0))                # 6 v
print(myc.grad(myc.grad(myc.grad(cube)))(2.0))      # 6
print(myc.jit(myc.grad(cube))(2.0), myc.grad(myc.jit(cube))(2.0))


def energy(p):
    return np.sum(np.sin(p) * p)


p = np.array([0.5, 1.0])
print(myc.jvp(myc.grad(energy), (p,), (np.array([1.0, 0.0]),)))  # Hessian-vector product


def slope_times_x(v):
    d = myc.grad(cube)                # a transform inside the program
    return d(v) * v                   # 3 v^3


def sin_times_cos(v):
    s, ds = myc.jvp(np.sin, (v,), (1.0,))
    return s * ds                     # sin(v) cos(v)


def grad_of_nested(x):
    def inner(b):
        return np.sin(b) * b

    return myc.grad(inner)(x)          # grad of a function defined in the program


print(myc.grad(slope_times_x)(2.0))   # 9 v^2
print(myc.grad(sin_times_cos)(0.3), np.cos(0.6))
print(myc.grad(grad_of_nested)(0.5), 2 * np.cos(0.5) - 0.5 * np.sin(0.5))


# --- block limit_late_binding
def late_binding(x):
    a = x
    g = lambda t: t * a
    a = a + 100.0
    return g(x)


print(late_binding(2.0))
try:
    print(myc.jit(late_binding)(2.0))
except myc.MycError as exc:
    print(exc)


def closures_in_a_loop(x):
    fs = ()
    for k in range(3):
        fs = fs + (lambda t: t * k * x,)  # noqa: B023 (the point of the example)
    s = 0.0
    for f in fs:
        s = s + f(1.0)
    return s


print(closures_in_a_loop(2.0), myc.jit(closures_in_a_loop)(2.0))


# --- block limit_kw_value
def call_kw(fn, v):
    return fn(x=v)


def uses_kw(v):
    return call_kw(np.sin, v)


try:
    print(myc.grad(uses_kw)(1.0))
except myc.MycError as exc:
    print(exc)


# --- block limit_astype_int
def int_part_times(v):
    return np.sum(v.astype(np.int64) * 1.0)


v = np.array([1.5, 2.5])
print(myc.grad(int_part_times)(v))                          # should be [0. 0.]
print(myc.jvp(int_part_times, (v,), (np.ones(2),))[1])      # forward mode says 0


# --- block limit_builtin_dtype
def as_float(v):
    return np.sum(v.astype(float) * v)


print(myc.jit(as_float)(v))
try:
    print(myc.grad(as_float)(v))
except myc.MycError as exc:
    print(exc)
print(myc.grad(lambda v: np.sum(v.astype(np.float64) * v))(v))


# --- block limit_grad_of_jvp_array
def norm_with_const(v):
    return np.sum(np.array([v, 2.0]) ** 2)


print(myc.grad(myc.grad(norm_with_const))(1.0), myc.jvp(myc.grad(norm_with_const), (1.0,), (1.0,)))
try:
    print(myc.grad(lambda v: myc.jvp(norm_with_const, (v,), (1.0,))[1])(1.0))
except myc.MycError as exc:
    print(exc)


# --- block limit_tuple_concat
def concat(v):
    t = (v,) + (2.0 * v,)
    return t[0] * t[1]


print(myc.jit(concat, backend="interp")(3.0))
try:
    print(myc.jit(concat)(3.0))
except myc.MycError as exc:
    print(exc)
try:
    print(myc.grad(concat)(3.0))
except myc.MycError as exc:
    print(exc)
