"""A binary restricted Boltzmann machine trained by pseudo-likelihood, as the
scikit-learn ``BernoulliRBM.score_samples`` style writes it: the free energy
``-v @ b - np.logaddexp(0, v @ W + c).sum(axis=1)``, one randomly chosen visible bit of
each sample flipped on a copy ``v_ = v.copy()`` by
``v_[np.arange(n), idx] = 1 - v_[np.arange(n), idx]`` with ``idx`` from a generator
passed in, and the log-sigmoid of the free-energy difference; parameters in a
``dict`` with defaults filled by ``params.get``."""

import numpy as np

import myc


def free_energy(params, v):
    W, b, c = params["W"], params.get("b", 0.0), params["c"]
    return -v @ b - np.logaddexp(0, v @ W + c).sum(axis=1)


def neg_pseudo_likelihood(params, v, rng):
    n, d = v.shape
    idx = rng.integers(0, d, size=n)
    v_ = v.copy()
    v_[np.arange(n), idx] = 1 - v_[np.arange(n), idx]
    fe, fe_ = free_energy(params, v), free_energy(params, v_)
    # log sigmoid(fe_ - fe), written as -logaddexp(0, -(fe_ - fe))
    return d * np.mean(np.logaddexp(0, -(fe_ - fe)))


def reconstruct(params, v, rng):
    p_h = 1 / (1 + np.exp(-(v @ params["W"] + params["c"])))
    h = (rng.random(p_h.shape) < p_h).astype(float)
    return 1 / (1 + np.exp(-(h @ params["W"].T + params["b"])))


def make_data(n=24, d=8, seed=0):
    rng = np.random.default_rng(seed)
    protos = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]], float)
    v = protos[rng.integers(0, 2, size=n)]
    flip = rng.random(v.shape) < 0.1
    return np.where(flip, 1 - v, v)


def init_params(d=8, k=4, seed=1):
    rng = np.random.default_rng(seed)
    return {"W": 0.1 * rng.normal(size=(d, k)), "b": np.zeros(d), "c": np.zeros(k)}


def case():
    return dict(fn=neg_pseudo_likelihood,
                args=(init_params(), make_data(), np.random.default_rng(3)), argnums=0)


if __name__ == "__main__":
    params, v, rng = init_params(), make_data(), np.random.default_rng(0)
    g = myc.value_and_grad(neg_pseudo_likelihood)
    for _ in range(200):
        loss, d = g(params, v, rng)
        for k in params:
            params[k] = params[k] - 0.1 * d[k]
    print(loss, np.round(myc.jit(reconstruct)(params, v[:2], rng), 2))
