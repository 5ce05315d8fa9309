"""A GRU encoder-decoder whose parameters live in a ``@dataclass`` with ``np.ndarray``
annotations: gates by ``np.split(..., 3)`` of one stacked product and ``np.hsplit`` of the
decoder's readout, ``np.concatenate([h, y_prev])`` for teacher forcing,
``for t, x in enumerate(xs)``, ``typing`` annotations in signatures; ``myc.grad`` with
respect to the dataclass returns a ``GRUParams`` of gradients."""

from dataclasses import dataclass

import numpy as np

import myc


@dataclass
class GRUParams:
    W: np.ndarray   # (3H, D) input weights of the encoder's update, reset, candidate
    U: np.ndarray   # (3H, H)
    b: np.ndarray   # (3H,)
    Wd: np.ndarray  # (3H, H + O) decoder, fed [h, y_prev]
    Ud: np.ndarray  # (3H, H)
    out: np.ndarray  # (H, 2 * O): readout mean and log-scale side by side


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def gru_cell(h: np.ndarray, x: np.ndarray, W: np.ndarray, U: np.ndarray,
             b: np.ndarray | None = None) -> np.ndarray:
    gx = W @ x if b is None else W @ x + b
    zx, rx, nx = np.split(gx, 3)
    Uz, Ur, Un = np.split(U, 3)
    z = sigmoid(zx + Uz @ h)
    r = sigmoid(rx + Ur @ h)
    n = np.tanh(nx + Un @ (r * h))
    return (1.0 - z) * n + z * h


def seq2seq_nll(p: GRUParams, xs: np.ndarray, ys: np.ndarray) -> float:
    H = p.U.shape[1]
    h = np.zeros(H)
    for t, x in enumerate(xs):
        h = gru_cell(h, x, p.W, p.U, p.b)
    y_prev = np.zeros(ys.shape[1])
    nll = 0.0
    for y in ys:
        h = gru_cell(h, np.concatenate([h, y_prev]), p.Wd, p.Ud)
        mean_w, logs_w = np.hsplit(p.out, 2)
        mean, log_scale = h @ mean_w, h @ logs_w
        nll += np.sum(0.5 * ((y - mean) / np.exp(log_scale)) ** 2 + log_scale)
        y_prev = y
    return nll / len(ys)


def init_params(D: int = 3, H: int = 6, O: int = 2, seed: int = 0) -> GRUParams:
    r = np.random.default_rng(seed)
    s = 0.3
    return GRUParams(W=s * r.standard_normal((3 * H, D)), U=s * r.standard_normal((3 * H, H)),
                     b=np.zeros(3 * H), Wd=s * r.standard_normal((3 * H, H + O)),
                     Ud=s * r.standard_normal((3 * H, H)),
                     out=s * r.standard_normal((H, 2 * O)))


def make_data(T: int = 6, D: int = 3, O: int = 2, seed: int = 1):
    r = np.random.default_rng(seed)
    xs = r.standard_normal((T, D))
    ys = np.cumsum(xs[:4, :O], axis=0) * 0.5
    return xs, ys


def case():
    return dict(fn=seq2seq_nll, args=(init_params(), *make_data()), argnums=0)


if __name__ == "__main__":
    p, (xs, ys) = init_params(), make_data()
    g = myc.grad(seq2seq_nll)
    for _ in range(20):
        d = g(p, xs, ys)
        p = GRUParams(**{k: getattr(p, k) - 0.1 * getattr(d, k) for k in vars(p)})
    print(seq2seq_nll(p, xs, ys))
