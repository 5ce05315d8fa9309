"""The code of docs/walkthrough.md, block by block; run it with
``python docs/examples/walkthrough.py``.  (myc reads a function's source, so the
functions must live in a file like this one, not in an interactive prompt.)"""

# --- block jit
import numpy as np

import myc


@myc.jit
def loss(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


rng = np.random.default_rng(0)
w = rng.standard_normal((3, 1))
x = rng.standard_normal((5, 3))
y = rng.standard_normal((5, 1))
print(loss)
print(loss(w, x, y))

# --- block float32
w32, x32, y32 = w.astype(np.float32), x.astype(np.float32), y.astype(np.float32)
print(repr(loss(w32, x32, y32)))

# --- block ir
print(myc.ir(loss, w, x, y))

# --- block typed
print(myc.ir(loss, w, x, y, stage="typed"))

# --- block grad
dw = myc.grad(loss)(w, x, y)
print(dw)
value, (dw, dx) = myc.value_and_grad(loss, argnums=(0, 1))(w, x, y)
print(value, dw.shape, dx.shape)

# --- block vjp_jvp
out, pullback = myc.vjp(np.tanh, x[0])
print(out)
print(pullback(np.ones(3)))
value, tangent = myc.jvp(loss, (w, x, y), (np.ones_like(w), np.zeros_like(x), np.zeros_like(y)))
print(value, tangent, float(np.sum(dw)))


# --- block while
def newton_sqrt(a):
    r = a
    while abs(r * r - a) > 1e-12:
        r = 0.5 * (r + a / r)
    return r


print(myc.jit(newton_sqrt)(2.0))
print(myc.grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0))


# --- block closures
def make_model(scale):
    def model(t):
        return scale * np.sin(t)

    return model


def fit(scale, t):
    m = make_model(scale)
    return np.sum(m(t) ** 2)


t = np.linspace(0.0, 1.0, 4)
print(myc.grad(fit, argnums=(0, 1))(1.5, t))


# --- block second_order
def cube(v):
    return v ** 3


print(myc.grad(myc.grad(cube))(2.0))  # 6 * v


def energy(p):
    return np.sum(np.sin(p) * p)


p = np.array([0.5, 1.0])
print(myc.jvp(myc.grad(energy), (p,), (np.array([1.0, 0.0]),)))  # Hessian-vector product


def slope_times_x(v):
    d = myc.grad(cube)
    return d(v) * v  # 3 v^3


print(myc.grad(slope_times_x)(2.0))  # 9 v^2


# --- block errors
def bad_shapes(a, b):
    c = a * 2.0
    return c @ b


try:
    myc.jit(bad_shapes)(np.ones((2, 3)), np.ones((2, 3)))
except myc.MycShapeError as exc:
    print(f"{type(exc).__name__} at line {exc.lineno}:")
    print(exc)


def not_in_subset(v):
    out = []
    while v < 10.0:
        out.append(v)
        v = v * 2.0
    return out


try:
    myc.jit(not_in_subset)(1.0)
except myc.MycError as exc:
    print(exc)
