"""Runs the fourth corpus: ``python -m tests.realworld.wild4.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild4 import PROGRAMS

PACKAGE = "tests.realworld.wild4"

FEATURES = {
    "vae": "reparameterised draws from a generator argument, `log_expit` Bernoulli decoder, "
           "the analytic Gaussian KL, a dict of ten parameters, `value_and_grad`",
    "gp_regression": "RBF + periodic kernel, `scipy.linalg.cho_factor`/`cho_solve`, "
                     "`np.linalg.slogdet`, slicing `np.exp(log_hyp[:5])` into five names",
    "bnn_hmc": "the Hamiltonian after a leapfrog trajectory that calls `myc.grad` inside a "
               "`for` loop (a gradient through gradients), a flat vector unpacked by "
               "slices and `reshape`; a jitted HMC step with `rng.uniform` Metropolis",
    "maml": "an inner SGD step `grad(mse)` taken inside the meta-objective, a list of "
            "`(W, b)` pairs rebuilt by a comprehension over `zip`, a list of task tuples",
    "transformer": "`myc.grad(model.loss)` of a bound method, configuration in the object, "
                   "`np.triu(..., k=1)` causal mask with `np.where`, heads by "
                   "`reshape`/`transpose`/`einsum`, static methods, GELU, layer norm",
    "glove": "index arrays `W[rows] * C[cols]`, bias lookups, `np.minimum` weighting, a "
             "tuple of four parameters, `value_and_grad`",
    "soft_kmeans": "soft k-means responsibilities (temperature softmax) differentiated; "
                   "Lloyd's `while changed and it < max_iter` with `np.argmin` and "
                   "`np.eye(k)[labels]` one-hot rows, jitted",
    "softmax_lbfgs": "`functools.partial(nll, X=X, y=y, k=k)` handed to `myc.grad` and "
                     "`myc.jit`, `w.reshape(d, k)`, `logsumexp(..., keepdims=True)`, "
                     "SciPy's L-BFGS-B with `jac=` and `jac=True`",
    "conv2d": "a 3x3 convolution as a sum over offsets of `np.einsum` on shifted 4-d "
              "slices, max pooling by `reshape(...).max(axis=(3, 5))`, a dict of "
              "parameters, cross-entropy by integer indexing",
    "pca_power": "power iteration in `while delta > tol and it < max_iter` with "
                 "`np.linalg.norm`, deflation by `np.outer`, components in a list "
                 "`np.stack`ed; differentiated w.r.t. the data through the iterations",
    "actor_critic": "a nested dict of parameters, returns-to-go by a `reversed(range(T))` "
                    "loop writing `out[t]`, `np.eye(n)[states]` one-hot, log-probabilities "
                    "picked by index, entropy bonus",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
