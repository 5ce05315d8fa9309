"""A one-block transformer encoder configured by a frozen ``@dataclass`` and held in a
``@dataclass`` of parameters, as Flax/Equinox users write models: the config's derived
sizes are ``@property``s (``head_dim = d_model // n_heads``), the activation is chosen
by a string field, dropout is switched by a ``train`` flag passed by keyword
(``block(x, train=False)``), and the parameter dataclass's ``__call__`` runs the layer;
the loss maps token embeddings to a per-sequence regression target."""

from dataclasses import dataclass, field

import numpy as np

import myc


@dataclass(frozen=True)
class Config:
    d_model: int = 16
    n_heads: int = 4
    d_ff: int = 32
    activation: str = "gelu"
    eps: float = 1e-5

    @property
    def head_dim(self):
        return self.d_model // self.n_heads


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


ACTIVATIONS = {"gelu": gelu, "relu": lambda x: np.maximum(x, 0.0), "tanh": np.tanh}


def layer_norm(x, gain, bias, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gain * (x - mu) / np.sqrt(var + eps) + bias


@dataclass
class EncoderBlock:
    cfg: Config
    wq: np.ndarray
    wk: np.ndarray
    wv: np.ndarray
    wo: np.ndarray
    w1: np.ndarray
    w2: np.ndarray
    ln1: tuple = field(default_factory=lambda: (np.ones(16), np.zeros(16)))
    ln2: tuple = field(default_factory=lambda: (np.ones(16), np.zeros(16)))

    def split_heads(self, x):
        n, _ = x.shape
        return x.reshape(n, self.cfg.n_heads, self.cfg.head_dim).transpose(1, 0, 2)

    def attention(self, x):
        q, k, v = (self.split_heads(x @ w) for w in (self.wq, self.wk, self.wv))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(self.cfg.head_dim)
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = (weights @ v).transpose(1, 0, 2).reshape(x.shape[0], self.cfg.d_model)
        return out @ self.wo

    def __call__(self, x, train=False, rng=None, p_drop=0.1):
        act = ACTIVATIONS[self.cfg.activation]
        h = layer_norm(x + self.attention(x), *self.ln1, self.cfg.eps)
        ff = act(h @ self.w1) @ self.w2
        if train:
            ff = ff * (rng.uniform(size=ff.shape) > p_drop) / (1 - p_drop)
        return layer_norm(h + ff, *self.ln2, self.cfg.eps)


def loss_fn(block, readout, tokens, targets):
    preds = np.stack([np.mean(block(seq, train=False) @ readout) for seq in tokens])
    return np.mean((preds - targets) ** 2)


def init_block(cfg, seed=0):
    rng = np.random.default_rng(seed)
    d, f = cfg.d_model, cfg.d_ff

    def mat(m, n):
        return rng.normal(size=(m, n)) / np.sqrt(m)

    return EncoderBlock(cfg, mat(d, d), mat(d, d), mat(d, d), mat(d, d), mat(d, f), mat(f, d))


def make_data(n_seq=4, length=6, seed=1):
    rng = np.random.default_rng(seed)
    tokens = rng.normal(size=(n_seq, length, 16))
    return tokens, np.tanh(tokens.sum(axis=(1, 2)) / 10)


def case():
    tokens, targets = make_data()
    readout = np.random.default_rng(2).normal(size=16) / 4
    return dict(fn=loss_fn, args=(init_block(Config()), readout, tokens, targets),
                argnums=(0, 1))


if __name__ == "__main__":
    tokens, targets = make_data()
    block, readout = init_block(Config()), np.random.default_rng(2).normal(size=16) / 4
    print(myc.value_and_grad(loss_fn, argnums=(0, 1))(block, readout, tokens, targets)[0])
