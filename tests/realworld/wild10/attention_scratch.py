"""Scaled dot-product and multi-head attention from scratch, as tutorials write it in
NumPy: ``scores = Q @ K.swapaxes(-2, -1) / np.sqrt(d_k)``, a causal mask made by
``np.triu(np.ones((T, T)), k=1).astype(bool)`` and applied by masked assignment
``scores[:, mask] = -1e9``, a stable softmax by ``x - x.max(axis=-1, keepdims=True)``,
heads split by ``reshape(T, n_heads, d_k).transpose(1, 0, 2)``, concatenated back by
``transpose(1, 0, 2).reshape(T, d_model)``, a residual and a hand-written layer norm.
The loss is a regression of the last position's output."""

import numpy as np


def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, K.swapaxes(-2, -1)) / np.sqrt(d_k)
    if mask is not None:
        scores[:, mask] = -1e9
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


class MultiHeadAttention:
    def __init__(self, d_model, n_heads, seed=0):
        assert d_model % n_heads == 0
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        rng = np.random.default_rng(seed)
        scale = 1 / np.sqrt(d_model)
        self.W_q = rng.normal(0, scale, (d_model, d_model))
        self.W_k = rng.normal(0, scale, (d_model, d_model))
        self.W_v = rng.normal(0, scale, (d_model, d_model))
        self.W_o = rng.normal(0, scale, (d_model, d_model))
        self.gamma = np.ones(d_model)
        self.beta = np.zeros(d_model)

    def split_heads(self, x):
        T = x.shape[0]
        return x.reshape(T, self.n_heads, self.d_k).transpose(1, 0, 2)

    def combine_heads(self, x):
        T = x.shape[1]
        return x.transpose(1, 0, 2).reshape(T, self.d_model)

    def __call__(self, x, causal=True):
        T = x.shape[0]
        Q = self.split_heads(x @ self.W_q)
        K = self.split_heads(x @ self.W_k)
        V = self.split_heads(x @ self.W_v)
        mask = np.triu(np.ones((T, T)), k=1).astype(bool) if causal else None
        attn, self.attention_weights = scaled_dot_product_attention(Q, K, V, mask)
        out = self.combine_heads(attn) @ self.W_o
        return layer_norm(x + out, self.gamma, self.beta)


def loss(mha, x, target):
    y = mha(x)
    return 0.5 * np.sum((y[-1] - target) ** 2)


def case():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 8))
    return dict(fn=loss, args=(MultiHeadAttention(8, 2), x, rng.normal(size=8)), argnums=0)
