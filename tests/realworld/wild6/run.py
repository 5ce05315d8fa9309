"""Runs the sixth corpus: ``python -m tests.realworld.wild6.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild6 import PROGRAMS

PACKAGE = "tests.realworld.wild6"

FEATURES = {
    "gcn": "adjacency by `A[src, dst] = 1.0` from an edge list, `A + np.eye(n)`, "
           "`d[:, None] * A * d[None, :]` normalisation, a params dict, "
           "`log_probs[np.arange(n), labels][train_mask]`",
    "cox_ph": "`np.argsort(-time)`, `np.logaddexp.accumulate` risk sets, "
              "`event[order].astype(bool)` masks, keyword penalties; C-index by a double "
              "loop with `continue`",
    "holt_winters": "states in Python lists grown by `append`, `season[t - m]`, "
                    "`list(y[:m] - y[:m].mean())`, `alpha, beta, gamma = sigmoid(raw)`, "
                    "`*_, errors = ...`",
    "tv_denoise": "`np.diff` of `np.pad(..., mode='edge')`, `u = f.copy()` then "
                  "`u -= step * g` in `while it < max_iter and change > tol`, "
                  "differentiated w.r.t. the regularisation weight",
    "factorization_machine": "`(w0, w, V)` tuple parameters, `0.5 * sum((X @ V)**2 - "
                             "(X**2) @ (V**2))`, `np.logaddexp(0, -y * s)`, "
                             "`reg = reg or {...}`, `value_and_grad`",
    "nt_xent": "`sim[np.eye(2n, dtype=bool)] = -np.inf`, `np.linalg.norm(axis=1, "
               "keepdims=True)`, augmentations from a generator argument, `logsumexp`, "
               "`enumerate(layers)`",
    "maxent_irl": "soft value iteration `np.einsum('sat,t->sa')` + `logsumexp` in a "
                  "`for` loop with `break` at a tolerance, `log_pi[states, actions]`, "
                  "visitation `D[t + 1] = ...`",
    "sir_epidemic": "nested Euler loops `range(int(1 / dt))`, `S, I, R = ...` tuple "
                    "updates, a list of floats `np.array`ed, `gammaln` negative binomial",
    "rbm_pseudolikelihood": "`v_ = v.copy(); v_[np.arange(n), idx] = 1 - "
                            "v_[np.arange(n), idx]`, `rng.integers`, `np.logaddexp(0, ...)`"
                            ", `params.get('b', 0.0)`",
    "camera_pose": "Rodrigues' formula with an early `return np.eye(3)`, a skew "
                   "`np.array` literal of entries, `p[:, :2] / p[:, 2:3]`, a Huber "
                   "`np.where`",
    "ista_lasso": "`np.linalg.eigvalsh(...)[-1]`, soft threshold `np.sign * np.maximum`, "
                  "FISTA momentum scalars, `break` on `np.linalg.norm` tolerance",
    "ik_arm": "`np.cumsum` kinematics, `J[:, i] = [-r[1], r[0]]` into `np.zeros`, "
              "damped least squares `np.linalg.solve` in `while norm > tol and it < "
              "max_iter`, `theta0.copy()`",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
