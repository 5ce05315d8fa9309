"""Differential checks of one random program across backends (``tests/progen.py``).

One generated program is run by plain CPython/NumPy (the reference), the evaluator
(``interp``), the CPU backend and OpenCL where PyOpenCL is installed; its values must
agree, and so must its gradients: every backend's gradient against the evaluator's, and
the evaluator's against central finite differences along a random direction wherever
the program is smooth there.  The compiled backends must really have run compiled code:
a call served by the evaluator (a specialization break, a guard miss) is a failure
unless its reason is one the compiler documents as not compiled yet (``EXPECTED_BREAKS``).
"""

from __future__ import annotations

import itertools
import os
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import note

import myc
from tests import progen
from tests.backends import BACKENDS

COMPILED = tuple(b for b in BACKENDS if b != "interp")

TOL = {"float64": {"rtol": 1e-9, "atol": 1e-12}, "float32": {"rtol": 1e-4, "atol": 1e-5}}
GRAD_TOL = {"float64": {"rtol": 1e-7, "atol": 1e-9}, "float32": {"rtol": 1e-3, "atol": 1e-4}}

# reasons for running on the evaluator that the compiler documents (README "not yet",
# docs/loops.md): a break whose reason contains one of these is counted, not failed
EXPECTED_BREAKS: tuple[str, ...] = (
    # a program guarded on data-dependent decisions, read from the disk cache, where a
    # structurally identical program drawn earlier (the cache keys by the graph's
    # fingerprint) stored the one specialized on other data: its guards miss
    DISK_GUARD_MISS := "guard miss on a program from the disk cache",
)


@dataclass
class Tally:
    """What a fuzz run saw, for the report in docs/reliability.md."""

    programs: int = 0
    compiled_calls: int = 0
    evaluator_calls: dict[str, int] = field(default_factory=dict)
    fd_checked: int = 0
    fd_skipped: int = 0
    # points where a comparison holds with equality: the derivative is checked at the
    # neighbouring points instead (``check_finite_differences``)
    fd_ties: int = 0
    # compiled gradients that differ from the evaluator's only through the stability
    # rewrites (the same program compiled without them agrees)
    rewrites_explained: int = 0
    # programs checked per "kind/backend" ("values/cpu", "gradients/opencl")
    checked: Counter = field(default_factory=Counter)
    # seconds per "kind/backend" (compiling and running) and "values/python"
    seconds: Counter = field(default_factory=Counter)


TALLY = Tally()


def run_python(f, args):
    """Plain CPython result; by construction it neither raises nor warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            return f(*args)


def _outs(value: Any, prog) -> tuple:
    return value if len(prog.ret) > 1 else (value,)


def assert_close(got, expected, prog, what: str, tol: dict) -> None:
    outs_g, outs_e = _outs(got, prog), _outs(expected, prog)
    assert isinstance(outs_g, tuple) and len(outs_g) == len(outs_e), \
        f"{what}: expected {len(outs_e)} outputs, got {got!r}\n{prog.source}"
    for i, (g, e) in enumerate(zip(outs_g, outs_e, strict=True)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape, f"{what} {i}: shape {g.shape} != {e.shape}\n{prog.source}"
        assert g.dtype == e.dtype, f"{what} {i}: dtype {g.dtype} != {e.dtype}\n{prog.source}"
        np.testing.assert_allclose(g, e, err_msg=f"{what} {i} differs\n{prog.source}", **tol)


def served_by_evaluator(run) -> str | None:
    """Why a compiled backend's runner (a ``SpecializedFunction``) used the evaluator
    for a call, or None when every call so far ran compiled code.

    A fresh runner builds its evaluator only when it has to run a call on it (a
    signature that did not specialize, or a guard miss), so its absence proves that
    the calls ran compiled programs."""
    if getattr(run, "_interp", None) is None:
        return None
    breaks = getattr(run, "breaks", {})
    misses = getattr(run, "misses", {})
    # (a program unpickled from the disk cache has no graph)
    from_disk = any(getattr(p, "graph", True) is None for p in run.cache.values())
    reasons = [str(b.reason) for b in breaks.values()] + \
        [f"{DISK_GUARD_MISS if from_disk else 'guard miss'} ({n}x)"
         for n in misses.values()]
    return "; ".join(reasons) or "unknown"


def check_compiled(run, what: str, prog) -> None:
    why = served_by_evaluator(run)
    if why is None:
        TALLY.compiled_calls += 1
        return
    if any(e in why for e in EXPECTED_BREAKS):
        TALLY.evaluator_calls[why] = TALLY.evaluator_calls.get(why, 0) + 1
        return
    raise AssertionError(f"{what} was served by the evaluator, not compiled code: {why}\n"
                         f"{prog.source}")


LOSS = """

def loss(a, b, x, w):
    r = f(a, b, x)
    return {expr}
"""


def loss_source(prog) -> str:
    """``prog`` plus ``loss(a, b, x, w)``: a scalar weighting each output by ``w``."""
    terms = []
    for i, kind in enumerate(prog.ret):
        r = f"r[{i}]" if len(prog.ret) > 1 else "r"
        terms.append(f"{r} * w[{i}]" if kind == "s" else f"np.sum({r} * w[{i}])")
    return prog.source + LOSS.format(expr=" + ".join(terms))


def weights(prog, rng: np.random.Generator) -> tuple:
    dt = np.dtype(prog.dtype)
    return tuple(float(rng.uniform(-1, 1)) if kind == "s" else
                 rng.uniform(-1, 1, prog.shape).astype(dt) for kind in prog.ret)


_serial = itertools.count()


def unique(prog) -> progen.Program:
    """``prog`` made distinct from every program before it in this process.

    Hypothesis draws the same program more than once; the disk cache then serves the
    second draw the first one's program (the same source), which for a program guarded
    on the first call's data-dependent decisions misses its guards on other data and
    runs on the evaluator -- correct, but not what this check is about."""
    head = "def f(a, b, x):\n"
    assert head in prog.source
    source = prog.source.replace(head, f'{head}    """fuzz program {next(_serial)}"""\n', 1)
    return progen.Program(source, prog.shape, prog.dtype, prog.ret)


def check_values(prog, args, directory, backends: tuple[str, ...] = BACKENDS) -> None:
    """Values on ``backends`` against CPython; the compiled ones really compiled."""
    prog = unique(prog)
    note(prog.source)
    f, modname = progen.load(prog, directory)
    try:
        a, b, x = args
        t0 = time.perf_counter()
        expected = run_python(f, args)
        TALLY.seconds["values/python"] += time.perf_counter() - t0
        before = x.copy()
        for backend in backends:
            t0 = time.perf_counter()
            jf = myc.jit(f, backend=backend)
            got = jf(a, b, x)
            TALLY.seconds[f"values/{backend}"] += time.perf_counter() - t0
            np.testing.assert_array_equal(x, before, err_msg=f"{backend} mutated x")
            assert_close(got, expected, prog, f"{backend} value", TOL[prog.dtype])
            if backend != "interp":
                check_compiled(jf._executable, f"{backend} value", prog)
            TALLY.checked[f"values/{backend}"] += 1
        TALLY.programs += 1
    finally:
        sys.modules.pop(modname, None)


def check_gradients(prog, args, directory, seed: int,
                    backends: tuple[str, ...] = COMPILED) -> None:
    """Gradients on the compiled ``backends`` against the evaluator's, and the
    evaluator's against finite differences of CPython where the program is smooth."""
    rng = np.random.default_rng(seed)
    prog = unique(prog)
    wrapped = progen.Program(loss_source(prog), prog.shape, prog.dtype, ("s",))
    note(wrapped.source)
    _, modname = progen.load(wrapped, directory)
    loss = sys.modules[modname].loss
    try:
        a, b, x = args
        w = weights(prog, rng)
        run_python(loss, (a, b, x, w))
        t0 = time.perf_counter()
        want = myc.grad(myc.jit(loss, backend="interp"), argnums=(0, 1, 2))(a, b, x, w)
        TALLY.seconds["gradients/interp"] += time.perf_counter() - t0
        TALLY.checked["gradients/interp"] += 1
        for backend in backends:
            t0 = time.perf_counter()
            g = myc.grad(myc.jit(loss, backend=backend), argnums=(0, 1, 2))
            got = g(a, b, x, w)
            TALLY.seconds[f"gradients/{backend}"] += time.perf_counter() - t0
            check_compiled(g._run, f"{backend} gradient", wrapped)
            try:
                assert_grads_close(got, want, backend, wrapped, prog.dtype)
            except AssertionError:
                if not rewrites_explain(loss, backend, (a, b, x, w), want, wrapped, prog.dtype):
                    raise
                TALLY.rewrites_explained += 1
            TALLY.checked[f"gradients/{backend}"] += 1
        if prog.dtype == "float64":
            reference = myc.grad(myc.jit(loss, backend="interp"), argnums=(0, 1, 2))
            check_finite_differences(loss, args, w, want, rng, wrapped,
                                     lambda *p: reference(*p, w))
        TALLY.programs += 1
    finally:
        sys.modules.pop(modname, None)


def assert_grads_close(got, want, backend: str, prog, dtype: str) -> None:
    for i, (gi, wi) in enumerate(zip(got, want, strict=True)):
        assert np.shape(gi) == np.shape(wi), f"{backend} grad {i} shape\n{prog.source}"
        np.testing.assert_allclose(
            np.asarray(gi, np.float64), np.asarray(wi, np.float64),
            err_msg=f"{backend} gradient {i} differs from the evaluator's\n{prog.source}",
            **GRAD_TOL[dtype])


def rewrites_explain(loss, backend: str, args: tuple, want, prog, dtype: str) -> bool:
    """Does the same program compiled without the stability rewrites
    (``MYC_NO_STABILITY=1``) agree with the evaluator's gradient?

    The compiled gradient is the differentiated program, optimized: the rewrites
    (``log(1 + u)`` -> ``log1p(u)``, ...) run after differentiation and change only how a
    value is computed, by an identity the values checks hold against CPython.  Where the
    program without them agrees with the evaluator at the usual tolerance, every rule
    and pass but those identities is checked, and the difference is their accuracy: at
    ``u = 2e-14`` NumPy's ``log(1 + u)`` is 1 % off, at ``u = 1e-102`` it is 0 where
    ``log1p`` is not (a slope of ``sqrt`` there is finite, not ``inf``)."""
    previous = os.environ.get("MYC_NO_STABILITY")
    os.environ["MYC_NO_STABILITY"] = "1"  # (part of the cache key: a fresh compile)
    try:
        g = myc.grad(myc.jit(loss, backend=backend), argnums=(0, 1, 2))
        got = g(*args)
        check_compiled(g._run, f"{backend} gradient without the stability rewrites", prog)
        assert_grads_close(got, want, backend, prog, dtype)
    except AssertionError:
        return False
    finally:
        if previous is None:
            del os.environ["MYC_NO_STABILITY"]
        else:
            os.environ["MYC_NO_STABILITY"] = previous
    return True


def check_finite_differences(loss, args, w, grads, rng, prog, grad_at=None) -> None:
    """The directional derivative ``<grad, v>`` against central differences of CPython.

    Branches, ``abs``, ``clip``, ``floor``... make programs piecewise smooth: where the
    two step sizes disagree, or the one-sided slopes jump, the point is near a kink and
    is skipped (counted).  ``grad_at(a, b, x)``, the evaluator's gradient, checks a tie
    (below) at the neighbouring points."""
    a, b, x = args
    v = (float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), rng.uniform(-1, 1, x.shape))

    def directional(grads) -> float:
        return float(grads[0]) * v[0] + float(grads[1]) * v[1] + \
            float(np.sum(np.asarray(grads[2]) * v[2]))

    analytic = directional(grads)

    if not np.isfinite(analytic):
        # sqrt or log at 0 times a zero sensitivity (``sqrt(abs(x - x))``): 0 * inf is
        # nan in every AD system; the backends agree on it (checked above)
        TALLY.fd_skipped += 1
        return

    def along(t: float) -> float:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(loss(a + t * v[0], b + t * v[1], x + t * v[2], w))

    def central(h: float) -> float:
        return (along(h) - along(-h)) / (2 * h)

    d1, d2 = central(1e-5), central(5e-6)
    at = along(0.0)

    def slopes(h: float) -> tuple[float, float]:  # forward and backward
        return (along(h) - at) / h, (at - along(-h)) / h

    ahead, behind = slopes(1e-6)
    gap6, gap5 = ahead - behind, float(np.subtract(*slopes(1e-5)))
    # (scaled by the differences only: a huge analytic value -- sqrt's slope next to
    # 0 -- must not widen the tolerance that decides whether the point is smooth)
    scale = max(1.0, abs(d1), abs(ahead), abs(behind))
    # A kink at the point itself (a clip bound reached exactly) is symmetric: the two
    # central differences agree there, the one-sided ones do not.  On a smooth curve the
    # gap between them is f'' h, a tenth at h = 1e-6 of what it is at 1e-5; a kink's
    # slopes differ by a jump that does not shrink with h: ``jump`` (Richardson's
    # extrapolation to h = 0) estimates it.  Half of it moves the central difference, so
    # a jump above the tolerance of the check below (not only above 1e-4: kinks of 6e-5
    # went through) makes the point a kink.  Rounding: 4 eps |f| / h at h = 1e-6.
    jump = (gap6 - 0.1 * gap5) / 0.9
    noise = 1e-9 * max(1.0, abs(at))
    if not all(np.isfinite(v) for v in (d1, d2, gap6, gap5)) or \
            abs(d1 - d2) > 1e-6 * scale or abs(gap6) > 1e-4 * scale or \
            abs(jump) > max(1e-5 * scale, 10 * noise):
        TALLY.fd_skipped += 1
        return
    TALLY.fd_checked += 1
    if abs(analytic - d2) <= 1e-5 * scale:
        return
    # A tie: a comparison that holds with equality at the point and strictly on both
    # sides of it (``0 >= 0`` at x = 0, ``min(max(x), a / 2)`` with both 0) takes, at
    # the point only, a branch the differences never see; its derivative there is the
    # branch's (the convention of every AD system), not the limit of its neighbours'.
    # The program is then smooth along the line except at one point, and the gradient
    # is checked where the comparison is strict: at t = +-1e-7, against the same
    # central difference (the slope moves by about f'' 1e-7 there).
    if grad_at is not None:
        try:
            near = [directional(grad_at(a + t * v[0], b + t * v[1], x + t * v[2]))
                    for t in (1e-7, -1e-7)]
        except Exception:  # noqa: BLE001 - no neighbour to check: the failure stands
            near = [np.nan]
        if all(abs(n - d2) <= 1e-5 * scale for n in near):
            TALLY.fd_ties += 1
            return
    raise AssertionError(
        f"gradient {analytic!r} disagrees with finite differences {d2!r} "
        f"(along a random direction)\n{prog.source}")
