"""Gaussian naive Bayes from scratch: ``fit`` loops ``for idx, c in enumerate(self._classes)``
filling ``self._mean[idx, :] = X_c.mean(axis=0)``, ``self._var`` and ``self._priors``
from ``X_c = X[y == c]``; ``_pdf`` of a sample, ``np.log`` of priors and a sum of
log-likelihoods per class, ``np.argmax`` prediction; the average log-posterior of the
true classes differentiated w.r.t. the training data (through the fitted means and
variances) and the test points."""

import numpy as np


class NaiveBayes:
    def fit(self, X, y):
        n_samples, n_features = X.shape
        self._classes = np.unique(y)
        n_classes = len(self._classes)
        self._mean = np.zeros((n_classes, n_features), dtype=np.float64)
        self._var = np.zeros((n_classes, n_features), dtype=np.float64)
        self._priors = np.zeros(n_classes, dtype=np.float64)
        for idx, c in enumerate(self._classes):
            X_c = X[y == c]
            self._mean[idx, :] = X_c.mean(axis=0)
            self._var[idx, :] = X_c.var(axis=0)
            self._priors[idx] = X_c.shape[0] / float(n_samples)
        return self

    def _pdf(self, class_idx, x):
        mean = self._mean[class_idx]
        var = self._var[class_idx]
        numerator = np.exp(-((x - mean) ** 2) / (2 * var))
        denominator = np.sqrt(2 * np.pi * var)
        return numerator / denominator

    def _log_posteriors(self, x):
        posteriors = []
        for idx, c in enumerate(self._classes):
            prior = np.log(self._priors[idx])
            posterior = np.sum(np.log(self._pdf(idx, x)))
            posteriors.append(prior + posterior)
        return np.array(posteriors)

    def predict(self, X):
        return np.array([self._classes[np.argmax(self._log_posteriors(x))] for x in X])


def mean_log_posterior(X_train, X_test, y_train, y_test):
    nb = NaiveBayes().fit(X_train, y_train)
    total = 0.0
    for x, c in zip(X_test, y_test):
        lp = nb._log_posteriors(x)
        total = total + lp[c] - np.log(np.sum(np.exp(lp)))
    return total / len(X_test)


def make_data(seed=7):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(size=(12, 3)) + m for m in ([0, 0, 0], [1.5, 0, 1],
                                                               [0, 2, -1])])
    y = np.repeat(np.arange(3), 12)
    Xt = rng.normal(size=(6, 3)) + np.array([0.5, 0.7, 0.0])
    yt = np.array([0, 1, 2, 0, 1, 2])
    return X, Xt, y, yt


def case():
    return dict(fn=mean_log_posterior, args=make_data(), argnums=(0, 1))
