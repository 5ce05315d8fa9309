"""Gaussian-process regression with kernels as composable objects, as scikit-learn and
GPyTorch write them: ``Kernel`` subclasses with ``__call__(X1, X2)``, ``k1 + k2`` and
``k1 * k2`` building ``Sum``/``Product`` objects by operator overloading (outside the
compiled code), hyper-parameters stored in log space as attributes, and the negative
log marginal likelihood taking the kernel object; its gradient is a kernel object of
the same nested structure, read back with ``vars``."""

import numpy as np

import myc


class Kernel:
    def __add__(self, other):
        return Sum(self, other)

    def __mul__(self, other):
        return Product(self, other)


class RBF(Kernel):
    def __init__(self, lengthscale, variance=1.0):
        self.log_lengthscale = np.log(lengthscale)
        self.log_variance = np.log(variance)

    def __call__(self, X1, X2):
        ls = np.exp(self.log_lengthscale)
        d2 = np.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1)
        return np.exp(self.log_variance) * np.exp(-0.5 * d2 / ls ** 2)


class Periodic(Kernel):
    def __init__(self, period, lengthscale):
        self.log_period = np.log(period)
        self.log_lengthscale = np.log(lengthscale)

    def __call__(self, X1, X2):
        d = np.abs(X1[:, None, 0] - X2[None, :, 0])
        s = np.sin(np.pi * d / np.exp(self.log_period))
        return np.exp(-2.0 * s ** 2 / np.exp(self.log_lengthscale) ** 2)


class White(Kernel):
    def __init__(self, noise):
        self.log_noise = np.log(noise)

    def __call__(self, X1, X2):
        same = X1.shape[0] == X2.shape[0]
        return np.exp(self.log_noise) * np.eye(X1.shape[0]) if same else \
            np.zeros((X1.shape[0], X2.shape[0]))


class Sum(Kernel):
    def __init__(self, k1, k2):
        self.k1, self.k2 = k1, k2

    def __call__(self, X1, X2):
        return self.k1(X1, X2) + self.k2(X1, X2)


class Product(Kernel):
    def __init__(self, k1, k2):
        self.k1, self.k2 = k1, k2

    def __call__(self, X1, X2):
        return self.k1(X1, X2) * self.k2(X1, X2)


def neg_log_marginal_likelihood(kernel, X, y):
    K = kernel(X, X) + 1e-8 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(X) * np.log(2 * np.pi)


def predict(kernel, X, y, X_new):
    K = kernel(X, X) + 1e-8 * np.eye(len(X))
    return kernel(X_new, X) @ np.linalg.solve(K, y)


def make_data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 6, size=(n, 1)), axis=0)
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 0] + 0.1 * rng.normal(size=n)
    return X, y


def make_kernel():
    return RBF(2.0, 1.0) * Periodic(3.0, 1.0) + RBF(5.0, 0.5) + White(0.05)


def case():
    X, y = make_data()
    return dict(fn=neg_log_marginal_likelihood, args=(make_kernel(), X, y), argnums=0)


if __name__ == "__main__":
    X, y = make_data()
    kernel = make_kernel()
    g = myc.grad(neg_log_marginal_likelihood)(kernel, X, y)
    print(neg_log_marginal_likelihood(kernel, X, y), vars(g.k2))
