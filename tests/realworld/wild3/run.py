"""Runs the third corpus: ``python -m tests.realworld.wild3.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild3 import PROGRAMS

PACKAGE = "tests.realworld.wild3"

FEATURES = {
    "soft_dtw": "a `(n+1, m+1)` table `R[i, j] = ...` filled in nested loops, a soft "
                "minimum by `logsumexp` of `np.array` of three cells, `sum` of a generator",
    "crf": "the forward algorithm (`logsumexp(alpha[:, None] + trans, axis=0)` in a loop), "
           "path scores by integer indexing, `+=` on a float, a jitted Viterbi with an "
           "int backpointer table `back[t] = np.argmax(...)` followed back",
    "hmm_posterior": "scaled forward/backward tables `alpha[t] = ...`, `beta[t] = ...` in a "
                     "reversed `range(T - 2, -1, -1)`, `scale[t]`, `log_softmax`",
    "sinkhorn": "log-domain Sinkhorn in a `while err > tol and it < max_iter` loop, "
                "a function as a default argument, three transport problems",
    "gp_laplace": "Newton's method in a `while abs(obj_old - obj) > tol` loop with "
                  "`np.linalg.cholesky`, `scipy.linalg.solve_triangular`, `np.linalg.solve`",
    "neural_ode": "a hand-written RK4 loop (nested: substeps), an MLP vector field passed as "
                  "a function, states appended to a list and `np.stack`ed",
    "lotka_volterra": "`scipy.integrate.odeint` with `args=` and tight `rtol`/`atol`, "
                      "a vector field returning `np.array` of scalars",
    "reinforce": "`rng.choice(k, p=...)` per row into an int array `actions[i] = ...`, "
                 "`rng.standard_normal`, the generator passed as an argument",
    "lstm_list": "a list of one-hot steps, `np.concatenate`, `np.split(z, 4, axis=1)`, "
                 "hidden states appended and `np.stack`ed, `steps[:-1]` of a list",
    "mdn": "column slices of one output, `logsumexp(..., keepdims=True)`, a Gaussian "
           "mixture log-likelihood",
    "advi_logreg": "reparameterised draws from a module-global `default_rng` in a loop, "
                   "`log_expit`, `scipy.stats.norm.logpdf`",
    "heat_stencil": "`u0.copy()`, slice assignment `u[1:-1, :] = ...`, row assignment "
                    "`u[0, :] = 0.0`, `np.roll` along an axis, `np.zeros_like`, `np.diff`",
    "poisson_newton": "`myc.hessian_vector_product` columns stacked into a Hessian, "
                      "`gammaln`, `np.linalg.solve` of it: a gradient through an HVP",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
