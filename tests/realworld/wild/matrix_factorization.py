"""Matrix factorisation of a sparse ratings matrix: user and item factors and biases in a
dict, observed entries as integer index arrays, squared error plus L2 regularisation."""

import numpy as np

from myc import value_and_grad


def predict(params, users, items):
    dot = np.sum(params["U"][users] * params["V"][items], axis=1)
    return params["mu"] + params["bu"][users] + params["bi"][items] + dot


def objective(params, users, items, ratings, lam=0.05):
    err = predict(params, users, items) - ratings
    reg = sum(np.sum(params[k] ** 2) for k in ("U", "V", "bu", "bi"))
    return 0.5 * np.mean(err**2) + lam * reg / len(ratings)


objective_and_grad = value_and_grad(objective)


def fit(params, users, items, ratings, epochs=100, lr=0.5):
    for epoch in range(epochs):
        val, g = objective_and_grad(params, users, items, ratings)
        params = {name: value - lr * g[name] for name, value in params.items()}
    return params, val


def make_problem(n_users=9, n_items=7, rank=3, density=0.5, seed=0):
    rng = np.random.default_rng(seed)
    mask = rng.uniform(size=(n_users, n_items)) < density
    users, items = np.nonzero(mask)
    truth = rng.normal(size=(n_users, rank)) @ rng.normal(size=(rank, n_items))
    ratings = truth[users, items] + 3.0
    params = {"mu": 3.0, "bu": np.zeros(n_users), "bi": np.zeros(n_items),
              "U": 0.1 * rng.normal(size=(n_users, rank)),
              "V": 0.1 * rng.normal(size=(n_items, rank))}
    return params, users, items, ratings


def case():
    params, users, items, ratings = make_problem()
    params["bu"] = params["bu"] + 0.1
    return dict(fn=objective, args=(params, users, items, ratings), argnums=0,
                gradient=objective_and_grad, transform="value_and_grad")


if __name__ == "__main__":
    params, users, items, ratings = make_problem()
    print(fit(params, users, items, ratings)[1])
