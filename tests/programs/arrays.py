"""Array creation, indexing, slicing, gathers, reshape/transpose, dtypes, attributes."""

import numpy as np

from . import case, randint, randn

BOOL_MASK = np.array([True, False, True, True, False, False])


@case((randn(0, 6),), (randn(1, 6, dtype=np.float32),), (randint(2, -9, 9, 6),))
def basic_indexing(x):
    return x[0], x[-1], x[2] - x[-3], x[1:4], x[:-2], x[::2], x[::-1]


@case((randn(0, 4, 5),), (randn(1, 3, 6, dtype=np.float32),))
def matrix_indexing(A):
    row = A[1]
    col = A[:, 0]
    sub = A[1:, :-1]
    elem = A[-1, 2]
    strided = A[::2, 1::2]
    return row, col, sub, elem, strided


@case((randn(0, 2, 3, 4),), (randn(1, 2, 2, 2, dtype=np.float32),))
def tensor3_indexing(T):
    return T[0, 1], T[:, -1, :], T[1, :, 1:], T[-1][0][0]


@case(
    (randn(0, 5, 4), randint(1, 0, 4, 5)), (randn(2, 3, 7, dtype=np.float32), randint(3, 0, 7, 3))
)
def gather_labels(logits, labels):
    n = logits.shape[0]
    return logits[np.arange(n), labels]


@case((randn(0, 8), randint(1, 0, 8, 5)), (randn(2, 4, dtype=np.float32), randint(3, -4, 4, 6)))
def gather_1d(x, idx):
    return x[idx], x[idx] * 2.0 - x[0]


@case(
    (randn(0, 6, 3), randint(1, 0, 6, 4)),
)
def gather_rows(A, idx):
    return A[idx], A[idx, 1]


@case((randn(0, 3, 4),), (randn(1, 1, 1),))
def creation_float(x):
    n, m = x.shape
    z = np.zeros((n, m))
    o = np.ones(m)
    f = np.full((n, m), 2.5)
    a = np.arange(n * m).reshape(n, m)
    return z + o * 3.0 + f - a + x, a


@case((randn(0, 4),), (randn(1, 7, dtype=np.float32),))
def creation_dtypes(x):
    n = x.shape[0]
    z32 = np.zeros(n, dtype=np.float32)
    o64 = np.ones((2, n), dtype=np.float64)
    a32 = np.arange(n, dtype=np.float32)
    ai = np.arange(1, 2 * n, 2)
    f_int = np.full(n, 7, dtype=np.int64)
    fb = np.full((n,), True)
    return z32 + a32 * x, o64, ai, f_int, fb


@case((randn(0, 5),), (randn(1, 2, dtype=np.float32),))
def linspace_grid(x):
    n = len(x)
    xs = np.linspace(0.0, 1.0, n)
    ys = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    return xs * x, ys + x, np.linspace(2, 10, 5)


@case((3, 4), (1, 1))
def shape_from_int_args(n, m):
    # shapes taken from scalar arguments rather than from an array
    a = np.arange(n * m).reshape(n, m)
    return np.zeros((n, m)) + np.ones(m) * 2.0 - a, np.linspace(0.0, 1.0, n)


@case((randn(0, 3, 4),), (randn(1, 2, 5, dtype=np.float32),), (randint(2, 0, 5, 3, 3),))
def like_creation(x):
    z = np.zeros_like(x)
    o = np.ones_like(x)
    zf = np.zeros_like(x, dtype=np.float32)
    oi = np.ones_like(x, dtype=np.int64)
    return z, o + x, zf, oi


@case((1.0,), (-2.0,))
def array_literals(s):
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    v = np.array([1, -1])
    t = np.array((0.5, 0.25, 0.125))
    w = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    return A @ v * s, t.sum() * s, w * s, v


@case((randn(0, 12),), (randn(1, 24, dtype=np.float32),))
def reshapes(x):
    a = x.reshape(3, -1)
    b = np.reshape(x, (2, -1))
    c = x.reshape((-1, 2, 2))
    d = a.reshape(x.shape[0])
    return a, b.T, c[1], d - x


@case((randn(0, 3, 4),), (randn(1, 2, 5, dtype=np.float32),))
def transposes(A):
    return (
        A.T,
        np.transpose(A),
        A.T @ A,
        np.transpose(A.reshape(1, A.shape[0], A.shape[1]), (2, 0, 1)),
    )


@case((randn(0, 5),), (randn(1, 4, 3, dtype=np.float32),), (randint(2, -3, 3, 6),))
def astype_roundtrip(x):
    as32 = x.astype(np.float32)
    as64 = x.astype(np.float64)
    asint = (x * 10.0).astype(np.int64)
    asbool = x.astype(np.bool_)
    return as32, as64, asint, asbool, asbool.astype(np.float64).sum()


@case((randn(0, 4, 3),), (randn(1, 5, dtype=np.float32),), (randn(2, 2, 3, 4),))
def shape_attributes(x):
    nd = x.ndim
    n0 = x.shape[0]
    total = 1
    for s in x.shape:
        total *= s
    return nd, n0, total, len(x), x.shape


@case((randn(0, 6), BOOL_MASK), (randn(1, 6, dtype=np.float32), ~BOOL_MASK))
def bool_mask_select(x, mask):
    kept = np.where(mask, x, 0.0)
    frac = mask.astype(np.float64).mean()
    both = np.where(mask, x > 0.0, mask)
    either = np.where(mask, mask, x > 0.0)
    return kept, frac, both, either, mask == False  # noqa: E712


@case((randn(0, 5), 2), (randn(1, 5, dtype=np.float32), -1))
def dynamic_scalar_index(x, i):
    return x[i] * x[i - 1], x[len(x) - 2 - i]


@case((randn(0, 4, 4),), (randn(1, 3, 3, dtype=np.float32),))
def trace_loop(A):
    t = A[0, 0] * 0.0
    for i in range(A.shape[0]):
        t = t + A[i, i]
    return t


@case((randn(0, 3, 5),), (randn(1, 4, 2, dtype=np.float32),))
def outer_broadcast(A):
    col = A[:, 0].reshape(-1, 1)
    row = A[0].reshape(1, -1)
    return (
        col * row,
        A - A.mean(axis=0),
        A / A.sum(axis=1, keepdims=True),
        A + np.arange(A.shape[1]),
    )


@case((randint(0, 1, 20, 4, 3),), (randint(1, -10, 10, 6),))
def int_array_ops(a):
    b = a * 2 - 3
    c = a // 3
    d = a % 4
    return b, c, d, a.sum(), a.max(), (a > 2).sum(), np.abs(a)
