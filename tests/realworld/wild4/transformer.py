"""A two-layer causal transformer language model held in a class: the configuration in
the object, the parameters a list of dicts passed in; sinusoidal position encodings
from ``np.arange``, a causal mask by ``np.triu(..., k=1)`` and ``np.where``, heads by
``reshape``/``transpose`` and ``np.einsum``, layer norm, a tanh-GELU MLP, weight-tied
output logits and a cross-entropy picked by ``logp[np.arange(T), targets]``; the
gradient is ``myc.grad`` of the bound method ``model.loss``."""

import numpy as np

import myc


class TinyTransformer:
    def __init__(self, vocab=11, d_model=8, n_heads=2, n_layers=2, max_len=16):
        self.vocab = vocab
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_layers = n_layers
        pos = np.arange(max_len)[:, None]
        freq = np.exp(-np.log(100.0) * np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((max_len, d_model))
        pe[:, 0::2] = np.sin(pos * freq)
        pe[:, 1::2] = np.cos(pos * freq)
        self.pos_enc = pe

    def init_params(self, seed=0):
        r = np.random.default_rng(seed)
        d = self.d_model
        layers = []
        for _ in range(self.n_layers):
            layers.append({
                "qkv": r.standard_normal((d, 3 * d)) / np.sqrt(d),
                "proj": r.standard_normal((d, d)) / np.sqrt(d),
                "ln1_g": np.ones(d), "ln1_b": np.zeros(d),
                "ln2_g": np.ones(d), "ln2_b": np.zeros(d),
                "fc1": r.standard_normal((d, 2 * d)) / np.sqrt(d), "fc1_b": np.zeros(2 * d),
                "fc2": r.standard_normal((2 * d, d)) / np.sqrt(2 * d),
            })
        return {"embed": 0.5 * r.standard_normal((self.vocab, d)), "layers": layers}

    @staticmethod
    def layer_norm(x, g, b, eps=1e-5):
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
        return g * (x - mu) / np.sqrt(var + eps) + b

    @staticmethod
    def gelu(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    def attention(self, x, layer):
        T, d = x.shape
        h = self.n_heads
        q, k, v = np.split(x @ layer["qkv"], 3, axis=-1)
        q, k, v = (a.reshape(T, h, d // h).transpose(1, 0, 2) for a in (q, k, v))
        scores = np.einsum("htd,hsd->hts", q, k) / np.sqrt(d // h)
        mask = np.triu(np.ones((T, T)), k=1).astype(bool)
        scores = np.where(mask, -1e9, scores)
        scores = scores - scores.max(axis=-1, keepdims=True)
        w = np.exp(scores)
        w = w / w.sum(axis=-1, keepdims=True)
        out = np.einsum("hts,hsd->htd", w, v).transpose(1, 0, 2).reshape(T, d)
        return out @ layer["proj"]

    def forward(self, params, tokens):
        x = params["embed"][tokens] + self.pos_enc[:len(tokens)]
        for layer in params["layers"]:
            x = x + self.attention(self.layer_norm(x, layer["ln1_g"], layer["ln1_b"]), layer)
            hdn = self.gelu(self.layer_norm(x, layer["ln2_g"], layer["ln2_b"]) @ layer["fc1"]
                            + layer["fc1_b"])
            x = x + hdn @ layer["fc2"]
        return x @ params["embed"].T

    def loss(self, params, tokens, targets):
        logits = self.forward(params, tokens)
        logits = logits - logits.max(axis=-1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        return -np.mean(logp[np.arange(len(tokens)), targets])


model = TinyTransformer()


def make_data(T=10, seed=1):
    r = np.random.default_rng(seed)
    seq = np.cumsum(r.integers(1, 3, size=T + 1)) % model.vocab
    return seq[:-1], seq[1:]


def case():
    tokens, targets = make_data()
    return dict(fn=model.loss, gradient=myc.grad(model.loss),
                args=(model.init_params(), tokens, targets), argnums=0)


if __name__ == "__main__":
    params = model.init_params()
    tokens, targets = make_data()
    step = myc.jit(lambda p, t, y: myc.value_and_grad(model.loss)(p, t, y))
    print(step(params, tokens, targets)[0])
