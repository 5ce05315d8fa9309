"""CS231n-style layer functions: each ``*_forward`` returns ``(out, cache)``, a
fully-connected net ``affine - batchnorm - relu - dropout - affine - softmax`` whose loss
also computes the softmax's ``dx`` by ``dx[np.arange(N), y] -= 1`` as the assignment's
code does; ``bn_param``/``dropout_param`` dicts of options (``mode``, ``eps``, ``p``,
``seed``), a dropout mask drawn after ``np.random.seed(seed)``.  Here the loss is
differentiated by ``myc.grad`` with respect to the ``params`` dict."""

import numpy as np

import myc


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def relu_forward(x):
    out = np.maximum(0, x)
    return out, x


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    if mode == "train":
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x, x_hat, sample_mean, sample_var, gamma, eps)
    elif mode == "test":
        x_hat = (x - bn_param["running_mean"]) / np.sqrt(bn_param["running_var"] + eps)
        out = gamma * x_hat + beta
        cache = None
    else:
        raise ValueError(f'Invalid forward batchnorm mode "{mode}"')
    return out, cache


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    return out, (dropout_param, mask)


def affine_bn_relu_forward(x, w, b, gamma, beta, bn_param):
    a, fc_cache = affine_forward(x, w, b)
    an, bn_cache = batchnorm_forward(a, gamma, beta, bn_param)
    out, relu_cache = relu_forward(an)
    return out, (fc_cache, bn_cache, relu_cache)


def softmax_loss(x, y):
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


def loss(params, X, y, reg=0.0, bn_param=None, dropout_param=None):
    """The two-layer net's data loss plus L2 regularization (CS231n's ``loss(X, y)``)."""
    if bn_param is None:
        bn_param = {"mode": "train"}
    h, cache1 = affine_bn_relu_forward(X, params["W1"], params["b1"], params["gamma1"],
                                       params["beta1"], bn_param)
    if dropout_param is not None:
        h, do_cache = dropout_forward(h, dropout_param)
    scores, cache2 = affine_forward(h, params["W2"], params["b2"])
    data_loss, dscores = softmax_loss(scores, y)
    reg_loss = 0.5 * reg * (np.sum(params["W1"] * params["W1"]) +
                            np.sum(params["W2"] * params["W2"]))
    return data_loss + reg_loss


def init_params(input_dim=12, hidden_dim=10, num_classes=4, weight_scale=1e-1, seed=0):
    r = np.random.RandomState(seed)
    return {"W1": weight_scale * r.randn(input_dim, hidden_dim), "b1": np.zeros(hidden_dim),
            "gamma1": np.ones(hidden_dim), "beta1": np.zeros(hidden_dim),
            "W2": weight_scale * r.randn(hidden_dim, num_classes), "b2": np.zeros(num_classes)}


def make_data(n=16, shape=(3, 2, 2), num_classes=4, seed=1):
    r = np.random.RandomState(seed)
    return r.randn(n, *shape), r.randint(num_classes, size=n)


def case():
    X, y = make_data()
    return dict(fn=loss, args=(init_params(), X, y, 0.05, {"mode": "train", "eps": 1e-5},
                               {"mode": "train", "p": 0.75, "seed": 123}), argnums=0)


if __name__ == "__main__":
    params, (X, y) = init_params(), make_data()
    g = myc.grad(loss)
    for _ in range(30):
        grads = g(params, X, y, 0.05)
        params = {k: params[k] - 0.5 * grads[k] for k in params}
    print(loss(params, X, y, 0.05))
