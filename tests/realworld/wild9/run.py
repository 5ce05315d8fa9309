"""Runs the ninth corpus: ``python -m tests.realworld.wild9.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild9 import PROGRAMS

PACKAGE = "tests.realworld.wild9"

FEATURES = {
    "dlai_deep_nn": "`parameters[\"W\" + str(l)]` in loops, `caches.append((linear_cache, "
                    "activation_cache))`, `np.squeeze`, `np.multiply`, hand-written "
                    "`L_model_backward` with `grads[\"dA\" + str(l - 1)]`",
    "dlai_regularization": "`np.random.seed(1)` and `np.random.rand(A1.shape[0], "
                           "A1.shape[1]) < keep_prob` inside the forward pass, a 14-item "
                           "cache tuple, `np.nansum`, L2 cost by name",
    "nnfs_classes": "`Layer_Dense()` made inside the loss, `forward` storing `self.inputs`/"
                    "`self.output`, `self.activation.forward(...)`, a `Loss` base class, "
                    "`np.clip`, `y_pred[range(n), y_true]`, `len(y_true.shape)` branches",
    "mlfs_layers": "activation/loss classes with `__call__`/`gradient`, `np.where`, "
                   "`_forward` storing hidden values on `self`, `RandomState.uniform`",
    "two_layer_blog": "`feedforward()` writing `self.layer1`/`self.output` and returning "
                      "nothing, the loss read from `nn.output` afterwards",
    "logreg_scratch": "`theta` a column, `y.T @ np.log(h)`, `theta[1:]`, `(J + reg).item()`"
                      "; `np.c_`/`np.r_` in the helpers",
    "kmeans_scratch": "broadcast distances, `np.argmin(axis=1)`, `np.array([X[labels == "
                      "k].mean(axis=0) for k in range(K)])`, `centroids[labels]`",
    "pca_eigh": "`PCA(n).fit(X)` made inside, `np.cov(rowvar=False)`, `np.linalg.eigh`, "
                "`np.argsort(...)[::-1]`, `eigenvectors[:, idx]`",
    "naive_bayes": "`NaiveBayes().fit(X, y)`, `np.unique(y)`, `self._mean[idx, :] = "
                   "X_c.mean(axis=0)`, `X[y == c]`",
    "conv_im2col": "`get_im2col_indices` by `np.repeat`/`np.tile`/`reshape(-1, 1)`, "
                   "`np.pad`, `x_padded[:, k, i, j]`, `transpose(1, 2, 0)`, 2x2 max-pool",
    "batchnorm_running": "`bn_param.get(\"running_mean\", np.zeros(D))`, momentum updates "
                         "stored back into the caller's dict, `raise ValueError(... % mode)`",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
