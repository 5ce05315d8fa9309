"""Runs the seventh corpus: ``python -m tests.realworld.wild7.run [--markdown] [names...]``.

The second corpus's runner (``tests/realworld/wild/run.py``) on this package: each
program's ``case()`` gradient (first call, steady: CPU time) against central
differences, its ``myc.jit`` value against NumPy's, and NumPy's time for one value.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realworld.wild import run as wild_run
from tests.realworld.wild7 import PROGRAMS

PACKAGE = "tests.realworld.wild7"

FEATURES = {
    "mlp_module": "`Module` base with `__call__` -> `forward`, `Sequential(*layers)`, "
                  "`for layer in self.layers`, `isinstance(layer, Linear)`, loss taking "
                  "the model; its gradient an object pulled into a `named_parameters` dict",
    "adam_class": "`class Adam` mutating its moment lists in `step` (Python loop around "
                  "`value_and_grad`); a functional twin with a `NamedTuple` state, "
                  "`opt.update(...)` unrolled inside the differentiated loss",
    "scipy_newton": "`minimize(..., jac=myc.grad(f))` with L-BFGS-B, `hessp=` from "
                    "`hessian_vector_product` (Newton-CG), `hess=myc.hessian(f)` "
                    "(trust-exact); `gammaln`, `args=`",
    "rk4_fit": "`rk4(f, y0, ts, *args)` taking the dynamics function, `f(y, t, *args)`, "
               "`for t0, t1 in zip(ts[:-1], ts[1:])`, `ys.append`/`np.stack`, "
               "`*params` of an array",
    "hmc_class": "`HMC(log_prob)` storing `myc.grad(log_prob)` and calling it in a method "
                 "`leapfrog(self, q, p, *data)`; the sampler object passed to the "
                 "differentiated energy error; `myc.jit(self.leapfrog)`",
    "langevin_partial": "`partial(log_joint, X=X, y=y)` and `myc.grad` of it passed as "
                        "arguments to a jitted MALA step, `np.where(accept, ...)`",
    "pytree_jax": "nested dict/tuple params, recursive `tree_map` with `isinstance`, "
                  "`value_and_grad(has_aux=True)` with a metrics dict, `@myc.jit` update "
                  "returning `{**metrics, 'loss': loss}`, a `NamedTuple` config",
    "dataclass_transformer": "`@dataclass(frozen=True)` config with a `@property`, a "
                             "`@dataclass` block with `field(default_factory=...)` and "
                             "`__call__(x, train=False)` by keyword, multi-head attention",
    "scan_rnn": "hand-rolled `scan(f, init, xs)`, a GRU cell as `partial(cell, params)`, "
                "a `vmap`-like `batched(f)` returning `apply(*args)` over `zip(*args)`",
    "gp_kernels": "kernel objects composed by `__add__`/`__mul__` (`Sum`, `Product`), "
                  "nested objects as the differentiated argument, `cholesky`/`solve`",
    "callbacks_closures": "`make_loss(list_of_arrays)` closure, layers as "
                          "`partial(dense, act=...)`, `fit(loss, ..., callbacks=[...], "
                          "schedule=lambda ...)` with history and early-stopping callbacks",
}


def main(argv: list[str]) -> int:
    return wild_run.main(argv, PROGRAMS, PACKAGE, FEATURES)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
