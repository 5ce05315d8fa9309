"""One pre-norm transformer block (causal multi-head self-attention and a GELU MLP) with
its parameters in a dict, trained on next-token regression."""

import numpy as np

import myc


def layer_norm(x, gain, bias, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gain * (x - mu) / np.sqrt(var + eps) + bias


def softmax(scores, axis=-1):
    shifted = scores - np.max(scores, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def attention(params, x, n_heads):
    T, D = x.shape
    hd = D // n_heads
    qkv = x @ params["w_qkv"]                      # (T, 3D)
    q, k, v = np.split(qkv, 3, axis=-1)
    q = q.reshape(T, n_heads, hd).transpose(1, 0, 2)
    k = k.reshape(T, n_heads, hd).transpose(1, 0, 2)
    v = v.reshape(T, n_heads, hd).transpose(1, 0, 2)
    scores = np.einsum("htd,hsd->hts", q, k) / np.sqrt(hd)
    causal = np.tril(np.ones((T, T), dtype=bool))
    scores = np.where(causal, scores, -1e9)
    weights = softmax(scores)
    out = np.einsum("hts,hsd->htd", weights, v)
    out = out.transpose(1, 0, 2).reshape(T, D)
    return out @ params["w_out"]


def block(params, x, n_heads=2):
    x = x + attention(params, layer_norm(x, params["ln1_g"], params["ln1_b"]), n_heads)
    h = gelu(layer_norm(x, params["ln2_g"], params["ln2_b"]) @ params["w_up"] + params["b_up"])
    return x + h @ params["w_down"]


def loss(params, seq):
    pred = block(params, seq[:-1])
    return np.mean((pred - seq[1:]) ** 2)


def init_params(d, hidden, seed=0):
    rng = np.random.default_rng(seed)
    scale = lambda n: 1.0 / np.sqrt(n)  # noqa: E731
    return {
        "ln1_g": np.ones(d), "ln1_b": np.zeros(d),
        "w_qkv": rng.normal(0, scale(d), (d, 3 * d)),
        "w_out": rng.normal(0, scale(d), (d, d)),
        "ln2_g": np.ones(d), "ln2_b": np.zeros(d),
        "w_up": rng.normal(0, scale(d), (d, hidden)), "b_up": np.zeros(hidden),
        "w_down": rng.normal(0, scale(hidden), (hidden, d)),
    }


def case():
    params = init_params(8, 16)
    params["ln1_g"] = params["ln1_g"] + 0.1
    params["b_up"] = params["b_up"] - 0.05
    seq = np.sin(np.linspace(0, 6, 11))[:, None] * np.linspace(0.5, 1.5, 8)
    return dict(fn=loss, args=(params, seq), argnums=0)


if __name__ == "__main__":
    c = case()
    step = myc.value_and_grad(loss)
    params = c["params"] if "params" in c else c["args"][0]
    for i in range(50):
        val, g = step(params, c["args"][1])
        params = {k: params[k] - 0.05 * g[k] for k in params}
    print(val)
