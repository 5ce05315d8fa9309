"""``MYC_NATIVE_FIRST_MAX``: the size up to which a whole program is lowered
native-first (every array op a kernel, the program one native function); above it the
small ops stay NumPy steps and the program steps from Python (docs/loops.md)."""

import numpy as np
import pytest

import myc
from myc.errors import MycError


def cg(a, b):
    x = b * 0.0
    r = b
    p = r
    rr = np.sum(r * r)
    for _ in range(4):
        ap = a @ p
        alpha = rr / np.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = np.sum(r * r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return np.sum(x * b)


def _args():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 6))
    return m @ m.T + 6.0 * np.eye(6), rng.standard_normal(6)


@pytest.mark.parametrize("limit, native", [("30", False), ("5000", True)])
def test_the_limit_decides_native_or_stepped(monkeypatch, tmp_path, limit, native):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MYC_NATIVE_FIRST_MAX", limit)
    a, b = _args()
    text = myc.ir(myc.grad(cg, argnums=(0, 1)), a, b, stage="kernels")
    first = text.splitlines()[0]
    assert ("runs natively" in first) == native, first
    if not native:
        assert "over 30 operations" in first and "MYC_NATIVE_FIRST_MAX" in first
    g = myc.grad(cg, argnums=(0, 1))
    got = g(a, b)
    assert g.stats().native_calls == (1 if native else 0)
    monkeypatch.setenv("MYC_NO_NATIVE_LOOPS", "1")
    ref = myc.grad(cg, argnums=(0, 1))(a, b)
    for u, v in zip(got, ref, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)


def test_a_bad_limit_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MYC_NATIVE_FIRST_MAX", "many")
    with pytest.raises(MycError, match="MYC_NATIVE_FIRST_MAX"):
        myc.jit(lambda x: x * 2.0 + 1.0)(np.ones(3))


def test_the_limit_is_a_parameter_of_the_pipeline(monkeypatch, tmp_path):
    """A tier-up compiles native-first whatever the size by passing ``native_max`` down
    the stages (no state another compile could see)."""
    from myc import pipeline
    from myc.lower.program import NO_SIZE_LIMIT

    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MYC_NATIVE_FIRST_MAX", "30")
    a, b = _args()
    graph = pipeline.parsed(cg)
    stepped = pipeline.compile(graph, [a, b])
    assert getattr(stepped, "not_native_first", False) and stepped.native is None
    native = pipeline.compile(graph, [a, b], native_max=NO_SIZE_LIMIT)
    assert not getattr(native, "not_native_first", False) and native.native is not None
    assert native.run([a, b]) == pytest.approx(cg(a, b), rel=1e-12)
    again = pipeline.compile(graph, [a, b])
    assert getattr(again, "not_native_first", False)
