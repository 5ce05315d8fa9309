"""Runs the tenth corpus: ``python -m tests.realworld.wild10.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild10 import PROGRAMS

PACKAGE = "tests.realworld.wild10"

FEATURES = {
    "pong_policy": "`h[h < 0] = 0`, `2 if rng.uniform() < aprob else 3`, lists appended "
                   "per step and `np.vstack`ed, `discount_rewards` backwards with `if r[t] "
                   "!= 0` reset, `-=`/`/=` standardization, `np.outer` backward pass",
    "reinforce_chain": "an environment class with `reset()`/`step(a)` writing `self.state`, "
                       "`while not done`, `rng.choice(len(probs), p=probs)`, "
                       "`returns.insert(0, G)`, `np.eye(n)[s]`",
    "td_lambda": "`while True` episodes with `rng.choice([-1, 1])`, `if 1 <= s <= n` "
                 "features, eligibility traces, gradient w.r.t. `log(alpha)` through "
                 "learning",
    "q_learning": "epsilon-greedy `if rng.random() < eps: rng.integers(...) else: "
                  "np.argmax(Q[s])`, `divmod`, tuple compare `(nr, nc) == GOAL`, "
                  "`Q[s, a] += ...`, `* (not done)`, `break`",
    "lstm_bptt": "`cache[t] = {...}` dicts keyed by time with `cache[-1]`, `np.vstack` of "
                 "(h, x), gate slices `a[H:2 * H]`, `loss += -np.log(p[targets[t], 0])`; "
                 "hand BPTT with `np.clip(d, -5, 5, out=d)`",
    "attention_scratch": "`K.swapaxes(-2, -1)`, `np.triu(...).astype(bool)` mask, "
                         "`scores[:, mask] = -1e9`, heads by `reshape`/`transpose`, "
                         "`self.attention_weights` stored in `__call__`",
    "kalman_missing": "`q, r = np.exp(log_params)`, `F.dot(P).dot(F.T)`, `if np.isnan(y[t]): "
                      "continue`, `np.linalg.inv`/`det`, `x_filt[t] = x`",
    "hopfield": "`np.fill_diagonal(W, 0)`, `s @ W @ s`, tanh relaxation; recall with "
                "`for i in rng.permutation(n)` inside `while changed and ...`",
    "metropolis": "`rng.normal(size=x.shape)`, `if np.log(rng.uniform()) < log_alpha: x = "
                  "proposal; accepted += 1`, `samples[i] = x`, `samples[burn_in:]`",
    "heat_ftcs": "`dt` from the stability limit, `raise ValueError(f\"...\")` check, "
                 "`u_new[0] = u_new[-1] = 0.0`, `u = u_new.copy()`, `while t < t_end`",
    "logistic_lyapunov": "`x = r * x * (1 - x)` over a vector of rates, `abs(...)` builtin "
                         "on arrays, `points.append(x.copy())` under an `if`, `np.array("
                         "points)`",
    "value_iteration": "Gym-style `P[s][a]` lists of `(prob, s_, reward, done)` tuples in "
                       "dicts, `max(sum(... for ...) for a in ...)`, `while True` until "
                       "`delta < theta`, `np.argmax` of a list",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
