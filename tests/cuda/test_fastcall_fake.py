"""The fast path of repeat calls on device arguments (``myc/backends/gpu/fastcall.py``),
the flat step lists (``HostProgram.flat``) and the view memo, on the fake CuPy: the
same values as the full path, bit for bit; what only the full path did (the device
check, compiling a signature anew, errors located on the user's line) still done."""

from __future__ import annotations

import numpy as np
import pytest

import myc
from tests.cuda import fake_cupy
from tests.cuda.checks import W17
from tests.cuda.checks import program as _program


def _leaves(v):
    if isinstance(v, tuple):
        return [y for x in v for y in _leaves(x)]
    return [v]


def _same(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb, strict=True):
        assert type(x) is type(y), (x, y)
        hx = x.get() if isinstance(x, fake_cupy.FakeArray) else x
        hy = y.get() if isinstance(y, fake_cupy.FakeArray) else y
        np.testing.assert_array_equal(hx, hy)
        assert np.asarray(hx).dtype == np.asarray(hy).dtype


def _fast_calls(f):
    return sum(len(getattr(f._executable, "_gpu_fast", {})) for _ in [0])


@pytest.mark.parametrize("w", W17, ids=lambda w: w.name)
def test_repeat_calls_take_the_fast_path_with_the_same_values(w, monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.gpu import fastcall

    args = w.make_inputs(0, "tiny")
    dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    f = myc.jit(_program(w), backend="cuda")
    first = f(*dev)  # the full path; it notes the signature
    assert _fast_calls(f) == 1
    served = []
    real = fastcall.FastCall.call
    monkeypatch.setattr(fastcall.FastCall, "call",
                        lambda self, *a: served.append(1) or real(self, *a))
    again = f(*dev)
    assert served, "the repeat call took the full path"
    _same(again, first)
    # with the fast path off, the full path gives the same
    monkeypatch.setenv("MYC_NO_FAST_CALLS", "1")
    g = myc.jit(_program(w), backend="cuda")
    g(*dev)
    assert _fast_calls(g) == 0
    _same(g(*dev), first)
    assert f.stats().compiled_calls == 2


def horner(x, c):
    acc = np.zeros_like(x)
    for i in range(4):
        acc = acc * x + c[i]
    return acc


def test_views_of_an_argument_are_reused_and_follow_its_contents(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = cp.asarray(np.linspace(-1, 1, 300))
    c = cp.asarray(np.array([1.0, -2.0, 3.0, 0.5]))
    f = myc.jit(horner, backend="cuda")
    want = horner(x.get(), c.get())
    np.testing.assert_allclose(f(x, c).get(), want, rtol=1e-15)
    np.testing.assert_allclose(f(x, c).get(), want, rtol=1e-15)
    c.view(np.ndarray)[2] = 7.0  # in place: the memoized views see it
    want2 = horner(x.get(), c.get())
    np.testing.assert_allclose(f(x, c).get(), want2, rtol=1e-15)
    c2 = cp.asarray(np.array([0.0, 1.0, 0.0, 2.0]))  # another array: new views
    np.testing.assert_allclose(f(x, c2).get(), horner(x.get(), c2.get()), rtol=1e-15)


def test_a_memoized_view_returned_is_still_a_copy(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = cp.asarray(np.arange(8.0))
    f = myc.jit(lambda x: x.reshape((2, -1)), backend="cuda")
    for _ in range(3):
        got = f(x)
        np.testing.assert_array_equal(got.get(), np.arange(8.0).reshape(2, 4))
        assert not np.shares_memory(got.view(np.ndarray), x.view(np.ndarray))


def test_the_fast_path_still_checks_the_device(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    from types import SimpleNamespace

    x = cp.asarray(np.linspace(0, 1, 300))
    f = myc.jit(lambda x: np.exp(x) + 1.0, backend="cuda")
    f(x)
    f(x)
    monkeypatch.setattr(fake_cupy.FakeArray, "device", property(
        lambda self: SimpleNamespace(id=1)))
    with pytest.raises(myc.MycValueError, match="on GPU 1"):
        f(x)


def test_an_evicted_signature_is_compiled_again(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = cp.asarray(np.linspace(0, 1, 300))
    f = myc.jit(lambda x: np.sin(x) * 2.0, backend="cuda")
    f(x)
    sf = f._executable
    f(x)
    sf.cache.clear()  # (what the LRU does past its bound)
    np.testing.assert_allclose(f(x).get(), np.sin(x.get()) * 2.0, rtol=1e-15)
    assert len(sf.cache) == 1
    (entry,) = sf._gpu_fast.values()  # the fast path now runs the new program
    assert entry.prog is next(iter(sf.cache.values()))
    np.testing.assert_allclose(f(x).get(), np.sin(x.get()) * 2.0, rtol=1e-15)


def pick(x, idx):
    return x[idx] * 2.0


def test_errors_of_a_step_are_located_on_both_paths(monkeypatch, tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    x = cp.asarray(np.linspace(0, 1, 300))
    ok = cp.asarray(np.arange(5))
    bad = cp.asarray(np.array([0, 1, 2, 3, 999]))  # out of bounds: known only running
    messages = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setenv("MYC_NO_FAST_CALLS", "1")
        f = myc.jit(pick, backend="cuda")
        np.testing.assert_array_equal(f(x, ok).get(), x.get()[:5] * 2.0)
        assert _fast_calls(f) == int(fast)
        with pytest.raises(myc.MycError) as info:
            f(x, bad)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "return x[idx] * 2.0" in messages[0], messages[0]


def test_a_select_on_a_host_condition_gives_the_chosen_device_operand(monkeypatch,
                                                                     tmp_path):
    cp = fake_cupy.install(monkeypatch, tmp_path)
    from myc.backends.cuda import host
    from myc.prims import P

    a, b = cp.asarray(np.arange(3.0)), cp.asarray(np.ones(3))
    step = host.HostStep(P.select, "select")
    assert step(True, a, b) is a and step(np.False_, a, b) is b
    const = host.DeviceConst(np.zeros(3))
    got = step(False, a, const)  # a constant chosen: its device copy, as before
    assert isinstance(got, fake_cupy.FakeArray)
    np.testing.assert_array_equal(got.get(), np.zeros(3))
    np.testing.assert_array_equal(step(True, np.arange(3.0), np.ones(3)), np.arange(3.0))
