"""Runs the realworld corpus: ``python -m tests.realworld.run [--markdown] [names...]``.

For each program: its ``case()`` objective is differentiated by myc (the transform the
program itself builds where it builds one: ``grad``, ``value_and_grad``, a closure's
``gradient``), timed (first call: compilation included; steady: the median of later
calls), and compared element by element with central differences of the same function
run by CPython/NumPy.  Random draws inside an objective come from a NumPy generator the
program holds; the driver restores every generator it can reach (closures, the module's
globals, NumPy's global state) before each evaluation, so myc and the finite differences
see the same draws, as the program's own gradient step would.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import statistics
import sys
import time
import traceback
import types
from typing import Any

import numpy as np

import myc
from tests.gradcheck import is_float_leaf, leaves, set_path, tree_map
from tests.realworld import PROGRAMS

_RNG_TYPES = (np.random.RandomState, np.random.Generator)


def _generators(obj: Any, seen: set[int], depth: int = 0) -> list[Any]:
    """The NumPy generators a function can reach through closures and globals."""
    if id(obj) in seen or depth > 6:
        return []
    seen.add(id(obj))
    if isinstance(obj, _RNG_TYPES):
        return [obj]
    out: list[Any] = []
    if isinstance(obj, (list, tuple)):
        for v in obj:
            out += _generators(v, seen, depth + 1)
    elif isinstance(obj, dict):
        for v in obj.values():
            out += _generators(v, seen, depth + 1)
    elif isinstance(obj, types.FunctionType):
        for cell in obj.__closure__ or ():
            try:
                out += _generators(cell.cell_contents, seen, depth + 1)
            except ValueError:
                pass
        for name in obj.__code__.co_names:
            if name in obj.__globals__:
                out += _generators(obj.__globals__[name], seen, depth + 1)
        for v in obj.__defaults__ or ():
            out += _generators(v, seen, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType)):
        for v in vars(obj).values():
            out += _generators(v, seen, depth + 1)
    return out


class Replay:
    """Saves the state of every generator a case reaches; ``reset()`` restores it."""

    def __init__(self, case: dict) -> None:
        seen: set[int] = set()
        gens = _generators(case["fn"], seen) + _generators(case.get("gradient"), seen) + \
            _generators(list(case.get("args", ())), seen)  # a generator passed in
        self.gens = [(g, g.get_state() if isinstance(g, np.random.RandomState)
                      else g.bit_generator.state) for g in gens]
        self.glob = np.random.get_state()

    def reset(self) -> None:
        for g, s in self.gens:
            if isinstance(g, np.random.RandomState):
                g.set_state(s)
            else:
                g.bit_generator.state = s
        np.random.set_state(self.glob)


def gradient_fn(case: dict):
    """The transform the program builds (or ``myc.grad`` of its objective)."""
    if "gradient" in case:
        g = case["gradient"]
    elif case.get("transform") == "value_and_grad":
        g = myc.value_and_grad(case["fn"], case["argnums"])
    else:
        g = myc.grad(case["fn"], case["argnums"])
    vg = case.get("transform") == "value_and_grad"
    return (lambda *a: g(*a)[1]) if vg else g


def fd_gradient(case: dict, replay: Replay, max_elems: int = 40) -> tuple[Any, Any]:
    """Central differences of the CPython function, on up to ``max_elems`` elements per
    leaf (chosen evenly); returns (fd, mask) trees (mask: which elements were checked)."""
    fn, args, argnums = case["fn"], case["args"], case["argnums"]
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    eps = case.get("fd_eps", 1e-6)
    out_fd, out_mask = [], []
    for num in nums:
        tree = args[num]
        fds, masks = [], []
        for path, leaf in leaves(tree):
            if not is_float_leaf(leaf):  # an int or a string of a config: no gradient
                fds.append(None)
                masks.append(None)
                continue
            arr = np.asarray(leaf, np.float64)
            d = np.zeros_like(arr)
            m = np.zeros(arr.shape, bool)
            idxs = list(np.ndindex(arr.shape))
            step = max(1, len(idxs) // max_elems)
            for idx in idxs[::step]:
                vals = []
                for delta in (eps, -eps):
                    v = np.array(arr, copy=True)
                    v[idx] += delta
                    a = list(args)
                    a[num] = set_path(tree, path, v if np.ndim(leaf) else float(v))
                    replay.reset()
                    vals.append(float(fn(*a)))
                d[idx] = (vals[0] - vals[1]) / (2 * eps)
                m[idx] = True
            fds.append(d if np.ndim(leaf) else float(d))
            masks.append(m)
        it, itm = iter(fds), iter(masks)
        out_fd.append(tree_map(lambda _: next(it), tree))
        out_mask.append(tree_map(lambda _: next(itm), tree))
    if isinstance(argnums, tuple):
        return tuple(out_fd), tuple(out_mask)
    return out_fd[0], out_mask[0]


def max_error(got: Any, fd: Any, mask: Any) -> float:
    """max |got - fd| / max(1, |fd|) over the checked elements (structures must match)."""
    err = 0.0
    for (pg, g), (pf, f), (_, m) in zip(leaves(got), leaves(fd), leaves(mask), strict=True):
        assert pg == pf, (pg, pf)
        if f is None:  # an int or a string leaf: not differentiated (myc gives None)
            continue
        g = np.asarray(g, np.float64)
        f = np.asarray(f, np.float64)
        assert g.shape == f.shape, (pg, g.shape, f.shape)
        m = np.asarray(m, bool)
        if m.any():
            if np.isnan(g[m]).any() and not np.isnan(f[m]).any():
                return float("inf")  # a nan gradient where the differences are finite
            scale = max(1.0, float(np.max(np.abs(f[m]))))
            err = max(err, float(np.max(np.abs(g[m] - f[m]))) / scale)
    return err


def run_one(name: str, steady_calls: int = 5, package: str = "tests.realworld",
            clock=time.perf_counter) -> dict:
    """Runs one program; returns a row of the table (``error`` set when myc refused).
    ``clock``: ``time.perf_counter`` (wall) or ``time.process_time`` (CPU, all threads)."""
    mod = importlib.import_module(f"{package}.{name}")
    case = mod.case()
    replay = Replay(case)
    g = gradient_fn(case)
    row: dict[str, Any] = {"program": name}
    try:
        replay.reset()
        t0 = clock()
        got = g(*case["args"])
        row["first_s"] = clock() - t0
        times = []
        with contextlib.redirect_stdout(io.StringIO()):
            for _ in range(steady_calls):
                replay.reset()
                t0 = clock()
                g(*case["args"])
                times.append(clock() - t0)
        row["steady_ms"] = 1e3 * statistics.median(times)
    except myc.MycError as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row
    except Exception as exc:  # noqa: BLE001 - a bare exception from myc is itself a finding
        row["error"] = f"{type(exc).__name__} (not a MycError): {exc}\n{traceback.format_exc()}"
        return row
    with contextlib.redirect_stdout(io.StringIO()):  # a program's own prints, once per call
        fd, mask = fd_gradient(case, replay)
    row["max_err"] = max_error(got, fd, mask)
    row["tol"] = case.get("fd_tol", 1e-5)
    row["ok"] = row["max_err"] <= row["tol"]
    return row


_MISC = ("from myc.misc", "import myc.misc")


def _swap(name: str) -> str:
    """Whether the program imports ``myc.misc`` (autograd's helpers) besides myc's transforms."""
    import pathlib

    text = (pathlib.Path(__file__).parent / f"{name}.py").read_text()
    return "with myc.misc" if any(m in text for m in _MISC) else "myc transforms only"


def markdown(rows: list[dict]) -> str:
    """The table of docs/realworld.md."""
    out = ["| program | runs | first call (s) | steady call (ms) | max gradient "
           "error |", "|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            first = r["error"].splitlines()
            msg = next((ln.strip() for ln in first[1:] if "not supported" in ln or
                        "object of class" in ln), first[0])
            out.append(f"| `{r['program']}` | **no**: {msg.split(':')[0][:90]} | -- | -- | -- |")
        else:
            out.append(f"| `{r['program']}` | yes ({_swap(r['program'])}) | "
                       f"{r['first_s']:.2f} | {r['steady_ms']:.2f} | {r['max_err']:.0e} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    as_markdown = "--markdown" in argv
    argv = [a for a in argv if a != "--markdown"]
    names = argv or list(PROGRAMS)
    rows = []
    for name in names:
        try:
            row = run_one(name)
        except Exception as exc:  # noqa: BLE001 - CPython itself fails on the program
            row = {"program": name, "error": f"CPython: {type(exc).__name__}: {exc}"}
        rows.append(row)
        if "error" in row:
            print(f"{name:32s} FAILED  {row['error'].splitlines()[0][:200]}", flush=True)
            print("    " + "\n    ".join(row["error"].splitlines()[1:12]), flush=True)
        else:
            print(f"{name:32s} {'ok ' if row['ok'] else 'BAD'} first {row['first_s']:7.2f} s"
                  f"  steady {row['steady_ms']:9.2f} ms  max err {row['max_err']:.1e}",
                  flush=True)
    if as_markdown:
        print(markdown(rows))
    good = sum(1 for r in rows if r.get("ok"))
    print(f"{good}/{len(rows)} ran with gradients matching finite differences")
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
