"""PCA from scratch: center with ``X - np.mean(X, axis=0)``, the covariance
``np.cov(X_centered, rowvar=False)``, ``np.linalg.eigh``, eigenvalues sorted by
``np.argsort(eigenvalues)[::-1]`` and the columns reordered with it, the first
``n_components`` kept by slicing, the explained-variance ratio, the projection and the
reconstruction error -- differentiated w.r.t. the data (the eigenvectors' gradient)."""

import numpy as np


class PCA:
    def __init__(self, n_components):
        self.n_components = n_components
        self.components = None
        self.mean = None

    def fit(self, X):
        self.mean = np.mean(X, axis=0)
        X_centered = X - self.mean
        cov = np.cov(X_centered, rowvar=False)
        eigenvalues, eigenvectors = np.linalg.eigh(cov)
        idx = np.argsort(eigenvalues)[::-1]
        eigenvalues = eigenvalues[idx]
        eigenvectors = eigenvectors[:, idx]
        self.components = eigenvectors[:, :self.n_components]
        self.explained_variance_ratio = eigenvalues[:self.n_components] / np.sum(eigenvalues)
        return self

    def transform(self, X):
        return np.dot(X - self.mean, self.components)

    def inverse_transform(self, Z):
        return np.dot(Z, self.components.T) + self.mean


def reconstruction_error(X, n_components=2):
    pca = PCA(n_components).fit(X)
    X_hat = pca.inverse_transform(pca.transform(X))
    return np.mean(np.sum((X - X_hat) ** 2, axis=1))


def make_data(n=30, seed=6):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 2)) * np.array([3.0, 1.5])
    W = rng.normal(size=(2, 4))
    return latent @ W + 0.3 * rng.normal(size=(n, 4))


def case():
    return dict(fn=reconstruction_error, args=(make_data(),), argnums=0)
