"""Fallbacks are visible: counted in ``f.stats()``, warned about once per function and
reason at the user's line, errors under ``MYC_STRICT=1``; guard misses specialize again."""

import warnings

import numpy as np
import pytest

import myc
from myc.runtime import variants


def picked(x):
    return x[x > 0.5] * 2.0  # a selection whose length depends on data: the tracer breaks


def path_typed(x):
    t = 0.0
    if np.sum(x) > 0:
        t = np.sum(x)  # a NumPy float on one side, a Python float on the other: guarded
    return t * 2


def _fallback_warnings(record):
    return [w for w in record if issubclass(w.category, myc.MycFallbackWarning)]


def test_graph_break_warns_once_with_line_and_counts():
    f = myc.jit(picked)
    x = np.array([0.1, 0.9, 0.7])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r1, r2 = f(x), f(x)
    np.testing.assert_array_equal(r1, picked(x))
    np.testing.assert_array_equal(r2, picked(x))
    ws = _fallback_warnings(record)
    assert len(ws) == 1  # once per function and reason
    msg = str(ws[0].message)
    assert "picked" in msg and "graph-break" in msg and "reference evaluator" in msg
    assert ws[0].filename == __file__
    assert ws[0].lineno == picked.__code__.co_firstlineno + 1  # the selection's line
    s = myc.stats(f)
    assert s.evaluator_calls == 2 and s.compiled_calls == 0
    assert s.fallbacks == {"graph-break": 2}
    assert "evaluator calls 2" in repr(s)


def test_strict_turns_a_fallback_into_an_error(monkeypatch):
    monkeypatch.setenv("MYC_STRICT", "1")
    f = myc.jit(picked)
    with pytest.raises(myc.MycFallbackError, match=r"graph-break(.|\n)*MYC_STRICT=1"):
        f(np.ones(3))
    assert isinstance(myc.MycFallbackError("x"), myc.MycError)


def test_guard_miss_specializes_again_instead_of_evaluating():
    f = myc.jit(path_typed)
    xs = [np.ones(3), -np.ones(3), np.ones(3), -np.ones(3), 2 * np.ones(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", myc.MycFallbackWarning)  # no fallback at all
        got = [f(x) for x in xs]
    for x, g in zip(xs, got, strict=True):
        want = path_typed(x)
        assert g == want and type(g) is type(want)
    s = f.stats()
    assert s.evaluator_calls == 0 and s.compiled_calls == len(xs)
    assert s.compiles >= 1 and len(s.recompiles) == 1 and "guard miss" in s.recompiles[0]
    assert s.native_calls + s.stepped_calls == s.compiled_calls


def test_variants_are_bounded_then_the_evaluator_answers(monkeypatch):
    monkeypatch.setattr(variants, "MAX_VARIANTS", 1)
    monkeypatch.setattr(variants, "MAX_MISSES", 2)
    f = myc.jit(path_typed)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for x in [np.ones(3), -np.ones(3), -np.ones(3), -np.ones(3), np.ones(3)]:
            assert f(x) == path_typed(x)
    s = f.stats()
    assert not s.recompiles  # (the first program may come from the disk cache)
    # two misses, then the signature stays on the evaluator (the last two calls)
    assert s.fallbacks == {"guard-miss": 2, "guard-misses": 2}
    assert s.evaluator_calls == 4 and s.compiled_calls == 1
    reasons = sorted(str(w.message).split("[")[-1].split("]")[0]
                     for w in _fallback_warnings(record))
    assert reasons == ["guard-miss", "guard-misses"]


def test_a_kernel_the_backend_cannot_generate_is_reported(monkeypatch):
    import myc.lower.program as program

    monkeypatch.setattr(program, "_compiler", lambda backend: lambda kernel: None)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")  # (a separate disk-cache key)

    def softplus(x):
        return np.log(1.0 + np.exp(x)) * 2.0

    f = myc.jit(softplus)
    x = np.linspace(-2, 2, 100_000)  # (small arrays are not fused)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        np.testing.assert_allclose(f(x), softplus(x))
    ws = _fallback_warnings(record)
    assert len(ws) == 1 and "cpu-kernel" in str(ws[0].message)
    assert f.stats().fallbacks == {"cpu-kernel": 1} and f.stats().compiled_calls == 1


def test_stats_of_the_evaluator_backend_and_of_grad():
    f = myc.jit(path_typed, backend="interp")
    f(np.ones(3))
    assert f.stats().evaluator_calls == 1 and f.stats().backend == "interp"

    def loss(w):
        return np.sum(np.tanh(w) ** 2)

    g = myc.grad(loss)
    assert myc.stats(g).compiled_calls == 0  # before the first call
    g(np.ones(4))
    assert myc.stats(g).compiled_calls == 1 and myc.stats(g).evaluator_calls == 0
    with pytest.raises(myc.MycTypeError):
        myc.stats(loss)


def test_ir_kernels_says_native_or_stepped():
    def count(x):
        while np.max(x) > 0.0:
            x = x - 1.0
        return x

    text = myc.ir(count, np.ones(4), stage="kernels")
    assert "# loop at line" in text and "runs natively" in text
    def running(x):  # np.cumsum is a NumPy step (path_typed's int-float compare is native)
        return np.sum(np.cumsum(x) * x)

    text = myc.ir(running, np.ones(3), stage="kernels")
    assert "# runs stepped" in text and "does not cover cumsum" in text


def sin_taylor(x):
    ans = 0.0
    term = x
    i = 0
    while abs(term) > 1e-7:
        ans = ans + term
        i = i + 1
        term = -term * x * x / ((2 * i) * (2 * i + 1))
    return ans


def test_second_derivative_through_a_while_loop_stays_compiled():
    """Issue 14's example: each call that takes another number of terms used to run on
    the evaluator (seconds per call); now each is a variant of the signature."""
    g2 = myc.grad(myc.grad(sin_taylor))
    for x in [1.0, 1.5, 1.0, 1.5, 1.0]:
        assert g2(x) == pytest.approx(-np.sin(x), abs=1e-5)
    s = g2.stats()
    assert s.evaluator_calls == 0 and s.compiled_calls == 5 and len(s.recompiles) == 1


def linspace_open(a, b):
    return np.linspace(a, b, 4, endpoint=False) ** 2  # specialized on a's and b's values


def test_no_variants_for_decisions_on_float_values(tmp_path, monkeypatch):
    # a cache of its own: tests/ad/prim_fns.py has a function of the same structure,
    # whose program (specialized on other values) the shared disk cache would serve
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    f = myc.jit(linspace_open)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in [0.5, 0.6, 0.7]:
            np.testing.assert_allclose(f(a, 2.0), linspace_open(a, 2.0))
    s = f.stats()
    assert not s.recompiles and s.compiled_calls == 1 and s.evaluator_calls == 2
    assert s.fallbacks == {"guard-miss": 2}
