"""A convolution layer by im2col, index arithmetic as the course code writes it
(no ``stride_tricks``): ``get_im2col_indices`` builds ``k, i, j`` from ``np.repeat``,
``np.tile``, ``np.arange`` and ``.reshape(-1, 1)`` broadcasting, ``np.pad`` of the
input, ``cols = x_padded[:, k, i, j]`` (fancy indexing over three axes),
``cols.transpose(1, 2, 0).reshape(C * field_height * field_width, -1)``, the
output ``W.reshape(F, -1) @ cols + b`` reshaped and transposed to ``(N, F, H', W')``,
then a 2x2 max-pool by ``reshape`` and ``max`` and a linear read-out; the loss
differentiated w.r.t. the filters, the bias and the read-out weights."""

import numpy as np


def get_im2col_indices(x_shape, field_height, field_width, padding=1, stride=1):
    N, C, H, W = x_shape
    assert (H + 2 * padding - field_height) % stride == 0
    assert (W + 2 * padding - field_width) % stride == 0
    out_height = int((H + 2 * padding - field_height) / stride + 1)
    out_width = int((W + 2 * padding - field_width) / stride + 1)
    i0 = np.repeat(np.arange(field_height), field_width)
    i0 = np.tile(i0, C)
    i1 = stride * np.repeat(np.arange(out_height), out_width)
    j0 = np.tile(np.arange(field_width), field_height * C)
    j1 = stride * np.tile(np.arange(out_width), out_height)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), field_height * field_width).reshape(-1, 1)
    return (k.astype(int), i.astype(int), j.astype(int))


def im2col_indices(x, field_height, field_width, padding=1, stride=1):
    p = padding
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode='constant')
    k, i, j = get_im2col_indices(x.shape, field_height, field_width, padding, stride)
    cols = x_padded[:, k, i, j]
    C = x.shape[1]
    cols = cols.transpose(1, 2, 0).reshape(field_height * field_width * C, -1)
    return cols


def conv_forward(X, W, b, stride=1, padding=1):
    n_filters, d_filter, h_filter, w_filter = W.shape
    n_x, d_x, h_x, w_x = X.shape
    h_out = (h_x - h_filter + 2 * padding) / stride + 1
    w_out = (w_x - w_filter + 2 * padding) / stride + 1
    h_out, w_out = int(h_out), int(w_out)
    X_col = im2col_indices(X, h_filter, w_filter, padding=padding, stride=stride)
    W_col = W.reshape(n_filters, -1)
    out = W_col @ X_col + b
    out = out.reshape(n_filters, h_out, w_out, n_x)
    out = out.transpose(3, 0, 1, 2)
    return out


def maxpool2x2(X):
    N, C, H, W = X.shape
    return X.reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))


def loss(params, X, y):
    h = np.maximum(0, conv_forward(X, params["W"], params["b"]))
    h = maxpool2x2(h).reshape(X.shape[0], -1)
    scores = h @ params["W_out"]
    scores = scores - scores.max(axis=1, keepdims=True)
    log_probs = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(y)), y])


def make_data(seed=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(4, 2, 6, 6))
    y = np.array([0, 1, 2, 1])
    params = {"W": 0.3 * rng.normal(size=(3, 2, 3, 3)), "b": 0.1 * rng.normal(size=(3, 1)),
              "W_out": 0.2 * rng.normal(size=(27, 3))}
    return params, X, y


def case():
    return dict(fn=loss, args=make_data(), argnums=0)
