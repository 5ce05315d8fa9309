"""Which programs of the corpora run as one native function on the CPU backend, and
why the others step (``myc.ir(..., stage="kernels")``'s reason, for every host program
a call compiles: the whole program's and each data-dependent loop's).

    python -m benchmarks.native_survey [--quick] [NAMES...]

Runs tests/realworld's objectives with their gradients, the compile-time corpus
(benchmarks/compile_corpus.py, the smallest size of each family) and the mini-batch
MLP of tests/runtime/minibatch_net.py, each once, in a fresh disk cache; prints one line
per host program that is not native (program -> reason) and the count of each reason.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import sys
import tempfile
import traceback
import warnings
from typing import Any


class _Checked(Exception):  # noqa: N818 - a control signal: the checks passed
    pass


def _uncovered(body: Any, nstate: int, tape: bool) -> list[str]:
    """Every step the native generator refuses (not only the first): each refusal's
    step (found in the checking frame) is dropped and the checks run again."""
    from types import SimpleNamespace

    from myc.backends.cpu.loopgen import NativeLoop, Unsupported

    steps = list(body.steps)
    found = []
    build = NativeLoop._build
    NativeLoop._build = lambda self: (_ for _ in ()).throw(_Checked())
    try:
        for _ in range(len(steps) + 1):
            view = SimpleNamespace(**{k: getattr(body, k) for k in (
                "params", "specs", "nslots", "outputs", "once", "origin") if hasattr(body, k)})
            view.steps = steps
            try:
                NativeLoop(view, nstate, tape)
            except _Checked:
                break
            except Unsupported as exc:
                tb, si = exc.__traceback__, None
                while tb is not None:
                    if tb.tb_frame.f_code is NativeLoop.__init__.__code__:
                        si = tb.tb_frame.f_locals.get("si")
                    tb = tb.tb_next
                if si is None or si >= len(steps):
                    found.append(f"{exc}")
                    break
                found.append(f"{exc}  [{steps[si].name}]")
                del steps[si]
    finally:
        NativeLoop._build = build
    return found


def _record(seen: list[tuple[str, str, str]], label: list[str],
            steps: list[tuple[str, str]]):
    """Patch the lowering so every host program and loop made notes its nativity.

    A whole program is lowered native-first (every array op in a kernel) only when
    every operation is one native code covers (``native_blockers``); then each step
    the native generator refuses is noted.  Otherwise its blockers are noted (its other
    steps are NumPy steps by design, not each a reason)."""
    from myc.backends.cpu import nativity
    from myc.lower import program as lp
    from myc.lower.target import target

    native_program = lp._native_program
    loop_init = lp.LoopRunner.__init__
    lower = lp.lower

    def wrapped_lower(typed, template, name, fused=None, lone=False, **kw):
        prog = lower(typed, template, name, fused, lone, **kw)
        prog.__dict__["_survey_lone"] = lone
        return prog

    def wrapped_program(prog):
        got = native_program(prog)
        if got is not None or os.environ.get("MYC_NO_NATIVE_LOOPS"):
            seen.append((label[0], f"program {prog.name}", "native"))
            return got
        lone = prog.__dict__.get("_survey_lone", False)
        blockers = [] if lone or prog.graph is None else \
            lp.native_blockers(prog.graph, target(prog.backend))
        if any(st.kind == "loop" for st in prog.steps):
            why = nativity._why(prog, None)
        elif blockers:
            why = f"not native-first: {', '.join(blockers)}"
            steps.extend((label[0], f"op {b}") for b in blockers)
        elif not lone:
            why = "native-first, but its kernel-only lowering was not native (above)"
        else:
            why = "native-first: " + nativity._why(prog, None)
            from myc.backends.cpu.loopgen import _once_view

            steps.extend((label[0], w) for w in _uncovered(_once_view(prog), 0, False))
        seen.append((label[0], f"program {prog.name}", why))
        return got

    def wrapped_loop(self, body, nstate, tape=False, plan=None):
        loop_init(self, body, nstate, tape, plan)
        why = "native" if self.native is not None else nativity._why(body, self)
        if self.native is None:
            steps.extend((label[0], w) for w in _uncovered(body, nstate, tape))
        seen.append((label[0], f"loop of {body.name}", why))

    lp.lower = wrapped_lower
    lp._native_program = wrapped_program
    lp.LoopRunner.__init__ = wrapped_loop


def _realworld(names: list[str]) -> list[tuple[str, Any]]:
    from tests.realworld import PROGRAMS
    from tests.realworld.run import Replay, gradient_fn

    out = []
    for name in PROGRAMS:
        if names and name not in names:
            continue

        def go(name=name):
            import importlib

            case = importlib.import_module(f"tests.realworld.{name}").case()
            Replay(case).reset()
            gradient_fn(case)(*case["args"])
        out.append((f"realworld/{name}", go))
    return out


_CORPUS = ("rnn10", "lstm10", "gmm", "gmm-hvp", "fluid3", "hmm10", "gp", "rk4-10",
           "taylor-d2", "loop100k", "count1m")


def _corpus(names: list[str]) -> list[tuple[str, Any]]:
    from benchmarks.compile_corpus import ENTRIES

    out = []
    for name in _CORPUS:
        if names and name not in names:
            continue

        def go(name=name):
            fn, args = ENTRIES[name].build()
            fn(*args)
        out.append((f"corpus/{name}", go))
    return out


def _minibatch(names: list[str]) -> list[tuple[str, Any]]:
    if names and "minibatch" not in names:
        return []

    def go():
        import myc
        from tests.runtime.minibatch_net import build

        loss, layers = build()
        myc.grad(loss)(layers, 3)
    return [("runtime/minibatch_net", go)]


def main(argv: list[str]) -> int:
    os.environ.setdefault("MYC_CACHE_DIR", tempfile.mkdtemp(prefix="myc-survey-"))
    names = [a for a in argv if not a.startswith("-")]
    seen: list[tuple[str, str, str]] = []
    steps: list[tuple[str, str]] = []
    label = [""]
    _record(seen, label, steps)
    jobs = _realworld(names) + _corpus(names) + _minibatch(names)
    for lab, go in jobs:
        label[0] = lab
        try:
            with contextlib.redirect_stdout(io.StringIO()), \
                    warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                go()
            for w in caught:  # e.g. a program that fell back to the evaluator
                if "Fallback" in type(w.message).__name__ or \
                        "Fallback" in getattr(w.category, "__name__", ""):
                    seen.append((lab, "fallback", str(w.message).splitlines()[0][:200]))
        except Exception as exc:  # noqa: BLE001 - a survey: note it and go on
            seen.append((lab, "run", f"FAILED {type(exc).__name__}: {exc}"))
            traceback.print_exc(limit=2)
    width = max(len(lab) for lab, _ in jobs)
    by_prog: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for lab, what, why in seen:
        by_prog[lab].append((what, why))
    reasons: collections.Counter[str] = collections.Counter()
    for lab, _ in jobs:
        rows = by_prog.get(lab, [])
        nat = sum(1 for _, w in rows if w == "native")
        others = [(w, why) for w, why in rows if why != "native"]
        status = "all native" if not others else f"{nat}/{len(rows)} native"
        print(f"{lab:{width}s}  {status}")
        for what, why in others:
            print(f"{'':{width}s}    {what}: {why}")
            reasons[why] += 1
    print("\nreasons (host programs and loops not native):")
    for why, k in reasons.most_common():
        print(f"{k:4d}  {why}")
    print("\nevery uncovered step (reason  [step], programs):")
    kinds = collections.Counter(w for _, w in steps)
    progs = collections.defaultdict(set)
    for lab, w in steps:
        progs[w].add(lab)
    for w, k in kinds.most_common():
        print(f"{k:4d}  {w}  ({len(progs[w])} programs)")
    total = len(seen)
    print(f"{total - sum(reasons.values())}/{total} host programs and loops native")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
