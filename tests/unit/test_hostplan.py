"""The host program as data (``myc/lower/hostplan.py``) and the step kinds the JIT's
lowering records (``myc/lower/program.py``): what a backend's generator reads instead of
inspecting Python callables."""

from __future__ import annotations

import numpy as np

import myc
from myc.lower.hostplan import (
    Alias,
    HostPlan,
    LoopOp,
    Permute,
    Select,
    Value,
    operands,
    results,
    stored_buffers,
)
from myc.lower.program import STEP_KINDS


def test_stored_buffers_skip_aliases_and_plain_constants():
    x = Value("float64", (4, 3), "x")
    t = Value("float64", (3, 4), "t")
    r = Value("float64", (12,), "r")
    plain = Value("float64", (12,), "c", const=np.ones(12))
    sized = Value("float64", (12,), "n", const=np.array(7, dtype=object))  # from sizes
    cond = Value("bool", (), "cond")
    out = Value("float64", (12,), "out")
    plan = HostPlan("f", [x, cond], [Permute(x, t, (1, 0)), Alias(t, r),
                                     Select(cond, r, sized, out), Select(cond, plain, r, r)],
                    [out])
    got = stored_buffers(plan)
    # an alias's result names its source's data; a constant lives in static data; a
    # value written twice is one buffer
    assert [v.name for v in got] == ["x", "cond", "t", "out", "r", "n"]


def test_a_loop_stores_its_state_swap_results_and_body():
    s = Value("float64", (8,), "s")
    staged = Value("float64", (8,), "staged")
    go = Value("bool", (), "go")
    res = Value("float64", (8,), "res")
    init = Value("float64", (8,), "init")
    inner = Value("float64", (8,), "inner")
    body = [Permute(s, inner, (0,)), Select(go, inner, s, go)]
    loop = LoopOp(None, [init], [s], body, go, [inner], [s], [res], [staged])
    assert operands(loop) == [init]
    assert results(loop) == [s, staged, res]
    names = [v.name for v in stored_buffers(HostPlan("f", [init], [loop], [res]))]
    assert names == ["init", "s", "staged", "res", "inner", "go"]


def _programs(jitted) -> list:
    return list(jitted._executable.cache.values())


def test_the_jit_lowering_records_each_steps_kind():
    def f(x):
        while np.sum(x) < 100.0:  # a data-dependent loop: a loop step
            x = np.tanh(x) * 0.5 + x + 0.1
        return np.sum(x * x) + np.max(x)

    g = myc.jit(f)
    g(np.linspace(0.0, 1.0, 64))
    steps = [st for prog in _programs(g) for st in prog.steps]
    kinds = {st.kind for st in steps}
    assert kinds <= set(STEP_KINDS)
    assert "loop" in kinds
    for st in steps:  # each kind is what the step runs
        if st.kind == "loop":
            assert type(st.fn).__name__ == "LoopRunner"
        elif st.kind == "kernel":
            assert type(st.fn).__name__ == "KernelUnit"
    body = next(st.fn.body for st in steps if st.kind == "loop")
    assert any(st.kind == "kernel" for st in body.steps)
