"""myc against autograd on the realworld corpus: ``python -m tests.realworld.compare_autograd``.

Needs autograd (``pip install autograd``; not a dependency of myc).  Each program of
the corpus keeps autograd's import style, so the reverse import swap (in memory, under
the module name ``_autograd_<name>``) turns it into an autograd program; its ``case()``
is built under both, and the gradients compared (relative to ``max(1, |autograd's|)``)
and timed, steady state: the median of several calls after the first, the generators
restored before each call so both see the same draws.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np

from tests.gradcheck import leaves
from tests.realworld import PROGRAMS
from tests.realworld.run import Replay, gradient_fn

HERE = Path(__file__).parent
_BACK = [
    (r"^import numpy as np$", "import autograd.numpy as np"),
    (r"^import numpy\.random as npr$", "import autograd.numpy.random as npr"),
    (r"^from myc\.misc\.signal import (.*)$", r"from autograd.scipy.signal import \1"),
    (r"^from myc\.misc(.*) import (.*)$", r"from autograd.misc\1 import \2"),
    (r"^from myc import (.*)$", r"from autograd import \1"),
    (r"^from scipy\.special import (.*)$", r"from autograd.scipy.special import \1"),
    (r"^from scipy\.stats import multivariate_normal as mvn$",
     "import autograd.scipy.stats.multivariate_normal as mvn"),
    (r"^from scipy\.stats import (.*)$", r"from autograd.scipy.stats import \1"),
    (r"^from numpy\.linalg import (.*)$", r"from autograd.numpy.linalg import \1"),
    (r"^from tests\.realworld\.(\w+) import (.*)$", r"from _autograd_\1 import \2"),
]


def autograd_module(name: str) -> types.ModuleType:
    modname = f"_autograd_{name}"
    if modname in sys.modules:
        return sys.modules[modname]
    lines = []
    for line in (HERE / f"{name}.py").read_text().splitlines():
        for pat, rep in _BACK:
            if re.match(pat, line):
                line = re.sub(pat, rep, line)
                break
        lines.append(line)
    mod = types.ModuleType(modname)
    mod.__file__ = str(HERE / f"{name}.py")
    sys.modules[modname] = mod
    for dep in re.findall(r"^from _autograd_(\w+) import", "\n".join(lines), re.M):
        autograd_module(dep)
    exec(compile("\n".join(lines), mod.__file__, "exec"), mod.__dict__)  # noqa: S102
    return mod


def _autograd_gradient(case: dict):
    import autograd

    if "gradient" in case:
        g = case["gradient"]
    elif case.get("transform") == "value_and_grad":
        g = autograd.value_and_grad(case["fn"], case["argnums"])
    else:
        g = autograd.grad(case["fn"], case["argnums"])
    return (lambda *a: g(*a)[1]) if case.get("transform") == "value_and_grad" else g


def _steady(g, case: dict, replay: Replay, n: int = 5) -> tuple[object, float]:
    replay.reset()
    out = g(*case["args"])
    times = []
    for _ in range(n):
        replay.reset()
        t0 = time.perf_counter()
        g(*case["args"])
        times.append(time.perf_counter() - t0)
    return out, 1e3 * statistics.median(times)


def _tree(x):
    """autograd returns dict/list/tuple gradients of its own container types."""
    if isinstance(x, dict):
        return {k: _tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_tree(v) for v in x) if type(x) in (list, tuple) else \
            tuple(_tree(v) for v in x)
    return np.asarray(x)


def compare(name: str) -> dict:
    mine = importlib.import_module(f"tests.realworld.{name}").case()
    theirs = autograd_module(name).case()
    with contextlib.redirect_stdout(io.StringIO()):
        g_myc, t_myc = _steady(gradient_fn(mine), mine, Replay(mine))
        g_ag, t_ag = _steady(_autograd_gradient(theirs), theirs, Replay(theirs))
    err = 0.0
    for (_, a), (_, b) in zip(leaves(_tree(g_myc)), leaves(_tree(g_ag)), strict=True):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        err = max(err, float(np.max(np.abs(a - b), initial=0.0)) /
                  max(1.0, float(np.max(np.abs(b), initial=0.0))))
    return {"program": name, "myc_ms": t_myc, "autograd_ms": t_ag, "err": err}


def main(argv: list[str]) -> int:
    print("| program | myc steady (ms) | autograd steady (ms) | autograd / myc | "
          "max difference from autograd |")
    print("|---|---|---|---|---|")
    for name in argv or PROGRAMS:
        try:
            r = compare(name)
        except Exception as exc:  # noqa: BLE001 - a program myc (or autograd) cannot run
            print(f"| `{name}` | -- | -- | -- | {type(exc).__name__} |", flush=True)
            continue
        print(f"| `{name}` | {r['myc_ms']:.2f} | {r['autograd_ms']:.2f} | "
              f"{r['autograd_ms'] / r['myc_ms']:.1f}x | {r['err']:.0e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
