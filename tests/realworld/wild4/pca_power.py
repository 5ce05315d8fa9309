"""PCA by power iteration with deflation: each component found in a ``while`` loop
that stops when the direction stops changing (``np.linalg.norm``), the components
stacked and the data's reconstruction error the objective -- differentiated with
respect to the data through the iterations."""

import numpy as np

import myc


def power_iteration(S, v0, tol=1e-10, max_iter=500):
    v = v0 / np.linalg.norm(v0)
    delta, it = 1.0, 0
    while delta > tol and it < max_iter:
        w = S @ v
        w = w / np.linalg.norm(w)
        delta = np.linalg.norm(w - v)
        v = w
        it += 1
    return v, v @ S @ v


def top_components(X, k=2):
    Xc = X - X.mean(axis=0)
    S = Xc.T @ Xc / (len(X) - 1)
    comps, vals = [], []
    for i in range(k):
        v, lam = power_iteration(S, np.ones(X.shape[1]) + 0.1 * np.arange(X.shape[1]))
        comps.append(v)
        vals.append(lam)
        S = S - lam * np.outer(v, v)
    return np.stack(comps), np.array(vals)


def reconstruction_error(X, k=2):
    V, _ = top_components(X, k)
    Xc = X - X.mean(axis=0)
    recon = Xc @ V.T @ V
    return np.mean((Xc - recon) ** 2)


def make_data(n=40, seed=0):
    r = np.random.default_rng(seed)
    z = r.standard_normal((n, 2)) * np.array([3.0, 1.5])
    A = np.array([[1.0, 0.5, 0.2, 0.0], [0.0, 1.0, -0.5, 0.3]])
    return z @ A + 0.2 * r.standard_normal((n, 4))


def case():
    return dict(fn=reconstruction_error, args=(make_data(),), argnums=0)


if __name__ == "__main__":
    X = make_data()
    print(myc.jit(top_components)(X), np.linalg.eigh(np.cov(X.T))[0][::-1])
