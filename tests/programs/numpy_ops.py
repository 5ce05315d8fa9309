"""NumPy elementwise math, reductions, matmul and small numeric kernels."""

import numpy as np

from . import case, randint, randn, uniform

EPS = 1e-5


@case((randn(0, 3, 4),), (randn(1, 7, dtype=np.float32),))
def elementwise_unary(x):
    a = np.exp(x) + np.sin(x) * np.cos(x) - np.tanh(x)
    b = np.arctan(x) + np.square(x) + np.abs(x) * np.sign(x)
    c = np.tan(x * 0.3)
    return a, b, c


@case(
    (uniform(0, 2, 3, low=0.1, high=4.0),), (uniform(1, 6, low=0.01, high=2.0, dtype=np.float32),)
)
def elementwise_positive(x):
    return np.log(x), np.sqrt(x), np.log1p(x), np.expm1(-x), np.power(x, 1.5), np.power(x, 2)


@case((randn(0, 8) * 3.0,), (randn(1, 5, dtype=np.float32) * 3.0,))
def rounding_and_clip(x):
    return np.floor(x), np.ceil(x), np.clip(x, -1.0, 2.0), np.sign(np.floor(x))


@case(
    (randn(0, 6), randn(1, 6)), (randn(2, 3, 2, dtype=np.float32), randn(3, 3, 2, dtype=np.float32))
)
def binary_elementwise(a, b):
    return np.maximum(a, b), np.minimum(a, b), np.where(a > b, a - b, b - a), np.power(np.abs(a), b)


@case((randn(0, 3, 4),), (randn(1, 2, 5, dtype=np.float32),))
def reductions_all(x):
    return (
        np.sum(x),
        np.mean(x),
        np.max(x),
        np.min(x),
        x.sum(),
        x.mean(),
        x.max(),
        x.min(),
    )


@case((randn(0, 3, 4),), (randn(1, 2, 5, dtype=np.float32),))
def reductions_axis(x):
    return (
        np.sum(x, axis=0),
        np.mean(x, axis=1),
        np.max(x, axis=-1, keepdims=True),
        np.min(x, axis=0, keepdims=True),
        x.sum(axis=1, keepdims=True),
        x.mean(axis=0),
        x.max(axis=0),
        x.min(axis=1),
    )


@case((randn(0, 2, 3, 4),), (randn(1, 3, 2, 2, dtype=np.float32),))
def reductions_3d(x):
    return np.sum(x, axis=(0, 2)), x.mean(axis=-1), np.max(x, axis=1, keepdims=True)


@case(
    (randn(0, 3, 4), randn(1, 4, 2), randn(2, 4)),
    (
        randn(3, 2, 3, dtype=np.float32),
        randn(4, 3, 5, dtype=np.float32),
        randn(5, 3, dtype=np.float32),
    ),
)
def matmul_variants(A, B, v):
    return A @ B, np.dot(A, B), np.matmul(A, v), np.dot(v, v), v @ B, A.T.T @ B


@case((randn(0, 4, 5),), (randn(1, 3, 6, dtype=np.float32),), (randn(2, 2, 3) * 50.0,))
def softmax_rows(z):
    m = np.max(z, axis=-1, keepdims=True)
    e = np.exp(z - m)
    return e / np.sum(e, axis=-1, keepdims=True)


@case((randn(0, 6),), (randn(1, 3, 4, dtype=np.float32) * 30.0,))
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@case(
    (randn(0, 5, 4), randint(1, 0, 4, 5)), (randn(2, 3, 6, dtype=np.float32), randint(3, 0, 6, 3))
)
def cross_entropy(logits, labels):
    n = logits.shape[0]
    m = logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=1)) + m.reshape(n)
    picked = logits[np.arange(n), labels]
    return np.mean(lse - picked)


@case(
    (randn(0, 4, 3), randn(1, 3, 8), randn(2, 8), randn(3, 8, 2), randn(4, 2)),
    (
        randn(5, 6, 3, dtype=np.float32),
        randn(6, 3, 4, dtype=np.float32),
        randn(7, 4, dtype=np.float32),
        randn(8, 4, 1, dtype=np.float32),
        randn(9, 1, dtype=np.float32),
    ),
)
def mlp_forward(x, W1, b1, W2, b2):
    h = np.maximum(x @ W1 + b1, 0.0)
    return np.tanh(h @ W2 + b2)


@case((randn(0, 4, 6),), (randn(1, 3, 5, dtype=np.float32),))
def layer_norm(x, eps=EPS):
    mu = x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(x - mu), axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


@case((randn(0, 10),), (randn(1, 7, dtype=np.float32) * 10.0,))
def stable_activations(x):
    sigmoid = 1.0 / (1.0 + np.exp(-x))
    softplus = np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    gelu_tanh = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    return sigmoid, softplus, gelu_tanh


@case((randn(0, 8), randn(1, 8)), (randn(2, 5, dtype=np.float32), randn(3, 5, dtype=np.float32)))
def cosine_similarity(a, b):
    return np.dot(a, b) / (np.sqrt(np.sum(a * a)) * np.sqrt(np.sum(b * b)))


@case(
    (randn(0, 6, 3), randn(1, 3), 0.1, 50),
    (randn(2, 5, 2, dtype=np.float32), randn(3, 2, dtype=np.float32), 0.05, 20),
)
def linear_regression_gd(X, w_true, lr, steps):
    y = X @ w_true
    w = np.zeros_like(w_true)
    n = X.shape[0]
    for _ in range(steps):
        r = X @ w - y
        w = w - lr * (X.T @ r) / n
    return w, np.mean(np.square(X @ w - y))


@case((randn(0, 5, 5),), (randn(1, 4, 4, dtype=np.float32),))
def pairwise_sq_dists(X):
    sq = np.sum(X * X, axis=1)
    d = sq.reshape(-1, 1) + sq.reshape(1, -1) - 2.0 * (X @ X.T)
    return np.maximum(d, 0.0)


@case((uniform(0, 7, low=-2.0, high=2.0),), (uniform(1, 4, low=-2.0, high=2.0, dtype=np.float32),))
def horner_array(x):
    coeffs = (0.5, -1.0, 2.0, 0.25)
    acc = np.zeros_like(x)
    for c in coeffs:
        acc = acc * x + c
    return acc


@case((randn(0, 12),), (randn(1, 9, dtype=np.float32),))
def relu_family(x):
    relu = np.where(x > 0.0, x, 0.0)
    leaky = np.where(x > 0.0, x, 0.01 * x)
    elu = np.where(x > 0.0, x, np.expm1(np.minimum(x, 0.0)))
    hard = np.clip(x + 1.0, 0.0, 2.0) - 1.0
    return relu, leaky, elu, hard


@case(
    (randn(0, 3, 4), randn(1, 4)), (randn(2, 2, 3, dtype=np.float32), randn(3, 3, dtype=np.float32))
)
def broadcasting_mix(A, b):
    c = A + b
    d = A * b.reshape(1, -1) - b.reshape(1, b.shape[0])
    e = np.sum(A * b, axis=1, keepdims=True) * b
    return c, d, e, 2.0**b, 1.0 - A


@case(
    (randn(0, 4, 3), randn(1, 3, 3)),
    (randn(2, 2, 2, dtype=np.float32), randn(3, 2, 2, dtype=np.float32)),
)
def rnn_unroll(xs, Wh):
    h = np.zeros_like(xs[0])
    for x in xs:
        h = np.tanh(h @ Wh + x)
    return h


@case(
    (uniform(0, 6, low=0.01, high=1.0),), (uniform(1, 3, 3, low=0.01, high=1.0, dtype=np.float32),)
)
def entropy(p):
    q = p / np.sum(p)
    return -np.sum(q * np.log(q))


@case((randn(0, 5, 3),), (randn(1, 4, 2, dtype=np.float32),))
def covariance(X):
    Xc = X - X.mean(axis=0, keepdims=True)
    return Xc.T @ Xc / (X.shape[0] - 1)


@case((randn(0, 20),), (randn(1, 10, dtype=np.float32),))
def exp_moving_average(x):
    alpha = 0.3
    s = x[0]
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        s = alpha * x[i] + (1.0 - alpha) * s
        out = out + np.where(np.arange(x.shape[0]) == i, s, 0.0)
    return out
