"""Black-box variational inference for Bayesian logistic regression with the
reparameterisation trick, where the objective makes its own generator:
``rng = np.random.default_rng(seed)`` inside it with an int ``seed`` argument (common
random numbers: every call with the same seed sees the same draws), a mean-field
Gaussian ``(mu, log_sigma)`` unpacked from one vector, ``np.log1p(np.exp(-...))`` log
likelihood, the entropy in closed form; the negative ELBO differentiated with respect to
the variational parameters."""

import numpy as np

import myc


def log_joint(w, X, y, prior_scale=2.0):
    z = w @ X.T                               # (S, n)
    log_lik = -np.sum(np.log1p(np.exp(-y * z)), axis=1)
    log_prior = -0.5 * np.sum(w ** 2, axis=1) / prior_scale ** 2
    return log_lik + log_prior


def neg_elbo(var_params, X, y, n_samples=16, seed=0):
    rng = np.random.default_rng(seed)
    D = X.shape[1]
    mu, log_sigma = var_params[:D], var_params[D:]
    eps = rng.standard_normal((n_samples, D))
    w = mu + np.exp(log_sigma) * eps
    entropy = np.sum(log_sigma) + 0.5 * D * (1.0 + np.log(2 * np.pi))
    return -(np.mean(log_joint(w, X, y)) + entropy)


def make_data(n=30, d=3, seed=2):
    r = np.random.default_rng(seed)
    X = r.standard_normal((n, d))
    y = np.sign(X @ np.array([1.5, -1.0, 0.5]) + 0.3 * r.standard_normal(n))
    return X, y


def case():
    X, y = make_data()
    return dict(fn=neg_elbo, args=(np.concatenate([0.1 * np.ones(3), -1.0 * np.ones(3)]),
                                   X, y, 16, 7), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    p = np.concatenate([np.zeros(3), -np.ones(3)])
    g = myc.value_and_grad(neg_elbo)
    for i in range(100):
        v, d = g(p, X, y, 16, i)
        p = p - 0.05 * d
    print(v, p)
