"""Runs the fifth corpus: ``python -m tests.realworld.wild5.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild5 import PROGRAMS

PACKAGE = "tests.realworld.wild5"

FEATURES = {
    "cs231n_net": "layer functions returning `(out, cache)` tuples, batchnorm and dropout "
                  "option dicts (`mode`, `p`, `seed`), `np.random.seed` then "
                  "`np.random.rand(*x.shape) < p`, `dx[np.arange(N), y] -= 1`, a params dict",
    "min_char_rnn": "dicts `xs, hs, ys, ps` by time step, `hs[-1] = np.copy(hprev)`, "
                    "`xs[t][inputs[t]] = 1`, the hand-written backward pass, "
                    "`np.clip(dparam, -5, 5, out=dparam)`, lists of ints",
    "mnist_mlp": "`params = [(W, b), ...]`, `for w, b in params[:-1]`, `params[-1]` "
                 "unpacked, `logsumexp(..., keepdims=True)`, one-hot targets, a jitted "
                 "SGD step calling `myc.grad` over `zip(params, grads)`",
    "dp_sgd": "per-example gradient rows, `np.linalg.norm(axis=1, keepdims=True)`, "
              "`np.clip(..., None, 1.0)`, `rng.normal(size=w.shape)` noise, private "
              "steps in a loop, differentiated through the clipping",
    "kernel_ridge": "`scipy.spatial.distance.cdist(..., 'sqeuclidean')`, `np.linalg.solve`, "
                    "Nystrom with `cho_factor`/`cho_solve`, `**options` (`method`, `stride`)",
    "gmm_em": "unrolled EM: `logsumexp(axis=1, keepdims=True)`, `slogdet`, `inv`, "
              "`np.einsum('...i,ij,...j->...')`, `resp[:, k, None]`, `np.finfo(float).eps`",
    "gru_dataclass": "a `@dataclass` of parameters (grad returns one), `np.split`, "
                     "`np.hsplit`, `np.concatenate`, `enumerate(xs)`, `typing` annotations, "
                     "`b: np.ndarray | None = None`",
    "nbody": "velocity Verlet, `np.linalg.norm(axis=-1)`, `np.einsum('ijk,ij,j->ik')`, "
             "`np.cross`, `np.triu_indices`, differentiated w.r.t. initial velocities",
    "bayes_linreg": "`np.vander(x, M, increasing=True)`, `np.linalg.slogdet`/`solve`, "
                    "`assert ... , f\"...\"`, `math.log`, float arguments `argnums=(0, 1)`",
    "ranking": "`np.argsort(-labels, axis=1)`, `np.take_along_axis`, reversed "
               "`np.cumsum` log-normalisers, `np.triu`/`np.tril` masks, `np.sort`, `np.log2`",
    "realnvp": "affine couplings with alternating masks `1 - mask`, a list of dicts, "
               "`np.tanh`-bounded scales, log-determinants accumulated",
    "bbvi_rng": "`rng = np.random.default_rng(seed)` made inside the objective from an int "
                "argument, reparameterised draws, `np.log1p(np.exp(...))`",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
