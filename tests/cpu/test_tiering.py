"""Tiered compilation (``myc.runtime.tiering``): a signature whose program steps only
because it is over ``MYC_NATIVE_FIRST_MAX`` runs stepped for ``MYC_TIER_UP_CALLS``
calls, then is compiled native-first and runs natively -- with the same results, in
later processes too (the disk cache), and not for programs under the limit."""

import numpy as np
import pytest

import myc
from myc.errors import MycError
from tests.cpu.test_native_first_limit import cg  # a CG solve: some hundred ops


def scaled_cg(a, b, k):
    return cg(a, b) * k


def guarded_cg(a, b):
    out = cg(a, b)
    if np.sum(b) > 0.0:  # a data-dependent decision: guarded (MYC_NO_IF_CONVERSION)
        out = out * 2.0
    return out


def _args():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 6))
    return m @ m.T + 6.0 * np.eye(6), rng.standard_normal(6)


@pytest.fixture
def small_limit(monkeypatch, tmp_path):
    """Programs over 30 operations step (the cg gradient has some hundreds)."""
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MYC_NATIVE_FIRST_MAX", "30")
    monkeypatch.setenv("MYC_TIER_UP_CALLS", "2")
    return monkeypatch


def _grad():
    return myc.grad(cg, argnums=(0, 1))


def _close(got, ref):
    for u, v in zip(got, ref, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)


def test_a_stepped_signature_tiers_up_after_its_calls(small_limit):
    a, b = _args()
    small_limit.setenv("MYC_TIER_UP_CALLS", "0")  # the stepped program, for reference
    stepped = _grad()
    ref = stepped(a, b)
    for _ in range(4):
        _close(stepped(a, b), ref)
    st = stepped.stats()
    assert (st.native_calls, st.stepped_calls, st.tier_ups) == (0, 5, 0)

    small_limit.setenv("MYC_TIER_UP_CALLS", "2")
    g = _grad()
    for _ in range(5):
        _close(g(a, b), ref)
    st = g.stats()
    assert (st.stepped_calls, st.native_calls, st.tier_ups) == (2, 3, 1)
    assert "tier-ups to native code: 1" in repr(st)
    (fast,) = g._run._host_fast.values()  # the native program takes the fast path
    assert fast.prog.native is not None


def test_the_kernels_stage_says_when_it_tiers_up(small_limit):
    a, b = _args()
    first = myc.ir(_grad(), a, b, stage="kernels").splitlines()[0]
    assert "runs stepped" in first and "MYC_NATIVE_FIRST_MAX" in first, first
    assert first.endswith("natively from its call 3 on (MYC_TIER_UP_CALLS)"), first


def test_a_warm_cache_starts_native(small_limit):
    a, b = _args()
    g = _grad()
    ref = [g(a, b) for _ in range(3)][0]
    assert g.stats().tier_ups == 1
    again = _grad()  # another wrapper: its program comes from the disk cache
    _close(again(a, b), ref)
    st = again.stats()
    assert (st.native_calls, st.stepped_calls, st.compiles, st.tier_ups) == (1, 0, 0, 0)


def test_a_warm_stepped_program_tiers_up_in_the_next_process(small_limit):
    a, b = _args()
    small_limit.setenv("MYC_TIER_UP_CALLS", "5")
    g = _grad()
    ref = g(a, b)
    g(a, b)  # two stepped calls; the process "ends" before its tier-up
    small_limit.setenv("MYC_TIER_UP_CALLS", "2")
    later = _grad()  # its stepped program comes from the disk cache, still marked
    for _ in range(3):
        _close(later(a, b), ref)
    st = later.stats()
    assert (st.stepped_calls, st.native_calls, st.tier_ups, st.compiles) == (2, 1, 1, 1)
    last = _grad()  # and the process after that starts native
    last(a, b)
    assert (last.stats().native_calls, last.stats().compiles) == (1, 0)


def test_a_tier_up_that_is_not_native_keeps_the_stepped_program(small_limit):
    from myc.runtime import tiering

    small_limit.setattr(tiering, "_native_tier", lambda sf, prog, args: None)
    a, b = _args()
    g = _grad()
    ref = g(a, b)
    for _ in range(4):
        _close(g(a, b), ref)
    st = g.stats()
    assert (st.stepped_calls, st.tier_ups, st.compiles) == (5, 0, 1)
    (prog,) = g._run.cache.values()
    assert prog.tier_up is False  # not tried again, in this process or the next
    again = _grad()
    again(a, b)
    (prog,) = again._run.cache.values()
    assert prog.tier_up is False and again.stats().compiles == 0


def test_never_when_the_setting_is_zero(small_limit):
    small_limit.setenv("MYC_TIER_UP_CALLS", "0")
    a, b = _args()
    g = _grad()
    for _ in range(6):
        g(a, b)
    st = g.stats()
    assert (st.native_calls, st.tier_ups, st.compiles) == (0, 0, 1)
    assert g._run._host_fast  # repeat calls take the fast path, as before tiering


def test_under_the_limit_nothing_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MYC_TIER_UP_CALLS", "1")
    a, b = _args()
    g = _grad()
    for _ in range(4):
        g(a, b)
    st = g.stats()
    assert (st.native_calls, st.tier_ups, st.compiles) == (4, 0, 1)
    (prog,) = g._run.cache.values()
    assert not getattr(prog, "tier_up", False)


def test_run_time_ints_tier_up(small_limit):
    a, b = _args()
    g = myc.grad(scaled_cg, argnums=(0, 1))
    base = _grad()(a, b)
    for k in (1, 2, 3, 4, 5, 6):  # from the second value on, k is a run-time int
        got = g(a, b, k)
        _close(got, [k * x for x in base])
    st = g.stats()
    assert st.tier_ups == 1 and st.native_calls >= 2, st
    progs = [p for p in g._run.cache.values() if getattr(p, "int_leaves", None)]
    assert progs and all(p.native is not None for p in progs)


def test_guarded_programs_keep_their_variants(small_limit):
    from myc.infer.control import ControlFlow

    small_limit.setenv("MYC_NO_IF_CONVERSION", "1")  # (read at import: set it too)
    small_limit.setattr(ControlFlow, "if_convert", False)
    a, b = _args()
    g = myc.grad(guarded_cg, argnums=(0, 1))
    for sign in (1.0, -1.0, 1.0, -1.0, 1.0):
        got = g(a, sign * b)
        ref = _grad()(a, sign * b)
        _close(got, [x * (2.0 if sign * np.sum(b) > 0 else 1.0) for x in ref])
    st = g.stats()
    assert st.tier_ups == 0 and st.compiled_calls == 5 and st.evaluator_calls == 0, st
    assert all(p.guards for p in g._run.cache.values())


def test_ctrl_c_during_the_tier_up_compile(small_limit):
    from myc import pipeline

    a, b = _args()
    g = _grad()
    ref = g(a, b)
    g(a, b)
    real = pipeline.compile

    def interrupted(*args, **kwargs):
        if kwargs.get("native_max") is not None:  # the tier-up's compile
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    small_limit.setattr(pipeline, "compile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        g(a, b)
    st = g.stats()
    assert (st.tier_ups, st.stepped_calls) == (0, 2)
    small_limit.setattr(pipeline, "compile", real)
    _close(g(a, b), ref)  # the next call tiers up
    st = g.stats()
    assert (st.tier_ups, st.native_calls) == (1, 1)


def test_a_bad_setting_is_a_clear_error(small_limit):
    small_limit.setenv("MYC_TIER_UP_CALLS", "often")
    a, b = _args()
    g = _grad()
    with pytest.raises(MycError, match="MYC_TIER_UP_CALLS"):
        g(a, b)


def test_a_failing_tier_up_compile_keeps_the_stepped_program(small_limit):
    from myc import pipeline
    from myc.support.stats import MycFallbackWarning

    real = pipeline.compile

    def broken(*args, **kwargs):
        if kwargs.get("native_max") is not None:  # the tier-up's compile
            raise RuntimeError("a compiler bug")
        return real(*args, **kwargs)

    small_limit.setattr(pipeline, "compile", broken)
    a, b = _args()
    g = _grad()
    ref = g(a, b)
    g(a, b)
    with pytest.raises(RuntimeError, match="a compiler bug"):  # MYC_STRICT=internal
        g(a, b)
    small_limit.delenv("MYC_STRICT", raising=False)
    with pytest.warns(MycFallbackWarning, match=r"keeps its stepped program \[tier-up\]"):
        _close(g(a, b), ref)
    for _ in range(2):
        _close(g(a, b), ref)
    st = g.stats()
    assert (st.stepped_calls, st.tier_ups, st.fallbacks) == (5, 0, {"tier-up": 1})


def test_by_default_it_tiers_up_once_its_calls_took_a_multiple_of_its_compile(
        small_limit):
    from myc.runtime import tiering

    a, b = _args()
    small_limit.delenv("MYC_TIER_UP_CALLS")
    small_limit.setattr(tiering, "TIME_FACTOR", 1e9)  # never, in a test's time
    g = _grad()
    for _ in range(4):
        g(a, b)
    assert (g.stats().stepped_calls, g.stats().tier_ups) == (4, 0)
    first = myc.ir(_grad(), a, b, stage="kernels").splitlines()[0]
    assert first.endswith("its compile time (MYC_TIER_UP_CALLS)"), first

    small_limit.setattr(tiering, "TIME_FACTOR", 1e-9)  # once one call has run
    h = _grad()
    ref = h(a, b)
    for _ in range(3):
        _close(h(a, b), ref)
    st = h.stats()
    assert (st.stepped_calls, st.native_calls, st.tier_ups) == (1, 3, 1)
