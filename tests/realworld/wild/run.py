"""Runs the second corpus: ``python -m tests.realworld.wild.run [--markdown] [names...]``.

For each program: its ``case()`` objective's gradient by the transform the program
builds (first call and the median of later calls, in CPU time: ``time.process_time``,
all threads), checked against central differences of the same code under CPython; its
value under ``myc.jit`` against the same function run by NumPy; and NumPy's own time
for one evaluation of the objective, for scale.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import statistics
import sys
import time

import numpy as np
import pytest

import myc
from tests.realworld.run import Replay, leaves, run_one
from tests.realworld.wild import PROGRAMS

PACKAGE = "tests.realworld.wild"


def forward_check(name: str, package: str = PACKAGE) -> tuple[float, float]:
    """(relative difference of myc.jit's value from NumPy's, NumPy's time in ms)."""
    case = importlib.import_module(f"{package}.{name}").case()
    replay = Replay(case)
    replay.reset()
    want = float(case["fn"](*case["args"]))
    times = []
    for _ in range(5):
        replay.reset()
        t0 = time.process_time()
        case["fn"](*case["args"])
        times.append(time.process_time() - t0)
    replay.reset()
    got = float(myc.jit(case["fn"])(*case["args"]))
    return abs(got - want) / max(1.0, abs(want)), 1e3 * statistics.median(times)


def run(name: str, steady_calls: int = 5, package: str = PACKAGE) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):
        row = run_one(name, steady_calls, package=package, clock=time.process_time)
    if "error" not in row:
        row["value_err"], row["numpy_ms"] = forward_check(name, package)
        # (a case may allow more: odeint's Dormand-Prince against SciPy's LSODA)
        row["value_tol"] = importlib.import_module(f"{package}.{name}").case().get(
            "value_tol", 1e-9)
        row["ok"] = row["ok"] and row["value_err"] <= row["value_tol"]
    return row


FEATURES = {
    "hmc": "`myc.jit` leapfrog calling `grad` of the log-density, `for`/`if` on the step, "
           "default arguments, the sampler's own loop with `default_rng`",
    "svgd": "`scipy.special.logsumexp`, pairwise differences by broadcasting, `np.einsum`, "
            "`grad` of a sum inside the update, module-global arrays",
    "planar_flow": "a class with a `@staticmethod` called through `self`, a list of dicts of "
                   "parameters, `np.linalg.norm`, `np.outer`, a log-det in a loop",
    "tsne": "`np.fill_diagonal` on a local array, `np.maximum` clipping, a "
            "`**` power of a distance matrix",
    "kalman": "a 2x2 `np.array` literal of computed scalars, `for y in ys` over data rows, "
              "`np.linalg.slogdet`/`solve`/`inv`, tuple unpacking of an array",
    "attention": "a parameter dict, `np.split`, `reshape`/`transpose` to heads, two "
                 "`np.einsum`s, a causal `np.tril` mask with `np.where`, softmax, layer norm",
    "matrix_factorization": "a dict of factors and biases, integer-array lookups, a generator "
                            "in `sum`, `.items()` in the update, `value_and_grad`",
    "skipgram": "(batch, k) integer index arrays, `np.logaddexp`, `np.einsum`, "
                "`grad(argnums=(0, 1))`, `np.add.at` outside",
    "black_scholes": "`scipy.stats.norm.cdf`, keyword arguments, array default arguments, "
                     "`grad(argnums=(0, 1, 2, 3))`, `grad(grad(f))`",
    "count_glm": "`scipy.special.gammaln`, `np.column_stack`, slicing a parameter vector, "
                 "SciPy's L-BFGS-B with `jac=myc.grad(f)`",
    "logistic_lbfgs": "`scipy.special.expit`, `np.log1p`, `coef @ coef`, `minimize(..., "
                      "args=..., jac=myc.grad(f), method='L-BFGS-B')`",
    "conv1d": "`np.convolve(..., mode='valid')` with `[::-1]`, `sum` of a generator inside "
              "a list comprehension, `np.array` of a list, `np.mean` of a list",
    "gp_marginal": "a namedtuple of hyperparameters, `np.linalg.cholesky`, "
                   "`scipy.linalg.solve_triangular`, `np.diag`, ARD broadcasting",
    "adam_mlp": "a list of `(W, b)` tuples, starred unpacking `*hidden, (W, b) = layers`, a "
                "jitted Adam step over `zip` of four lists, `b1**t`",
}


def check(name: str, package: str) -> None:
    """A corpus test: the program's gradient and value within its tolerances."""
    with contextlib.redirect_stdout(io.StringIO()):
        row = run(name, steady_calls=1, package=package)
    assert "error" not in row, row["error"]
    assert row["max_err"] <= row["tol"], row
    assert row["value_err"] <= row["value_tol"], row


def check_interpreter(case: dict, gradient=None) -> None:
    """A corpus test: the reference interpreter gives NumPy's value and cpu's gradient
    (``gradient``: the transform the program builds, else ``myc.grad`` of its
    ``argnums``), the random draws replayed for each run."""
    replay = Replay(case)
    replay.reset()
    want = float(case["fn"](*case["args"]))
    replay.reset()
    got = myc.jit(case["fn"], backend="interp")(*case["args"])
    assert float(got) == pytest.approx(want, rel=1e-12, abs=1e-14)
    replay.reset()
    g_cpu = (gradient or myc.grad(case["fn"], case["argnums"]))(*case["args"])
    replay.reset()
    g_int = myc.grad(case["fn"], case["argnums"], backend="interp")(*case["args"])
    for (pa, a), (pb, b) in zip(leaves(g_int), leaves(g_cpu), strict=True):
        assert pa == pb
        if a is None or b is None:  # an int attribute (n_heads): no gradient
            assert a is None and b is None, pa
            continue
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def markdown(rows: list[dict], features: dict[str, str]) -> str:
    out = ["| program | features used | status | first call (s) | steady gradient (ms) "
           "| NumPy value (ms) | gradient error | value error |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = features.get(r["program"], "")
        if "error" in r:
            out.append(f"| `{r['program']}` | {f} | **fails**: {r['error'].splitlines()[0][:80]}"
                       " | -- | -- | -- | -- | -- |")
        else:
            out.append(f"| `{r['program']}` | {f} | {'ok' if r['ok'] else 'WRONG'} | "
                       f"{r['first_s']:.2f} | {r['steady_ms']:.2f} | {r['numpy_ms']:.2f} | "
                       f"{r['max_err']:.0e} | {r['value_err']:.0e} |")
    return "\n".join(out)


def main(argv: list[str], programs: tuple[str, ...] = PROGRAMS, package: str = PACKAGE,
         features: dict[str, str] | None = None) -> int:
    """Runs ``programs`` of ``package`` (another corpus passes its own: wild3/run.py)."""
    as_markdown = "--markdown" in argv
    names = [a for a in argv if a != "--markdown"] or list(programs)
    rows = []
    for name in names:
        row = run(name, package=package)
        rows.append(row)
        if "error" in row:
            print(f"{name:22s} FAILED  {row['error'][:2000]}", flush=True)
        else:
            print(f"{name:22s} {'ok ' if row['ok'] else 'BAD'} first {row['first_s']:6.2f} s"
                  f"  steady {row['steady_ms']:8.2f} ms  numpy {row['numpy_ms']:7.2f} ms"
                  f"  grad err {row['max_err']:.1e}  value err {row['value_err']:.1e}",
                  flush=True)
    if as_markdown:
        print(markdown(rows, FEATURES if features is None else features))
    good = sum(1 for r in rows if r.get("ok"))
    print(f"{good}/{len(rows)} ran with correct values and gradients")
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
