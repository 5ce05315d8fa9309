"""Bayesian linear regression's evidence (Bishop, PRML 3.5): a polynomial design
matrix by ``np.vander(x, M, increasing=True)``, the posterior precision ``A``, its mean by
``np.linalg.solve``, ``np.linalg.slogdet``, ``math.log(2 * math.pi)``, the effective
number of parameters by ``np.trace`` and ``np.linalg.eigvalsh``; shape checks by
``assert`` with f-strings; the log evidence differentiated with respect to
``(log_alpha, log_beta)``, floats, and maximised by MacKay's fixed point outside."""

import math

import numpy as np

import myc


def design_matrix(x: np.ndarray, degree: int) -> np.ndarray:
    return np.vander(x, degree + 1, increasing=True)


def log_evidence(log_alpha: float, log_beta: float, x: np.ndarray, t: np.ndarray,
                 degree: int = 5) -> float:
    alpha, beta = np.exp(log_alpha), np.exp(log_beta)
    Phi = design_matrix(x, degree)
    N, M = Phi.shape
    assert t.shape == (N,), f"targets have shape {t.shape}, expected ({N},)"
    A = alpha * np.eye(M) + beta * Phi.T @ Phi
    m_N = beta * np.linalg.solve(A, Phi.T @ t)
    E = 0.5 * beta * np.sum((t - Phi @ m_N) ** 2) + 0.5 * alpha * m_N @ m_N
    sign, logdet = np.linalg.slogdet(A)
    return (0.5 * M * log_alpha + 0.5 * N * log_beta - E - 0.5 * logdet
            - 0.5 * N * math.log(2 * math.pi))


def effective_parameters(log_alpha, log_beta, x, degree=5):
    Phi = design_matrix(x, degree)
    lam = np.exp(log_beta) * np.linalg.eigvalsh(Phi.T @ Phi)
    A = np.exp(log_alpha) * np.eye(Phi.shape[1]) + np.exp(log_beta) * Phi.T @ Phi
    gamma = np.sum(lam / (np.exp(log_alpha) + lam))
    return gamma, np.trace(np.linalg.inv(A) @ (np.exp(log_beta) * Phi.T @ Phi))


def make_data(n=25, seed=0):
    r = np.random.default_rng(seed)
    x = np.sort(r.uniform(-1, 1, n))
    return x, np.sin(math.pi * x) + 0.2 * r.standard_normal(n)


def case():
    x, t = make_data()
    return dict(fn=log_evidence, args=(0.5, 2.0, x, t), argnums=(0, 1))


if __name__ == "__main__":
    x, t = make_data()
    g = myc.grad(log_evidence, argnums=(0, 1))
    la, lb = 0.0, 0.0
    for _ in range(100):
        da, db = g(la, lb, x, t)
        la, lb = la + 0.05 * da, lb + 0.05 * db
    print(la, lb, log_evidence(la, lb, x, t), effective_parameters(la, lb, x))
