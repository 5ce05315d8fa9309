"""A small convolutional classifier on 8x8 images: a 3x3 convolution written as a sum
over the kernel's offsets of ``np.einsum`` on shifted slices (the stride loops of
tutorial code), ReLU, 2x2 max pooling by ``reshape`` and ``max`` over two axes, a
dense layer and softmax cross-entropy; parameters in a dict."""

import numpy as np

import myc


def conv2d(x, w, b):
    """x: (n, c_in, H, W), w: (c_out, c_in, kh, kw) -> (n, c_out, H-kh+1, W-kw+1)."""
    n, c_in, H, W = x.shape
    c_out, _, kh, kw = w.shape
    Ho, Wo = H - kh + 1, W - kw + 1
    out = np.zeros((n, c_out, Ho, Wo))
    for i in range(kh):
        for j in range(kw):
            out = out + np.einsum("nchw,oc->nohw", x[:, :, i:i + Ho, j:j + Wo], w[:, :, i, j])
    return out + b[None, :, None, None]


def max_pool(x, s=2):
    n, c, H, W = x.shape
    return x.reshape(n, c, H // s, s, W // s, s).max(axis=(3, 5))


def loss(params, images, labels):
    h = np.maximum(conv2d(images, params["conv_w"], params["conv_b"]), 0.0)
    h = max_pool(h)
    h = h.reshape(h.shape[0], -1)
    logits = h @ params["fc_w"] + params["fc_b"]
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])


def init_params(c_out=3, n_classes=2, seed=0):
    r = np.random.default_rng(seed)
    return {"conv_w": 0.4 * r.standard_normal((c_out, 1, 3, 3)), "conv_b": 0.1 * np.ones(c_out),
            "fc_w": 0.2 * r.standard_normal((c_out * 3 * 3, n_classes)),
            "fc_b": np.zeros(n_classes)}


def make_data(n=8, seed=1):
    r = np.random.default_rng(seed)
    labels = r.integers(0, 2, n)
    images = 0.3 * r.standard_normal((n, 1, 8, 8))
    images[labels == 0, 0, 2:6, 3:5] += 1.0  # vertical bars
    images[labels == 1, 0, 3:5, 2:6] += 1.0  # horizontal bars
    return images, labels


def case():
    images, labels = make_data()
    return dict(fn=loss, args=(init_params(), images, labels), argnums=0)


if __name__ == "__main__":
    params, (x, y) = init_params(), make_data()
    g = myc.grad(loss)
    for _ in range(50):
        params = {k: v - 0.5 * d for (k, v), d in zip(params.items(), g(params, x, y).values())}
    print(loss(params, x, y))
