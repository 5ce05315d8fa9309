"""Hyperparameter gradients through unrolled ISTA for the lasso (as the "learning to
optimise"/implicit-differentiation papers' baselines do): the step ``1 / L`` from the
largest eigenvalue of ``A.T @ A`` by ``np.linalg.eigvalsh(...)[-1]``, the soft threshold
``np.sign(z) * np.maximum(np.abs(z) - t, 0)``, early stopping with ``break`` when
``np.linalg.norm(x - x_old) < tol * np.linalg.norm(x_old)``, and the held-out error
differentiated with respect to ``log_lam``; plus FISTA's momentum written with the
usual ``t_next = (1 + np.sqrt(1 + 4 * t ** 2)) / 2`` scalars."""

import numpy as np

import myc


def soft_threshold(z, t):
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def ista(A, b, lam, n_iter=50, tol=1e-10, accelerated=False):
    L = np.linalg.eigvalsh(A.T @ A)[-1]
    x = np.zeros(A.shape[1])
    y, t = x, 1.0
    for k in range(n_iter):
        x_old = x
        x = soft_threshold(y - A.T @ (A @ y - b) / L, lam / L)
        if accelerated:
            t_next = (1 + np.sqrt(1 + 4 * t ** 2)) / 2
            y = x + (t - 1) / t_next * (x - x_old)
            t = t_next
        else:
            y = x
        if k > 0 and np.linalg.norm(x - x_old) < tol * np.linalg.norm(x_old):
            break
    return x


def validation_error(log_lam, A, b, A_val, b_val, accelerated=True):
    x = ista(A, b, np.exp(log_lam), accelerated=accelerated)
    return 0.5 * np.mean((A_val @ x - b_val) ** 2)


def make_problem(n=30, d=12, seed=0):
    rng = np.random.default_rng(seed)
    x_true = np.zeros(d)
    x_true[[1, 4, 7]] = [2.0, -1.5, 1.0]
    A = rng.normal(size=(2 * n, d))
    b = A @ x_true + 0.5 * rng.normal(size=2 * n)
    return A[:n], b[:n], A[n:], b[n:]


def case():
    A, b, Av, bv = make_problem()
    return dict(fn=validation_error, args=(np.log(2.0), A, b, Av, bv), argnums=0)


if __name__ == "__main__":
    A, b, Av, bv = make_problem()
    log_lam = 0.0
    g = myc.value_and_grad(validation_error)
    for _ in range(30):
        v, d = g(log_lam, A, b, Av, bv)
        log_lam -= 0.5 * d
    print(v, np.exp(log_lam))
