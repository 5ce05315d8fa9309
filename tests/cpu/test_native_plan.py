"""A native program's plan (``loopgen.NativePlan``): what building its module computed,
with the module's machine code, kept with the program in the disk cache.  A program
loaded again takes that code instead of building and printing the module; it must give
what the built one gives, and whatever the plan cannot vouch for in this process
(another thread count, damaged machine code, a kernel that is not loaded) must make it
build again rather than run wrong code."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import myc
from benchmarks.workloads.w4_mlp import mlp_loss
from benchmarks.workloads.w5_while_loop import while_loss
from myc.backends.cpu import loopgen
from myc.lower.program import LoopRunner
from tests.cpu.test_native_program import programs_run


@pytest.fixture
def builds(monkeypatch) -> list:
    """Every native module built (one entry per ``NativeLoop._build``)."""
    seen: list = []
    orig = loopgen.NativeLoop._build

    def spy(self):
        seen.append(self)
        return orig(self)

    monkeypatch.setattr(loopgen.NativeLoop, "_build", spy)
    return seen


def mlp_args(batch: int = 256, hidden: int = 512):
    rng = np.random.default_rng(3)
    return (rng.standard_normal((128, hidden)).astype(np.float32) * 0.05,
            rng.standard_normal(hidden).astype(np.float32) * 0.1,
            rng.standard_normal((hidden, 10)).astype(np.float32) * 0.05,
            rng.standard_normal(10).astype(np.float32) * 0.1,
            rng.standard_normal((batch, 128)).astype(np.float32),
            rng.integers(0, 10, batch))


MLP_GRAD = myc.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))


def reloaded(prog):
    """``prog`` as a new process finds it in the disk cache."""
    return pickle.loads(pickle.dumps(prog))


def run(prog, args):
    return prog.run(list(args))


def same(a, b) -> None:
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def _leaves(v) -> list:
    return [y for x in v for y in _leaves(x)] if isinstance(v, (tuple, list)) else [v]


def test_a_loaded_program_runs_its_plan_without_building(builds):
    args = mlp_args()
    prog = programs_run(myc.jit(MLP_GRAD), *args)[-1]
    assert prog.native is not None and prog.native.plan.symbols  # kernels and GEMM
    kinds = {kind for _, kind, _ in prog.native.plan.symbols}
    assert kinds == {"kernel", "blas"}
    want = run(prog, args)
    builds.clear()
    again = reloaded(prog)
    assert "_native_plan" in again.__dict__
    got = run(again, args)
    assert builds == []  # machine code from the plan: no module built
    same(got, want)
    np.testing.assert_allclose(got[0], mlp_loss(*args), rtol=1e-5)
    # the plan's module can still be looked at (built again on request)
    assert again.native.llvm_ir == prog.native.llvm_ir
    assert len(builds) == 1
    # stored again (as a hit under another key is), the plan goes along
    builds.clear()
    same(run(reloaded(again), args), want)
    assert builds == []


def test_through_the_disk_cache(tmp_path, monkeypatch, builds):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    args = mlp_args(64, 64)
    want = myc.jit(MLP_GRAD)(*args)
    assert builds
    builds.clear()
    from myc.runtime.specialize import SpecializedFunction

    monkeypatch.setattr(SpecializedFunction, "program",
                        _uncached(SpecializedFunction.program))
    got = myc.jit(myc.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)))(*args)
    assert builds == []
    same(got, want)


def _uncached(program):
    """``SpecializedFunction.program`` that forgets what this process compiled (as a new process
    would), so the program comes from the disk cache."""

    def fresh(self, args):
        self.cache.clear()
        return program(self, args)

    return fresh


def test_another_thread_count_builds_again(monkeypatch, builds):
    args = mlp_args(512, 512)  # kernels big enough to be split over threads
    monkeypatch.setenv("MYC_NUM_THREADS", "2")
    prog = programs_run(myc.jit(MLP_GRAD), *args)[-1]
    want = run(prog, args)
    assert prog.native.plan.threads == 2
    monkeypatch.setenv("MYC_NUM_THREADS", "1")
    builds.clear()
    again = reloaded(prog)
    got = run(again, args)
    assert len(builds) == 1 and again.native.plan.threads == 1
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    for x, y in zip(_leaves(got[1]), _leaves(want[1]), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("damage", ["kernel", "blas", "not a plan"])
def test_a_plan_it_cannot_trust_builds_again(damage, builds):
    args = mlp_args(64, 64)
    prog = programs_run(myc.jit(MLP_GRAD), *args)[-1]
    want = run(prog, args)
    plan = prog.native.plan
    if damage == "kernel":  # a kernel this process has not loaded
        bad = dataclasses.replace(plan, symbols=tuple(
            (s, k, "0" * 64 if k == "kernel" else r) for s, k, r in plan.symbols))
    elif damage == "blas":
        bad = dataclasses.replace(plan, symbols=tuple(
            (s, k, "no_such_gemm" if k == "blas" else r) for s, k, r in plan.symbols))
    else:
        bad = ("a plan", "from an older myc")
    again = reloaded(prog)
    again.__dict__["_native_plan"] = bad
    builds.clear()
    same(run(again, args), want)
    assert len(builds) == 1


def test_a_loop_takes_its_plan(builds):
    x0 = np.linspace(4.2, 7.8, 256).astype(np.float32)
    vg = myc.value_and_grad(while_loss)
    progs = programs_run(myc.jit(vg), x0)
    loops = [st.fn for st in progs[-1].steps if isinstance(st.fn, LoopRunner)]
    assert loops and all(lp.native is not None for lp in loops)
    want = run(progs[-1], (x0,))
    builds.clear()
    again = reloaded(progs[-1])
    got = run(again, (x0,))
    assert builds == []
    same(got, want)
    np.testing.assert_allclose(got[0], while_loss(x0), rtol=1e-5)


def _kernels_only(x):
    return np.sum(np.tanh(x) * x)


def test_a_program_of_kernels_only_is_made_native_at_its_second_call(tmp_path, monkeypatch,
                                                                    builds):
    """Its first call runs the kernel from Python (no native function made: a function
    called once never pays for one), its second makes the native function and stores
    the program again with its machine code, so a later process's first call is native
    and builds nothing."""
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    x = np.random.default_rng(6).standard_normal(1 << 12)
    f = myc.jit(_kernels_only)
    first = f(x)
    assert builds == [] and (f.stats().native_calls, f.stats().stepped_calls) == (0, 1)
    assert f(x) == first and len(builds) == 1
    assert (f.stats().native_calls, f.stats().stepped_calls) == (1, 1)
    np.testing.assert_allclose(first, np.sum(np.tanh(x) * x), rtol=1e-12)
    builds.clear()
    from myc.runtime.specialize import SpecializedFunction

    monkeypatch.setattr(SpecializedFunction, "program",
                        _uncached(SpecializedFunction.program))
    g = myc.jit(_kernels_only)
    assert g(x) == first and builds == []  # the stored program's machine code
    assert g.stats().native_calls == 1
